// Element types of baton arrays.
//
// DType is a plain enum; its properties (size, name, category) are constexpr
// functions so kernels can dispatch on them without tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace baton {

enum class DType : uint8_t {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt32,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  // Complex numbers: two floats (real, imaginary), laid out as numpy's and
  // C++'s std::complex.
  kComplex64,
  kComplex128,
};

inline constexpr int kNumDTypes = 13;

// Bytes per element.
constexpr size_t dtype_size(DType t) {
  switch (t) {
    case DType::kBool:
    case DType::kInt8:
    case DType::kUInt8:
      return 1;
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kFloat32:
      return 4;
    case DType::kInt64:
    case DType::kFloat64:
    case DType::kComplex64:
      return 8;
    case DType::kComplex128:
      return 16;
  }
  return 0;
}

constexpr bool is_floating(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 ||
         t == DType::kFloat32 || t == DType::kFloat64;
}
constexpr bool is_complex(DType t) {
  return t == DType::kComplex64 || t == DType::kComplex128;
}
// Floating or complex (numpy's "inexact").
constexpr bool is_inexact(DType t) { return is_floating(t) || is_complex(t); }
// The real type of a complex type's parts (float32 for complex64); `t`
// itself for every other type.
constexpr DType real_dtype(DType t) {
  return t == DType::kComplex64    ? DType::kFloat32
         : t == DType::kComplex128 ? DType::kFloat64
                                   : t;
}
// The complex type whose parts are `t` (float32 -> complex64, float64 ->
// complex128; narrower floats, integers and bool -> complex64); a complex
// type stays itself.
constexpr DType complex_dtype(DType t) {
  return (t == DType::kFloat64 || t == DType::kComplex128) ? DType::kComplex128
                                                           : DType::kComplex64;
}
constexpr bool is_unsigned(DType t) {
  return t == DType::kUInt8 || t == DType::kUInt32;
}
constexpr bool is_integer(DType t) {
  return !is_inexact(t) && t != DType::kBool;
}

// numpy's name for the type ("float32", "bfloat16", "bool", ...).
std::string_view dtype_name(DType t);
// Inverse of dtype_name; nullopt for an unknown name.
std::optional<DType> dtype_from_name(std::string_view name);

// The type numpy/JAX promotion gives two operands of these types (no weak
// types here; the Python layer handles weakly typed scalars).
DType promote_types(DType a, DType b);

}  // namespace baton
