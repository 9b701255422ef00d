// Compile-time dispatch on DType and op codes: call a generic lambda with the
// C++ storage type (or op) as a template argument, so kernels switch once per
// call rather than once per element.
#pragma once

#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "baton/core/complex_type.h"
#include "baton/core/dtype.h"
#include "baton/core/half.h"
#include "baton/core/op_codes.h"

namespace baton {

template <typename T>
struct TypeTag {
  using type = T;
};

using complex64 = std::complex<float>;
using complex128 = std::complex<double>;


namespace dtype_dispatch_detail {
// f(TypeTag<T>{}) for the real types; `t` must not be complex.
template <typename F>
decltype(auto) VisitRealStorage(DType t, F&& f) {
  switch (t) {
    case DType::kBool: return f(TypeTag<bool>{});
    case DType::kInt8: return f(TypeTag<int8_t>{});
    case DType::kInt16: return f(TypeTag<int16_t>{});
    case DType::kInt32: return f(TypeTag<int32_t>{});
    case DType::kInt64: return f(TypeTag<int64_t>{});
    case DType::kUInt8: return f(TypeTag<uint8_t>{});
    case DType::kUInt32: return f(TypeTag<uint32_t>{});
    case DType::kFloat16: return f(TypeTag<float16>{});
    case DType::kBFloat16: return f(TypeTag<bfloat16>{});
    case DType::kFloat32: return f(TypeTag<float>{});
    default: return f(TypeTag<double>{});
  }
}
}  // namespace dtype_dispatch_detail

// f(TypeTag<T>{}) with T the storage type of `t` (bool, int8_t, ...,
// float16, bfloat16, float, double, complex64, complex128).
template <typename F>
decltype(auto) VisitDType(DType t, F&& f) {
  if (t == DType::kComplex64) return f(TypeTag<complex64>{});
  if (t == DType::kComplex128) return f(TypeTag<complex128>{});
  return dtype_dispatch_detail::VisitRealStorage(t, std::forward<F>(f));
}

// VisitDType for the ops that have no complex form (ordering: sort, max,
// min; integer-only ops; indices). Shape inference refuses complex operands
// of those ops before a kernel runs, so reaching a complex type here is an
// internal error: it stops the process with a message rather than compute
// something wrong.
[[noreturn]] void ComplexDTypeNotSupported(DType t, const char* where);
template <typename F>
decltype(auto) VisitRealDType(DType t, F&& f) {
  if (is_complex(t)) ComplexDTypeNotSupported(t, __builtin_FUNCTION());
  return dtype_dispatch_detail::VisitRealStorage(t, std::forward<F>(f));
}

template <typename T>
constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::kBool; }
template <> constexpr DType dtype_of<int8_t>() { return DType::kInt8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::kInt16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::kInt32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::kInt64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::kUInt8; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::kUInt32; }
template <> constexpr DType dtype_of<float16>() { return DType::kFloat16; }
template <> constexpr DType dtype_of<bfloat16>() { return DType::kBFloat16; }
template <> constexpr DType dtype_of<float>() { return DType::kFloat32; }
template <> constexpr DType dtype_of<double>() { return DType::kFloat64; }
template <> constexpr DType dtype_of<complex64>() { return DType::kComplex64; }
template <> constexpr DType dtype_of<complex128>() { return DType::kComplex128; }

// The type arithmetic is done in: float for the 16-bit float types.
template <typename T> struct ComputeTypeOf { using type = T; };
template <> struct ComputeTypeOf<float16> { using type = float; };
template <> struct ComputeTypeOf<bfloat16> { using type = float; };
template <typename T> using ComputeType = typename ComputeTypeOf<T>::type;

template <typename T>
inline ComputeType<T> ToCompute(T x) {
  if constexpr (std::is_same_v<T, float16>) return f16_to_float(x);
  else if constexpr (std::is_same_v<T, bfloat16>) return bf16_to_float(x);
  else return x;
}
template <typename T>
inline T FromCompute(ComputeType<T> x) {
  if constexpr (std::is_same_v<T, float16>) return float_to_f16(x);
  else if constexpr (std::is_same_v<T, bfloat16>) return float_to_bf16(x);
  else return x;
}

