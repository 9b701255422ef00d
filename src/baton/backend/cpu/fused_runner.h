// Runs a fused elementwise step tile by tile (step_plan.h): inner values live
// in per-thread tiles of kFusionTileElements, the result is written straight
// to its buffer, and memory is traversed once for the whole chain.
//
// In place is safe: every tile reads all of its inputs before the result of
// that tile is written, and an aliased input is read at the same positions.
// Thread-safety: pure function of its arguments; splits tiles across the
// global ThreadPool.
#pragma once

#include <vector>

#include "baton/backend/cpu/instruction_runner.h"
#include "baton/compiler/step_plan.h"

namespace baton::cpu {

// `value_data[v]` is the storage of every materialized value the step reads
// (or, for a virtual scalar's source, its one element); `out` the result's.
Status RunFusedStep(const compiler::Program& program,
                    const compiler::StepPlan& plan, const compiler::Step& step,
                    const std::vector<void*>& value_data, void* out);

}  // namespace baton::cpu
