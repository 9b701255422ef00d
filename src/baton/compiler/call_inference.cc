// Type inference for the call op (declared in shape_inference.h).
#include <string>

#include "baton/compiler/ir.h"
#include "baton/compiler/shape_inference.h"

namespace baton::compiler {
namespace {

std::string Prefix(const CallAttrs& a) {
  std::string s = "call " + std::string(call_kind_name(a.kind));
  if (!a.name.empty()) s += " '" + a.name + "'";
  return s + ": ";
}

Status CheckSignature(const CallAttrs& a, const Program& p, const char* what,
                      std::span<const ValueType> operands) {
  if (p.num_parameters() != static_cast<int>(operands.size())) {
    return InvalidArgument(Prefix(a) + what + " takes " +
                           std::to_string(p.num_parameters()) +
                           " operands, got " + std::to_string(operands.size()));
  }
  for (int i = 0; i < p.num_parameters(); ++i) {
    const ValueType& want = p.parameter_type(i);
    if (want.shape != operands[i].shape || want.dtype != operands[i].dtype) {
      return InvalidArgument(Prefix(a) + what + " parameter " +
                             std::to_string(i) + " is " + TypeForMessage(want) +
                             ", but operand " + std::to_string(i) + " is " +
                             TypeForMessage(operands[i]));
    }
  }
  return OkStatus();
}

}  // namespace

Result<ValueType> InferCallType(const CallAttrs& a,
                                std::span<const ValueType> operands) {
  if (a.kind == CallKind::kStopGradient || a.kind == CallKind::kName ||
      a.kind == CallKind::kShardingConstraint) {
    if (operands.size() != 1) {
      return InvalidArgument(Prefix(a) + "expects 1 operand, got " +
                             std::to_string(operands.size()));
    }
    if (a.kind == CallKind::kShardingConstraint &&
        static_cast<int>(a.sharding.size()) != operands[0].shape.rank()) {
      return InvalidArgument(
          Prefix(a) + "names " + std::to_string(a.sharding.size()) +
          " dimensions for a value of rank " +
          std::to_string(operands[0].shape.rank()));
    }
    return operands[0];
  }
  if (!a.body) return InvalidArgument(Prefix(a) + "has no body");
  BATON_RETURN_IF_ERROR(CheckSignature(a, *a.body, "the body", operands));
  const int n_out = static_cast<int>(a.body->outputs().size());
  if (a.output_index < 0 || a.output_index >= n_out) {
    return InvalidArgument(Prefix(a) + "output_index " +
                           std::to_string(a.output_index) +
                           " is out of range for a body with " +
                           std::to_string(n_out) + " outputs");
  }
  if (a.kind == CallKind::kCustomJvp) {
    if (!a.rule) return InvalidArgument(Prefix(a) + "has no JVP rule");
    if (a.rule->num_parameters() != 2 * a.body->num_parameters() ||
        a.rule->outputs().size() != 2 * a.body->outputs().size()) {
      return InvalidArgument(
          Prefix(a) +
          "the JVP rule must take (primals..., tangents...) and return "
          "(outputs..., tangents...)");
    }
  }
  if (a.kind == CallKind::kCustomVjp) {
    if (!a.rule || !a.rule2) {
      return InvalidArgument(Prefix(a) + "needs a forward and a backward rule");
    }
    BATON_RETURN_IF_ERROR(
        CheckSignature(a, *a.rule, "the forward rule", operands));
    if (a.rule->outputs().size() < a.body->outputs().size() ||
        a.rule2->outputs().size() !=
            static_cast<size_t>(a.body->num_parameters())) {
      return InvalidArgument(
          Prefix(a) +
          "the forward rule must return (outputs..., residuals...) and the "
          "backward rule one cotangent per primal input");
    }
  }
  ValueType t = a.body->type(a.body->outputs()[a.output_index]);
  return t;
}

}  // namespace baton::compiler
