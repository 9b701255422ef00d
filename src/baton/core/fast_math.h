// Vectorizable float32 exp, log, tanh and logistic.
//
// Plain scalar functions on float, written so that GCC auto-vectorizes a loop
// that calls them: Cephes-style range reduction and polynomials, integer bit
// tricks through std::bit_cast, selects (?:) instead of branches, no integer
// multiplies or divides, and no libm calls except std::fma (Tanh, below).
// scalar_math.h routes float32 (and float16/bfloat16, which compute in float)
// through them, so the CPU kernels and the reference interpreter share one
// definition.
//
// Bitwise reproducibility: every step is one IEEE-754 operation with a single
// rounding (+, -, *, /, an explicit std::fma, float<->int conversion, bit
// logic), so a scalar, an SSE2, an AVX2 and an AVX-512 build of the same code
// give identical bits. The compiler must not fuse a*b+c on its own: baton
// compiles with -ffp-contract=off (src/CMakeLists.txt), so only the explicit
// std::fma calls fuse, and each of those is one correctly rounded operation
// whether it becomes a vfmadd instruction or a call to libm's fmaf. The AVX2
// and AVX-512 kernel variants enable FMA (isa.h: chosen only on CPUs that
// have it), so there std::fma is one instruction and the loops vectorize;
// the SSE2 baseline kernel and the interpreter call fmaf, which gives the
// same bits but keeps their Tanh loop scalar (~18 ns an element against
// ~1.7 before FMA; exp, log and logistic use no fma and are unaffected).
// Denormals are handled in full (no flush-to-zero is assumed or set).
//
// Accuracy against a double-precision reference, measured over all 2^32
// floats: exp 0.99 ulp, log 0.83 ulp, tanh 2.03 ulp, logistic 2.40 ulp
// (glibc's own tanhf: 2.19). tests/cpp/kernels/fast_math_test.cc checks
// these on a dense sample (all floats with BATON_FAST_MATH_EXHAUSTIVE=1).
// Special values follow libm; a NaN input gives that NaN, quieted (x + x),
// on every path:
//   Exp: NaN -> NaN, +inf -> +inf, -inf -> +0, overflow (x > 88.7228) ->
//        +inf, results in the denormal range are rounded once (correct to
//        1 ulp of the denormal), results below half the least denormal
//        (x < -103.97) -> +0.
//   Log: NaN -> NaN, +inf -> +inf, +-0 -> -inf, x < 0 (and -inf) -> NaN,
//        denormal x exact to the same bound.
//   Tanh: NaN -> NaN, +-inf -> +-1, odd (tanh(-x) == -tanh(x) bitwise,
//        tanh(-0) == -0), tanh(x) == x for |x| < ~2^-12 (denormals
//        included), rounds to +-1 for |x| > ~9.01, and monotonic (no float
//        x < x' has Tanh(x) > Tanh(x'), checked over all floats).
//   Logistic: 1/(1+exp(-x)) for x >= 0, exp(x)/(1+exp(x)) for x < 0, so
//        it stays accurate into the denormal range instead of flushing to 0
//        below x = -88.7 (the old libm formula did); NaN -> NaN, +inf -> 1,
//        -inf -> 0, logistic(+-0) == 0.5.
// float64 keeps libm (scalar_math.h), as do sin and cos at every precision.
//
// The GPU runs this same text: the CUDA code generator puts it into every
// kernel source ahead of its device prelude (backend/cuda/codegen), so the
// generated kernels' float32 exp/log/tanh/logistic are these functions, bit
// for bit, and not CUDA's math library. Under NVRTC (__CUDACC__) there are no
// std headers: `port` below supplies the bit casts and the fma from CUDA's
// intrinsics (__fmaf_rn is IEEE fma, as std::fma), and kernels are compiled
// with --fmad=false, the GPU's -ffp-contract=off. Include guards rather than
// #pragma once: in a generated kernel source the text is not a file.
#ifndef BATON_CORE_FAST_MATH_H_
#define BATON_CORE_FAST_MATH_H_

#if defined(__CUDACC__)
#define BATON_FAST_MATH_INLINE __device__ __forceinline__
#else
#include <bit>
#include <cmath>
#include <cstdint>
#endif

#if !defined(__CUDACC__)
// Forced inlining keeps the functions inside the caller's loop, so they
// vectorize there and compile for the caller's ISA (a target("avx2") kernel
// may inline these default-ISA functions: their ISA is a subset).
#define BATON_FAST_MATH_INLINE inline __attribute__((always_inline))
#endif

