// Batching rules for reduce and dot_general: both keep the batch dimension
// where it falls in the result instead of transposing it anywhere, so a
// batched matmul costs no data movement.
#include <algorithm>
#include <utility>
#include <vector>

#include "baton/compiler/transforms/batching_rules.h"

namespace baton::compiler::transforms::batching {
namespace {

std::vector<int64_t> LiftAll(const std::vector<int64_t>& dims, int bdim) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(Lift(d, bdim));
  return out;
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

BatchedValue ReduceRule(BatchEmitter& e, const ReduceAttrs& a, BatchedValue x) {
  ReduceAttrs b{a.op, LiftAll(a.axes, x.bdim)};
  int bdim = x.bdim;
  for (int64_t axis : b.axes) bdim -= axis < x.bdim ? 1 : 0;
  return {e.Add(std::move(b), {x.id}), bdim};
}

// Free dimensions of an operand of `rank` below `limit` (those that are
// neither batch nor contracting).
int FreeDimsBelow(int rank, const std::vector<int64_t>& batch,
                  const std::vector<int64_t>& contracting, int limit) {
  int n = 0;
  for (int i = 0; i < std::min(rank, limit); ++i) {
    if (!Contains(batch, i) && !Contains(contracting, i)) ++n;
  }
  return n;
}

BatchedValue DotGeneralRule(BatchEmitter& e, const DotGeneralAttrs& a,
                            BatchedValue lhs, BatchedValue rhs) {
  DotGeneralAttrs b = a;
  const int nbatch = static_cast<int>(a.lhs_batch.size());
  int bdim = 0;
  if (lhs.batched()) {
    b.lhs_batch = LiftAll(a.lhs_batch, lhs.bdim);
    b.lhs_contracting = LiftAll(a.lhs_contracting, lhs.bdim);
  }
  if (rhs.batched()) {
    b.rhs_batch = LiftAll(a.rhs_batch, rhs.bdim);
    b.rhs_contracting = LiftAll(a.rhs_contracting, rhs.bdim);
  }
  const int lhs_rank = e.shape(lhs.id).rank();
  const int rhs_rank = e.shape(rhs.id).rank();
  if (lhs.batched() && rhs.batched()) {
    // A new batch dimension pair, listed first so it leads the result.
    b.lhs_batch.insert(b.lhs_batch.begin(), lhs.bdim);
    b.rhs_batch.insert(b.rhs_batch.begin(), rhs.bdim);
    bdim = 0;
  } else if (lhs.batched()) {
    // A free dimension of lhs: it lands among lhs's free result dimensions.
    bdim = nbatch +
           FreeDimsBelow(lhs_rank, b.lhs_batch, b.lhs_contracting, lhs.bdim);
  } else {
    const int lhs_free =
        FreeDimsBelow(lhs_rank, b.lhs_batch, b.lhs_contracting, lhs_rank);
    bdim = nbatch + lhs_free +
           FreeDimsBelow(rhs_rank, b.rhs_batch, b.rhs_contracting, rhs.bdim);
  }
  return {e.Add(std::move(b), {lhs.id, rhs.id}), bdim};
}

}  // namespace

BatchedValue BatchReduceOrDot(BatchEmitter& e, const Instruction& inst,
                              const std::vector<BatchedValue>& operands) {
  switch (inst.kind()) {
    case OpKind::kReduce:
      return ReduceRule(e, inst.attrs_as<ReduceAttrs>(), operands[0]);
    case OpKind::kDotGeneral:
      return DotGeneralRule(e, inst.attrs_as<DotGeneralAttrs>(), operands[0],
                            operands[1]);
    default:
      throw BatchingError{
          Internal("vmap: BatchReduceOrDot got " + OpDisplayName(inst.attrs))};
  }
}

}  // namespace baton::compiler::transforms::batching
