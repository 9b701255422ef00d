// Tracer functions around the sort op (SortAttrs, op_attrs.h): sort and
// argsort as users call them, and the along-an-axis gather and scatter that
// payload sorting and the sort's derivatives are built from (the IR's
// gather takes whole slices; these index one element per position).
//
// Errors: like tracer.h, they throw baton::Error (InvalidArgument, naming
// the op) for bad axes or operands. Thread-safety: as any tracing, on the
// thread that owns the TraceContext.
#pragma once

#include <cstdint>

#include "baton/compiler/tracer.h"

namespace baton::compiler {

// x sorted along `dimension` (may be negative); stable; descending gives
// the ascending result reversed (jnp.sort). x must have rank >= 1.
Tracer sort(const Tracer& x, int64_t dimension = -1, bool descending = false);

// The int32 permutation that stably sorts x along `dimension` (descending:
// by the reversed order, ties in their original order; jnp.argsort).
Tracer argsort(const Tracer& x, int64_t dimension = -1,
               bool descending = false);

// The permutation p with sort(x, dimension, descending) ==
// take_along_axis(x, p, dimension): argsort for ascending, the ascending
// permutation reversed for descending. `dimension` non-negative.
Tracer sort_values_permutation(const Tracer& x, int64_t dimension,
                               bool descending);

// out[..., i, ...] = x[..., indices[..., i, ...], ...] along `axis`
// (non-negative); `indices` is integer and has x's shape; they must be in
// range (they are used unclamped as row-major offsets).
Tracer take_along_axis_same_shape(const Tracer& x, const Tracer& indices,
                                  int64_t axis);

// The transpose of take_along_axis_same_shape: zeros of `updates`' shape
// and dtype with updates[..., i, ...] added at [..., indices[..., i, ...],
// ...] along `axis`.
Tracer scatter_add_along_axis_same_shape(const Tracer& indices,
                                         const Tracer& updates, int64_t axis);

}  // namespace baton::compiler
