#include "baton/backend/cpu/fused_reduce_runner.h"

#include <mutex>

#include "baton/backend/cpu/kernels/reduce.h"

namespace baton::cpu {

FusedReduceStep::FusedReduceStep(const compiler::Program& program,
                                 const compiler::StepPlan& plan,
                                 const compiler::Step& step)
    : producer_(program, plan, compiler::ProducerOf(step)) {
  const compiler::Instruction& reduce = program.instruction(step.result);
  const auto& attrs = reduce.attrs_as<compiler::ReduceAttrs>();
  op_ = attrs.op;
  const compiler::ValueType& in = program.type(reduce.operands[0]);
  dtype_ = in.dtype;
  // PlanSteps fuses row reductions only.
  compiler::AsRowReduction(in.shape, attrs.axes, &rows_, &row_);
}

Status FusedReduceStep::Run(const std::vector<void*>& value_data,
                            void* out) const {
  std::mutex error_mu;
  Status error;
  const bool ok = ReduceRows(
      op_, dtype_, rows_, row_,
      [&](int64_t begin, int64_t count, void* dst) {
        Status s = producer_.RunRange(value_data, dst, begin, count);
        if (s.ok()) return true;
        std::lock_guard<std::mutex> lock(error_mu);
        if (error.ok()) error = std::move(s);
        return false;
      },
      out);
  if (!ok && error.ok()) return Internal("fused reduction failed");
  return error;
}

}  // namespace baton::cpu
