// The total order of the sort op (compiler/op_attrs.h, SortAttrs), shared
// by the reference interpreter and the CPU kernel so the two cannot
// disagree on it: as jax.numpy, integers and bool by value; floats by value
// with -0.0 == +0.0 and every NaN equal to every other NaN and after +inf.
// Half-precision types compare as float (their ComputeType).
#pragma once

#include <cmath>
#include <type_traits>

namespace baton {

// a < b in the sort order, for values of a compute type (no halves).
template <typename C>
inline bool SortLess(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

}  // namespace baton
