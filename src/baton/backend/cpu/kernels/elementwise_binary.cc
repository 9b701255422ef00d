// Binary, Compare and Select (elementwise.h).
#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "baton/backend/cpu/kernels/elementwise.h"
#include "baton/backend/cpu/kernels/isa.h"
#include "baton/backend/cpu/kernels/parallel.h"
#include "baton/backend/cpu/kernels/vector_loop.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/scalar_math.h"

namespace baton::cpu {
namespace {

template <typename T>
constexpr bool kIsHalf =
    std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

template <BinaryOp op, typename T>
constexpr int64_t BinaryGrain() {
  constexpr bool slow_op =
      op == BinaryOp::kPow || op == BinaryOp::kRem || op == BinaryOp::kAtan2 ||
      (op == BinaryOp::kDiv && !std::is_floating_point_v<T>);
  return (slow_op || kIsHalf<T>) ? kExpensiveGrain : kCheapGrain;
}

// Applies f(a_i, b_i) -> out_i in compute type C over n elements, with either
// operand possibly a broadcast scalar. The scalar is converted once, before
// any thread writes, so it may even live inside `out`. 16-bit floats are
// limited by their conversions (half.h), so their loops run in the widest
// instruction set (isa.h CallWidestIsa); the rest are memory-bound or have
// variants of their own.
template <typename C, typename T, typename R, typename F>
void RunBinaryLike(const T* a, const T* b, R* out, int64_t n, ScalarOperand s,
                   int64_t grain, F f) {
  auto run = [](const auto& body, int64_t lo, int64_t hi) {
    if constexpr (kIsHalf<T>) {
      CallWidestIsa(body, lo, hi);
    } else {
      body(lo, hi);
    }
  };
  switch (s) {
    case ScalarOperand::kNone:
      ParallelRanges(n, grain, [=](int64_t lo, int64_t hi) {
        run([=](int64_t l, int64_t h) __attribute__((always_inline)) {
          VectorLoop(l, h, [=](int64_t i) {
            out[i] = f(ToCompute<T>(a[i]), ToCompute<T>(b[i]));
          });
        }, lo, hi);
      });
      return;
    case ScalarOperand::kLhs: {
      const C av = ToCompute<T>(a[0]);
      ParallelRanges(n, grain, [=](int64_t lo, int64_t hi) {
        run([=](int64_t l, int64_t h) __attribute__((always_inline)) {
          VectorLoop(l, h,
                     [=](int64_t i) { out[i] = f(av, ToCompute<T>(b[i])); });
        }, lo, hi);
      });
      return;
    }
    case ScalarOperand::kRhs: {
      const C bv = ToCompute<T>(b[0]);
      ParallelRanges(n, grain, [=](int64_t lo, int64_t hi) {
        run([=](int64_t l, int64_t h) __attribute__((always_inline)) {
          VectorLoop(l, h,
                     [=](int64_t i) { out[i] = f(ToCompute<T>(a[i]), bv); });
        }, lo, hi);
      });
      return;
    }
  }
}

// float32/float64 add, sub, mul and div: IEEE operations whose loops are
// limited by arithmetic once data sits in cache (fused tiles), so they also
// get an AVX2 variant (isa.h: no FMA, bitwise equal to the baseline and to
// the interpreter). A scalar operand is read once, before any thread writes.
template <BinaryOp op, typename T>
constexpr bool kFloatArith =
    (std::is_same_v<T, float> || std::is_same_v<T, double>) &&
    (op == BinaryOp::kAdd || op == BinaryOp::kSub || op == BinaryOp::kMul ||
     op == BinaryOp::kDiv);

template <BinaryOp op, typename T, ScalarOperand s>
__attribute__((always_inline)) inline void ArithLoop(const T* a, const T* b,
                                                     T av, T bv, T* out,
                                                     int64_t lo, int64_t hi) {
  VectorLoop(lo, hi, [=](int64_t i) {
    out[i] = scalar::Binary<op, T>(s == ScalarOperand::kLhs ? av : a[i],
                                   s == ScalarOperand::kRhs ? bv : b[i]);
  });
}

#if BATON_KERNELS_HAVE_AVX2
template <BinaryOp op, typename T, ScalarOperand s>
__attribute__((target("avx2"))) void ArithLoopAvx2(const T* a, const T* b,
                                                   T av, T bv, T* out,
                                                   int64_t lo, int64_t hi) {
  ArithLoop<op, T, s>(a, b, av, bv, out, lo, hi);
}
#endif

template <BinaryOp op, typename T, ScalarOperand s>
void RunArith(const T* a, const T* b, T* out, int64_t n) {
  const T av = s == ScalarOperand::kLhs ? a[0] : T(0);
  const T bv = s == ScalarOperand::kRhs ? b[0] : T(0);
  ParallelRanges(n, kCheapGrain, [=](int64_t lo, int64_t hi) {
#if BATON_KERNELS_HAVE_AVX2
    if (UseAvx2Kernels()) {
      ArithLoopAvx2<op, T, s>(a, b, av, bv, out, lo, hi);
      return;
    }
#endif
    ArithLoop<op, T, s>(a, b, av, bv, out, lo, hi);
  });
}

// 16-bit float add, sub, mul and div as explicit AVX2 code: widen 8
// elements, operate in float32, canonicalize a NaN, round back. float16
// widens and rounds with the CPU's F16C instructions (one each way, where
// half.h's portable conversion is a dozen); bfloat16 with a shift and
// half.h's rounding in vector registers. Bitwise the portable loop: the
// conversions are exact and round to nearest even; F16C differs from half.h
// only on NaNs (it quiets a signalling NaN and keeps payloads), and here
// every NaN result is the canonical quiet NaN before it is narrowed, which
// both narrow alike (0x7e00, 0x7fc0). Ops that can pass a NaN operand
// through (pow(sNaN, 0), max, min) stay on the portable loop. A scalar
// operand is widened once, by half.h.
template <BinaryOp op>
constexpr bool kHalfArith = op == BinaryOp::kAdd || op == BinaryOp::kSub ||
                            op == BinaryOp::kMul || op == BinaryOp::kDiv;

#if BATON_KERNELS_HAVE_AVX2
bool CpuHasF16c() {
  unsigned eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

template <typename T>
__attribute__((target("avx2,f16c"), always_inline)) inline __m256 Widen8(
    const T* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if constexpr (std::is_same_v<T, float16>) {
    return _mm256_cvtph_ps(h);
  } else {
    return _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
}

// `r` holds no NaN but the canonical one.
template <typename T>
__attribute__((target("avx2,f16c"), always_inline)) inline void Narrow8(
    __m256 r, T* p) {
  __m128i h;
  if constexpr (std::is_same_v<T, float16>) {
    h = _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT);
  } else {  // half.h float_to_bf16: (u + 0x7fff + ((u >> 16) & 1)) >> 16
    const __m256i u = _mm256_castps_si256(r);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16),
                                         _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd),
        16);
    // Pack the eight 16-bit results (each lane holds one below 2^16).
    const __m256i packed = _mm256_packus_epi32(rounded, rounded);
    h = _mm256_castsi256_si128(
        _mm256_permute4x64_epi64(packed, _MM_SHUFFLE(3, 1, 2, 0)));
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
}

template <BinaryOp op, typename T, ScalarOperand s>
__attribute__((target("avx2,f16c"))) void HalfArithAvx2(const T* a, const T* b,
                                                       float av, float bv,
                                                       T* out, int64_t lo,
                                                       int64_t hi) {
  const __m256 canonical_nan =
      _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000));
  int64_t i = lo;
  for (; i + 8 <= hi; i += 8) {
    const __m256 x =
        s == ScalarOperand::kLhs ? _mm256_set1_ps(av) : Widen8(a + i);
    const __m256 y =
        s == ScalarOperand::kRhs ? _mm256_set1_ps(bv) : Widen8(b + i);
    __m256 r;
    if constexpr (op == BinaryOp::kAdd) r = _mm256_add_ps(x, y);
    else if constexpr (op == BinaryOp::kSub) r = _mm256_sub_ps(x, y);
    else if constexpr (op == BinaryOp::kMul) r = _mm256_mul_ps(x, y);
    else r = _mm256_div_ps(x, y);
    r = _mm256_blendv_ps(r, canonical_nan, _mm256_cmp_ps(r, r, _CMP_UNORD_Q));
    Narrow8(r, out + i);
  }
  for (; i < hi; ++i) {
    out[i] = FromCompute<T>(scalar::Binary<op, float>(
        s == ScalarOperand::kLhs ? av : ToCompute<T>(a[i]),
        s == ScalarOperand::kRhs ? bv : ToCompute<T>(b[i])));
  }
}