namespace baton::fast_math {
namespace detail {

#if defined(__CUDACC__)
using uint32_t = unsigned int;
using int32_t = int;
BATON_FAST_MATH_INLINE float FromBits(uint32_t u) { return __uint_as_float(u); }
BATON_FAST_MATH_INLINE uint32_t Bits(float f) { return __float_as_uint(f); }
BATON_FAST_MATH_INLINE float Fma(float a, float b, float c) {
  return __fmaf_rn(a, b, c);
}
#else
using std::int32_t;
using std::uint32_t;
// std::bit_cast is C++20; the generated kernels are C++17 (NVRTC's
// -std=c++17, and the host compiler when it emulates them), where GCC's and
// Clang's builtin does the same.
#if defined(__cpp_lib_bit_cast)
BATON_FAST_MATH_INLINE float FromBits(uint32_t u) {
  return std::bit_cast<float>(u);
}
BATON_FAST_MATH_INLINE uint32_t Bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
#else
BATON_FAST_MATH_INLINE float FromBits(uint32_t u) {
  return __builtin_bit_cast(float, u);
}
BATON_FAST_MATH_INLINE uint32_t Bits(float f) {
  return __builtin_bit_cast(uint32_t, f);
}
#endif
BATON_FAST_MATH_INLINE float Fma(float a, float b, float c) {
  return std::fma(a, b, c);
}
#endif
// The bits of the float constants std::numeric_limits would give (an
// unnamed enum: NVRTC warns about unreferenced namespace-scope variables).
enum : uint32_t {
  kInfinityBits = 0x7f800000u,
  kQuietNaNBits = 0x7fc00000u,
  kMinNormalBits = 0x00800000u,
  kMaxBits = 0x7f7fffffu,
};
BATON_FAST_MATH_INLINE float Abs(float x) {
  return FromBits(Bits(x) & 0x7fffffffu);
}
// c ? a : b as bit logic. A ?: becomes a branch in GCC's IR, and the
// optimizer then moves the arithmetic that feeds only one arm into that
// arm, where the vectorizer may not execute it unconditionally
// (-ftrapping-math); a mask keeps both operands computed on every path.
BATON_FAST_MATH_INLINE float Select(bool c, float a, float b) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return FromBits((Bits(a) & m) | (Bits(b) & ~m));
}
// y, or x quieted if x is NaN. Arithmetic on NaN gives *a* NaN, but which
// sign and payload depends on operand order when two NaN operands meet, and
// the compiler may order (or negate constants) differently in its scalar
// and vector code; this makes every NaN result the same bits: x + x.
BATON_FAST_MATH_INLINE float NaNOf(float x, float y) {
  return Select(x != x, x + x, y);
}

}  // namespace detail

using detail::int32_t;
using detail::uint32_t;

namespace detail {
// e^x = ExpMantissa(x, n) * 2^n, the mantissa in [0.7, 1.42] (exact below
// the rounding of the polynomial). Meaningful for |x| < 2^21, where the
// callers take its result; other inputs give some n and are replaced.
BATON_FAST_MATH_INLINE float ExpMantissa(float x, uint32_t& n_out) {
  // n = round(x / ln2): adding 1.5 * 2^23 rounds to an integer (ties to
  // even) that sits in the low mantissa bits. The integer steps are
  // unsigned so that no input is UB.
  constexpr float kShift = 12582912.f;  // 0x4b400000
  const float t = x * 1.44269504088896341f + kShift;
  const float n = t - kShift;
  n_out = Bits(t) - 0x4b400000u;
  // r = x - n ln2 (Cody-Waite: n * kLn2Hi is exact, the difference is exact
  // by Sterbenz), |r| <= 0.35.
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  // e^r = 1 + r + r^2 P(r), Cephes expf minimax coefficients.
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r;
  return p + 1.f;
}
}  // namespace detail

// e^x.
BATON_FAST_MATH_INLINE float Exp(float x) {
  using detail::FromBits;
  uint32_t nu;
  const float p = detail::ExpMantissa(x, nu);
  // p * 2^n as (p * 2^(n - h)) * 2^h, h = floor(n / 2): for n in [-150,
  // 128] both factors are normal floats, the first product is exact and
  // the second rounds once, also into the denormal range or to inf.
  const uint32_t h = static_cast<uint32_t>(static_cast<int32_t>(nu) >> 1);
  const float s1 = FromBits((nu - h + 127u) << 23);
  const float s2 = FromBits((h + 127u) << 23);
  const float e = (p * s1) * s2;
  // Past 89 / -104 n leaves that range; the results there are inf and 0
  // (exp(x) overflows from 88.72, and is below half the least denormal
  // under -103.97). NaN: see NaNOf.
  float y = detail::Select(x > 89.f, detail::FromBits(detail::kInfinityBits), e);
  y = detail::Select(x < -104.f, 0.f, y);
  return detail::NaNOf(x, y);
}

