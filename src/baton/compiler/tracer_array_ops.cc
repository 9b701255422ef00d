// The tracer's shape, indexing, reduction and contraction functions
// (declared in tracer.h; elementwise ones are in tracer.cc).
#include <algorithm>
#include <numeric>
#include <string>

#include "baton/compiler/tracer.h"
#include "baton/compiler/tracer_internal.h"

namespace baton::compiler {

using tracer_internal::BroadcastShapes;
using tracer_internal::BroadcastTo;
using tracer_internal::CommonContext;
using tracer_internal::Fail;
using tracer_internal::ListToString;
using tracer_internal::NormalizeAxis;
using tracer_internal::ScalarConstant;

// ---- Shapes ----

Tracer reshape(const Tracer& x, std::vector<int64_t> dims) {
  constexpr std::string_view kOp = "reshape";
  TraceContext& ctx = CommonContext(kOp, {&x});
  int inferred = -1;
  int64_t known = 1;
  bool overflow = false;  // the known sizes multiply beyond int64
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (inferred >= 0) {
        Fail(kOp, "only one dimension can be -1 (inferred), got " +
                      ListToString(dims));
      }
      inferred = static_cast<int>(i);
    } else {
      // Negative sizes other than -1: inference says so. Hostile sizes
      // must not overflow here (they cannot fit any array anyway).
      overflow |= __builtin_mul_overflow(known, dims[i], &known);
    }
  }
  if (inferred >= 0) {
    if (overflow || known <= 0 || x.type().num_elements() % known != 0) {
      Fail(kOp, "cannot reshape " + TypeForMessage(x.type()) + " (" +
                    std::to_string(x.type().num_elements()) + " elements) to " +
                    ListToString(dims));
    }
    dims[inferred] = x.type().num_elements() / known;
  }
  Shape shape(std::move(dims));
  if (shape == x.shape()) return x;
  return ctx.Emit(ReshapeAttrs{std::move(shape)}, {x});
}

Tracer transpose(const Tracer& x) {
  std::vector<int64_t> permutation(x.rank());
  std::iota(permutation.rbegin(), permutation.rend(), 0);
  return transpose(x, std::move(permutation));
}

Tracer transpose(const Tracer& x, std::vector<int64_t> permutation) {
  TraceContext& ctx = CommonContext("transpose", {&x});
  for (int64_t& p : permutation) {
    if (p < 0 && p >= -x.rank()) p += x.rank();  // numpy's negative axes
  }
  std::vector<int64_t> identity(x.rank());
  std::iota(identity.begin(), identity.end(), 0);
  if (permutation == identity) return x;
  return ctx.Emit(TransposeAttrs{std::move(permutation)}, {x});
}

Tracer slice(const Tracer& x, std::vector<int64_t> start,
             std::vector<int64_t> limit, std::vector<int64_t> stride) {
  TraceContext& ctx = CommonContext("slice", {&x});
  if (stride.empty()) stride.assign(start.size(), 1);
  // The whole array (x[::-1] is traced as this then a gather): x itself,
  // not a copy.
  bool whole = static_cast<int>(start.size()) == x.rank() &&
               limit.size() == start.size() && stride.size() == start.size();
  for (int d = 0; whole && d < x.rank(); ++d) {
    whole = start[d] == 0 && limit[d] == x.shape()[d] && stride[d] == 1;
  }
  if (whole) return x;
  return ctx.Emit(
      SliceAttrs{std::move(start), std::move(limit), std::move(stride)}, {x});
}

Tracer dynamic_slice(const Tracer& x, const std::vector<Tracer>& starts,
                     std::vector<int64_t> slice_sizes) {
  std::vector<Tracer> operands = {x};
  operands.insert(operands.end(), starts.begin(), starts.end());
  TraceContext& ctx = CommonContext("dynamic_slice", operands);
  return ctx.Emit(DynamicSliceAttrs{std::move(slice_sizes)}, operands);
}

Tracer dynamic_update_slice(const Tracer& x, const Tracer& update,
                            const std::vector<Tracer>& starts) {
  std::vector<Tracer> operands = {x, update};
  operands.insert(operands.end(), starts.begin(), starts.end());
  TraceContext& ctx = CommonContext("dynamic_update_slice", operands);
  operands[1] = astype(update, x.dtype());
  return ctx.Emit(DynamicUpdateSliceAttrs{}, operands);
}