// Runs HalfArithAvx2 over n elements when the AVX2 kernels are on and the
// CPU has F16C (every AVX2 CPU from Intel and AMD does; a hypervisor may
// hide it); false otherwise, and nothing was done.
template <BinaryOp op, typename T>
bool RunHalfArithAvx2(const T* a, const T* b, T* out, int64_t n,
                      ScalarOperand s) {
  static const bool f16c = CpuHasF16c();
  if (!f16c || !UseAvx2Kernels()) return false;
  const float av = s == ScalarOperand::kLhs ? ToCompute<T>(a[0]) : 0.0f;
  const float bv = s == ScalarOperand::kRhs ? ToCompute<T>(b[0]) : 0.0f;
  ParallelRanges(n, kCheapGrain, [=](int64_t lo, int64_t hi) {
    switch (s) {
      case ScalarOperand::kNone:
        return HalfArithAvx2<op, T, ScalarOperand::kNone>(a, b, av, bv, out,
                                                          lo, hi);
      case ScalarOperand::kLhs:
        return HalfArithAvx2<op, T, ScalarOperand::kLhs>(a, b, av, bv, out,
                                                         lo, hi);
      case ScalarOperand::kRhs:
        return HalfArithAvx2<op, T, ScalarOperand::kRhs>(a, b, av, bv, out,
                                                         lo, hi);
    }
  });
  return true;
}
#endif

