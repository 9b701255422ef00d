// Unary and Convert (elementwise.h).
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
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

// Ops that call into libm (sin, cos, float64 transcendentals; floor, ceil
// and round too, below SSE4.1) or convert 16-bit floats cost nanoseconds an
// element, so they are worth splitting at smaller sizes.
template <UnaryOp op, typename T>
constexpr int64_t UnaryGrain() {
  constexpr bool cheap = op == UnaryOp::kNeg || op == UnaryOp::kAbs ||
                         op == UnaryOp::kNot || op == UnaryOp::kSign;
  return (cheap && !kIsHalf<T>) ? kCheapGrain : kExpensiveGrain;
}

#if defined(__SSE2__)
// std::sqrt(float) compiles to the sqrtss instruction plus a libm call for
// negative inputs that only sets errno, and that call keeps GCC from
// vectorizing. sqrtps/sqrtpd are the same IEEE correctly rounded operation
// (negative -> the same default NaN, NaN -> the same quieted NaN), so this
// is bitwise what scalar::Unary gives, about 10x faster. rsqrt is 1 / sqrt,
// two roundings, as in scalar_math.h.
template <UnaryOp op>
void SqrtRange(const float* in, float* out, int64_t lo, int64_t hi) {
  int64_t i = lo;
  for (; i + 4 <= hi; i += 4) {
    __m128 r = _mm_sqrt_ps(_mm_loadu_ps(in + i));
    if constexpr (op == UnaryOp::kRsqrt) r = _mm_div_ps(_mm_set1_ps(1.f), r);
    _mm_storeu_ps(out + i, r);
  }
  for (; i < hi; ++i) out[i] = scalar::Unary<op, float>(in[i]);
}
template <UnaryOp op>
void SqrtRange(const double* in, double* out, int64_t lo, int64_t hi) {
  int64_t i = lo;
  for (; i + 2 <= hi; i += 2) {
    __m128d r = _mm_sqrt_pd(_mm_loadu_pd(in + i));
    if constexpr (op == UnaryOp::kRsqrt) r = _mm_div_pd(_mm_set1_pd(1.0), r);
    _mm_storeu_pd(out + i, r);
  }
  for (; i < hi; ++i) out[i] = scalar::Unary<op, double>(in[i]);
}
#endif

// exp, log, tanh and logistic on float32 (and 16-bit floats, which compute
// in float32) are fast_math.h's branch-free approximations: arithmetic-bound
// (exp: ~0.6 ns an element with AVX-512; tanh: ~0.47 ns with AVX2 and 0.31
// with AVX-512, but ~18 with SSE2, where its std::fma calls are libm calls),
// so they also get AVX2 and AVX-512 variants (isa.h), both with FMA.
template <UnaryOp op, typename T>
constexpr bool kVectorMath =
    (op == UnaryOp::kExp || op == UnaryOp::kLog || op == UnaryOp::kTanh ||
     op == UnaryOp::kLogistic) &&
    (std::is_same_v<T, float> || kIsHalf<T>);

template <UnaryOp op, typename T>
__attribute__((always_inline)) inline void UnaryLoop(const T* in, T* out,
                                                     int64_t lo, int64_t hi) {
  using C = ComputeType<T>;
  VectorLoop(lo, hi, [=](int64_t i) {
    out[i] = FromCompute<T>(scalar::Unary<op, C>(ToCompute<T>(in[i])));
  });
}

#if BATON_KERNELS_HAVE_AVX2
// The same loop compiled for AVX2 and FMA (isa.h: only explicit std::fma
// fuses); everything it calls is inlined into it and so compiled for AVX2
// too.
template <UnaryOp op, typename T>
__attribute__((target(BATON_AVX2_TARGET))) void UnaryLoopAvx2(
    const T* in, T* out, int64_t lo, int64_t hi) {
  UnaryLoop<op, T>(in, out, lo, hi);
}
#endif

#if BATON_KERNELS_HAVE_AVX512
// And for AVX-512 (isa.h): 16 lanes, mask registers for the selects, FMA.
template <UnaryOp op, typename T>
__attribute__((target(BATON_AVX512_TARGET))) void UnaryLoopAvx512(
    const T* in, T* out, int64_t lo, int64_t hi) {
  UnaryLoop<op, T>(in, out, lo, hi);
}
#endif

