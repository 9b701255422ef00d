// RunStepOnHost: one step of a planned program that the kernel emitter left
// to the host (an Action::kHostStep: sort, linear algebra, FFT, host
// callbacks; control-flow regions in the codegen tests), run by the reference interpreter
// (compiler/reference_interpreter.h) over storage the host can address.
//
// The step's members become a program of their own -- a parameter per step
// input, the virtual scalars it reads rebuilt from theirs -- interpreted on
// copies of the inputs; its materialized members are written back. It is
// how the simulated device runs the steps no kernel covers yet (the GPU
// executable with host emulation, gpu_executable.h) and how the codegen
// tests check the rest of a program around them. Regions run as the
// interpreter runs them: correct values, loop carries copied (not in place).
//
// Thread-safety: a pure function of its arguments (and whatever host
// callbacks the step calls).
#pragma once

#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/step_plan.h"
#include "baton/core/status.h"

namespace baton::cuda::codegen {

// Runs step `step_index` of `plan` over `program`: `value_data[v]` is the
// host address of value v's storage (a step input's to read, a
// materialized member's to write).
Status RunStepOnHost(const compiler::Program& program,
                     const compiler::StepPlan& plan, int step_index,
                     const std::vector<void*>& value_data);

}  // namespace baton::cuda::codegen
