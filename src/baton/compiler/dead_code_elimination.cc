#include "baton/compiler/passes.h"

#include "baton/compiler/control_flow.h"
#include "baton/compiler/effects.h"

namespace baton::compiler {

Program EliminateDeadCode(const Program& program, Effects effects) {
  const int n = program.num_values();
  std::vector<bool> live(n, false);
  for (ValueId o : program.outputs()) live[o] = true;
  for (ValueId v = n - 1; v >= 0; --v) {
    const Instruction& inst = program.instruction(v);
    if (inst.kind() == OpKind::kParameter) live[v] = true;
    if (effects == Effects::kKeep && HasSideEffect(inst.attrs)) live[v] = true;
    if (!live[v]) continue;
    for (ValueId o : inst.operands) live[o] = true;
    // A region group runs whole: one live result keeps all of them.
    if (IsControlFlow(inst.kind())) {
      for (ValueId m : RegionGroupOf(program, v)) live[m] = true;
    }
  }
  Program out;
  std::vector<ValueId> remap(n, kNoValue);
  for (ValueId v = 0; v < n; ++v) {
    if (!live[v]) continue;
    const Instruction& inst = program.instruction(v);
    OperandList operands;
    for (ValueId o : inst.operands) operands.push_back(remap[o]);
    // Re-adding checked instructions of a valid program cannot fail.
    remap[v] = inst.kind() == OpKind::kParameter
                   ? out.AddParameter(inst.type).value()
                   : out.Add(inst.attrs, operands).value();
  }
  std::vector<ValueId> outputs;
  for (ValueId o : program.outputs()) outputs.push_back(remap[o]);
  (void)out.SetOutputs(std::move(outputs));
  return out;
}

}  // namespace baton::compiler
