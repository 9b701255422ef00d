#include "baton/backend/cpu/dot_accumulate_runner.h"

#include <cstring>

#include "baton/backend/cpu/instruction_runner.h"

namespace baton::cpu {

DotAccumulateStep::DotAccumulateStep(const compiler::Program& program,
                                     const compiler::StepPlan& plan,
                                     const compiler::Step& step) {
  const compiler::DotAccumulate roles =
      compiler::DotAccumulateOf(program, plan, step);
  const compiler::Instruction& dot = program.instruction(roles.dot);
  dtype_ = dot.type.dtype;
  lhs_ = dot.operands[0];
  rhs_ = dot.operands[1];
  addend_ = roles.addend;
  scale_ = roles.scale;
  negate_ = roles.negate;
  lhs_shape_ = program.type(lhs_).shape;
  rhs_shape_ = program.type(rhs_).shape;
  dims_ = DotDimensionsOf(dot.attrs_as<compiler::DotGeneralAttrs>());
  bytes_ = dot.type.byte_size();
  scratch_bytes_ = DotGeneralScratchBytes(dtype_, lhs_shape_, rhs_shape_, dims_);
}

Status DotAccumulateStep::Run(const std::vector<void*>& value_data,
                              void* out, std::span<std::byte> scratch) const {
  const void* addend = value_data[addend_];
  if (out != addend) std::memcpy(out, addend, static_cast<size_t>(bytes_));
  double alpha = 1.0;
  if (scale_ != compiler::kNoValue) {
    const void* s = value_data[scale_];
    alpha = dtype_ == DType::kFloat32 ? *static_cast<const float*>(s)
                                      : *static_cast<const double*>(s);
  }
  DotGeneralAccumulate(dtype_, value_data[lhs_], lhs_shape_, value_data[rhs_],
                       rhs_shape_, dims_, negate_ ? -alpha : alpha, out,
                       scratch);
  return OkStatus();
}

}  // namespace baton::cpu
