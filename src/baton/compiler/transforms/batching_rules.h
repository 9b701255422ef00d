// Internal to the batching transformation (batching.h): the per-value batch
// state, the emitter the rules build with, and one rule per op family.
//
// A rule reads one instruction of the source program and the batched forms
// of its operands and emits ops into the destination program, returning the
// batched form of the result. Rules run only when at least one operand is
// batched (the driver copies all-unbatched ops unchanged). Every rule emits
// only IR ops, never calls of new kinds, so batched programs can be
// transformed again (vmap of vmap, grad of vmap).
//
// Errors inside rules are thrown as BatchingError and turned back into a
// Status by Vmap: rules are long chains of emits where each could only fail
// on a bug or an unsupported case, and a Result at every step would bury the
// logic. Nothing outside the batching_*.cc files sees the exception.
//
// Ownership: a BatchEmitter refers to (does not own) the destination
// program. Thread-safety: single-threaded, like building any Program.
#pragma once

#include <cstdint>
#include <vector>

#include "baton/compiler/ir.h"

namespace baton::compiler::transforms::batching {

inline constexpr int kUnbatched = -1;

// A value of the batched program and where its batch dimension is
// (kUnbatched: the value is the same for every example and has the source
// value's type).
struct BatchedValue {
  ValueId id = kNoValue;
  int bdim = kUnbatched;
  bool batched() const { return bdim != kUnbatched; }
};

struct BatchingError {
  Status status;
};

// Source dimension `dim` of a value batched at `bdim`, in the batched
// value's numbering.
inline int64_t Lift(int64_t dim, int bdim) {
  return dim < bdim ? dim : dim + 1;
}

// Builds ops into the destination program; every method throws
// BatchingError on a rejected op.
class BatchEmitter {
 public:
  BatchEmitter(Program& dst, int64_t batch_size)
      : dst_(dst), batch_size_(batch_size) {}

  int64_t batch_size() const { return batch_size_; }
  Program& program() { return dst_; }
  const ValueType& type(ValueId id) const { return dst_.type(id); }
  const Shape& shape(ValueId id) const { return dst_.type(id).shape; }
  DType dtype(ValueId id) const { return dst_.type(id).dtype; }

  ValueId Add(OpAttrs attrs, OperandList operands);

  // The value batched at `to`: v transposed if it is batched elsewhere,
  // broadcast along a new dimension of size batch_size if it is unbatched.
  ValueId Materialize(BatchedValue v, int to);

  // Ops with the attribute structs filled in.
  ValueId Scalar(DType dtype, double value);
  ValueId Full(DType dtype, Shape shape, double value);
  ValueId Iota(DType dtype, const Shape& shape, int64_t dimension);
  ValueId Convert(ValueId x, DType dtype);  // x itself if already dtype
  ValueId Binary(BinaryOp op, ValueId a, ValueId b);
  ValueId Compare(CompareOp op, ValueId a, ValueId b);
  ValueId Select(ValueId pred, ValueId on_true, ValueId on_false);
  ValueId BroadcastInDim(ValueId x, const Shape& shape,
                         std::vector<int64_t> broadcast_dimensions);
  ValueId Reshape(ValueId x, const Shape& shape);
  ValueId Transpose(ValueId x, std::vector<int64_t> permutation);
  // The dimension `from` of x moved to position `to`, others in order.
  ValueId MoveDim(ValueId x, int from, int to);
  ValueId Gather(ValueId x, ValueId indices, int64_t axis,
                 const GatherBounds& bounds = {});
  // min(max(x, lo), hi) for an int64 x; lo <= hi is not required (hi wins).
  ValueId ClampInt64(ValueId x, int64_t lo, int64_t hi);

  // numpy take along `axis` with different indices per example: x is
  // batched at 0 (source shape D), indices batched at 0 ([B, I...], any
  // integer dtype); the result is [B, D[:axis], I..., D[axis+1:]], batched
  // at 0. Indices read as `bounds` says (core/gather_bounds.h): by default
  // clamped into [0, D[axis] - 1] as gather does.
  ValueId PerExampleTake(ValueId x, int64_t axis, ValueId indices,
                         const GatherBounds& bounds = {});

 private:
  Program& dst_;  // not owned
  int64_t batch_size_;
};

// The rules. `operands` are the batched forms of inst's operands, at least
// one of them batched.
BatchedValue BatchElementwise(BatchEmitter& e, const Instruction& inst,
                              const std::vector<BatchedValue>& operands);
BatchedValue BatchShapeOp(BatchEmitter& e, const Instruction& inst,
                          const std::vector<BatchedValue>& operands);
BatchedValue BatchReduceOrDot(BatchEmitter& e, const Instruction& inst,
                              const std::vector<BatchedValue>& operands);
BatchedValue BatchIndexing(BatchEmitter& e, const Instruction& inst,
                           const std::vector<BatchedValue>& operands);
// Ops on trailing dimensions batched over the leading ones (linalg, fft):
// every operand's batch dimension moved to the front.
BatchedValue BatchLinalg(BatchEmitter& e, const Instruction& inst,
                         const std::vector<BatchedValue>& operands);
BatchedValue BatchHostCallback(BatchEmitter& e, const Instruction& inst,
                               const std::vector<BatchedValue>& operands);

}  // namespace baton::compiler::transforms::batching
