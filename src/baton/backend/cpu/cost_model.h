// How much work one call of a compiled program does on the CPU: what decides
// whether it runs on the caller's thread (CpuExecutable::runs_inline) or is
// handed to the device's compute queue.
//
// The unit is an element operation: one element read and computed by a
// cheap kernel (a copy, an add, a compare; ~0.1-0.3 ns). Each step counts the
// elements it touches, not the size of its result -- XLA's CPU client
// decides from its cost analysis the same way:
//   - elementwise ops: result elements, times kFastMathCost or
//     kTranscendentalCost for the transcendental functions (below);
//   - reductions: the elements reduced (a sum of 16M elements is 16M, not 1);
//   - dot_general: result elements times the contraction (multiply-adds);
//   - dynamic_update_slice and scatter written in place: the update's
//     elements (an O(1) update of a large donated array is a tiny program);
//     when they copy their operand instead, that copy too;
//   - fft: the larger of operand and result elements, times 1 + ceil(log2 n)
//     summed over the transformed lengths (an FFT's passes over the data);
//   - control flow: the regions' work, times the trip count where known
//     (region_step.h);
//   - output copies made at the end of a call.
// Thread-safety: pure functions of their arguments.
#pragma once

#include <cstdint>
#include <span>

#include "baton/compiler/buffer_assignment.h"
#include "baton/compiler/ir.h"
#include "baton/compiler/step_plan.h"

namespace baton::cpu {

// Cost of one element of a transcendental op relative to a cheap one: the
// libm-class functions (sin, cos, pow, float64 exp, ...: ~1-5 ns an element
// against ~0.1 ns for an add).
inline constexpr int64_t kTranscendentalCost = 8;
// The float32 (and float16/bfloat16) exp, log, tanh and logistic of
// fast_math.h, vectorized: ~0.3-0.5 ns an element with AVX-512, ~0.5-1 with
// AVX2 (kernels_bench --benchmark_filter=FastMathSize).
inline constexpr int64_t kFastMathCost = 4;

// The work of a program that holds a while loop: its trip count is known
// only when it runs, and it may never end, so such a call is never run on
// the caller's thread (in Python that thread holds the GIL, and every other
// Python thread would wait for the whole loop). Work arithmetic saturates
// here (AddWork, ScaleWork), so sums and trip counts never overflow.
inline constexpr int64_t kUnboundedWork = int64_t{1} << 50;
inline int64_t AddWork(int64_t a, int64_t b) {
  return a >= kUnboundedWork - b ? kUnboundedWork : a + b;
}
inline int64_t ScaleWork(int64_t work, int64_t times) {
  if (work == 0 || times == 0) return 0;
  return times >= kUnboundedWork / work ? kUnboundedWork : work * times;
}

// Element operations of one call of `program` planned as `plan` with
// `assignment`. `region_work[s]` is the work of region step s (0 for other
// steps; empty when there are none).
int64_t EstimateWork(const compiler::Program& program,
                     const compiler::StepPlan& plan,
                     const compiler::BufferAssignment& assignment,
                     std::span<const int64_t> region_work);

}  // namespace baton::cpu
