// Runs a dot accumulate step (step_plan.h, kDotAccumulate): result =
// addend + alpha * dot(lhs, rhs), with alpha a scalar operand's value (or 1),
// negated for a subtract. The addend is copied into the result first unless
// the result already lives in the addend's storage (buffer assignment gives
// it the addend's buffer when the addend dies there: a donated parameter
// updated by an SGD step); then one BLAS call with beta = 1 adds the product
// (kernels/dot.h DotGeneralAccumulate). The product is never materialized.
//
// Ownership: planned once per executable; copies what it needs from the
// Program.
// Thread-safety: Run is const and may run concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "baton/backend/cpu/kernels/dot.h"
#include "baton/compiler/step_plan.h"
#include "baton/core/status.h"

namespace baton::cpu {

class DotAccumulateStep {
 public:
  // `step` must be a kDotAccumulate step of `program` planned by `plan`.
  DotAccumulateStep(const compiler::Program& program,
                    const compiler::StepPlan& plan, const compiler::Step& step);

  // The scratch Run needs (kernels/dot.h DotGeneralScratchBytes).
  int64_t scratch_bytes() const { return scratch_bytes_; }

  // `value_data` holds every materialized value's storage (by value id);
  // `out` is the step result's; `scratch` holds scratch_bytes().
  Status Run(const std::vector<void*>& value_data, void* out,
             std::span<std::byte> scratch) const;

 private:
  DType dtype_ = DType::kFloat32;
  compiler::ValueId lhs_ = compiler::kNoValue;
  compiler::ValueId rhs_ = compiler::kNoValue;
  compiler::ValueId addend_ = compiler::kNoValue;
  compiler::ValueId scale_ = compiler::kNoValue;  // kNoValue: alpha = +-1
  bool negate_ = false;
  Shape lhs_shape_, rhs_shape_;
  DotDimensions dims_;
  int64_t bytes_ = 0;  // of the result (and the addend)
  int64_t scratch_bytes_ = 0;
};

}  // namespace baton::cpu
