#include "baton/compiler/control_flow.h"

#include <string>

#include "baton/compiler/shape_inference.h"

namespace baton::compiler {

bool IsControlFlow(OpKind kind) {
  return kind == OpKind::kWhile || kind == OpKind::kScan ||
         kind == OpKind::kCase;
}

int ControlFlowOutputIndex(const OpAttrs& attrs) {
  if (const auto* w = std::get_if<WhileAttrs>(&attrs)) return w->output_index;
  if (const auto* s = std::get_if<ScanAttrs>(&attrs)) return s->output_index;
  if (const auto* c = std::get_if<CaseAttrs>(&attrs)) return c->output_index;
  return 0;
}

int ControlFlowNumResults(const OpAttrs& attrs) {
  if (const auto* w = std::get_if<WhileAttrs>(&attrs)) return w->num_carries;
  if (const auto* s = std::get_if<ScanAttrs>(&attrs)) {
    return s->body ? static_cast<int>(s->body->outputs().size()) : 0;
  }
  if (const auto* c = std::get_if<CaseAttrs>(&attrs)) {
    return c->branches.empty() || !c->branches[0]
               ? 0
               : static_cast<int>(c->branches[0]->outputs().size());
  }
  return 1;
}

std::vector<const Program*> Regions(const OpAttrs& attrs) {
  std::vector<const Program*> out;
  if (const auto* w = std::get_if<WhileAttrs>(&attrs)) {
    out = {w->cond.get(), w->body.get()};
  } else if (const auto* s = std::get_if<ScanAttrs>(&attrs)) {
    out = {s->body.get()};
  } else if (const auto* c = std::get_if<CaseAttrs>(&attrs)) {
    for (const auto& b : c->branches) out.push_back(b.get());
  }
  return out;
}

OpAttrs WithOutputIndex(OpAttrs attrs, int i) {
  if (auto* w = std::get_if<WhileAttrs>(&attrs)) w->output_index = i;
  if (auto* s = std::get_if<ScanAttrs>(&attrs)) s->output_index = i;
  if (auto* c = std::get_if<CaseAttrs>(&attrs)) c->output_index = i;
  return attrs;
}

std::vector<ValueId> RegionGroupOf(const Program& program, ValueId id) {
  const Instruction& inst = program.instruction(id);
  if (!IsControlFlow(inst.kind())) return {id};
  const OpAttrs leader = WithOutputIndex(inst.attrs, 0);
  const ValueId first = id - ControlFlowOutputIndex(inst.attrs);
  const int n = ControlFlowNumResults(inst.attrs);
  std::vector<ValueId> members;
  for (int i = 0; i < n; ++i) {
    const ValueId m = first + i;
    if (m < 0 || m >= program.num_values()) return {id};
    const Instruction& mi = program.instruction(m);
    if (mi.kind() != inst.kind() || ControlFlowOutputIndex(mi.attrs) != i ||
        WithOutputIndex(mi.attrs, 0) != leader || mi.operands != inst.operands) {
      return {id};
    }
    members.push_back(m);
  }
  return members;
}

Result<std::vector<ValueId>> AddRegionGroup(
    Program& dst, OpAttrs attrs, const std::vector<ValueId>& operands) {
  std::vector<ValueId> outs;
  const int n = ControlFlowNumResults(attrs);
  if (n == 0) {
    // Nothing to add, but the op must still be well formed; a group
    // without results is not (it would compute nothing anyone can see).
    std::vector<ValueType> types;
    for (ValueId v : operands) types.push_back(dst.type(v));
    BATON_RETURN_IF_ERROR(InferType(attrs, types).status());
    return InvalidArgument(std::string(op_kind_name(KindOf(attrs))) +
                           ": a control-flow op needs at least one result");
  }
  for (int i = 0; i < n; ++i) {
    OperandList list;
    for (ValueId v : operands) list.push_back(v);
    BATON_ASSIGN_OR_RETURN(ValueId v,
                           dst.Add(WithOutputIndex(attrs, i), std::move(list)));
    outs.push_back(v);
  }
  return outs;
}

int64_t StaticTripCount(const OpAttrs& attrs) {
  if (const auto* s = std::get_if<ScanAttrs>(&attrs)) return s->length;
  if (std::get_if<CaseAttrs>(&attrs)) return 1;
  return -1;
}

}  // namespace baton::compiler
