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

// Up to how much work a call that finds its device idle runs on the calling
// thread rather than on the device's queue thread
// (CpuExecutable::runs_on_caller). Handing a call to the queue thread costs
// its wake-up -- a few microseconds on an idle server, 30-120 us on a
// loaded 2-vCPU VM, where the same size flipped between fast and slow from
// one call to the next (issue 40) -- and the caller, which would only wait,
// can do the work itself, the thread pool's helpers joining its parallel
// loops (ThreadPool::ParallelFor runs chunks on the caller too). Above it,
// a call is queued: the caller goes back to Python while it runs, so a
// training loop's next step is traced and enqueued behind the running one
// (dispatch-ahead), which pays once the work dwarfs a Python call's ~20-50
// us. 2^18 element operations (~50-100 us of work): measured on the 2-vCPU
// AMD VM, each call after a 0.5 ms pause (the helpers asleep), medians of
// 200 calls in three alternating runs, queued -> on the caller: a*2+1 on
// 2^16 elements 22-31 -> 12-14 us, tanh 2^16 54-65 -> 32-46 us, take of
// 2^14 of 2^16 elements 47-76 -> 34 us; 2^18-2^20 elements unchanged. A
// limit of 2^22 made tanh on 2^20 elements (4M operations) slower on the
// caller (~485 against ~320 us queued, not explained yet), so larger work
// stays queued.
inline constexpr int64_t kCallerWorkLimitOps = int64_t{1} << 18;

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