// Select moves bits, so it runs on unsigned integers of the element's size.
// The mask form (rather than ?:) and reading the predicate's bytes as
// uint8_t (GCC will not widen bool loads into vector masks) make it
// vectorize: ~5x faster than the obvious loop.
template <typename U, bool kScalarPred, bool kScalarTrue, bool kScalarFalse>
void RunSelect(const uint8_t* pred, const U* t, const U* f, U* out, int64_t n) {
  const uint8_t p0 = *pred;
  const U t0 = *t;
  const U f0 = *f;
  ParallelRanges(n, kCheapGrain, [=](int64_t lo, int64_t hi) {
    VectorLoop(lo, hi, [=](int64_t i) {
      const U mask = static_cast<U>(U(0) - U(kScalarPred ? p0 : pred[i]));
      const U tv = kScalarTrue ? t0 : t[i];
      const U fv = kScalarFalse ? f0 : f[i];
      out[i] = static_cast<U>((tv & mask) | (fv & static_cast<U>(~mask)));
    });
  });
}

template <typename U>
void SelectTyped(const bool* pred, const void* t, const void* f, void* out,
                 int64_t n, SelectScalars s) {
  // bool is stored as one byte holding 0 or 1; reading it as uint8_t is
  // allowed (char-type access).
  const auto* pred_bytes = reinterpret_cast<const uint8_t*>(pred);
  const U* tp = static_cast<const U*>(t);
  const U* fp = static_cast<const U*>(f);
  U* op = static_cast<U*>(out);
  const int key = (s.pred ? 4 : 0) | (s.on_true ? 2 : 0) | (s.on_false ? 1 : 0);
  switch (key) {
    case 0:
      return RunSelect<U, false, false, false>(pred_bytes, tp, fp, op, n);
    case 1:
      return RunSelect<U, false, false, true>(pred_bytes, tp, fp, op, n);
    case 2:
      return RunSelect<U, false, true, false>(pred_bytes, tp, fp, op, n);
    case 3:
      return RunSelect<U, false, true, true>(pred_bytes, tp, fp, op, n);
    case 4:
      return RunSelect<U, true, false, false>(pred_bytes, tp, fp, op, n);
    case 5:
      return RunSelect<U, true, false, true>(pred_bytes, tp, fp, op, n);
    case 6:
      return RunSelect<U, true, true, false>(pred_bytes, tp, fp, op, n);
    default:
      return RunSelect<U, true, true, true>(pred_bytes, tp, fp, op, n);
  }
}

