#include "baton/compiler/shard_local.h"

#include <string>

#include "baton/compiler/step_plan.h"

namespace baton::compiler {
namespace {

std::string Where(const Program& program, ValueId v) {
  return "%" + std::to_string(v) + " = " +
         std::string(op_kind_name(program.instruction(v).kind())) + " : " +
         program.type(v).shape.to_string();
}

}  // namespace

std::optional<std::string> WhyNotShardLocal(const Program& program) {
  // The full shape: that of the first value of rank > 0.
  const Shape* full = nullptr;
  for (ValueId v = 0; v < static_cast<ValueId>(program.instructions().size());
       ++v) {
    const Shape& s = program.type(v).shape;
    if (s.rank() == 0) continue;
    if (full == nullptr) {
      full = &s;
    } else if (s != *full) {
      return Where(program, v) + ": a value of another shape than " +
             full->to_string() + " (a reshape, slice, reduction or broadcast "
             "moves elements between shards)";
    }
  }
  for (ValueId v = 0; v < static_cast<ValueId>(program.instructions().size());
       ++v) {
    const Instruction& inst = program.instruction(v);
    const OpKind k = inst.kind();
    if (k == OpKind::kParameter || IsElementwise(k)) continue;
    if (k == OpKind::kCall) {
      return Where(program, v) +
             ": a sharding constraint (with_sharding_constraint) lays the "
             "value out over the mesh";
    }
    if (k == OpKind::kConstant && inst.type.shape.rank() == 0) continue;
    if (k == OpKind::kBroadcastInDim &&
        program.type(inst.operands[0]).shape.rank() == 0) {
      continue;
    }
    if (inst.type.shape.rank() == 0 && full == nullptr) continue;
    return Where(program, v) + ": not an elementwise operation";
  }
  return std::nullopt;
}

}  // namespace baton::compiler
