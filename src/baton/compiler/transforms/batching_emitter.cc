// BatchEmitter (batching_rules.h): small op builders shared by the rules.
#include <memory>
#include <numeric>
#include <utility>

#include "baton/compiler/literal.h"
#include "baton/compiler/transforms/batching_rules.h"

namespace baton::compiler::transforms::batching {

ValueId BatchEmitter::Add(OpAttrs attrs, OperandList operands) {
  Result<ValueId> id = dst_.Add(std::move(attrs), std::move(operands));
  if (!id.ok()) {
    // A rule built an op the IR rejects: a bug in the rule, reported with
    // the inference message rather than a wrong program.
    throw BatchingError{Internal("vmap: a batching rule built an invalid op: " +
                                 id.status().message())};
  }
  return id.value();
}

ValueId BatchEmitter::Materialize(BatchedValue v, int to) {
  if (v.batched()) return MoveDim(v.id, v.bdim, to);
  const Shape s = shape(v.id);
  std::vector<int64_t> dims = s.dims();
  dims.insert(dims.begin() + to, batch_size_);
  std::vector<int64_t> map;
  for (int i = 0; i < s.rank(); ++i) map.push_back(Lift(i, to));
  return BroadcastInDim(v.id, Shape(std::move(dims)), std::move(map));
}

ValueId BatchEmitter::Scalar(DType dtype, double value) {
  auto literal = std::make_shared<const Literal>(
      Literal::FromDoubles(dtype, Shape{}, {value}));
  return Add(ConstantAttrs{std::move(literal)}, {});
}

ValueId BatchEmitter::Full(DType dtype, Shape shape, double value) {
  // `shape` is taken by value: callers pass shapes of program values, which
  // adding the scalar may move.
  const ValueId scalar = Scalar(dtype, value);
  return BroadcastInDim(scalar, shape, {});
}

ValueId BatchEmitter::Iota(DType dtype, const Shape& shape, int64_t dimension) {
  return Add(IotaAttrs{shape, dtype, dimension}, {});
}

ValueId BatchEmitter::Convert(ValueId x, DType dtype) {
  if (this->dtype(x) == dtype) return x;
  return Add(ConvertAttrs{dtype}, {x});
}

ValueId BatchEmitter::Binary(BinaryOp op, ValueId a, ValueId b) {
  return Add(BinaryAttrs{op}, {a, b});
}

ValueId BatchEmitter::Compare(CompareOp op, ValueId a, ValueId b) {
  return Add(CompareAttrs{op}, {a, b});
}

ValueId BatchEmitter::Select(ValueId pred, ValueId on_true, ValueId on_false) {
  return Add(SelectAttrs{}, {pred, on_true, on_false});
}

ValueId BatchEmitter::BroadcastInDim(ValueId x, const Shape& shape,
                                     std::vector<int64_t> dims) {
  return Add(BroadcastInDimAttrs{shape, std::move(dims)}, {x});
}

ValueId BatchEmitter::Reshape(ValueId x, const Shape& shape) {
  if (this->shape(x) == shape) return x;
  return Add(ReshapeAttrs{shape}, {x});
}

ValueId BatchEmitter::Transpose(ValueId x, std::vector<int64_t> permutation) {
  bool identity = true;
  for (size_t i = 0; i < permutation.size(); ++i) {
    identity = identity && permutation[i] == static_cast<int64_t>(i);
  }
  if (identity) return x;
  return Add(TransposeAttrs{std::move(permutation)}, {x});
}

ValueId BatchEmitter::MoveDim(ValueId x, int from, int to) {
  if (from == to) return x;
  std::vector<int64_t> perm;
  for (int i = 0; i < shape(x).rank(); ++i) {
    if (i != from) perm.push_back(i);
  }
  perm.insert(perm.begin() + to, from);
  return Transpose(x, std::move(perm));
}

ValueId BatchEmitter::Gather(ValueId x, ValueId indices, int64_t axis,
                             const GatherBounds& bounds) {
  return Add(GatherAttrs{axis, bounds}, {x, indices});
}

ValueId BatchEmitter::ClampInt64(ValueId x, int64_t lo, int64_t hi) {
  const Shape s = shape(x);
  ValueId low = Full(DType::kInt64, s, static_cast<double>(lo));
  ValueId high = Full(DType::kInt64, s, static_cast<double>(hi));
  return Binary(BinaryOp::kMin, Binary(BinaryOp::kMax, x, low), high);
}

ValueId BatchEmitter::PerExampleTake(ValueId x, int64_t axis, ValueId indices,
                                     const GatherBounds& bounds) {
  // Flattening: with the batch dimension first and the take axis second,
  // [B, N, rest...] reshapes to [B*N, rest...], where example b's element k
  // is row b*N + k, so one plain gather takes every example's own indices.
  const Shape xs = shape(x);
  const int rank = xs.rank() - 1;  // the source rank
  const int ax = static_cast<int>(axis) + 1;
  const int64_t n = xs[ax];
  std::vector<int64_t> perm{0, ax};
  std::vector<int64_t> rest;
  for (int i = 1; i <= rank; ++i) {
    if (i != ax) {
      perm.push_back(i);
      rest.push_back(xs[i]);
    }
  }
  ValueId moved = Transpose(x, perm);
  std::vector<int64_t> flat_dims{batch_size_ * n};
  flat_dims.insert(flat_dims.end(), rest.begin(), rest.end());
  ValueId flat = Reshape(moved, Shape(flat_dims));

  const Shape is = shape(indices);
  ValueId idx = Convert(indices, DType::kInt64);
  if (bounds.wrap_negative) {  // i < 0 reads i + n
    idx = Select(Compare(CompareOp::kLt, idx, Full(DType::kInt64, is, 0)),
                 Binary(BinaryOp::kAdd, idx,
                        Full(DType::kInt64, is, static_cast<double>(n))),
                 idx);
  }
  ValueId row = Binary(BinaryOp::kMul, Iota(DType::kInt64, is, 0),
                       Full(DType::kInt64, is, static_cast<double>(n)));
  ValueId taken;
  if (bounds.fill) {
    // An index outside [0, n) becomes -1, outside the flattened rows too,
    // so the flattened gather reads the fill there.
    const ValueId inside = Binary(
        BinaryOp::kAnd, Compare(CompareOp::kGe, idx, Full(DType::kInt64, is, 0)),
        Compare(CompareOp::kLt, idx,
                Full(DType::kInt64, is, static_cast<double>(n))));
    const ValueId flat_idx =
        Select(inside, Binary(BinaryOp::kAdd, row, idx),
               Full(DType::kInt64, is, -1));
    taken = Gather(flat, flat_idx, 0, GatherBounds{false, true, bounds.fill_bits});
  } else {
    idx = ClampInt64(idx, 0, n - 1);
    taken = Gather(flat, Binary(BinaryOp::kAdd, row, idx), 0);
  }

  // taken is [B, I..., D[:axis], D[axis+1:]]; put I... back at the axis.
  const int ni = is.rank() - 1;
  std::vector<int64_t> out_perm{0};
  for (int k = 0; k < axis; ++k) out_perm.push_back(1 + ni + k);
  for (int j = 0; j < ni; ++j) out_perm.push_back(1 + j);
  for (int k = static_cast<int>(axis); k < rank - 1; ++k) {
    out_perm.push_back(1 + ni + k);
  }
  return Transpose(taken, std::move(out_perm));
}

}  // namespace baton::compiler::transforms::batching