// complex(re, im) from two float (double) operands.
template <typename R>
void RunMakeComplex(const R* re, const R* im, std::complex<R>* out, int64_t n,
                    ScalarOperand s) {
  RunBinaryLike<R>(re, im, out, n, s, kCheapGrain,
                   [](R a, R b) { return std::complex<R>(a, b); });
}

}  // namespace

void Binary(BinaryOp op, DType dtype, const void* lhs, const void* rhs,
            void* out, int64_t n, ScalarOperand scalar) {
  if (n <= 0) return;
  if (op == BinaryOp::kComplex) {
    if (dtype == DType::kFloat64) {
      return RunMakeComplex(static_cast<const double*>(lhs),
                            static_cast<const double*>(rhs),
                            static_cast<complex128*>(out), n, scalar);
    }
    return RunMakeComplex(static_cast<const float*>(lhs),
                          static_cast<const float*>(rhs),
                          static_cast<complex64*>(out), n, scalar);
  }
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    VisitBinaryOp(op, [&](auto op_c) {
      constexpr BinaryOp kOp = decltype(op_c)::value;
      const T* a = static_cast<const T*>(lhs);
      const T* b = static_cast<const T*>(rhs);
      T* o = static_cast<T*>(out);
#if BATON_KERNELS_HAVE_AVX2
      if constexpr (kIsHalf<T> && kHalfArith<kOp>) {
        if (RunHalfArithAvx2<kOp, T>(a, b, o, n, scalar)) return;
      }
#endif
      if constexpr (kFloatArith<kOp, T>) {
        switch (scalar) {
          case ScalarOperand::kNone:
            return RunArith<kOp, T, ScalarOperand::kNone>(a, b, o, n);
          case ScalarOperand::kLhs:
            return RunArith<kOp, T, ScalarOperand::kLhs>(a, b, o, n);
          case ScalarOperand::kRhs:
            return RunArith<kOp, T, ScalarOperand::kRhs>(a, b, o, n);
        }
      }
      RunBinaryLike<C>(static_cast<const T*>(lhs), static_cast<const T*>(rhs),
                       static_cast<T*>(out), n, scalar, BinaryGrain<kOp, T>(),
                       [](C a, C b) {
                         return FromCompute<T>(scalar::Binary<kOp, C>(a, b));
                       });
    });
  });
}

void Compare(CompareOp op, DType dtype, const void* lhs, const void* rhs,
             bool* out, int64_t n, ScalarOperand scalar) {
  if (n <= 0) return;
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    VisitCompareOp(op, [&](auto op_c) {
      constexpr CompareOp kOp = decltype(op_c)::value;
      RunBinaryLike<C>(static_cast<const T*>(lhs), static_cast<const T*>(rhs),
                       out, n, scalar,
                       kIsHalf<T> ? kExpensiveGrain : kCheapGrain,
                       [](C a, C b) { return scalar::Compare<kOp, C>(a, b); });
    });
  });
}

void Select(DType dtype, const bool* pred, const void* on_true,
            const void* on_false, void* out, int64_t n, SelectScalars scalars) {
  if (n <= 0) return;
  switch (dtype_size(dtype)) {
    case 1:
      return SelectTyped<uint8_t>(pred, on_true, on_false, out, n, scalars);
    case 2:
      return SelectTyped<uint16_t>(pred, on_true, on_false, out, n, scalars);
    case 4:
      return SelectTyped<uint32_t>(pred, on_true, on_false, out, n, scalars);
    case 8:
      return SelectTyped<uint64_t>(pred, on_true, on_false, out, n, scalars);
    default:  // complex128
      return SelectTyped<unsigned __int128>(pred, on_true, on_false, out, n,
                                            scalars);
  }
}

}  // namespace baton::cpu
