// Vectorizable float32 exp, log, tanh and logistic.
//
// Plain scalar functions on float, written so that GCC auto-vectorizes a loop
// that calls them: Cephes-style range reduction and polynomials, integer bit
// tricks through std::bit_cast, selects (?:) instead of branches, no libm
// calls, no integer multiplies or divides. scalar_math.h routes float32 (and
// float16/bfloat16, which compute in float) through them, so the CPU kernels
// and the reference interpreter share one definition.
//
// Bitwise reproducibility: every step is one IEEE-754 basic operation (+, -,
// *, /, float<->int conversion, bit logic), so a scalar, an SSE2, an AVX2
// and an AVX-512 build of the same code give identical bits, provided the
// compiler does not fuse a*b+c into an FMA. baton compiles with
// -ffp-contract=off (src/CMakeLists.txt) and the AVX2 and AVX-512 kernel
// variants do not enable FMA.
// Denormals are handled in full (no flush-to-zero is assumed or set).
//
// Accuracy against a double-precision reference, measured over all 2^32
// floats: exp 0.99 ulp, log 0.83 ulp, tanh 1.33 ulp, logistic 2.40 ulp
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
//        tanh(-0) == -0), tanh(x) == x for |x| < ~2^-12 and rounds to +-1
//        for |x| > ~9.01.
//   Logistic: 1/(1+exp(-x)) for x >= 0, exp(x)/(1+exp(x)) for x < 0, so
//        it stays accurate into the denormal range instead of flushing to 0
//        below x = -88.7 (the old libm formula did); NaN -> NaN, +inf -> 1,
//        -inf -> 0, logistic(+-0) == 0.5.
// float64 keeps libm (scalar_math.h), as do sin and cos at every precision.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

// Forced inlining keeps the functions inside the caller's loop, so they
// vectorize there and compile for the caller's ISA (a target("avx2") kernel
// may inline these default-ISA functions: their ISA is a subset).
#define BATON_FAST_MATH_INLINE inline __attribute__((always_inline))

namespace baton::fast_math {
namespace detail {

BATON_FAST_MATH_INLINE float FromBits(uint32_t u) {
  return std::bit_cast<float>(u);
}
BATON_FAST_MATH_INLINE uint32_t Bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
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
  float y = detail::Select(x > 89.f, std::numeric_limits<float>::infinity(), e);
  y = detail::Select(x < -104.f, 0.f, y);
  return detail::NaNOf(x, y);
}

// Natural logarithm.
BATON_FAST_MATH_INLINE float Log(float x) {
  using detail::Bits;
  using detail::FromBits;
  // Denormals (and 0, negatives, NaN: fixed up below) are scaled by 2^23.
  const bool tiny = x < std::numeric_limits<float>::min();
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
  r = detail::NaNOf(x, detail::Select(x > std::numeric_limits<float>::max(),
                                      x, r));
  r = detail::Select(x < 0.f, std::numeric_limits<float>::quiet_NaN(), r);
  return detail::Select(x == 0.f, -std::numeric_limits<float>::infinity(),
                        r);
}

// Hyperbolic tangent.
BATON_FAST_MATH_INLINE float Tanh(float x) {
  using detail::Bits;
  using detail::FromBits;
  const float a = detail::Abs(x);
  // |x| < 0.625: x + x^3 P(x^2), Cephes tanhf minimax coefficients.
  const float z = a * a;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z + -5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z + -3.33332819422e-1f;
  const float small = (p * z) * a + a;
  // Otherwise 1 - 2 / (e^2|x| + 1). Past |x| = 9.01 that rounds to 1, so
  // |x| is clamped to 10 first (also inf; NaN is replaced below): then
  // e^2|x| lies in [e^1.25, e^20], where Exp's scaling is one exact
  // multiply by 2^n (n in [1, 29]) and its overflow, underflow and NaN
  // fix-ups are dead, so they are left out: the same bits as Exp(a + a)
  // (all 2^32 inputs give the same tanh as before), ~15% less time.
  const float c = detail::Select(a < 10.f, a, 10.f);
  uint32_t nu;
  const float m = detail::ExpMantissa(c + c, nu);
  const float e = m * FromBits((nu + 127u) << 23);
  const float large = 1.f - 2.f / (e + 1.f);
  // A NaN takes the small branch, whose every step has that one NaN as
  // its only NaN operand, so it comes out quieted with the sign cleared,
  // whatever the operand order; the sign below makes it x + x (NaNOf's
  // bits) without NaNOf's compare and select.
  const float r = detail::Select(!(a >= 0.625f), small, large);
  return FromBits(Bits(r) | (Bits(x) & 0x80000000u));
}

// 1 / (1 + e^-x).
BATON_FAST_MATH_INLINE float Logistic(float x) {
  const float e = Exp(-detail::Abs(x));  // in [0, 1]
  return detail::NaNOf(x, detail::Select(x >= 0.f, 1.f, e) / (1.f + e));
}

}  // namespace baton::fast_math
