#include "baton/core/dtype.h"

#include <array>
#include <cstdio>
#include <cstdlib>

#include "baton/core/dtype_dispatch.h"

namespace baton {
namespace {

constexpr std::array<std::string_view, kNumDTypes> kNames = {
    "bool",    "int8",     "int16",   "int32",   "int64",  "uint8",
    "uint32",  "float16",  "bfloat16", "float32", "float64", "complex64",
    "complex128"};

// Promotion lattice in the spirit of JAX's (no implicit float64 from ints;
// unsigned+signed goes to the next signed width that holds both).
int rank_of(DType t) { return static_cast<int>(t); }

}  // namespace

std::string_view dtype_name(DType t) { return kNames[static_cast<int>(t)]; }

std::optional<DType> dtype_from_name(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kNames[i] == name) return static_cast<DType>(i);
  }
  return std::nullopt;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  if (is_complex(a) || is_complex(b)) {
    // JAX: a complex type with anything gives a complex type whose parts
    // hold both (complex64 + float64 -> complex128).
    const DType ra = real_dtype(a), rb = real_dtype(b);
    const DType parts = (is_floating(ra) && is_floating(rb))
                            ? promote_types(ra, rb)
                            : (is_floating(ra) ? ra : rb);
    return complex_dtype(parts);
  }
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa && fb) {
    // float16 + bfloat16 -> float32, as in JAX.
    if ((a == DType::kFloat16 && b == DType::kBFloat16) ||
        (a == DType::kBFloat16 && b == DType::kFloat16)) {
      return DType::kFloat32;
    }
    return dtype_size(a) >= dtype_size(b) ? a : b;
  }
  if (fa) return a;  // float wins over any integer (JAX semantics)
  if (fb) return b;
  // Both integers.
  const bool ua = is_unsigned(a), ub = is_unsigned(b);
  if (ua == ub) return dtype_size(a) >= dtype_size(b) ? a : b;
  const DType u = ua ? a : b, s = ua ? b : a;
  if (dtype_size(s) > dtype_size(u)) return s;
  // Signed type needs to be wider than the unsigned one.
  switch (dtype_size(u)) {
    case 1: return DType::kInt16;
    case 4: return DType::kInt64;
    default: return DType::kInt64;
  }
  (void)rank_of;
}

void ComplexDTypeNotSupported(DType t, const char* where) {
  std::fprintf(stderr,
               "baton internal error: %s reached a %.*s operand, which it has "
               "no complex form for (shape inference should have refused "
               "the op)\n",
               where, static_cast<int>(dtype_name(t).size()),
               dtype_name(t).data());
  std::abort();
}

}  // namespace baton
