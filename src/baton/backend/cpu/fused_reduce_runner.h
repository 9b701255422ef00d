// Runs a fused reduction step (step_plan.h, kFusedReduce): a reduction over
// trailing dimensions whose operand is an elementwise chain. The chain is
// computed a piece at a time (FusedStep::RunRange) into a per-thread buffer
// of at most kReducePieceElements, and each piece is reduced as it is made
// (kernels/reduce.h ReduceRows), so the chain's full-size result never
// exists: sum(x * x) reads x once and writes one number. A float32 sum of
// a one-op float chain (sum(x * x), sum(a - b)) or of one op's square
// (sum((a - b) * (a - b))) goes further: each piece is summed in registers
// as the chain makes it (FloatChain::SumRange), with no piece buffer.
//
// Results are bitwise those of the unfused program (the chain materialized,
// then reduced): the chain's elements are the same, and ReduceRows adds them
// in Reduce's order.
//
// Ownership: planned once per executable; points into its Program, which
// must outlive it.
// Thread-safety: Run is const and may run concurrently; it splits the
// reduction across the global ThreadPool.
#pragma once

#include <cstdint>
#include <vector>

#include "baton/backend/cpu/fused_runner.h"
#include "baton/compiler/step_plan.h"
#include "baton/core/status.h"

namespace baton::cpu {

class FusedReduceStep {
 public:
  // `step` must be a kFusedReduce step of `program` planned by `plan`.
  FusedReduceStep(const compiler::Program& program,
                  const compiler::StepPlan& plan, const compiler::Step& step);

  // `value_data` as for FusedStep::Run; `out` is the reduce's result.
  Status Run(const std::vector<void*>& value_data, void* out) const;

 private:
  FusedStep producer_;
  ReduceOp op_ = ReduceOp::kSum;
  DType dtype_ = DType::kFloat32;
  int64_t rows_ = 0;  // output elements
  int64_t row_ = 0;   // reduced elements per output
};

}  // namespace baton::cpu