Tracer concatenate(const std::vector<Tracer>& xs, int64_t axis) {
  constexpr std::string_view kOp = "concatenate";
  TraceContext& ctx = CommonContext(kOp, xs);
  DType dtype = xs[0].dtype();
  for (const Tracer& x : xs) dtype = promote_types(dtype, x.dtype());
  std::vector<Tracer> operands;
  for (const Tracer& x : xs) operands.push_back(astype(x, dtype));
  if (operands.size() == 1) return operands[0];
  if (xs[0].rank() > 0) axis = NormalizeAxis(kOp, axis, xs[0].rank());
  return ctx.Emit(ConcatenateAttrs{axis}, operands);
}

Tracer pad(const Tracer& x, const Tracer& value, std::vector<int64_t> low,
           std::vector<int64_t> high, std::vector<int64_t> interior) {
  TraceContext& ctx = CommonContext("pad", {&x, &value});
  if (interior.empty()) interior.assign(low.size(), 0);
  return ctx.Emit(
      PadAttrs{std::move(low), std::move(high), std::move(interior)},
      {x, astype(value, x.dtype())});
}

Tracer pad(const Tracer& x, WeakScalar value, std::vector<int64_t> low,
           std::vector<int64_t> high, std::vector<int64_t> interior) {
  TraceContext& ctx = CommonContext("pad", {&x});
  return pad(x, ScalarConstant(ctx, value, x.dtype(), "pad"), std::move(low),
             std::move(high), std::move(interior));
}

// ---- Indexing ----

Tracer take(const Tracer& x, const Tracer& indices, int64_t axis,
            const GatherBounds& bounds) {
  TraceContext& ctx = CommonContext("gather", {&x, &indices});
  if (x.rank() > 0) axis = NormalizeAxis("gather", axis, x.rank());
  return ctx.Emit(GatherAttrs{axis, bounds}, {x, indices});
}

Tracer scatter(const Tracer& x, const Tracer& indices, const Tracer& updates,
               int64_t axis, ScatterMode mode) {
  const std::string op = "scatter " + std::string(op_name(mode));
  TraceContext& ctx = CommonContext(op, {&x, &indices, &updates});
  Tracer values = astype(updates, x.dtype());
  if (x.rank() > 0) {
    axis = NormalizeAxis(op, axis, x.rank());
    // Updates broadcast to the shape take() would return.
    const auto& dims = x.shape().dims();
    std::vector<int64_t> target(dims.begin(), dims.begin() + axis);
    target.insert(target.end(), indices.shape().dims().begin(),
                  indices.shape().dims().end());
    target.insert(target.end(), dims.begin() + axis + 1, dims.end());
    values = BroadcastTo(op + " updates", values, Shape(std::move(target)));
  }
  return ctx.Emit(ScatterAttrs{axis, mode}, {x, indices, values});
}

Tracer scatter(const Tracer& x, const Tracer& indices, WeakScalar updates,
               int64_t axis, ScatterMode mode) {
  TraceContext& ctx = CommonContext("scatter", {&x, &indices});
  return scatter(x, indices, ScalarConstant(ctx, updates, x.dtype(), "scatter"),
                 axis, mode);
}

// ---- Reductions ----

namespace {

// JAX accumulates sums and products of small integers in 32 bits.
DType ReductionDType(ReduceOp op, DType dtype) {
  if (op != ReduceOp::kSum && op != ReduceOp::kProd) return dtype;
  switch (dtype) {
    case DType::kBool:
    case DType::kInt8:
    case DType::kInt16:
      return DType::kInt32;
    case DType::kUInt8:
      return DType::kUInt32;
    default:
      return dtype;
  }
}

Tracer Reduce(ReduceOp op, const Tracer& x,
              std::optional<std::vector<int64_t>> axes, bool keepdims) {
  const std::string_view name = op_name(op);
  TraceContext& ctx = CommonContext(name, {&x});
  std::vector<int64_t> dims;
  if (axes.has_value()) {
    for (int64_t a : *axes) dims.push_back(NormalizeAxis(name, a, x.rank()));
  } else {
    for (int i = 0; i < x.rank(); ++i) dims.push_back(i);
  }
  const Tracer operand = astype(x, ReductionDType(op, x.dtype()));
  if (dims.empty()) return operand;
  Tracer result = ctx.Emit(ReduceAttrs{op, dims}, {operand});
  if (!keepdims) return result;
  std::vector<int64_t> kept = x.shape().dims();
  for (int64_t a : dims) kept[a] = 1;
  return reshape(result, std::move(kept));
}

}  // namespace

