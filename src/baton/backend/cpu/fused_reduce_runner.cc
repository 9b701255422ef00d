#include "baton/backend/cpu/fused_reduce_runner.h"

#include <mutex>

#include "baton/backend/cpu/float_chain.h"
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
  const FloatChain* chain = producer_.float_chain();
  if (op_ == ReduceOp::kSum && dtype_ == DType::kFloat32 && chain != nullptr &&
      chain->SumsInRegisters()) {
    // sum(x * x), sum((a - b) * (a - b)): each piece summed as the chain
    // makes it.
    SumRowsFloat32(
        rows_, row_,
        [chain, &value_data](int64_t begin, int64_t count) {
          return chain->SumRange(value_data, begin, count);
        },
        static_cast<float*>(out));
    return OkStatus();
  }
  // One pointer captured: the producer fits std::function's inline buffer
  // (no allocation per call).
  struct State {
    const FusedStep& producer;
    const std::vector<void*>& value_data;
    std::mutex mu;
    Status error;
  } state{producer_, value_data, {}, OkStatus()};
  // A failed piece always leaves its error in `state`.
  ReduceRows(
      op_, dtype_, rows_, row_,
      [s = &state](int64_t begin, int64_t count, void* dst) {
        Status st = s->producer.RunRange(s->value_data, dst, begin, count);
        if (st.ok()) return true;
        std::lock_guard<std::mutex> lock(s->mu);
        if (s->error.ok()) s->error = std::move(st);
        return false;
      },
      out);
  return std::move(state.error);
}

}  // namespace baton::cpu
