// Batching rules for elementwise ops (convert, unary, binary, compare,
// select, transfer) and for ops that only move data around (broadcast_in_dim,
// reshape, transpose, slice, concatenate, pad).
#include <utility>
#include <vector>

#include "baton/compiler/transforms/batching_rules.h"

namespace baton::compiler::transforms::batching {
namespace {

int FirstBatchedDim(const std::vector<BatchedValue>& operands) {
  for (const BatchedValue& v : operands) {
    if (v.batched()) return v.bdim;
  }
  return kUnbatched;
}

// Unary-like ops keep the batch dimension where it is.
BatchedValue SameAttrs(BatchEmitter& e, const Instruction& inst,
                       BatchedValue x) {
  return {e.Add(inst.attrs, {x.id}), x.bdim};
}

// Operands of equal shape: all batched at one place (the first batched
// operand's, so the common case of one batched operand moves nothing), the
// unbatched ones broadcast, since the IR never broadcasts implicitly.
BatchedValue AlignedElementwise(BatchEmitter& e, const Instruction& inst,
                                const std::vector<BatchedValue>& operands) {
  const int bdim = FirstBatchedDim(operands);
  OperandList list;
  for (const BatchedValue& v : operands) list.push_back(e.Materialize(v, bdim));
  return {e.Add(inst.attrs, std::move(list)), bdim};
}

BatchedValue BroadcastInDimRule(BatchEmitter& e, const BroadcastInDimAttrs& a,
                                BatchedValue x) {
  std::vector<int64_t> dims{e.batch_size()};
  dims.insert(dims.end(), a.shape.dims().begin(), a.shape.dims().end());
  std::vector<int64_t> map;
  for (int j = 0; j < e.shape(x.id).rank(); ++j) {
    if (j == x.bdim) {
      map.push_back(0);
    } else {
      map.push_back(a.broadcast_dimensions[j < x.bdim ? j : j - 1] + 1);
    }
  }
  return {e.BroadcastInDim(x.id, Shape(std::move(dims)), std::move(map)), 0};
}

BatchedValue ReshapeRule(BatchEmitter& e, const ReshapeAttrs& a,
                         BatchedValue x) {
  std::vector<int64_t> dims{e.batch_size()};
  dims.insert(dims.end(), a.shape.dims().begin(), a.shape.dims().end());
  // Row-major order is only preserved per example when the batch dimension
  // leads.
  ValueId lead = e.Materialize(x, 0);
  return {e.Add(ReshapeAttrs{Shape(std::move(dims))}, {lead}), 0};
}

BatchedValue TransposeRule(BatchEmitter& e, const TransposeAttrs& a,
                           BatchedValue x) {
  std::vector<int64_t> perm{x.bdim};
  for (int64_t p : a.permutation) perm.push_back(Lift(p, x.bdim));
  return {e.Transpose(x.id, std::move(perm)), 0};
}

BatchedValue SliceRule(BatchEmitter& e, const SliceAttrs& a, BatchedValue x) {
  SliceAttrs b = a;
  b.start.insert(b.start.begin() + x.bdim, 0);
  b.limit.insert(b.limit.begin() + x.bdim, e.batch_size());
  b.stride.insert(b.stride.begin() + x.bdim, 1);
  return {e.Add(std::move(b), {x.id}), x.bdim};
}

BatchedValue ConcatenateRule(BatchEmitter& e, const ConcatenateAttrs& a,
                             const std::vector<BatchedValue>& operands) {
  const int bdim = FirstBatchedDim(operands);
  OperandList list;
  for (const BatchedValue& v : operands) list.push_back(e.Materialize(v, bdim));
  return {e.Add(ConcatenateAttrs{Lift(a.dimension, bdim)}, std::move(list)),
          bdim};
}

BatchedValue PadRule(BatchEmitter& e, const PadAttrs& a, BatchedValue x,
                     BatchedValue value) {
  const int bdim = x.batched() ? x.bdim : 0;
  PadAttrs b = a;
  b.low.insert(b.low.begin() + bdim, 0);
  b.high.insert(b.high.begin() + bdim, 0);
  b.interior.insert(b.interior.begin() + bdim, 0);
  if (!value.batched()) return {e.Add(std::move(b), {x.id, value.id}), bdim};

  // A padding value per example: pad with zero, then choose each example's
  // value wherever the unbatched pad of a mask of ones says "padding". The
  // mask handles interior padding and negative (cropping) low/high alike.
  const ValueId xb = e.Materialize(x, bdim);
  const DType dtype = e.dtype(xb);
  const ValueId padded = e.Add(b, {xb, e.Scalar(dtype, 0)});
  std::vector<int64_t> source_dims = e.shape(xb).dims();
  source_dims.erase(source_dims.begin() + bdim);
  const ValueId ones = e.Full(DType::kBool, Shape(std::move(source_dims)), 1);
  const ValueId mask =
      e.Add(a, {ones, e.Scalar(DType::kBool, 0)});  // true on operand data
  const ValueId mask_b = e.Materialize({mask, kUnbatched}, bdim);
  const ValueId fill = e.BroadcastInDim(value.id, e.shape(padded), {bdim});
  return {e.Select(mask_b, padded, fill), bdim};
}

}  // namespace

BatchedValue BatchElementwise(BatchEmitter& e, const Instruction& inst,
                              const std::vector<BatchedValue>& operands) {
  switch (inst.kind()) {
    case OpKind::kConvert:
    case OpKind::kUnary:
    case OpKind::kTransfer:
      return SameAttrs(e, inst, operands[0]);
    case OpKind::kBinary:
    case OpKind::kCompare:
    case OpKind::kSelect:
      return AlignedElementwise(e, inst, operands);
    default:
      throw BatchingError{
          Internal("vmap: BatchElementwise got " + OpDisplayName(inst.attrs))};
  }
}

BatchedValue BatchShapeOp(BatchEmitter& e, const Instruction& inst,
                          const std::vector<BatchedValue>& operands) {
  switch (inst.kind()) {
    case OpKind::kBroadcastInDim:
      return BroadcastInDimRule(e, inst.attrs_as<BroadcastInDimAttrs>(),
                                operands[0]);
    case OpKind::kReshape:
      return ReshapeRule(e, inst.attrs_as<ReshapeAttrs>(), operands[0]);
    case OpKind::kTranspose:
      return TransposeRule(e, inst.attrs_as<TransposeAttrs>(), operands[0]);
    case OpKind::kSlice:
      return SliceRule(e, inst.attrs_as<SliceAttrs>(), operands[0]);
    case OpKind::kConcatenate:
      return ConcatenateRule(e, inst.attrs_as<ConcatenateAttrs>(), operands);
    case OpKind::kPad:
      return PadRule(e, inst.attrs_as<PadAttrs>(), operands[0], operands[1]);
    default:
      throw BatchingError{
          Internal("vmap: BatchShapeOp got " + OpDisplayName(inst.attrs))};
  }
}

}  // namespace baton::compiler::transforms::batching
