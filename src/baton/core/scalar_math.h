// Per-element semantics of every elementwise op, on compute types (see
// dtype_dispatch.h). This is the single definition used by the CPU kernels and
// by the reference interpreter, so both give bitwise-equal results.
//
// Semantics follow XLA: integer arithmetic wraps; integer x/0 == -1 and
// x%0 == x; INT_MIN/-1 == INT_MIN; float max/min propagate NaN; integer pow
// with a negative exponent is 0 unless the base is 1 or -1; bool add/max/or
// are logical or, bool mul/min/and are logical and. float32 (and so
// float16/bfloat16) exp, log, tanh and logistic are fast_math.h's
// vectorizable approximations (<= 2.4 ulp), not libm's bits; float64 keeps
// libm. log1p, expm1, tan, atan and atan2 call libm at every precision.
// Shifts follow XLA: the amount is read as unsigned, and amounts of at
// least the bit width give 0 (left, logical right) or the sign fill
// (arithmetic right).
#pragma once

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "baton/core/complex_type.h"
#include "baton/core/fast_math.h"
#include "baton/core/op_codes.h"

namespace baton::scalar {

template <typename C>
inline constexpr bool kIsFloat = std::is_floating_point_v<C>;


// The unary ops whose result on a complex operand is real-typed.
template <UnaryOp op>
inline constexpr bool kComplexToReal =
    op == UnaryOp::kAbs || op == UnaryOp::kReal || op == UnaryOp::kImag;

// Complex semantics. Shape inference admits complex operands for negate,
// abs, exp, log, sqrt, rsqrt, sin, cos, tan, tanh, logistic, log1p, expm1,
// atan, sign, real, imag and conj; add, subtract, multiply, divide and
// power; max and min (JAX's lexicographic order: real part, then
// imaginary); eq and ne; sum, product, max and min reductions. The other
// ops (lt/le/gt/ge, rounding, bitwise) refuse complex operands, and their branches below only keep the
// templates compiling. Arithmetic is std::complex's (C99 Annex G infinities
// and NaNs for multiply and divide).
template <UnaryOp op, typename C>
inline auto ComplexUnary(C z) {
  using R = typename C::value_type;
  if constexpr (op == UnaryOp::kAbs) return std::abs(z);
  else if constexpr (op == UnaryOp::kReal) return z.real();
  else if constexpr (op == UnaryOp::kImag) return z.imag();
  else if constexpr (op == UnaryOp::kConj) return std::conj(z);
  else if constexpr (op == UnaryOp::kNeg) return -z;
  else if constexpr (op == UnaryOp::kExp) return std::exp(z);
  else if constexpr (op == UnaryOp::kLog) return std::log(z);
  else if constexpr (op == UnaryOp::kSqrt) return std::sqrt(z);
  else if constexpr (op == UnaryOp::kRsqrt) return C(1) / std::sqrt(z);
  else if constexpr (op == UnaryOp::kSin) return std::sin(z);
  else if constexpr (op == UnaryOp::kCos) return std::cos(z);
  else if constexpr (op == UnaryOp::kTan) return std::tan(z);
  else if constexpr (op == UnaryOp::kTanh) return std::tanh(z);
  else if constexpr (op == UnaryOp::kAtan) return std::atan(z);
  else if constexpr (op == UnaryOp::kLogistic) return C(1) / (C(1) + std::exp(-z));
  else if constexpr (op == UnaryOp::kLog1p) {
    // log|1+z| = log1p(2x + x^2 + y^2) / 2 keeps small |z| accurate.
    const R x = z.real(), y = z.imag();
    return C(R(0.5) * std::log1p(x * (R(2) + x) + y * y), std::atan2(y, R(1) + x));
  } else if constexpr (op == UnaryOp::kExpm1) {
    // e^x cos y - 1 = expm1(x) cos y - 2 sin^2(y/2).
    const R x = z.real(), y = z.imag();
    const R s = std::sin(y / R(2));
    return C(std::expm1(x) * std::cos(y) - R(2) * s * s, std::exp(x) * std::sin(y));
  } else if constexpr (op == UnaryOp::kSign) {
    const R m = std::abs(z);
    return m == R(0) ? C(0) : C(z.real() / m, z.imag() / m);
  } else {
    return z;  // not, floor, ceil, round: refused for complex
  }
}

// Wrapping integer arithmetic without signed-overflow UB.
template <typename C>
inline C WrapAdd(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename C>
inline C WrapSub(C a, C b) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename C>
inline C WrapMul(C a, C b) {
  using U = std::make_unsigned_t<C>;
  // Promote to at least unsigned int so uint16 * uint16 cannot overflow int.
  using P = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<C>(static_cast<P>(static_cast<U>(a)) *
                        static_cast<P>(static_cast<U>(b)));
}

template <UnaryOp op, typename C>
inline C RealUnary(C x);

// op(x) in compute type C. The result has type C, except for abs, real and
// imag of a complex x, which give its real type.
template <UnaryOp op, typename C>
inline auto Unary(C x) {
  if constexpr (kIsComplex<C>) return ComplexUnary<op, C>(x);
  else return RealUnary<op, C>(x);
}

template <UnaryOp op, typename C>
inline C RealUnary(C x) {
  if constexpr (op == UnaryOp::kReal || op == UnaryOp::kConj) return x;
  else if constexpr (op == UnaryOp::kImag) return C(0);
  else if constexpr (std::is_same_v<C, bool>) {
    if constexpr (op == UnaryOp::kNot) return !x;
    else if constexpr (op == UnaryOp::kNeg) return x;  // -true wraps to true
    else if constexpr (op == UnaryOp::kAbs || op == UnaryOp::kSign ||
                       op == UnaryOp::kFloor || op == UnaryOp::kCeil ||
                       op == UnaryOp::kRound)
      return x;
    else return static_cast<bool>(Unary<op, float>(x ? 1.f : 0.f));
  } else if constexpr (kIsFloat<C>) {
    if constexpr (op == UnaryOp::kNeg) return -x;
    else if constexpr (op == UnaryOp::kAbs) return std::abs(x);
    // float32 (and so float16/bfloat16) exp, log, tanh and logistic use the
    // vectorizable approximations of fast_math.h (<= 2.4 ulp); float64 and
    // sin/cos call libm.
    else if constexpr (op == UnaryOp::kExp) {
      if constexpr (std::is_same_v<C, float>) return fast_math::Exp(x);
      else return std::exp(x);
    } else if constexpr (op == UnaryOp::kLog) {
      if constexpr (std::is_same_v<C, float>) return fast_math::Log(x);
      else return std::log(x);
    } else if constexpr (op == UnaryOp::kTanh) {
      if constexpr (std::is_same_v<C, float>) return fast_math::Tanh(x);
      else return std::tanh(x);
    } else if constexpr (op == UnaryOp::kLogistic) {
      if constexpr (std::is_same_v<C, float>) return fast_math::Logistic(x);
      else return C(1) / (C(1) + std::exp(-x));
    }
    else if constexpr (op == UnaryOp::kSqrt) return std::sqrt(x);
    else if constexpr (op == UnaryOp::kRsqrt) return C(1) / std::sqrt(x);
    else if constexpr (op == UnaryOp::kSin) return std::sin(x);
    else if constexpr (op == UnaryOp::kCos) return std::cos(x);
    else if constexpr (op == UnaryOp::kNot) return x == C(0) ? C(1) : C(0);
    else if constexpr (op == UnaryOp::kSign)
      return x > C(0) ? C(1) : (x < C(0) ? C(-1) : x);  // keeps NaN and +-0
    else if constexpr (op == UnaryOp::kFloor) return std::floor(x);
    else if constexpr (op == UnaryOp::kCeil) return std::ceil(x);
    // libm at every precision (glibc's float versions are within 1 ulp).
    else if constexpr (op == UnaryOp::kLog1p) return std::log1p(x);
    else if constexpr (op == UnaryOp::kExpm1) return std::expm1(x);
    else if constexpr (op == UnaryOp::kTan) return std::tan(x);
    else if constexpr (op == UnaryOp::kAtan) return std::atan(x);
    else return std::nearbyint(x);  // kRound: half to even
  } else {  // integers
    if constexpr (op == UnaryOp::kNeg) return WrapSub<C>(C(0), x);
    else if constexpr (op == UnaryOp::kAbs) {
      if constexpr (std::is_unsigned_v<C>) return x;
      else return x < 0 ? WrapSub<C>(C(0), x) : x;
    } else if constexpr (op == UnaryOp::kNot) return static_cast<C>(~x);
    else if constexpr (op == UnaryOp::kSign) {
      if constexpr (std::is_unsigned_v<C>) return x > 0 ? C(1) : C(0);
      else return x > 0 ? C(1) : (x < 0 ? C(-1) : C(0));
    } else if constexpr (op == UnaryOp::kFloor || op == UnaryOp::kCeil ||
                         op == UnaryOp::kRound)
      return x;
    else {
      // Transcendental ops on integers: computed in double, truncated (the
      // tracer promotes integers to float first, so this is a fallback).
      const double r = Unary<op, double>(static_cast<double>(x));
      if (!(r == r)) return C(0);
      if (r >= static_cast<double>(std::numeric_limits<C>::max()))
        return std::numeric_limits<C>::max();
      if (r <= static_cast<double>(std::numeric_limits<C>::min()))
        return std::numeric_limits<C>::min();
      return static_cast<C>(r);
    }
  }
}

template <typename C>
inline C IntPow(C base, C exp) {
  if constexpr (std::is_signed_v<C>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp % 2 == 0) ? 1 : -1;
      return 0;
    }
  }
  C result = 1;
  while (exp != 0) {
    if (exp & 1) result = WrapMul<C>(result, base);
    base = WrapMul<C>(base, base);
    exp = static_cast<C>(exp >> 1);
  }
  return result;
}

