#include "baton/compiler/transforms/call_group.h"

namespace baton::compiler::transforms {
namespace {

bool SameGroup(const Instruction& a, const Instruction& b) {
  const auto* ca = a.attrs_if<CallAttrs>();
  const auto* cb = b.attrs_if<CallAttrs>();
  if (!ca || !cb || !ca->body) return false;
  return ca->kind == cb->kind && ca->body == cb->body && ca->rule == cb->rule &&
         ca->rule2 == cb->rule2 && ca->policy == cb->policy &&
         ca->name == cb->name && a.operands == b.operands;
}

}  // namespace

std::vector<ValueId> CallGroupOf(const Program& program, ValueId id) {
  const Instruction& inst = program.instruction(id);
  const auto* call = inst.attrs_if<CallAttrs>();
  if (!call) return {};
  if (!call->body) return {id};
  ValueId first = id - call->output_index;
  const int n = static_cast<int>(call->body->outputs().size());
  std::vector<ValueId> members;
  for (int i = 0; i < n; ++i) {
    const ValueId m = first + i;
    if (m < 0 || m >= program.num_values() ||
        !SameGroup(program.instruction(m), inst) ||
        program.instruction(m).attrs_as<CallAttrs>().output_index != i) {
      return {id};  // not laid out as a group: a group of its own
    }
    members.push_back(m);
  }
  return members;
}

bool IsCallGroupLeader(const Program& program, ValueId id) {
  const auto* call = program.instruction(id).attrs_if<CallAttrs>();
  return call && (!call->body || CallGroupOf(program, id).front() == id);
}

Result<std::vector<ValueId>> AddCallGroup(
    Program& dst, CallAttrs attrs, const std::vector<ValueId>& operands) {
  std::vector<ValueId> outs;
  const int n = attrs.body ? static_cast<int>(attrs.body->outputs().size()) : 1;
  for (int i = 0; i < n; ++i) {
    attrs.output_index = i;
    OperandList list;
    for (ValueId v : operands) list.push_back(v);
    BATON_ASSIGN_OR_RETURN(ValueId v, dst.Add(attrs, std::move(list)));
    outs.push_back(v);
  }
  return outs;
}

}  // namespace baton::compiler::transforms