// Natural logarithm.
BATON_FAST_MATH_INLINE float Log(float x) {
  using detail::Bits;
  using detail::FromBits;
  // Denormals (and 0, negatives, NaN: fixed up below) are scaled by 2^23.
  const bool tiny = x < detail::FromBits(detail::kMinNormalBits);
  const float xs = detail::Select(tiny, x * 8388608.f, x);
  // x = m * 2^e with m in [sqrt(1/2), sqrt(2)): moving the mantissa's
  // origin to sqrt(1/2) (0x3f3504f3) makes the exponent field carry e.
  const uint32_t u = Bits(xs) + (0x3f800000u - 0x3f3504f3u);
  const int32_t e = static_cast<int32_t>(u >> 23) - 127 -
                    static_cast<int32_t>(23u & (0u - uint32_t{tiny}));
  const float f = FromBits((u & 0x007fffffu) + 0x3f3504f3u) - 1.f;  // exact
  const float fe = static_cast<float>(e);
  // log(1 + f) = f - f^2/2 + f^3 P(f), Cephes logf minimax coefficients.
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f + -1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f + -1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f + -1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f + -2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  float y = (p * f) * z;
  // + e ln2, with ln2 split as 0.693359375 (exact product) - 2.12194440e-4.
  y = y + fe * -2.12194440e-4f;
  y = y + -0.5f * z;
  float r = (f + y) + fe * 0.693359375f;
  // +inf -> +inf, NaN -> NaN (NaNOf), x < 0 -> NaN, +-0 -> -inf.
  r = detail::NaNOf(x, detail::Select(x > detail::FromBits(detail::kMaxBits),
                                      x, r));
  r = detail::Select(x < 0.f, detail::FromBits(detail::kQuietNaNBits), r);
  return detail::Select(x == 0.f, -detail::FromBits(detail::kInfinityBits),
                        r);
}

// Hyperbolic tangent. The same two branches as before FMA (a polynomial
// near 0, 1 - 2 / (e^2|x| + 1) beyond), each step an fma where it fits:
// about half the operations (kernels_bench FastMathSize, one thread:
// AVX-512 ~0.31 ns an element against 0.62, AVX2 ~0.47 against 0.86).
// The coefficients are minimax fits of the relative error made by what each
// branch computes from them, rounded to float32 one at a time with the rest
// refitted: tools/fit_tanh.py prints them.
BATON_FAST_MATH_INLINE float Tanh(float x) {
  using detail::Bits;
  using detail::FromBits;
  const float a = detail::Abs(x);
  // |x| < 0.55: x + x^3 P(x^2), P of degree 3 (relative error 0.62 *
  // 2^-24); the sum rounds once, so tiny x give x.
  const float z = a * a;
  float p = 1.64378788e-2f;
  p = detail::Fma(p, z, -5.26720099e-2f);
  p = detail::Fma(p, z, 1.33207291e-1f);
  p = detail::Fma(p, z, -3.33329469e-1f);
  const float small = detail::Fma(a * z, p, a);
  // Otherwise 1 - 2 / (e^2c + 1), c = |x| clamped to 9.1: past 9.01 that
  // rounds to 1 (also for inf; NaN is replaced below). e^2c = 2^n e^2r with
  // n = round(2c / ln2) (adding 1.5 * 2^23 rounds to an integer in the low
  // mantissa bits, n in [0, 26]) and r = c - n ln2/2 in one fma, |r| <=
  // ln2/4: float(ln2/2) is within 1e-9 of ln2/2, which makes e^2r off by
  // at most 5e-8 relative for n = 26, where that is far below half an ulp
  // of the result, and by 2e-9 for n = 1. e^2r ~ Q(r), degree 5 (relative
  // error 1.55 * 2^-24, which reaches the result scaled by 2e/(e + 1)^2 <=
  // 0.38 for |x| >= 0.55); 2^n is built in the exponent field, and the
  // product by it is exact.
  // 2.88539008 is 2 / ln2, 0.346573591 is ln2 / 2.
  const float c = detail::Select(a < 9.1f, a, 9.1f);
  constexpr float kShift = 12582912.f;  // 0x4b400000
  const float t = detail::Fma(c, 2.88539008f, kShift);
  const float n = t - kShift;
  const float r = detail::Fma(n, -0.346573591f, c);
  float q = 2.65274525e-1f;
  q = detail::Fma(q, r, 6.70372009e-1f);
  q = detail::Fma(q, r, 1.33341181f);
  q = detail::Fma(q, r, 1.99996591f);
  q = detail::Fma(q, r, 1.9999994f);
  q = detail::Fma(q, r, 1.f);
  // 2^n: t's bits are 0x4b400000 + n, whose 0x4b400000 shifts out.
  const float s = FromBits((Bits(t) << 23) + 0x3f800000u);
  const float large = 1.f - 2.f / detail::Fma(q, s, 1.f);
  // A NaN takes the small branch, whose every NaN operand is that NaN
  // quieted with the sign cleared; its sign is then replaced by x's (bits
  // of x + x), whatever sign an operation gave it.
  const float y = detail::Select(!(a >= 0.55f), small, large);
  return FromBits((Bits(y) & 0x7fffffffu) | (Bits(x) & 0x80000000u));
}

// 1 / (1 + e^-x).
BATON_FAST_MATH_INLINE float Logistic(float x) {
  const float e = Exp(-detail::Abs(x));  // in [0, 1]
  return detail::NaNOf(x, detail::Select(x >= 0.f, 1.f, e) / (1.f + e));
}

}  // namespace baton::fast_math

#endif  // BATON_CORE_FAST_MATH_H_
