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
  const std::string op(op_kind_name(KindOf(attrs)));
  std::vector<ValueType> types;
  for (size_t i = 0; i < operands.size(); ++i) {
    const ValueId v = operands[i];
    if (v < 0 || v >= dst.num_values()) {
      return InvalidArgument(op + ": operand " + std::to_string(i) + " is %" +
                             std::to_string(v) +
                             ", which is not defined before this instruction");
    }
    types.push_back(dst.type(v));
  }
  const int n = ControlFlowNumResults(attrs);
  if (n <= 0) {
    // Nothing to add, but the op must still be well formed; a group
    // without results is not (it would compute nothing anyone can see),
    // nor is one with a negative count (a while loop's num_carries).
    BATON_RETURN_IF_ERROR(InferType(attrs, types).status());
    return InvalidArgument(op +
                           ": a control-flow op needs at least one result");
  }
  // Every member is checked as Program::Add will check it before any is
  // added: a refused group leaves `dst` unchanged, never a partial group
  // (a scan whose carries fit but whose stacked outputs are too large).
  for (int i = 0; i < n; ++i) {
    const OpAttrs member = WithOutputIndex(attrs, i);
    BATON_ASSIGN_OR_RETURN(ValueType t, InferType(member, types));
    if (Status s = t.shape.Check(); !s.ok()) {
      return InvalidArgument(OpDisplayName(member) + ": result " + s.message());
    }
  }
  std::vector<ValueId> outs;
  for (int i = 0; i < n; ++i) {
    OperandList list;
    for (ValueId v : operands) list.push_back(v);
    Result<ValueId> v = dst.Add(WithOutputIndex(attrs, i), std::move(list));
    if (!v.ok()) {
      return Internal(op + ": member " + std::to_string(i) +
                      " of a checked region group was refused: " +
                      v.status().message());
    }
    outs.push_back(v.value());
  }
  return outs;
}

int64_t StaticTripCount(const OpAttrs& attrs) {
  if (const auto* s = std::get_if<ScanAttrs>(&attrs)) return s->length;
  if (std::get_if<CaseAttrs>(&attrs)) return 1;
  return -1;
}

}  // namespace baton::compiler
