// Batching rule of the linalg op (batching_rules.h). The op is batched over
// its leading dimensions already, so the vmapped dimension moves to the
// front of each operand and the op runs unchanged; an unbatched operand of
// a triangular solve is broadcast along it (the op needs equal batch
// dimensions).
#include "baton/compiler/transforms/batching_rules.h"

namespace baton::compiler::transforms::batching {

BatchedValue BatchLinalg(BatchEmitter& e, const Instruction& inst,
                         const std::vector<BatchedValue>& operands) {
  OperandList list;
  for (const BatchedValue& v : operands) list.push_back(e.Materialize(v, 0));
  return {e.Add(inst.attrs, std::move(list)), 0};
}

}  // namespace baton::compiler::transforms::batching
