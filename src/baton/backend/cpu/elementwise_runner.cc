// RunElementwise: the elementwise half of instruction_runner.h.
#include <cstring>

#include "baton/backend/cpu/instruction_runner.h"
#include "baton/backend/cpu/kernels/elementwise.h"
#include "baton/backend/cpu/kernels/indexing.h"

namespace baton::cpu {

using compiler::BinaryAttrs;
using compiler::CompareAttrs;
using compiler::ConvertAttrs;
using compiler::Instruction;
using compiler::OpKind;
using compiler::UnaryAttrs;

namespace {

ScalarOperand WhichScalar(std::span<const OperandData> ops, int64_t count) {
  // A scalar operand with count == 1 is just an ordinary one-element operand.
  if (ops[0].scalar && count != 1) return ScalarOperand::kLhs;
  if (ops[1].scalar && count != 1) return ScalarOperand::kRhs;
  return ScalarOperand::kNone;
}

}  // namespace

Status RunElementwise(const Instruction& inst,
                      std::span<const OperandData> ops, void* out,
                      int64_t count) {
  if (count == 0) return OkStatus();
  switch (inst.kind()) {
    case OpKind::kUnary:
      if (ops[0].scalar && count != 1) break;
      Unary(inst.attrs_as<UnaryAttrs>().op, ops[0].type->dtype, ops[0].data, out,
            count);
      return OkStatus();
    case OpKind::kConvert:
      if (ops[0].scalar && count != 1) break;
      Convert(ops[0].type->dtype, inst.attrs_as<ConvertAttrs>().dtype,
              ops[0].data, out, count);
      return OkStatus();
    case OpKind::kBinary:
      if (ops[0].scalar && ops[1].scalar && count != 1) break;
      Binary(inst.attrs_as<BinaryAttrs>().op, ops[0].type->dtype, ops[0].data,
             ops[1].data, out, count, WhichScalar(ops, count));
      return OkStatus();
    case OpKind::kCompare:
      if (ops[0].scalar && ops[1].scalar && count != 1) break;
      Compare(inst.attrs_as<CompareAttrs>().op, ops[0].type->dtype,
              ops[0].data, ops[1].data, static_cast<bool*>(out), count,
              WhichScalar(ops, count));
      return OkStatus();
    case OpKind::kGather:
      // A table gather (step_plan.h: IsTableGather) in a fused step: ops[0]
      // is the whole one-dimensional table, ops[1] this tile's indices.
      if (ops[1].scalar && count != 1) break;
      Gather(inst.type.dtype, ops[0].data, ops[0].type->shape, ops[1].data,
             ops[1].type->dtype, count, 0, out,
             inst.attrs_as<compiler::GatherAttrs>().bounds);
      return OkStatus();
    case OpKind::kSelect: {
      SelectScalars s;
      s.pred = ops[0].scalar && count != 1;
      s.on_true = ops[1].scalar && count != 1;
      s.on_false = ops[2].scalar && count != 1;
      Select(inst.type.dtype, static_cast<const bool*>(ops[0].data),
             ops[1].data, ops[2].data, out, count, s);
      return OkStatus();
    }
    default:
      return Internal("RunElementwise: " +
                      std::string(compiler::op_kind_name(inst.kind())) +
                      " is not elementwise");
  }
  // Every operand is a scalar (e.g. zeros(shape) + 1): compute one element
  // and repeat it.
  BATON_RETURN_IF_ERROR(RunElementwise(inst, ops, out, 1));
  const size_t elem = dtype_size(inst.type.dtype);
  char* bytes = static_cast<char*>(out);
  for (int64_t i = 1; i < count; ++i) {
    std::memcpy(bytes + i * elem, bytes, elem);
  }
  return OkStatus();
}

}  // namespace baton::cpu
