// JVP rules of the data-movement, indexing, reduction and contraction ops
// (jvp_rules.h). Ops linear in their data operands apply themselves to the
// tangents (with the same indices, starts or dimensions); the rest follow
// JAX (jax/_src/lax/lax.py, slicing.py) where JAX has a rule, and a
// documented exact formulation where JAX has none (scatter mul with
// repeated indices, products with zeros).
#include <vector>

#include "baton/compiler/sort_ops.h"
#include "baton/compiler/transforms/jvp_rules.h"

namespace baton::compiler::transforms::jvp_rules {
namespace {

// Reduction helpers: `r` (reduced over `axes` of a value of `shape`)
// broadcast back to that shape.
Tracer Unreduce(const Tracer& r, const Shape& shape,
                const std::vector<int64_t>& axes) {
  std::vector<int64_t> kept;
  for (int d = 0; d < shape.rank(); ++d) {
    bool reduced = false;
    for (int64_t a : axes) reduced |= a == d;
    if (!reduced) kept.push_back(d);
  }
  return broadcast_in_dim(r, shape, std::move(kept));
}

Tracer ReduceOf(ReduceOp op, const Tracer& x,
                const std::vector<int64_t>& axes) {
  return x.context()->Emit(ReduceAttrs{op, axes}, {x});
}

// d prod(x) = sum_i t_i * prod_{j != i} x_j, with the product of the others
// computed without dividing by zero: from the count of zeros z and the
// product p of the nonzero elements, prod_{j != i} x_j is p / x_i where
// z == 0, p at the one zero where z == 1, and 0 otherwise. (JAX builds the
// exclusive products with a scan.) Limitation: p / x_i is rounded like the
// primal product, so where the product of all nonzero elements overflows
// or underflows although the product of the others would not, the tangent
// is that of the rounded product (inf or 0), as the primal value is.
Tracer ReduceProdTangent(const Tracer& x, const Tracer& t,
                         const std::vector<int64_t>& axes) {
  const Tracer is_zero = eq(x, 0);
  const Tracer safe = where(is_zero, 1, x);
  const Tracer zeros_count =
      Unreduce(ReduceOf(ReduceOp::kSum, astype(is_zero, x.dtype()), axes),
               x.shape(), axes);
  const Tracer nonzero_prod =
      Unreduce(ReduceOf(ReduceOp::kProd, safe, axes), x.shape(), axes);
  const Tracer others =
      where(is_zero, where(eq(zeros_count, 1), nonzero_prod, 0),
            where(eq(zeros_count, 0), nonzero_prod / safe, 0));
  return ReduceOf(ReduceOp::kSum, t * others, axes);
}

// JAX's _reduce_chooser_jvp_rule: the tangent of the chosen elements,
// averaged over ties. An empty reduction (or one over NaNs) chooses nothing
// and gets tangent 0 instead of 0/0.
Tracer ReduceChooserTangent(const Tracer& x, const Tracer& ans, const Tracer& t,
                            const std::vector<int64_t>& axes) {
  const Tracer location =
      astype(eq(x, Unreduce(ans, x.shape(), axes)), x.dtype());
  const Tracer counts = ReduceOf(ReduceOp::kSum, location, axes);
  return ReduceOf(ReduceOp::kSum, t * location, axes) / maximum(counts, 1);
}

Tracer Scatter(const Tracer& operand, const Tracer& indices,
               const Tracer& updates, int64_t axis, ScatterMode mode) {
  return operand.context()->Emit(ScatterAttrs{axis, mode},
                                 {operand, indices, updates});
}

Tracer Gather(const Tracer& operand, const Tracer& indices, int64_t axis) {
  return operand.context()->Emit(GatherAttrs{axis}, {operand, indices});
}

// out[k] = x[k] * prod_{j -> k} u_j over the updates j landing on k, so
// d out[k] = t_x[k] * prod_j u_j + x[k] * sum_j t_u_j * prod_{i -> k, i != j}
// u_i. JAX differentiates the updates only for unique indices; the
// exclusive products here use the zero-count trick of ReduceProdTangent per
// slot (counts and nonzero products scattered, then gathered back to the
// updates with the same indices), so repeated indices and zero updates are
// exact. Out-of-range updates are dropped by the final scatter, as they are
// by the primal one (the gathers clamp, but those values go nowhere).
Tracer ScatterMulTangent(const Tracer& x, const Tracer& indices,
                         const Tracer& u, int64_t axis, const Tracer& tx,
                         const Tracer& tu) {
  Tracer dx, du;
  if (tx.valid()) dx = Scatter(tx, indices, u, axis, ScatterMode::kMul);
  if (tu.valid()) {
    const Tracer is_zero = eq(u, 0);
    const Tracer safe = where(is_zero, 1, u);
    const Tracer zeros_count =
        Gather(Scatter(ZerosLike(x), indices, astype(is_zero, u.dtype()), axis,
                       ScatterMode::kAdd),
               indices, axis);
    const Tracer nonzero_prod =
        Gather(Scatter(ones(*x.context(), x.shape(), x.dtype()), indices, safe,
                       axis, ScatterMode::kMul),
               indices, axis);
    const Tracer others =
        where(is_zero, where(eq(zeros_count, 1), nonzero_prod, 0),
              where(eq(zeros_count, 0), nonzero_prod / safe, 0));
    du = x *
         Scatter(ZerosLike(x), indices, tu * others, axis, ScatterMode::kAdd);
  }
  return AddTangents(dx, du);
}

// JAX's _scatter_extremal_jvp: every value that equals the result at a slot
// (the operand's element and each update landing there) shares the slot's
// tangent evenly.
Tracer ScatterExtremalTangent(const Tracer& x, const Tracer& indices,
                              const Tracer& u, const Tracer& ans, int64_t axis,
                              const Tracer& tx, const Tracer& tu) {
  const Tracer retained = astype(eq(x, ans), x.dtype());
  const Tracer succeeded = astype(eq(u, Gather(ans, indices, axis)), x.dtype());
  const Tracer counts =
      Scatter(retained, indices, succeeded, axis, ScatterMode::kAdd);
  const Tracer numerator = Scatter(
      tx.valid() ? tx * retained : ZerosLike(x), indices,
      tu.valid() ? tu * succeeded : ZerosLike(u), axis, ScatterMode::kAdd);
  return numerator / maximum(counts, 1);
}

Tracer ScatterTangent(const ScatterAttrs& a,
                      const std::vector<Tracer>& operands, const Tracer& ans,
                      const std::vector<Tracer>& tangents) {
  const Tracer &x = operands[0], &indices = operands[1], &u = operands[2];
  const Tracer &tx = tangents[0], &tu = tangents[2];
  switch (a.mode) {
    case ScatterMode::kSet:
      // The same updates win, so their tangents do (zeros must still
      // overwrite the operand's tangent where a constant update lands).
      return Scatter(Instantiate(tx, x), indices, Instantiate(tu, u), a.axis,
                     a.mode);
    case ScatterMode::kAdd:
      if (!tu.valid()) return tx;
      return Scatter(Instantiate(tx, x), indices, tu, a.axis, a.mode);
    case ScatterMode::kMul:
      return ScatterMulTangent(x, indices, u, a.axis, tx, tu);
    case ScatterMode::kMin:
    case ScatterMode::kMax:
      return ScatterExtremalTangent(x, indices, u, ans, a.axis, tx, tu);
  }
  return Tracer();
}

Tracer ReduceTangent(const ReduceAttrs& a, const Tracer& x, const Tracer& ans,
                     const Tracer& t) {
  switch (a.op) {
    case ReduceOp::kSum:
      return ReduceOf(ReduceOp::kSum, t, a.axes);
    case ReduceOp::kProd:
      return ReduceProdTangent(x, t, a.axes);
    case ReduceOp::kMax:
    case ReduceOp::kMin:
      return ReduceChooserTangent(x, ans, t, a.axes);
  }
  return Tracer();
}

}  // namespace

Tracer ArrayOpTangent(const Instruction& inst,
                      const std::vector<Tracer>& operands, const Tracer& result,
                      const std::vector<Tracer>& tangents) {
  TraceContext& ctx = *result.context();
  switch (inst.kind()) {
    case OpKind::kBroadcastInDim:
    case OpKind::kReshape:
    case OpKind::kTranspose:
    case OpKind::kSlice:
    case OpKind::kTransfer:  // the tangent moves with its primal
      return ctx.Emit(inst.attrs, {tangents[0]});
    case OpKind::kDynamicSlice:
    case OpKind::kGather: {
      // Same starts / indices (integer operands, never with tangents).
      std::vector<Tracer> ops = operands;
      ops[0] = tangents[0];
      if (const auto* g = inst.attrs_if<GatherAttrs>(); g && g->bounds.fill) {
        // A filled element is a constant: its tangent is zero.
        GatherAttrs zero_fill = *g;
        zero_fill.bounds.fill_bits = 0;
        return ctx.Emit(zero_fill, ops);
      }
      return ctx.Emit(inst.attrs, ops);
    }
    case OpKind::kDynamicUpdateSlice: {
      std::vector<Tracer> ops = operands;
      ops[0] = Instantiate(tangents[0], operands[0]);
      ops[1] = Instantiate(tangents[1], operands[1]);
      return ctx.Emit(inst.attrs, ops);
    }
    case OpKind::kConcatenate:
    case OpKind::kPad: {  // pad: the padding value's tangent pads too
      std::vector<Tracer> ops;
      for (size_t i = 0; i < operands.size(); ++i) {
        ops.push_back(Instantiate(tangents[i], operands[i]));
      }
      return ctx.Emit(inst.attrs, ops);
    }
    case OpKind::kScatter:
      return ScatterTangent(inst.attrs_as<ScatterAttrs>(), operands, result,
                            tangents);
    case OpKind::kReduce:
      return ReduceTangent(inst.attrs_as<ReduceAttrs>(), operands[0], result,
                           tangents[0]);
    case OpKind::kSort: {
      // The tangent moves with its element: gathered by the permutation
      // that sorts the primal (recomputed as an index sort). The indices
      // variant has an integer result and no tangent.
      const auto& a = inst.attrs_as<SortAttrs>();
      if (a.indices) return Tracer();
      const Tracer perm =
          sort_values_permutation(operands[0], a.dimension, a.descending);
      return take_along_axis_same_shape(tangents[0], perm, a.dimension);
    }
    case OpKind::kDotGeneral: {
      // Product rule; dot_general is bilinear.
      Tracer dx, dy;
      if (tangents[0].valid()) {
        dx = ctx.Emit(inst.attrs, {tangents[0], operands[1]});
      }
      if (tangents[1].valid()) {
        dy = ctx.Emit(inst.attrs, {operands[0], tangents[1]});
      }
      return AddTangents(dx, dy);
    }
    default:
      break;
  }
  ThrowUnimplemented(inst.attrs);
}

}  // namespace baton::compiler::transforms::jvp_rules
