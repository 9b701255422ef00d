// ScheduleForMemory: reorders a program's instructions so that fewer bytes
// are alive at once, before its steps are planned and its buffers assigned.
//
// Why: a program's order is the order it was traced in. A training step
// traces the whole backward pass and then every update, so each gradient
// stays alive from the step that makes it to the end of the backward pass;
// XLA's scheduler runs each update right after its gradient instead.
//
// What: list scheduling over the steps PlanSteps would form (a fused group
// moves as one unit, so fusion never changes). After each step, every
// ready step that does not increase live device memory -- it frees at least
// what it allocates, counting the operands it is the last reader of and a
// dying operand it can overwrite in place (donated parameters included) --
// is pulled forward, lowest original position first; otherwise the next
// step in the original order runs. So:
//  - a gradient's update (which frees the gradient and writes the donated
//    parameter in place) runs as soon as the gradient is complete;
//  - a recomputation (checkpoint) starts from an optimization barrier (a
//    same-kind transfer), which allocates: it is never pulled forward and
//    stays where the backward pass needs it;
//  - an offload of a residual that dies on device is pulled forward (it
//    frees device memory), a transfer back allocates on device and stays.
// Only device bytes decide whether a step is pulled (other memory kinds
// break ties), since device memory is the scarce one. An output costs its
// bytes like a temporary: computed early, it could no longer take the
// storage of a donated parameter that is still being read.
//
// The result keeps the calling convention (parameters in order, the same
// outputs) and computes the same values; parameters come first, constants
// and virtual scalars (step_plan.h) right before their first user.
//
// Thread-safety: a pure function of its arguments.
#pragma once

#include <vector>

#include "baton/compiler/ir.h"

namespace baton::compiler {

// `donated[i]` says whether parameter i is donated (missing: not donated).
// `fresh_outputs` as for AssignBuffers: such outputs never take a donated
// parameter's storage, so they never wait for its other readers.
Program ScheduleForMemory(const Program& program,
                          const std::vector<bool>& donated,
                          const std::vector<bool>& fresh_outputs = {});

}  // namespace baton::compiler
