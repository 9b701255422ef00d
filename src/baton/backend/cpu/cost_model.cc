#include "baton/backend/cpu/cost_model.h"

#include <algorithm>

#include "baton/compiler/op_attrs.h"

namespace baton::cpu {
namespace {

using compiler::Instruction;
using compiler::OpKind;
using compiler::ValueId;

// The cost factor of one element of `inst` (cost_model.h): 1 for a cheap
// op, kFastMathCost or kTranscendentalCost for a transcendental one.
int64_t ElementCost(const compiler::Program& p, ValueId v) {
  const Instruction& inst = p.instruction(v);
  if (inst.kind() == OpKind::kUnary) {
    // float16/bfloat16 compute in float32 (scalar_math.h).
    const DType dtype = p.type(v).dtype;
    const bool computes_in_float = is_floating(dtype) && dtype != DType::kFloat64;
    switch (inst.attrs_as<compiler::UnaryAttrs>().op) {
      case UnaryOp::kExp:
      case UnaryOp::kLog:
      case UnaryOp::kTanh:
      case UnaryOp::kLogistic:
        return computes_in_float ? kFastMathCost : kTranscendentalCost;
      case UnaryOp::kSin:
      case UnaryOp::kCos:
      case UnaryOp::kLog1p:
      case UnaryOp::kExpm1:
      case UnaryOp::kTan:
      case UnaryOp::kAtan:
        return kTranscendentalCost;
      default:
        return 1;
    }
  }
  if (inst.kind() == OpKind::kBinary) {
    const BinaryOp op = inst.attrs_as<compiler::BinaryAttrs>().op;
    return op == BinaryOp::kPow || op == BinaryOp::kAtan2 ? kTranscendentalCost
                                                          : 1;
  }
  return 1;
}

// Whether update `v` (dynamic_update_slice, scatter) copies its operand
// rather than writing over it (buffer_assignment.h's in-place misses).
bool CopiesOperand(const compiler::BufferAssignment& assignment, ValueId v) {
  return std::any_of(
      assignment.in_place_misses.begin(), assignment.in_place_misses.end(),
      [v](const compiler::InPlaceMiss& m) { return m.value == v; });
}

int64_t InstructionWork(const compiler::Program& p,
                        const compiler::BufferAssignment& assignment,
                        ValueId v) {
  const Instruction& inst = p.instruction(v);
  const int64_t result = p.type(v).num_elements();
  switch (inst.kind()) {
    case OpKind::kParameter:
    case OpKind::kConstant:
      return 0;
    case OpKind::kReduce:
      return p.type(inst.operands[0]).num_elements();
    case OpKind::kDotGeneral: {
      int64_t w = result;
      const auto& dot = inst.attrs_as<compiler::DotGeneralAttrs>();
      const Shape& lhs = p.type(inst.operands[0]).shape;
      for (int64_t d : dot.lhs_contracting) w *= lhs[static_cast<int>(d)];
      return w;
    }
    case OpKind::kFft: {
      // ~log2(n) passes over the data per transformed dimension.
      int64_t passes = 1;
      for (int64_t n : inst.attrs_as<compiler::FftAttrs>().lengths) {
        for (int64_t m = 1; m < n; m *= 2) ++passes;
      }
      const int64_t elements =
          std::max(result, p.type(inst.operands[0]).num_elements());
      return elements * passes;
    }
    case OpKind::kDynamicUpdateSlice:
    case OpKind::kScatter: {
      const int64_t update =
          p.type(inst.operands[inst.kind() == OpKind::kScatter ? 2 : 1])
              .num_elements();
      return CopiesOperand(assignment, v) ? result + update : update;
    }
    default:
      return result * ElementCost(p, v);
  }
}

}  // namespace

int64_t EstimateWork(const compiler::Program& program,
                     const compiler::StepPlan& plan,
                     const compiler::BufferAssignment& assignment,
                     std::span<const int64_t> region_work) {
  int64_t work = 0;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const compiler::Step& step = plan.steps[s];
    if (step.kind == compiler::Step::Kind::kRegion) {
      work = AddWork(work, s < region_work.size() ? region_work[s] : 0);
      continue;
    }
    if (assignment.step_is_noop[s]) continue;
    for (ValueId v : step.members) {
      work = AddWork(work, std::max<int64_t>(InstructionWork(program, assignment, v), 1));
    }
  }
  for (const compiler::OutputSource& out : assignment.outputs) {
    if (out.kind == compiler::OutputSource::Kind::kCopy) {
      work = AddWork(work, program.type(out.value).num_elements());
    }
  }
  return work;
}

}  // namespace baton::cpu
