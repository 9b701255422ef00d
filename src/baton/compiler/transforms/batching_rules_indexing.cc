// Batching rules for dynamic_slice, dynamic_update_slice, gather and
// scatter.
//
// Unbatched indices only add a full range for the batch dimension. Batched
// indices (each example reads or writes somewhere else) all reduce to
// PerExampleTake (batching_emitter.cc), one gather on the operand with the
// batch dimension folded into the indexed axis, and, for scatter, the same
// folding with out-of-range indices kept out of range. No rule unrolls the
// batch: each emits a fixed number of ops whatever the batch size.
#include <utility>
#include <vector>

#include "baton/compiler/transforms/batching_rules.h"

namespace baton::compiler::transforms::batching {
namespace {

bool AnyBatched(const std::vector<BatchedValue>& values, size_t from) {
  for (size_t i = from; i < values.size(); ++i) {
    if (values[i].batched()) return true;
  }
  return false;
}

// A batched integer scalar as an int64 [B] value.
ValueId StartPerExample(BatchEmitter& e, BatchedValue start) {
  return e.Convert(e.Materialize(start, 0), DType::kInt64);
}

BatchedValue DynamicSliceRule(BatchEmitter& e, const DynamicSliceAttrs& a,
                              const std::vector<BatchedValue>& operands) {
  const BatchedValue x = operands[0];
  const int rank = static_cast<int>(a.slice_sizes.size());
  if (!AnyBatched(operands, 1)) {
    DynamicSliceAttrs b = a;
    b.slice_sizes.insert(b.slice_sizes.begin() + x.bdim, e.batch_size());
    OperandList list{x.id};
    for (int i = 0; i < rank; ++i) {
      if (i == x.bdim) list.push_back(e.Scalar(DType::kInt32, 0));
      list.push_back(operands[1 + i].id);
    }
    if (x.bdim == rank) list.push_back(e.Scalar(DType::kInt32, 0));
    return {e.Add(std::move(b), std::move(list)), x.bdim};
  }

  // Dimensions with unbatched starts: one dynamic_slice (batch first);
  // then each dimension with a batched start: a per-example take of the
  // clamped start + 0..size-1.
  ValueId y = e.Materialize(x, 0);
  const Shape xs = e.shape(y);
  DynamicSliceAttrs b{{e.batch_size()}};
  OperandList list{y, e.Scalar(DType::kInt32, 0)};
  bool slices = false;
  for (int i = 0; i < rank; ++i) {
    if (operands[1 + i].batched()) {
      b.slice_sizes.push_back(xs[i + 1]);
      list.push_back(e.Scalar(DType::kInt32, 0));
    } else {
      b.slice_sizes.push_back(a.slice_sizes[i]);
      list.push_back(operands[1 + i].id);
      slices = true;
    }
  }
  if (slices) y = e.Add(std::move(b), std::move(list));
  for (int i = 0; i < rank; ++i) {
    if (!operands[1 + i].batched()) continue;
    const int64_t dim = e.shape(y)[i + 1];
    const int64_t size = a.slice_sizes[i];
    const ValueId start =
        e.ClampInt64(StartPerExample(e, operands[1 + i]), 0, dim - size);
    const Shape idx_shape{e.batch_size(), size};
    const ValueId idx =
        e.Binary(BinaryOp::kAdd, e.BroadcastInDim(start, idx_shape, {0}),
                 e.Iota(DType::kInt64, idx_shape, 1));
    y = e.PerExampleTake(y, i, idx);
  }
  return {y, 0};
}

BatchedValue DynamicUpdateSliceRule(BatchEmitter& e,
                                    const std::vector<BatchedValue>& operands) {
  const BatchedValue x = operands[0], update = operands[1];
  const int rank = static_cast<int>(operands.size()) - 2;
  if (!AnyBatched(operands, 2)) {
    const int bdim = x.batched() ? x.bdim : update.bdim;
    OperandList list{e.Materialize(x, bdim), e.Materialize(update, bdim)};
    for (int i = 0; i < rank; ++i) {
      if (i == bdim) list.push_back(e.Scalar(DType::kInt32, 0));
      list.push_back(operands[2 + i].id);
    }
    if (bdim == rank) list.push_back(e.Scalar(DType::kInt32, 0));
    return {e.Add(DynamicUpdateSliceAttrs{}, std::move(list)), bdim};
  }

  // Per-example starts: expand the update to the operand's shape with a
  // per-example take along each dimension (position j reads update element
  // j - start), build the mask of the written block, and select.
  const ValueId xb = e.Materialize(x, 0);
  ValueId expanded = e.Materialize(update, 0);
  const Shape xs = e.shape(xb);
  const Shape us = e.shape(expanded);
  if (us.num_elements() == 0) return {xb, 0};
  ValueId mask = kNoValue;
  for (int i = 0; i < rank; ++i) {
    const int64_t dim = xs[i + 1], size = us[i + 1];
    const ValueId start =
        e.ClampInt64(StartPerExample(e, operands[2 + i]), 0, dim - size);
    const Shape pos_shape{e.batch_size(), dim};
    const ValueId pos = e.Iota(DType::kInt64, pos_shape, 1);
    const ValueId start_b = e.BroadcastInDim(start, pos_shape, {0});
    const ValueId offset = e.Binary(BinaryOp::kSub, pos, start_b);
    expanded = e.PerExampleTake(expanded, i, offset);
    const ValueId end_b =
        e.Binary(BinaryOp::kAdd, start_b,
                 e.Full(DType::kInt64, pos_shape, static_cast<double>(size)));
    const ValueId inside =
        e.Binary(BinaryOp::kAnd, e.Compare(CompareOp::kGe, pos, start_b),
                 e.Compare(CompareOp::kLt, pos, end_b));
    const ValueId inside_full = e.BroadcastInDim(inside, xs, {0, i + 1});
    mask = mask == kNoValue ? inside_full
                            : e.Binary(BinaryOp::kAnd, mask, inside_full);
  }
  return {e.Select(mask, expanded, xb), 0};
}

BatchedValue GatherRule(BatchEmitter& e, const GatherAttrs& a, BatchedValue x,
                        BatchedValue indices) {
  if (!indices.batched()) {
    const int64_t axis = Lift(a.axis, x.bdim);
    const int index_rank = e.shape(indices.id).rank();
    const int bdim = axis > x.bdim ? x.bdim : x.bdim - 1 + index_rank;
    return {e.Gather(x.id, indices.id, axis, a.bounds), bdim};
  }
  if (!x.batched()) {
    return {e.Gather(x.id, indices.id, a.axis, a.bounds),
            static_cast<int>(a.axis) + indices.bdim};
  }
  return {e.PerExampleTake(e.Materialize(x, 0), a.axis,
                           e.Materialize(indices, 0), a.bounds),
          0};
}

BatchedValue ScatterRule(BatchEmitter& e, const ScatterAttrs& a, BatchedValue x,
                         BatchedValue indices, BatchedValue updates) {
  const ValueId xb = e.Materialize(x, 0);
  if (!indices.batched()) {
    ScatterAttrs b{a.axis + 1, a.mode};
    return {e.Add(b, {xb, indices.id, e.Materialize(updates, 0)}), 0};
  }
  // The flattening of PerExampleTake: operand [B, N, rest...] becomes
  // [B*N, rest...]; example b's index k becomes b*N + k, and an index out of
  // [0, N) becomes B*N, still out of range, so the update stays dropped
  // instead of landing in a neighbouring example.
  const Shape xs = e.shape(xb);
  const int rank = xs.rank() - 1;
  const int ax = static_cast<int>(a.axis) + 1;
  const int64_t n = xs[ax];
  std::vector<int64_t> perm{0, ax};
  std::vector<int64_t> moved_dims{e.batch_size(), n};
  std::vector<int64_t> flat_dims{e.batch_size() * n};
  for (int i = 1; i <= rank; ++i) {
    if (i == ax) continue;
    perm.push_back(i);
    moved_dims.push_back(xs[i]);
    flat_dims.push_back(xs[i]);
  }
  const ValueId flat = e.Reshape(e.Transpose(xb, perm), Shape(flat_dims));

  const ValueId idx = e.Convert(e.Materialize(indices, 0), DType::kInt64);
  const Shape is = e.shape(idx);
  const ValueId valid =
      e.Binary(BinaryOp::kAnd,
               e.Compare(CompareOp::kGe, idx, e.Full(DType::kInt64, is, 0)),
               e.Compare(CompareOp::kLt, idx,
                         e.Full(DType::kInt64, is, static_cast<double>(n))));
  const ValueId row =
      e.Binary(BinaryOp::kMul, e.Iota(DType::kInt64, is, 0),
               e.Full(DType::kInt64, is, static_cast<double>(n)));
  const ValueId flat_idx = e.Select(
      valid, e.Binary(BinaryOp::kAdd, row, idx),
      e.Full(DType::kInt64, is, static_cast<double>(e.batch_size() * n)));

  // Updates [B, D[:axis], I..., D[axis+1:]] -> [B, I..., D[:axis],
  // D[axis+1:]]: the inverse of the order PerExampleTake undoes. Within one
  // example colliding updates keep their relative row-major order.
  const ValueId ub = e.Materialize(updates, 0);
  const int ni = is.rank() - 1;
  std::vector<int64_t> uperm{0};
  for (int j = 0; j < ni; ++j) uperm.push_back(1 + a.axis + j);
  for (int k = 0; k < a.axis; ++k) uperm.push_back(1 + k);
  for (int k = static_cast<int>(a.axis) + 1; k < rank; ++k) {
    uperm.push_back(ni + k);
  }
  const ValueId scattered =
      e.Add(ScatterAttrs{0, a.mode}, {flat, flat_idx, e.Transpose(ub, uperm)});

  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = i;
  return {e.Transpose(e.Reshape(scattered, Shape(moved_dims)), inverse), 0};
}

}  // namespace

BatchedValue BatchIndexing(BatchEmitter& e, const Instruction& inst,
                           const std::vector<BatchedValue>& operands) {
  switch (inst.kind()) {
    case OpKind::kDynamicSlice:
      return DynamicSliceRule(e, inst.attrs_as<DynamicSliceAttrs>(), operands);
    case OpKind::kDynamicUpdateSlice:
      return DynamicUpdateSliceRule(e, operands);
    case OpKind::kGather:
      return GatherRule(e, inst.attrs_as<GatherAttrs>(), operands[0],
                        operands[1]);
    case OpKind::kScatter:
      return ScatterRule(e, inst.attrs_as<ScatterAttrs>(), operands[0],
                         operands[1], operands[2]);
    case OpKind::kSort: {
      // Each example sorts along its own dimension: the batch dimension
      // stays where it is and the sorted one shifts past it.
      SortAttrs a = inst.attrs_as<SortAttrs>();
      a.dimension = Lift(a.dimension, operands[0].bdim);
      return {e.Add(a, {operands[0].id}), operands[0].bdim};
    }
    default:
      throw BatchingError{
          Internal("vmap: BatchIndexing got " + OpDisplayName(inst.attrs))};
  }
}

}  // namespace baton::compiler::transforms::batching
