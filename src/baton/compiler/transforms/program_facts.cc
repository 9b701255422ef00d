#include "baton/compiler/transforms/program_facts.h"

namespace baton::compiler::transforms {

bool IsDifferentiable(const OpAttrs& attrs) {
  switch (KindOf(attrs)) {
    case OpKind::kParameter:
    case OpKind::kConstant:
    case OpKind::kIota:
    case OpKind::kCompare:
      return false;
    case OpKind::kUnary:
      switch (std::get<UnaryAttrs>(attrs).op) {
        case UnaryOp::kFloor:
        case UnaryOp::kCeil:
        case UnaryOp::kRound:
        case UnaryOp::kSign:
        case UnaryOp::kNot:
          return false;
        default:
          return true;
      }
    case OpKind::kCall:
      return std::get<CallAttrs>(attrs).kind != CallKind::kStopGradient;
    default:
      return true;
  }
}

std::vector<bool> UsedParameters(const Program& program) {
  std::vector<bool> used(program.num_parameters(), false);
  auto mark = [&](ValueId v) {
    if (const auto* p = program.instruction(v).attrs_if<ParameterAttrs>()) {
      used[p->index] = true;
    }
  };
  for (const Instruction& inst : program.instructions()) {
    for (ValueId o : inst.operands) mark(o);
  }
  for (ValueId o : program.outputs()) mark(o);
  return used;
}

}  // namespace baton::compiler::transforms