// IEEE arithmetic on two NaNs returns one of them, and which one depends on
// the order the compiler put the operands in -- which differs between
// scalar and vector code. So a NaN result is made canonical: the positive
// quiet NaN, whatever the operands' payloads and signs (as XLA does not
// promise NaN payloads either). One compare and one select, branch-free, so
// loops still vectorize. The test is r != r (an unordered compare: true
// exactly for NaN), which vectorizes to one compare and one blend.
// For float the select is written as a mask: in a float16/bfloat16 kernel's
// loop (widen, operate, canonicalize, round back: half.h) GCC keeps a ?:
// here as a branch and the loop stays scalar, 3-10x slower. For double ?:
// stays: SSE2 has no 64-bit compare to make that mask from, and the mask
// form would leave the baseline's double loops scalar instead.
template <typename C>
inline C CanonicalNaN(C r) {
  using U = std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>;
  constexpr int kMantissa = std::numeric_limits<C>::digits - 1;
  constexpr U kSign = U(1) << (sizeof(C) * 8 - 1);
  constexpr U kExp = ~kSign & ~((U(1) << kMantissa) - 1);
  constexpr U kCanonical = kExp | (U(1) << (kMantissa - 1));
  if constexpr (sizeof(C) == 4) {
    const U nan = U(0) - static_cast<U>(r != r);  // NOLINT: NaN test
    return std::bit_cast<C>((kCanonical & nan) | (std::bit_cast<U>(r) & ~nan));
  } else {
    return r != r ? std::bit_cast<C>(kCanonical) : r;  // NOLINT: NaN test
  }
}

