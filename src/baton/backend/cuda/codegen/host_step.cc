#include "baton/backend/cuda/codegen/host_step.h"

#include <cstring>
#include <functional>
#include <string>

#include "baton/compiler/literal.h"
#include "baton/compiler/operand_list.h"
#include "baton/compiler/reference_interpreter.h"

namespace baton::cuda::codegen {

using compiler::ValueId;

Status RunStepOnHost(const compiler::Program& program,
                     const compiler::StepPlan& plan, int step_index,
                     const std::vector<void*>& value_data) {
  const compiler::Step& step = plan.steps[static_cast<size_t>(step_index)];
  compiler::Program slice;
  std::vector<ValueId> in_slice(program.num_values(), compiler::kNoValue);
  std::vector<compiler::Literal> args;
  for (ValueId v : step.inputs) {
    const compiler::ValueType& t = program.type(v);
    BATON_ASSIGN_OR_RETURN(in_slice[v], slice.AddParameter(t));
    compiler::Literal l(t.shape, t.dtype);
    if (l.byte_size() > 0) {
      std::memcpy(l.untyped_mutable_data(), value_data[v],
                  static_cast<size_t>(l.byte_size()));
    }
    args.push_back(std::move(l));
  }
  std::function<Result<ValueId>(ValueId)> add =
      [&](ValueId v) -> Result<ValueId> {
    if (in_slice[v] != compiler::kNoValue) return in_slice[v];
    const compiler::Instruction& inst = program.instruction(v);
    if (inst.attrs_if<compiler::ParameterAttrs>() != nullptr) {
      return Internal("step " + std::to_string(step_index) + " reads %" +
                      std::to_string(v) + ", which is not among its inputs");
    }
    std::vector<ValueId> operands;
    for (ValueId o : inst.operands) {
      BATON_ASSIGN_OR_RETURN(ValueId mapped, add(o));
      operands.push_back(mapped);
    }
    BATON_ASSIGN_OR_RETURN(
        in_slice[v], slice.Add(inst.attrs, compiler::OperandList(operands)));
    return in_slice[v];
  };
  std::vector<ValueId> written, outputs;
  for (ValueId m : step.members) {
    BATON_ASSIGN_OR_RETURN(ValueId mapped, add(m));
    if (!plan.materialized[m]) continue;
    written.push_back(m);
    outputs.push_back(mapped);
  }
  BATON_RETURN_IF_ERROR(slice.SetOutputs(outputs));
  BATON_ASSIGN_OR_RETURN(std::vector<compiler::Literal> results,
                         compiler::Interpret(slice, args));
  for (size_t i = 0; i < written.size(); ++i) {
    if (results[i].byte_size() == 0) continue;
    std::memcpy(value_data[written[i]], results[i].untyped_data(),
                static_cast<size_t>(results[i].byte_size()));
  }
  return OkStatus();
}

}  // namespace baton::cuda::codegen
