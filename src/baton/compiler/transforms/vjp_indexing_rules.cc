// Cotangent rules (vjp_internal.h) for the indexing ops: dynamic_slice,
// dynamic_update_slice, gather and every scatter mode.
//
// gather clamps its indices and scatter drops out-of-range ones, so a
// gather's transpose clamps before scattering, and an update whose index was
// out of range (and so dropped) gets a zero cotangent.
#include <cstdint>
#include <limits>

#include "baton/compiler/sort_ops.h"
#include "baton/compiler/transforms/vjp_internal.h"
#include "baton/core/error.h"

namespace baton::compiler::transforms::vjp_internal {
namespace {

int64_t MaxOf(DType dtype) {
  switch (dtype) {
    case DType::kInt8:
      return std::numeric_limits<int8_t>::max();
    case DType::kInt16:
      return std::numeric_limits<int16_t>::max();
    case DType::kInt32:
      return std::numeric_limits<int32_t>::max();
    case DType::kUInt8:
      return std::numeric_limits<uint8_t>::max();
    case DType::kUInt32:
      return std::numeric_limits<uint32_t>::max();
    default:
      return std::numeric_limits<int64_t>::max();
  }
}

// The indices as gather uses them: clamped into [0, size - 1].
Tracer ClampIndices(const Tracer& idx, int64_t size) {
  Tracer t = idx;
  if (!is_unsigned(idx.dtype())) t = maximum(t, 0);
  if (size - 1 < MaxOf(idx.dtype())) t = minimum(t, size - 1);
  return t;
}

// The indices with negatives wrapped once (GatherBounds::wrap_negative),
// in a type that holds i + size.
Tracer WrapNegativeIndices(const Tracer& idx, int64_t size) {
  if (is_unsigned(idx.dtype())) return idx;
  const Tracer t = size - 1 < MaxOf(idx.dtype()) / 2 ? idx
                                                     : astype(idx, DType::kInt64);
  return where(lt(t, 0), t + size, t);
}

// Whether each index is in [0, size), i.e. its scatter update lands; a
// mask over the updates (operand[:axis] + indices + operand[axis+1:]).
Tracer LandsMask(TraceContext& ctx, const Tracer& idx, int64_t size,
                 const Shape& updates_shape, int64_t axis) {
  Tracer in_range;
  if (!is_unsigned(idx.dtype())) in_range = ge(idx, 0);
  if (size - 1 < MaxOf(idx.dtype())) {
    const Tracer below = lt(idx, size);
    in_range = in_range.valid() ? (in_range & below) : below;
  }
  if (!in_range.valid()) {
    return Full(ctx, updates_shape, DType::kBool, 1);
  }
  std::vector<int64_t> dims;
  for (int i = 0; i < idx.rank(); ++i) dims.push_back(axis + i);
  return ctx.Emit(BroadcastInDimAttrs{updates_shape, dims}, {in_range});
}

}  // namespace

void VjpBuilder::ApplyIndexingRule(int n, const Tracer& ct) {
  const Node& nd = nodes_[n];
  const std::vector<int> ops = nd.operands;
  auto active = [&](int i) { return nodes_[ops[i]].active; };
  auto type = [&](int i) { return nodes_[ops[i]].type; };
  auto add = [&](int i, const Tracer& t) { AddCotangent(ops[i], t); };
  auto zeros = [&](const Shape& shape, DType dtype) {
    return Zeros(bwd_, ValueType{shape, dtype});
  };
  const DType dtype = nd.type.dtype;

  if (std::holds_alternative<DynamicSliceAttrs>(nd.attrs)) {
    if (!active(0)) return;
    std::vector<Tracer> args = {zeros(type(0).shape, dtype), ct};
    for (size_t i = 1; i < ops.size(); ++i) args.push_back(Get(ops[i]));
    return add(0, bwd_.Emit(DynamicUpdateSliceAttrs{}, args));
  }
  if (const auto* so = std::get_if<SortAttrs>(&nd.attrs)) {
    // Values: the cotangent goes back to where each element came from,
    // through the permutation recomputed from the operand. Indices: none.
    if (so->indices || !active(0)) return;
    const Tracer perm =
        sort_values_permutation(Get(ops[0]), so->dimension, so->descending);
    return add(0, scatter_add_along_axis_same_shape(perm, ct, so->dimension));
  }
  if (std::holds_alternative<DynamicUpdateSliceAttrs>(nd.attrs)) {
    std::vector<Tracer> starts;
    for (size_t i = 2; i < ops.size(); ++i) starts.push_back(Get(ops[i]));
    if (active(0)) {
      std::vector<Tracer> args = {ct, zeros(type(1).shape, dtype)};
      args.insert(args.end(), starts.begin(), starts.end());
      add(0, bwd_.Emit(DynamicUpdateSliceAttrs{}, args));
    }
    if (active(1)) {
      std::vector<Tracer> args = {ct};
      args.insert(args.end(), starts.begin(), starts.end());
      add(1, bwd_.Emit(DynamicSliceAttrs{type(1).shape.dims()}, args));
    }
    return;
  }
  if (const auto* g = std::get_if<GatherAttrs>(&nd.attrs)) {
    const int64_t size = type(0).shape[static_cast<int>(g->axis)];
    if (!active(0) || size == 0) return;
    // The positions the gather read (GatherBounds::Position): negatives
    // wrapped; then clamped, or, where the fill was read, left out of
    // range so that the scatter drops their cotangent.
    Tracer idx = Get(ops[1]);
    if (g->bounds.wrap_negative) idx = WrapNegativeIndices(idx, size);
    if (!g->bounds.fill) idx = ClampIndices(idx, size);
    return add(0, bwd_.Emit(ScatterAttrs{g->axis, ScatterMode::kAdd},
                            {zeros(type(0).shape, dtype), idx, ct}));
  }
  const auto& s = std::get<ScatterAttrs>(nd.attrs);
  const ValueType xt = type(0), ut = type(2);
  const int64_t size = xt.shape[static_cast<int>(s.axis)];
  // With an empty axis nothing lands: the operand passes through.
  if (size == 0 || ut.num_elements() == 0) {
    if (active(0)) add(0, ct);
    return;
  }
  const Tracer idx = Get(ops[1]);
  auto gather = [&](const Tracer& from) {
    return bwd_.Emit(GatherAttrs{s.axis}, {from, ClampIndices(idx, size)});
  };
  auto scatter = [&](ScatterMode mode, const Tracer& into, const Tracer& upd) {
    return bwd_.Emit(ScatterAttrs{s.axis, mode}, {into, idx, upd});
  };
  auto select = [&](const Tracer& pred, const Tracer& t) {
    return bwd_.Emit(SelectAttrs{}, {pred, t, zeros(t.shape(), t.dtype())});
  };
  switch (s.mode) {
    case ScatterMode::kAdd:
      if (active(0)) add(0, ct);
      if (active(2)) {
        add(2,
            select(LandsMask(bwd_, idx, size, ut.shape, s.axis), gather(ct)));
      }
      return;
    case ScatterMode::kSet:
      if (active(0))
        add(0, scatter(ScatterMode::kSet, ct, zeros(ut.shape, dtype)));
      if (active(2)) {
        // Only the update that won (the last of repeated indices) gets a
        // cotangent: scatter a unique id per update element and see whose
        // id each update finds at its index. Dropped updates never match.
        const int64_t count = ut.num_elements();
        Tracer ids = iota(bwd_, DType::kInt32, Shape{count});
        ids = bwd_.Emit(ReshapeAttrs{ut.shape}, {ids});
        const Tracer none = Full(bwd_, xt.shape, DType::kInt32, -1);
        const Tracer winner = gather(scatter(ScatterMode::kSet, none, ids));
        add(2, select(eq(winner, ids), gather(ct)));
      }
      return;
    case ScatterMode::kMul: {
      const Tracer u = Get(ops[2]);
      if (active(0)) {
        add(0,
            ct * scatter(ScatterMode::kMul, Full(bwd_, xt.shape, dtype, 1), u));
      }
      if (active(2)) {
        // d out[j] / d u_k = x[j] * (product of the other updates at j),
        // from the product of the nonzero updates and the count of zero
        // ones (as for reduce prod), so a zero update divides nothing.
        const Tracer x = Get(ops[0]);
        const Tracer u_zero = eq(u, 0);
        const Tracer u_safe = where(u_zero, 1, u);
        const Tracer p = gather(
            scatter(ScatterMode::kMul, Full(bwd_, xt.shape, dtype, 1), u_safe));
        const Tracer z = gather(scatter(ScatterMode::kAdd,
                                        Full(bwd_, xt.shape, DType::kInt32, 0),
                                        astype(u_zero, DType::kInt32)));
        const Tracer others = where(u_zero, where(eq(z, 1), p, 0),
                                    where(eq(z, 0), p / u_safe, 0));
        add(2, select(LandsMask(bwd_, idx, size, ut.shape, s.axis),
                      gather(ct * x) * others));
      }
      return;
    }
    case ScatterMode::kMin:
    case ScatterMode::kMax: {
      // JAX's extremal scatter rule: the result's cotangent is shared
      // evenly among the operand element (if it was kept) and the updates
      // that equal the result.
      const Tracer x = Get(ops[0]), u = Get(ops[2]), out = Get(n);
      const Tracer won =
          eq(u, gather(out)) & LandsMask(bwd_, idx, size, ut.shape, s.axis);
      const Tracer kept = eq(x, out);
      const Tracer winners = scatter(ScatterMode::kAdd, zeros(xt.shape, dtype),
                                     astype(won, dtype));
      const Tracer share = ct / (winners + astype(kept, dtype));
      if (active(0)) add(0, select(kept, share));
      if (active(2)) add(2, select(won, gather(share)));
      return;
    }
  }
  NoRule(nd.attrs);
}

}  // namespace baton::compiler::transforms::vjp_internal