// XLA's shifts on integer C (see the top of this file).
template <BinaryOp op, typename C>
inline C Shift(C a, C b) {
  using U = std::make_unsigned_t<C>;
  using S = std::make_signed_t<C>;
  constexpr U kBits = static_cast<U>(sizeof(C) * 8);
  const U s = static_cast<U>(b);
  const bool in_range = s < kBits;
  const U n = in_range ? s : U(0);  // keeps every shift below defined
  if constexpr (op == BinaryOp::kShiftLeft) {
    // Through an unsigned type at least as wide as unsigned int, so that
    // neither promotion nor a signed overflow is involved.
    using P = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    const P r = static_cast<P>(static_cast<P>(static_cast<U>(a)) << n);
    return in_range ? static_cast<C>(static_cast<U>(r)) : C(0);
  } else if constexpr (op == BinaryOp::kShiftRightLogical) {
    return in_range ? static_cast<C>(static_cast<U>(static_cast<U>(a) >> n))
                    : C(0);
  } else {  // kShiftRightArithmetic: C++20 >> of a signed value is arithmetic
    const S v = static_cast<S>(a);
    const S fill = static_cast<S>(v < 0 ? -1 : 0);
    return static_cast<C>(in_range ? static_cast<S>(v >> n) : fill);
  }
}

