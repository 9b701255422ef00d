// The reduction of one contiguous run of elements, and the accumulator
// arithmetic every reduction kernel shares (reduce.cc's Reduce and
// ReduceRows): one definition, so a reduction fed piece by piece adds the
// same numbers in the same order as one over memory.
// Internal to backend/cpu/kernels (not a public kernel API).
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "baton/backend/cpu/kernels/isa.h"
#include "baton/backend/cpu/kernels/reduce.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/scalar_math.h"

namespace baton::cpu::reduce_detail {

// The combine the accumulators use: scalar::ReduceCombine, except float
// max/min, which are written as one select GCC can vectorize. A NaN still
// sticks (x != x selects it, and no comparison with a NaN accumulator is
// true), so the result differs from ReduceCombine's at most in the sign of a
// zero result and the NaN's payload, which Finish makes the canonical one.
template <ReduceOp op, typename A>
inline A Combine(A acc, A x) {
  if constexpr (std::is_floating_point_v<A> && op == ReduceOp::kMax) {
    return (x > acc || x != x) ? x : acc;
  } else if constexpr (std::is_floating_point_v<A> && op == ReduceOp::kMin) {
    return (x < acc || x != x) ? x : acc;
  } else {
    return scalar::ReduceCombine<op, A>(acc, x);
  }
}

// Rounds an accumulator to the output type; a max/min NaN becomes the
// canonical quiet NaN, as scalar::Binary's max/min return.
template <ReduceOp op, typename T, typename A>
inline T Finish(A acc) {
  if constexpr (std::is_floating_point_v<A> &&
                (op == ReduceOp::kMax || op == ReduceOp::kMin)) {
    if (acc != acc) acc = std::numeric_limits<A>::quiet_NaN();
  }
  return FromCompute<T>(static_cast<ComputeType<T>>(acc));
}

template <typename A, typename T>
inline A ToAcc(T x) {
  return static_cast<A>(ToCompute<T>(x));
}

// Reduces a contiguous run with 16 independent accumulators (which GCC
// turns into vector registers), in blocks of kReducePieceElements so that
// float error grows with n / 4096 rather than n. float32 sums take
// SumFloatRunBody instead.
template <ReduceOp op, typename T, typename A>
__attribute__((always_inline)) inline A ReduceRunBody(const T* p, int64_t n) {
  constexpr int kLanes = 16;
  constexpr int64_t kBlock = kReducePieceElements;
  A acc = scalar::ReduceInit<op, A>();
  if (n < 2 * kLanes) {  // short runs (softmax over a few classes, say)
    for (int64_t i = 0; i < n; ++i) acc = Combine<op, A>(acc, ToAcc<A>(p[i]));
    return acc;
  }
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    A lanes[kLanes];
    for (int j = 0; j < kLanes; ++j) lanes[j] = scalar::ReduceInit<op, A>();
    int64_t i = b;
    for (; i + kLanes <= e; i += kLanes) {
      // Without this, -O3 unrolls the lane loop before the vectorizer runs
      // and leaves scalar, branchy code for the max/min select (3x slower).
#pragma GCC unroll 1
      for (int j = 0; j < kLanes; ++j) {
        lanes[j] = Combine<op, A>(lanes[j], ToAcc<A>(p[i + j]));
      }
    }
    A block = lanes[0];
    for (int j = 1; j < kLanes; ++j) block = Combine<op, A>(block, lanes[j]);
    for (; i < e; ++i) block = Combine<op, A>(block, ToAcc<A>(p[i]));
    acc = Combine<op, A>(acc, block);
  }
  return acc;
}

#if BATON_KERNELS_HAVE_AVX2
// The same lanes in the same order, four doubles or eight floats a vector:
// bitwise the baseline's result (isa.h), up to twice its speed.
template <ReduceOp op, typename T, typename A>
__attribute__((target("avx2"))) A ReduceRunAvx2(const T* p, int64_t n) {
  return ReduceRunBody<op, T, A>(p, n);
}
#endif

// float32 sums of a contiguous run, into double. Each of kSumLanes float
// lanes first adds kSumGroup elements in float (full vector width, no
// conversion per element), then the group's sum goes into that lane's
// double accumulator -- the error stays near kSumGroup float roundings of
// sum |x| -- per block of kReducePieceElements, as ReduceRunBody blocks.
// The lanes are eight explicit 8-float vectors (GCC vector extensions):
// eight independent add chains keep the loop at load throughput when the
// run is in cache (a fused reduction's piece: ~16 floats a cycle under AVX2,
// where one or two chains were bound by the add latency, ~4), and at memory
// bandwidth otherwise. SSE2 splits each vector in two halves: the same
// operations in the same order, so the same bits (isa.h).
inline constexpr int kSumVectors = 8;
inline constexpr int kSumLanes = 8 * kSumVectors;
inline constexpr int64_t kSumGroup = 16;