// Converts one element between two real storage types with numpy/XLA
// semantics (float->int truncates toward zero, saturating at the int range;
// NaN -> 0; anything -> bool is "!= 0").
template <typename To, typename From>
inline To ConvertRealElement(From x) {
  auto c = ToCompute(x);
  using C = decltype(c);
  if constexpr (std::is_same_v<To, bool>) {
    return c != C(0);
  } else if constexpr (std::is_same_v<To, float16> ||
                       std::is_same_v<To, bfloat16>) {
    return FromCompute<To>(static_cast<float>(c));
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(c);
  } else if constexpr (std::is_floating_point_v<C>) {
    // float -> integer: truncate, saturate, NaN -> 0 (no UB).
    if (c != c) return To(0);
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<To>::max());
    const double d = static_cast<double>(c);
    if (d <= lo) return std::numeric_limits<To>::min();
    if (d >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(d);
  } else {
    return static_cast<To>(c);  // integer -> integer wraps (two's complement)
  }
}

// Converts one element between any two storage types: between real types
// as ConvertRealElement.
// Complex -> real keeps the real part (as lax.convert_element_type does);
// real -> complex has a zero imaginary part; complex -> bool is "either
// part != 0".
template <typename To, typename From>
inline To ConvertElement(From x) {
  if constexpr (kIsComplex<From>) {
    if constexpr (kIsComplex<To>) {
      return To(static_cast<typename To::value_type>(x.real()),
                static_cast<typename To::value_type>(x.imag()));
    } else if constexpr (std::is_same_v<To, bool>) {
      return x.real() != 0 || x.imag() != 0;
    } else {
      return ConvertElement<To>(x.real());
    }
  } else if constexpr (kIsComplex<To>) {
    using R = typename To::value_type;
    return To(ConvertElement<R>(x), R(0));
  } else {
    return ConvertRealElement<To>(x);
  }
}


template <typename F>
decltype(auto) VisitUnaryOp(UnaryOp op, F&& f) {
  switch (op) {
#define BATON_CASE(X) \
  case UnaryOp::X: return f(std::integral_constant<UnaryOp, UnaryOp::X>{});
    BATON_CASE(kNeg) BATON_CASE(kAbs) BATON_CASE(kExp) BATON_CASE(kLog)
    BATON_CASE(kTanh) BATON_CASE(kLogistic) BATON_CASE(kSqrt)
    BATON_CASE(kRsqrt) BATON_CASE(kSin) BATON_CASE(kCos) BATON_CASE(kNot)
    BATON_CASE(kSign) BATON_CASE(kFloor) BATON_CASE(kCeil) BATON_CASE(kRound)
    BATON_CASE(kLog1p) BATON_CASE(kExpm1) BATON_CASE(kTan) BATON_CASE(kAtan)
    BATON_CASE(kReal) BATON_CASE(kImag) BATON_CASE(kConj)
#undef BATON_CASE
  }
  return f(std::integral_constant<UnaryOp, UnaryOp::kNeg>{});
}

template <typename F>
decltype(auto) VisitBinaryOp(BinaryOp op, F&& f) {
  switch (op) {
#define BATON_CASE(X) \
  case BinaryOp::X: return f(std::integral_constant<BinaryOp, BinaryOp::X>{});
    BATON_CASE(kAdd) BATON_CASE(kSub) BATON_CASE(kMul) BATON_CASE(kDiv)
    BATON_CASE(kPow) BATON_CASE(kMax) BATON_CASE(kMin) BATON_CASE(kAnd)
    BATON_CASE(kOr) BATON_CASE(kRem) BATON_CASE(kAtan2) BATON_CASE(kXor)
    BATON_CASE(kShiftLeft) BATON_CASE(kShiftRightArithmetic)
    BATON_CASE(kShiftRightLogical) BATON_CASE(kComplex)
#undef BATON_CASE
  }
  return f(std::integral_constant<BinaryOp, BinaryOp::kAdd>{});
}

template <typename F>
decltype(auto) VisitCompareOp(CompareOp op, F&& f) {
  switch (op) {
#define BATON_CASE(X) \
  case CompareOp::X: return f(std::integral_constant<CompareOp, CompareOp::X>{});
    BATON_CASE(kEq) BATON_CASE(kNe) BATON_CASE(kLt) BATON_CASE(kLe)
    BATON_CASE(kGt) BATON_CASE(kGe)
#undef BATON_CASE
  }
  return f(std::integral_constant<CompareOp, CompareOp::kEq>{});
}

template <typename F>
decltype(auto) VisitReduceOp(ReduceOp op, F&& f) {
  switch (op) {
#define BATON_CASE(X) \
  case ReduceOp::X: return f(std::integral_constant<ReduceOp, ReduceOp::X>{});
    BATON_CASE(kSum) BATON_CASE(kProd) BATON_CASE(kMax) BATON_CASE(kMin)
#undef BATON_CASE
  }
  return f(std::integral_constant<ReduceOp, ReduceOp::kSum>{});
}

}  // namespace baton