template <BinaryOp op>
inline constexpr bool kIsShift = op == BinaryOp::kShiftLeft ||
                                 op == BinaryOp::kShiftRightArithmetic ||
                                 op == BinaryOp::kShiftRightLogical;

template <BinaryOp op, typename C>
inline C Binary(C a, C b) {
  if constexpr (kIsComplex<C>) {
    if constexpr (op == BinaryOp::kAdd) return a + b;
    else if constexpr (op == BinaryOp::kSub) return a - b;
    else if constexpr (op == BinaryOp::kMul) return a * b;
    else if constexpr (op == BinaryOp::kDiv) return a / b;
    else if constexpr (op == BinaryOp::kPow) {
      // XLA: x^0 is 1, also for x = 0 (std::pow(0, 0) is NaN).
      if (b == C(0)) return C(1);
      if (a == C(0)) {
        // 0^b: 0 for Re(b) > 0 and b real-valued, else per std::pow.
        if (b.imag() == 0 && b.real() > 0) return C(0);
      }
      return std::pow(a, b);
    } else if constexpr (op == BinaryOp::kMax || op == BinaryOp::kMin) {
      // JAX's lexicographic order (real part first, then imaginary); a NaN
      // in either part of either operand gives that operand.
      if (a != a) return a;  // NOLINT: NaN test
      if (b != b) return b;  // NOLINT: NaN test
      const bool a_less = a.real() < b.real() ||
                          (a.real() == b.real() && a.imag() < b.imag());
      if constexpr (op == BinaryOp::kMax) return a_less ? b : a;
      else return a_less ? a : b;
    } else {
      return C(0);  // refused for complex by shape inference
    }
  } else if constexpr (op == BinaryOp::kComplex) {
    return C(0);  // makes a complex value: see MakeComplex
  } else if constexpr (std::is_same_v<C, bool>) {
    if constexpr (op == BinaryOp::kAdd || op == BinaryOp::kMax ||
                  op == BinaryOp::kOr)
      return a || b;
    else if constexpr (op == BinaryOp::kMul || op == BinaryOp::kMin ||
                       op == BinaryOp::kAnd)
      return a && b;
    else if constexpr (op == BinaryOp::kSub) return a != b;
    else if constexpr (op == BinaryOp::kPow) return a || !b;
    else if constexpr (op == BinaryOp::kDiv) return a;
    else if constexpr (op == BinaryOp::kXor) return a != b;
    else return false;  // kRem; atan2 and shifts are refused for bool
  } else if constexpr (kIsFloat<C>) {
    if constexpr (op == BinaryOp::kAdd) return CanonicalNaN(C(a + b));
    else if constexpr (op == BinaryOp::kSub) return CanonicalNaN(C(a - b));
    else if constexpr (op == BinaryOp::kMul) return CanonicalNaN(C(a * b));
    else if constexpr (op == BinaryOp::kDiv) return CanonicalNaN(C(a / b));
    else if constexpr (op == BinaryOp::kPow) return std::pow(a, b);
    else if constexpr (op == BinaryOp::kMax)
      return (a != a || b != b) ? std::numeric_limits<C>::quiet_NaN()
                                : (a > b ? a : b);
    else if constexpr (op == BinaryOp::kMin)
      return (a != a || b != b) ? std::numeric_limits<C>::quiet_NaN()
                                : (a < b ? a : b);
    else if constexpr (op == BinaryOp::kRem) return std::fmod(a, b);
    else if constexpr (op == BinaryOp::kAtan2) return std::atan2(a, b);
    else if constexpr (op == BinaryOp::kAnd) return (a != C(0) && b != C(0)) ? C(1) : C(0);
    else if constexpr (op == BinaryOp::kOr) return (a != C(0) || b != C(0)) ? C(1) : C(0);
    else if constexpr (op == BinaryOp::kXor)
      return ((a != C(0)) != (b != C(0))) ? C(1) : C(0);
    else return C(0);  // shifts: refused for floats by shape inference
  } else {
    if constexpr (op == BinaryOp::kAdd) return WrapAdd(a, b);
    else if constexpr (op == BinaryOp::kSub) return WrapSub(a, b);
    else if constexpr (op == BinaryOp::kMul) return WrapMul(a, b);
    else if constexpr (op == BinaryOp::kDiv) {
      if (b == 0) return static_cast<C>(-1);
      if constexpr (std::is_signed_v<C>) {
        if (a == std::numeric_limits<C>::min() && b == -1) return a;
      }
      return static_cast<C>(a / b);
    } else if constexpr (op == BinaryOp::kRem) {
      if (b == 0) return a;
      if constexpr (std::is_signed_v<C>) {
        if (a == std::numeric_limits<C>::min() && b == -1) return 0;
      }
      return static_cast<C>(a % b);
    } else if constexpr (op == BinaryOp::kPow) return IntPow(a, b);
    else if constexpr (op == BinaryOp::kMax) return a > b ? a : b;
    else if constexpr (op == BinaryOp::kMin) return a < b ? a : b;
    else if constexpr (op == BinaryOp::kAnd) return static_cast<C>(a & b);
    else if constexpr (op == BinaryOp::kOr) return static_cast<C>(a | b);
    else if constexpr (op == BinaryOp::kXor) return static_cast<C>(a ^ b);
    else if constexpr (kIsShift<op>) return Shift<op, C>(a, b);
    else {
      // kAtan2 on integers: computed in double, truncated (the tracer
      // promotes integers to float first, so this is a fallback).
      return static_cast<C>(
          std::atan2(static_cast<double>(a), static_cast<double>(b)));
    }
  }
}