// 32-byte vectors in baseline (SSE2) code: only ever inside always_inline
// functions, so no call passes one and GCC's ABI note does not apply.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
using Float8 = float __attribute__((vector_size(32)));
using Double4 = double __attribute__((vector_size(32)));

__attribute__((always_inline)) inline Float8 LoadFloat8(const float* p) {
  Float8 v;
  __builtin_memcpy(&v, p, sizeof v);  // unaligned load
  return v;
}

// lanes[2k], lanes[2k + 1] += the low and high halves of v, in double.
__attribute__((always_inline)) inline void AddToDoubleLanes(Double4* lanes,
                                                            int k, Float8 v) {
  lanes[2 * k] += __builtin_convertvector(
      __builtin_shufflevector(v, v, 0, 1, 2, 3), Double4);
  lanes[2 * k + 1] += __builtin_convertvector(
      __builtin_shufflevector(v, v, 4, 5, 6, 7), Double4);
}

// SumFloatRunBody over a virtual run: element i is load1(i), and load8(i,
// &v) sets v to the eight elements from i (i a multiple of 8 from the run's
// start; through a pointer, so no function returns a vector). A
// fused reduction computes its producer inside these loads (FloatChain::
// SumRange), so the producer's values are summed in registers, in exactly
// the order, and so to exactly the bits, of summing them from memory.
template <typename Load8, typename Load1>
__attribute__((always_inline)) inline double SumFloatRunOf(int64_t n,
                                                           Load8 load8,
                                                           Load1 load1) {
  constexpr int64_t kBlock = kReducePieceElements;
  constexpr int64_t kRound = kSumGroup * kSumLanes;
  double acc = 0.0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    // Double lane 4k + m of vector k (k < 2 * kSumVectors): float lane 4k + m.
    Double4 lanes[2 * kSumVectors] = {};
    int64_t i = b;
    for (; i + kRound <= e; i += kRound) {
      Float8 g[kSumVectors];
#pragma GCC unroll 8
      for (int k = 0; k < kSumVectors; ++k) load8(i + 8 * k, &g[k]);
      for (int64_t r = 1; r < kSumGroup; ++r) {
        const int64_t row = i + r * kSumLanes;
#pragma GCC unroll 8
        for (int k = 0; k < kSumVectors; ++k) {
          Float8 v;
          load8(row + 8 * k, &v);
          g[k] += v;
        }
      }
#pragma GCC unroll 8
      for (int k = 0; k < kSumVectors; ++k) AddToDoubleLanes(lanes, k, g[k]);
    }
    // The block's last < kRound elements: a lane's elements straight into
    // its double accumulator.
    for (; i + kSumLanes <= e; i += kSumLanes) {
#pragma GCC unroll 8
      for (int k = 0; k < kSumVectors; ++k) {
        Float8 v;
        load8(i + 8 * k, &v);
        AddToDoubleLanes(lanes, k, v);
      }
    }
    double block = 0.0;
    for (int k = 0; k < 2 * kSumVectors; ++k) {
      for (int m = 0; m < 4; ++m) block += lanes[k][m];
    }
    for (; i < e; ++i) block += static_cast<double>(load1(i));
    acc += block;
  }
  return acc;
}

__attribute__((always_inline)) inline double SumFloatRunBody(const float* p,
                                                             int64_t n) {
  return SumFloatRunOf(
      n,
      [p](int64_t i, Float8 * v) __attribute__((always_inline)) {
        __builtin_memcpy(v, p + i, sizeof *v);
      },
      [p](int64_t i) __attribute__((always_inline)) { return p[i]; });
}

#pragma GCC diagnostic pop

#if BATON_KERNELS_HAVE_AVX2
__attribute__((target("avx2"))) inline double SumFloatRunAvx2(const float* p,
                                                              int64_t n) {
  return SumFloatRunBody(p, n);
}
#endif

// A contiguous run's reduction, with the widest kernel the CPU has.
template <ReduceOp op, typename T, typename A>
A ReduceRun(const T* p, int64_t n) {
  if constexpr (op == ReduceOp::kSum && std::is_same_v<T, float> &&
                std::is_same_v<A, double>) {
#if BATON_KERNELS_HAVE_AVX2
    if (n >= 256 && UseAvx2Kernels()) return SumFloatRunAvx2(p, n);
#endif
    return SumFloatRunBody(p, n);
  } else {
#if BATON_KERNELS_HAVE_AVX2
    if (n >= 256 && UseAvx2Kernels()) return ReduceRunAvx2<op, T, A>(p, n);
#endif
    return ReduceRunBody<op, T, A>(p, n);
  }
}

}  // namespace baton::cpu::reduce_detail
