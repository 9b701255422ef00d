#include "baton/compiler/op_attrs.h"

namespace baton::compiler {

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kParameter:
      return "parameter";
    case OpKind::kConstant:
      return "constant";
    case OpKind::kIota:
      return "iota";
    case OpKind::kConvert:
      return "convert";
    case OpKind::kUnary:
      return "unary";
    case OpKind::kBinary:
      return "binary";
    case OpKind::kCompare:
      return "compare";
    case OpKind::kSelect:
      return "select";
    case OpKind::kBroadcastInDim:
      return "broadcast_in_dim";
    case OpKind::kReshape:
      return "reshape";
    case OpKind::kTranspose:
      return "transpose";
    case OpKind::kSlice:
      return "slice";
    case OpKind::kDynamicSlice:
      return "dynamic_slice";
    case OpKind::kDynamicUpdateSlice:
      return "dynamic_update_slice";
    case OpKind::kConcatenate:
      return "concatenate";
    case OpKind::kPad:
      return "pad";
    case OpKind::kGather:
      return "gather";
    case OpKind::kScatter:
      return "scatter";
    case OpKind::kReduce:
      return "reduce";
    case OpKind::kDotGeneral:
      return "dot_general";
    case OpKind::kTransfer:
      return "transfer";
    case OpKind::kSort:
      return "sort";
    case OpKind::kLinalg:
      return "linalg";
    case OpKind::kHostCallback:
      return "host_callback";
    case OpKind::kCall:
      return "call";
    case OpKind::kWhile:
      return "while";
    case OpKind::kScan:
      return "scan";
    case OpKind::kCase:
      return "case";
    case OpKind::kFft:
      return "fft";
  }
  return "?";
}

std::string_view fft_type_name(FftType type) {
  switch (type) {
    case FftType::kFft:
      return "fft";
    case FftType::kIfft:
      return "ifft";
    case FftType::kRfft:
      return "rfft";
    case FftType::kIrfft:
      return "irfft";
  }
  return "?";
}

std::string_view call_kind_name(CallKind kind) {
  switch (kind) {
    case CallKind::kCheckpoint:
      return "checkpoint";
    case CallKind::kStopGradient:
      return "stop_gradient";
    case CallKind::kName:
      return "checkpoint_name";
    case CallKind::kCustomJvp:
      return "custom_jvp";
    case CallKind::kCustomVjp:
      return "custom_vjp";
    case CallKind::kShardingConstraint:
      return "sharding_constraint";
  }
  return "?";
}

std::string OpDisplayName(const OpAttrs& attrs) {
  if (auto* a = std::get_if<UnaryAttrs>(&attrs)) {
    return std::string(op_name(a->op));
  }
  if (auto* a = std::get_if<BinaryAttrs>(&attrs)) {
    return std::string(op_name(a->op));
  }
  if (auto* a = std::get_if<CompareAttrs>(&attrs)) {
    return "compare " + std::string(op_name(a->op));
  }
  if (auto* a = std::get_if<ReduceAttrs>(&attrs)) {
    return "reduce " + std::string(op_name(a->op));
  }
  if (auto* a = std::get_if<ScatterAttrs>(&attrs)) {
    return "scatter " + std::string(op_name(a->mode));
  }
  if (auto* a = std::get_if<LinalgAttrs>(&attrs)) {
    return std::string(linalg_kind_name(a->kind));
  }
  if (auto* a = std::get_if<FftAttrs>(&attrs)) {
    return std::string(fft_type_name(a->type));
  }
  return std::string(op_kind_name(KindOf(attrs)));
}

}  // namespace baton::compiler
