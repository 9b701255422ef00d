// Dispatch of the JVP rules by op kind, and the helpers every rule family
// shares (jvp_rules.h).
#include "baton/compiler/transforms/jvp_rules.h"

#include <string>

#include "baton/compiler/fft_ops.h"
#include "baton/core/error.h"

namespace baton::compiler::transforms::jvp_rules {

Tracer ZerosLike(const Tracer& x) {
  return zeros(*x.context(), x.shape(), x.dtype());
}

Tracer Instantiate(const Tracer& tangent, const Tracer& primal) {
  return tangent.valid() ? tangent : ZerosLike(primal);
}

Tracer AddTangents(const Tracer& a, const Tracer& b) {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  return a + b;
}

void ThrowUnimplemented(const OpAttrs& attrs) {
  throw Error(Unimplemented(
      "jvp: the op '" + OpDisplayName(attrs) +
      "' has no forward-mode (JVP) rule, so this program cannot be "
      "differentiated with jvp/jacfwd; avoid the op on differentiated values "
      "or wrap it in a custom_jvp function"));
}

Tracer OpTangent(const Instruction& inst, const std::vector<Tracer>& operands,
                 const Tracer& result, const std::vector<Tracer>& tangents) {
  switch (inst.kind()) {
    case OpKind::kConstant:
    case OpKind::kIota:
    case OpKind::kCompare:
    case OpKind::kHostCallback:
      return Tracer();  // no tangent flows through these
    case OpKind::kConvert:
    case OpKind::kUnary:
    case OpKind::kBinary:
    case OpKind::kSelect:
      return ElementwiseTangent(inst, operands, result, tangents);
    case OpKind::kBroadcastInDim:
    case OpKind::kReshape:
    case OpKind::kTranspose:
    case OpKind::kSlice:
    case OpKind::kDynamicSlice:
    case OpKind::kDynamicUpdateSlice:
    case OpKind::kConcatenate:
    case OpKind::kPad:
    case OpKind::kGather:
    case OpKind::kScatter:
    case OpKind::kReduce:
    case OpKind::kDotGeneral:
    case OpKind::kTransfer:
    case OpKind::kSort:
      return ArrayOpTangent(inst, operands, result, tangents);
    case OpKind::kLinalg:
      return LinalgTangent(inst, operands, result, tangents);
    case OpKind::kFft: {
      // Linear: the tangent's transform.
      const auto& a = inst.attrs_as<FftAttrs>();
      if (!tangents[0].valid()) return Tracer();
      return fft(tangents[0], a.type, a.lengths);
    }
    case OpKind::kParameter:
    case OpKind::kCall:
    case OpKind::kWhile:
    case OpKind::kScan:
    case OpKind::kCase:
      break;  // the caller's (jvp.cc)
  }
  ThrowUnimplemented(inst.attrs);
}

}  // namespace baton::compiler::transforms::jvp_rules