template <CompareOp op, typename C>
inline bool Compare(C a, C b) {
  if constexpr (kIsComplex<C>) {
    // Only eq and ne are admitted for complex operands.
    if constexpr (op == CompareOp::kNe) return a != b;
    else return a == b;
  } else if constexpr (op == CompareOp::kEq) return a == b;
  else if constexpr (op == CompareOp::kNe) return a != b;
  else if constexpr (op == CompareOp::kLt) return a < b;
  else if constexpr (op == CompareOp::kLe) return a <= b;
  else if constexpr (op == CompareOp::kGt) return a > b;
  else return a >= b;
}

// Identity element of a reduction.
template <ReduceOp op, typename C>
inline C ReduceInit() {
  if constexpr (op == ReduceOp::kSum) return C(0);
  else if constexpr (op == ReduceOp::kProd) return C(1);
  else if constexpr (kIsComplex<C>) {
    // max/min: the lexicographic extremes.
    using R = typename C::value_type;
    constexpr R inf = std::numeric_limits<R>::infinity();
    return op == ReduceOp::kMax ? C(-inf, -inf) : C(inf, inf);
  }
  else if constexpr (op == ReduceOp::kMax) {
    if constexpr (kIsFloat<C>) return -std::numeric_limits<C>::infinity();
    else return std::numeric_limits<C>::lowest();
  } else {
    if constexpr (kIsFloat<C>) return std::numeric_limits<C>::infinity();
    else return std::numeric_limits<C>::max();
  }
}

template <ReduceOp op, typename C>
inline C ReduceCombine(C acc, C x) {
  return Binary<CombinerOf(op), C>(acc, x);
}

}  // namespace baton::scalar
