#include "baton/compiler/step_plan.h"

#include <algorithm>

#include "baton/compiler/control_flow.h"

namespace baton::compiler {

bool IsElementwise(OpKind kind) {
  switch (kind) {
    case OpKind::kUnary:
    case OpKind::kBinary:
    case OpKind::kCompare:
    case OpKind::kSelect:
    case OpKind::kConvert:
      return true;
    default:
      return false;
  }
}

bool AsRegularBroadcast(const Program& program, ValueId v,
                        RegularBroadcast* out) {
  const Instruction& inst = program.instruction(v);
  const auto* b = inst.attrs_if<BroadcastInDimAttrs>();
  if (b == nullptr) return false;
  const Shape& src = program.type(inst.operands[0]).shape;
  const Shape& dst = inst.type.shape;
  int64_t last = -1;  // result dimension of the previous non-unit operand dim
  int64_t count = 1;
  for (int i = 0; i < src.rank(); ++i) {
    if (src[i] == 1) continue;
    const int64_t d = b->broadcast_dimensions[i];
    if ((last >= 0 && d != last + 1) || src[i] != dst[static_cast<int>(d)]) {
      return false;
    }
    last = d;
    count *= src[i];
  }
  if (last < 0) return false;  // one element: a virtual scalar's job
  int64_t inner = 1;
  for (int j = static_cast<int>(last) + 1; j < dst.rank(); ++j) inner *= dst[j];
  *out = RegularBroadcast{inner, count};
  return true;
}

StepPlan PlanSteps(const Program& program) {
  const int n = program.num_values();
  std::vector<std::vector<ValueId>> users(n);  // distinct users
  for (ValueId v = 0; v < n; ++v) {
    for (ValueId o : program.instruction(v).operands) {
      if (users[o].empty() || users[o].back() != v) users[o].push_back(v);
    }
  }
  std::vector<bool> is_output(n, false);
  for (ValueId o : program.outputs()) is_output[o] = true;

  StepPlan plan;
  plan.scalar_source.assign(n, kNoValue);
  plan.step_of.assign(n, -1);
  plan.materialized.assign(n, true);

  // Virtual scalars.
  for (ValueId v = 0; v < n; ++v) {
    const Instruction& inst = program.instruction(v);
    if (inst.kind() != OpKind::kBroadcastInDim || is_output[v]) continue;
    const ValueId src = inst.operands[0];
    if (program.type(src).num_elements() != 1 || users[v].empty()) continue;
    const bool all_elementwise =
        std::all_of(users[v].begin(), users[v].end(), [&](ValueId u) {
          return IsElementwise(program.instruction(u).kind());
        });
    if (!all_elementwise) continue;
    // Resolve chains (broadcast of a virtual scalar).
    plan.scalar_source[v] =
        plan.scalar_source[src] != kNoValue ? plan.scalar_source[src] : src;
    plan.materialized[v] = false;
  }

  // Fusion: an elementwise value folds into its single elementwise user of
  // the same size, unless it is an output.
  std::vector<ValueId> fused_into(n, kNoValue);
  for (ValueId v = 0; v < n; ++v) {
    const Instruction& inst = program.instruction(v);
    if (is_output[v] || users[v].size() != 1 || !plan.materialized[v]) {
      continue;
    }
    RegularBroadcast pattern;
    if (!IsElementwise(inst.kind()) &&
        !AsRegularBroadcast(program, v, &pattern)) {
      continue;
    }
    const ValueId u = users[v][0];
    if (IsElementwise(program.instruction(u).kind()) &&
        program.type(u).num_elements() == inst.type.num_elements()) {
      fused_into[v] = u;
      plan.materialized[v] = false;
    }
  }
  auto root_of = [&](ValueId v) {
    while (fused_into[v] != kNoValue) v = fused_into[v];
    return v;
  };
  // Members of each fused group, in program order.
  std::vector<std::vector<ValueId>> group(n);
  for (ValueId v = 0; v < n; ++v) {
    if (fused_into[v] != kNoValue) group[root_of(v)].push_back(v);
  }

  auto add_input = [&](Step& step, ValueId operand) {
    if (plan.scalar_source[operand] != kNoValue) {
      operand = plan.scalar_source[operand];
    }
    if (std::find(step.inputs.begin(), step.inputs.end(), operand) ==
        step.inputs.end()) {
      step.inputs.push_back(operand);
    }
  };

  for (ValueId v = 0; v < n; ++v) {
    const OpKind kind = program.instruction(v).kind();
    if (kind == OpKind::kParameter || kind == OpKind::kConstant) continue;
    if (!plan.materialized[v]) continue;  // virtual or inner fused value
    Step step;
    step.result = v;
    if (IsControlFlow(kind)) {
      if (ControlFlowOutputIndex(program.instruction(v).attrs) != 0) continue;
      step.kind = Step::Kind::kRegion;
      step.members = RegionGroupOf(program, v);
      for (ValueId o : program.instruction(v).operands) add_input(step, o);
      for (ValueId m : step.members) {
        plan.step_of[m] = static_cast<int>(plan.steps.size());
      }
      plan.steps.push_back(std::move(step));
      continue;
    }
    if (!group[v].empty()) {
      step.kind = Step::Kind::kFusedElementwise;
      step.members = group[v];
      step.members.push_back(v);
      for (ValueId m : step.members) {
        for (ValueId o : program.instruction(m).operands) {
          if (fused_into[o] == kNoValue || root_of(o) != v) add_input(step, o);
        }
      }
    } else {
      step.members = {v};
      for (ValueId o : program.instruction(v).operands) add_input(step, o);
    }
    plan.step_of[v] = static_cast<int>(plan.steps.size());
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

}  // namespace baton::compiler
