// sort_ops.h: sort, argsort and the along-axis gather/scatter.
#include <limits>
#include <vector>

#include "baton/compiler/sort_ops.h"
#include "baton/compiler/tracer_internal.h"

namespace baton::compiler {

using tracer_internal::CommonContext;
using tracer_internal::Fail;
using tracer_internal::NormalizeAxis;

namespace {

int64_t SortDimension(std::string_view op, const Tracer& x, int64_t dim) {
  if (x.rank() == 0) Fail(op, "needs an operand of rank >= 1, got a scalar");
  return NormalizeAxis(op, dim, x.rank());
}

// Row-major offsets into x (of `indices`' shape) of the elements the
// along-axis indices name: indices * stride[axis] + the other coordinates.
Tracer FlatIndices(const Tracer& indices, int64_t axis) {
  TraceContext& ctx = *indices.context();
  const Shape& shape = indices.shape();
  const DType it = shape.num_elements() > std::numeric_limits<int32_t>::max()
                       ? DType::kInt64
                       : DType::kInt32;
  const std::vector<int64_t> strides = shape.strides();
  Tracer flat = astype(indices, it) * static_cast<int64_t>(strides[axis]);
  for (int d = 0; d < shape.rank(); ++d) {
    if (d == axis || shape[d] == 1) continue;
    flat = flat + iota(ctx, it, shape, d) * static_cast<int64_t>(strides[d]);
  }
  return flat;
}

}  // namespace

Tracer sort(const Tracer& x, int64_t dimension, bool descending) {
  TraceContext& ctx = CommonContext("sort", {&x});
  const int64_t d = SortDimension("sort", x, dimension);
  return ctx.Emit(SortAttrs{d, descending, false}, {x});
}

Tracer argsort(const Tracer& x, int64_t dimension, bool descending) {
  TraceContext& ctx = CommonContext("argsort", {&x});
  const int64_t d = SortDimension("argsort", x, dimension);
  return ctx.Emit(SortAttrs{d, descending, true}, {x});
}

Tracer sort_values_permutation(const Tracer& x, int64_t dimension,
                               bool descending) {
  TraceContext& ctx = *x.context();
  const Tracer perm = ctx.Emit(SortAttrs{dimension, false, true}, {x});
  if (!descending) return perm;
  const int64_t n = x.shape()[static_cast<int>(dimension)];
  if (n <= 1) return perm;
  const Tracer rev = (n - 1) - iota(ctx, DType::kInt32, Shape({n}), 0);
  return take(perm, rev, dimension);
}

Tracer take_along_axis_same_shape(const Tracer& x, const Tracer& indices,
                                  int64_t axis) {
  const int64_t n = x.shape().num_elements();
  if (n == 0) return x;
  const Tracer flat = reshape(x, {n});
  return take(flat, FlatIndices(indices, axis), 0);
}

Tracer scatter_add_along_axis_same_shape(const Tracer& indices,
                                         const Tracer& updates, int64_t axis) {
  TraceContext& ctx = *updates.context();
  const int64_t n = updates.shape().num_elements();
  if (n == 0) return updates;
  const Tracer into = zeros(ctx, Shape({n}), updates.dtype());
  const Tracer out = ctx.Emit(ScatterAttrs{0, ScatterMode::kAdd},
                              {into, FlatIndices(indices, axis), updates});
  return reshape(out, updates.shape().dims());
}

}  // namespace baton::compiler
