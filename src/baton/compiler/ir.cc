#include "baton/compiler/ir.h"

#include "baton/compiler/control_flow.h"

#include <string>

#include "baton/compiler/shape_inference.h"

namespace baton::compiler {
namespace {

std::vector<ValueType> OperandTypes(const std::vector<Instruction>& insts,
                                    const OperandList& operands) {
  std::vector<ValueType> types;
  types.reserve(operands.size());
  for (ValueId id : operands) types.push_back(insts[id].type);
  return types;
}

}  // namespace

Result<ValueId> Program::AddParameter(ValueType type) {
  return Add(ParameterAttrs{num_parameters(), std::move(type)}, {});
}

Status Program::CheckOperands(const OpAttrs& attrs, const OperandList& operands,
                              ValueId limit) const {
  for (int i = 0; i < operands.size(); ++i) {
    if (operands[i] < 0 || operands[i] >= limit) {
      return InvalidArgument(OpDisplayName(attrs) + ": operand " +
                             std::to_string(i) + " is %" +
                             std::to_string(operands[i]) +
                             ", which is not defined before this instruction");
    }
  }
  return OkStatus();
}

Result<ValueId> Program::Add(OpAttrs attrs, OperandList operands) {
  BATON_RETURN_IF_ERROR(CheckOperands(attrs, operands, num_values()));
  if (auto* p = std::get_if<ParameterAttrs>(&attrs)) {
    if (p->index != num_parameters()) {
      return InvalidArgument("parameter: index " + std::to_string(p->index) +
                             " given, but parameters are numbered in order "
                             "and the next one is " +
                             std::to_string(num_parameters()));
    }
  }
  BATON_ASSIGN_OR_RETURN(
      ValueType type, InferType(attrs, OperandTypes(instructions_, operands)));
  // Every value's shape passes the one shape check, so nothing downstream
  // (buffer sizes, strides, loops over elements) can overflow.
  if (Status s = type.shape.Check(); !s.ok()) {
    return InvalidArgument(OpDisplayName(attrs) + ": result " + s.message());
  }
  const ValueId id = num_values();
  if (KindOf(attrs) == OpKind::kParameter) parameters_.push_back(id);
  instructions_.push_back(
      Instruction{std::move(attrs), std::move(operands), std::move(type)});
  return id;
}

Status Program::SetOutputs(std::vector<ValueId> outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i] < 0 || outputs[i] >= num_values()) {
      return InvalidArgument("output " + std::to_string(i) + " is %" +
                             std::to_string(outputs[i]) +
                             ", which is not a value of this program (it has " +
                             std::to_string(num_values()) + ")");
    }
  }
  outputs_ = std::move(outputs);
  return OkStatus();
}

std::vector<ValueType> Program::parameter_types() const {
  std::vector<ValueType> types;
  for (ValueId id : parameters_) types.push_back(type(id));
  return types;
}

std::vector<ValueType> Program::output_types() const {
  std::vector<ValueType> types;
  for (ValueId id : outputs_) types.push_back(type(id));
  return types;
}

Status Program::Verify() const {
  int next_parameter = 0;
  for (ValueId id = 0; id < num_values(); ++id) {
    const Instruction& inst = instructions_[id];
    const std::string where =
        "%" + std::to_string(id) + " (" + OpDisplayName(inst.attrs) + "): ";
    BATON_RETURN_IF_ERROR(CheckOperands(inst.attrs, inst.operands, id));
    if (auto* p = inst.attrs_if<ParameterAttrs>()) {
      if (p->index != next_parameter || next_parameter >= num_parameters() ||
          parameters_[next_parameter] != id) {
        return Internal(where + "parameter index " + std::to_string(p->index) +
                        " is out of order or not listed");
      }
      ++next_parameter;
    }
    if (IsControlFlow(inst.kind()) &&
        static_cast<int>(RegionGroupOf(*this, id).size()) !=
            ControlFlowNumResults(inst.attrs)) {
      return Internal(where +
                      "a control-flow op's results must be adjacent "
                      "instructions, in output order, with equal operands");
    }
    // Nested programs (regions, call bodies and rules) are part of this
    // one: a region with a broken group would otherwise surface only when
    // an executor runs it.
    // (Once per group: its members share them.)
    const auto* call = inst.attrs_if<CallAttrs>();
    if (ControlFlowOutputIndex(inst.attrs) == 0 &&
        (call == nullptr || call->output_index == 0)) {
      std::vector<const Program*> nested = Regions(inst.attrs);
      if (call) {
        nested = {call->body.get(), call->rule.get(), call->rule2.get()};
      }
      for (size_t r = 0; r < nested.size(); ++r) {
        if (nested[r] == nullptr) continue;  // inference says if one is needed
        if (Status s = nested[r]->Verify(); !s.ok()) {
          return Internal(where + "nested program " + std::to_string(r) +
                          ": " + s.message());
        }
      }
    }
    Result<ValueType> inferred =
        InferType(inst.attrs, OperandTypes(instructions_, inst.operands));
    if (!inferred.ok()) return Internal(where + inferred.status().message());
    if (!(inferred.value() == inst.type)) {
      return Internal(where + "recorded type " + inst.type.ToString() +
                      " differs from the inferred " +
                      inferred.value().ToString());
    }
  }
  if (next_parameter != num_parameters()) {
    return Internal("parameter list names values that are not parameters");
  }
  for (ValueId out : outputs_) {
    if (out < 0 || out >= num_values()) {
      return Internal("output %" + std::to_string(out) + " is out of range");
    }
  }
  return OkStatus();
}

}  // namespace baton::compiler