Tracer sum(const Tracer& x) { return Reduce(ReduceOp::kSum, x, {}, false); }
Tracer sum(const Tracer& x, std::vector<int64_t> axes, bool keepdims) {
  return Reduce(ReduceOp::kSum, x, std::move(axes), keepdims);
}
Tracer prod(const Tracer& x) { return Reduce(ReduceOp::kProd, x, {}, false); }
Tracer prod(const Tracer& x, std::vector<int64_t> axes, bool keepdims) {
  return Reduce(ReduceOp::kProd, x, std::move(axes), keepdims);
}
Tracer max(const Tracer& x) { return Reduce(ReduceOp::kMax, x, {}, false); }
Tracer max(const Tracer& x, std::vector<int64_t> axes, bool keepdims) {
  return Reduce(ReduceOp::kMax, x, std::move(axes), keepdims);
}
Tracer min(const Tracer& x) { return Reduce(ReduceOp::kMin, x, {}, false); }
Tracer min(const Tracer& x, std::vector<int64_t> axes, bool keepdims) {
  return Reduce(ReduceOp::kMin, x, std::move(axes), keepdims);
}

// ---- Contractions ----

Tracer matmul(const Tracer& a, const Tracer& b) {
  constexpr std::string_view kOp = "matmul";
  TraceContext& ctx = CommonContext(kOp, {&a, &b});
  const std::string operands =
      TypeForMessage(a.type()) + " @ " + TypeForMessage(b.type());
  if (a.rank() == 0 || b.rank() == 0) {
    Fail(kOp, "operands must have rank >= 1, got " + operands);
  }
  const int ra = a.rank(), rb = b.rank();
  const int64_t ka = a.shape()[ra - 1];
  const int64_t kb = rb == 1 ? b.shape()[0] : b.shape()[rb - 2];
  if (ka != kb) {
    Fail(kOp, "contracting dimensions differ (" + std::to_string(ka) + " vs " +
                  std::to_string(kb) + ") in " + operands);
  }
  const DType dtype = promote_types(a.dtype(), b.dtype());
  Tracer x = astype(a, dtype), y = astype(b, dtype);
  if (ra == 1 || rb == 1) {
    // A vector side contributes no batch dimensions; dot_general's output
    // order (lhs free, then rhs free) is already numpy's.
    return ctx.Emit(DotGeneralAttrs{{}, {}, {ra - 1}, {rb == 1 ? 0 : rb - 2}},
                    {x, y});
  }
  if (rb == 2) {
    // A matrix on the right (`h @ w` with h of any rank): one dot_general
    // with h's leading dimensions as free dimensions, as JAX emits it. Its
    // output order (lhs free, then rhs free) is numpy's; broadcasting w to
    // h's batch would materialize a copy of w per batch element and make
    // its gradient a batched product summed afterwards.
    return ctx.Emit(DotGeneralAttrs{{}, {}, {ra - 1}, {0}}, {x, y});
  }
  // Leading dimensions are batch dimensions, broadcast numpy-style.
  const auto& da = a.shape().dims();
  const auto& db = b.shape().dims();
  const Shape batch = BroadcastShapes(
      kOp, Shape(std::vector<int64_t>(da.begin(), da.end() - 2)),
      Shape(std::vector<int64_t>(db.begin(), db.end() - 2)));
  std::vector<int64_t> xs = batch.dims(), ys = batch.dims();
  xs.insert(xs.end(), da.end() - 2, da.end());
  ys.insert(ys.end(), db.end() - 2, db.end());
  x = BroadcastTo(kOp, x, Shape(std::move(xs)));
  y = BroadcastTo(kOp, y, Shape(std::move(ys)));
  const int nb = batch.rank();
  std::vector<int64_t> batch_dims(nb);
  std::iota(batch_dims.begin(), batch_dims.end(), 0);
  return ctx.Emit(DotGeneralAttrs{batch_dims, batch_dims, {nb + 1}, {nb}},
                  {x, y});
}

Tracer dot_general(const Tracer& a, const Tracer& b,
                   const DotGeneralAttrs& dimensions) {
  TraceContext& ctx = CommonContext("dot_general", {&a, &b});
  const DType dtype = promote_types(a.dtype(), b.dtype());
  return ctx.Emit(dimensions, {astype(a, dtype), astype(b, dtype)});
}

}  // namespace baton::compiler