template <UnaryOp op, typename T>
void RunUnary(const T* in, T* out, int64_t n) {
  if constexpr (kVectorMath<op, T>) {
    ParallelRanges(n,
                   std::is_same_v<T, float> ? kTranscendentalGrain
                                            : kExpensiveGrain,
                   [=](int64_t lo, int64_t hi) {
#if BATON_KERNELS_HAVE_AVX512
                     if (UseAvx512Kernels()) {
                       UnaryLoopAvx512<op, T>(in, out, lo, hi);
                       return;
                     }
#endif
#if BATON_KERNELS_HAVE_AVX2
                     if (UseAvx2Kernels()) {
                       UnaryLoopAvx2<op, T>(in, out, lo, hi);
                       return;
                     }
#endif
                     UnaryLoop<op, T>(in, out, lo, hi);
                   });
#if defined(__SSE2__)
  } else if constexpr ((op == UnaryOp::kSqrt || op == UnaryOp::kRsqrt) &&
                       (std::is_same_v<T, float> ||
                        std::is_same_v<T, double>)) {
    ParallelRanges(n, kCheapGrain, [=](int64_t lo, int64_t hi) {
      SqrtRange<op>(in, out, lo, hi);
    });
#endif
  } else if constexpr (kIsHalf<T>) {
    // Limited by the conversions (half.h): the widest instruction set.
    ParallelRanges(n, UnaryGrain<op, T>(), [=](int64_t lo, int64_t hi) {
      CallWidestIsa(
          [=](int64_t l, int64_t h) __attribute__((always_inline)) {
            UnaryLoop<op, T>(in, out, l, h);
          },
          lo, hi);
    });
  } else {
    ParallelRanges(n, UnaryGrain<op, T>(), [=](int64_t lo, int64_t hi) {
      UnaryLoop<op, T>(in, out, lo, hi);
    });
  }
}

// Complex operands: std::complex arithmetic, one element at a time (abs,
// real and imag write the real type of the parts).
template <UnaryOp op, typename T>
void RunComplexUnary(const T* in, void* out, int64_t n) {
  using O = decltype(scalar::Unary<op, T>(T{}));
  O* o = static_cast<O*>(out);
  ParallelRanges(n, kExpensiveGrain, [=](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) o[i] = scalar::Unary<op, T>(in[i]);
  });
}

// A conversion to or from a 16-bit float is limited by its arithmetic
// (half.h): it runs in the widest instruction set.
template <typename To, typename From>
void RunConvert(const From* in, To* out, int64_t n) {
  constexpr bool cheap = !kIsHalf<To> && !kIsHalf<From>;
  ParallelRanges(n, cheap ? kCheapGrain : kExpensiveGrain,
                 [=](int64_t lo, int64_t hi) {
                   auto body = [=](int64_t l, int64_t h)
                                   __attribute__((always_inline)) {
                     VectorLoop(l, h, [=](int64_t i) {
                       out[i] = ConvertElement<To, From>(in[i]);
                     });
                   };
                   if constexpr (cheap) {
                     body(lo, hi);
                   } else {
                     CallWidestIsa(body, lo, hi);
                   }
                 });
}

}  // namespace

void Unary(UnaryOp op, DType dtype, const void* in, void* out, int64_t n) {
  if (n <= 0) return;
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    VisitUnaryOp(op, [&](auto op_c) {
      if constexpr (kIsComplex<T>) {
        RunComplexUnary<decltype(op_c)::value, T>(static_cast<const T*>(in),
                                                  out, n);
      } else {
        RunUnary<decltype(op_c)::value, T>(static_cast<const T*>(in),
                                           static_cast<T*>(out), n);
      }
    });
  });
}

void Convert(DType from, DType to, const void* in, void* out, int64_t n) {
  if (n <= 0) return;
  VisitDType(from, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    VisitDType(to, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      RunConvert<To, From>(static_cast<const From*>(in), static_cast<To*>(out),
                           n);
    });
  });
}

}  // namespace baton::cpu
