// GatherBounds: how a gather reads an index outside its dimension (the
// compiler's GatherAttrs carries one), as jax.numpy's take and indexing
// define it: a negative index wrapped once (numpy's x[-1]) when
// `wrap_negative`; then a position outside [0, dim) either clamped into it
// (XLA's gather, the default) or, when `fill`, read as the fill value
// (`fill_bits`: the bits of one element of the result's dtype, at most 8
// bytes, in the low bytes). One rule for the reference interpreter and the
// CPU kernels; the CUDA emitter writes the same expression.
//
// Doing this inside the gather (instead of compare, select and add ops
// around it) keeps take(x, i) one pass over the indices.
//
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <type_traits>

namespace baton {

struct GatherBounds {
  bool wrap_negative = false;
  bool fill = false;
  uint64_t fill_bits = 0;

  bool operator==(const GatherBounds&) const = default;

  // The position index `i` reads along a dimension of `dim` elements: in
  // [0, dim), or -1 for the fill value (only when `fill`). `dim` >= 1
  // unless `fill` (an empty dimension has no position to clamp to).
  template <typename I>
  int64_t Position(I i, int64_t dim) const {
    if constexpr (std::is_signed_v<I>) {
      int64_t j = static_cast<int64_t>(i);
      if (j < 0 && wrap_negative) j += dim;
      if (j < 0) return fill ? -1 : 0;
      if (j >= dim) return fill ? -1 : dim - 1;
      return j;
    } else {
      const auto u = static_cast<uint64_t>(i);
      if (u >= static_cast<uint64_t>(dim)) return fill ? -1 : dim - 1;
      return static_cast<int64_t>(u);
    }
  }

  // Whether an index can read anything but a clamped position.
  bool plain() const { return !wrap_negative && !fill; }
};

}  // namespace baton
