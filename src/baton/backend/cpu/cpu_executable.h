// CpuExecutable: a compiled program bound to one CPU device -- its step plan,
// buffer assignment and shared constant copies -- and the code that runs it
// on the device's compute queue. The CPU backend's Executable (executable.h):
// the jit reaches it through CompileExecutable and that interface only; the
// CPU-specific members (work, assignment, RunOnCaller) serve the backend's
// own control-flow steps and its tests.
//
// A call (Execute) validates and pins every input, allocates outputs and one
// temporary arena per memory kind, and enqueues a single task; it returns at
// once with output arrays defined by that task's event. A program whose work
// is smaller than a thread hand-off (runs_inline()) runs on the calling
// thread when the compute queue is idle and its inputs are ready; the call
// then returns with the work done, and nothing else differs. Inputs are released
// (usage holds finished, unusable donated storage freed) by that same event,
// before it reads as ready, so block_until_ready() on an output followed by
// memory_stats() already shows them gone (DESIGN: completion order).
//
// Ownership: shared (std::shared_ptr) by compile caches and by the tasks in
// flight; holds its constants (shared with other executables through the
// ConstantCache). The Device must outlive it.
// Thread-safety: Execute may be called from any thread, concurrently.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "baton/backend/call_frame.h"
#include "baton/backend/constant_cache.h"
#include "baton/backend/cpu/dot_accumulate_runner.h"
#include "baton/backend/cpu/fused_reduce_runner.h"
#include "baton/backend/cpu/fused_runner.h"
#include "baton/backend/executable.h"
#include "baton/backend/region_step.h"
#include "baton/compiler/buffer_assignment.h"
#include "baton/compiler/ir.h"
#include "baton/compiler/step_plan.h"
#include "baton/runtime/array.h"

namespace baton::cpu {

// How the CPU backend plans its steps (compiler/step_plan.h): with dot
// accumulate steps for the dots whose GEMM adds its product into the output
// in one rounding (kernels/dot.h AccumulatesInOneRounding).
compiler::StepPlanOptions CpuStepPlanOptions();

class CpuExecutable : public Executable,
                      public RegionExecutable,
                      public std::enable_shared_from_this<CpuExecutable> {
 public:
  ~CpuExecutable() override;
  // `donated[i]`: parameter i arrives as donated storage. `name` appears in
  // traces and error messages. The program is first reordered to need less
  // memory (memory_schedule.h); program() is the reordered one.
  // `fresh_outputs` (per output, may be empty): outputs the caller gives
  // storage of their own, never a donated parameter's (AssignBuffers).
  static Result<std::shared_ptr<CpuExecutable>> Compile(
      std::shared_ptr<const compiler::Program> program,
      std::vector<bool> donated, Device* device, std::string name,
      std::vector<bool> fresh_outputs = {});

  // Runs asynchronously. Arguments must match the program's parameter types
  // and live on this executable's device (the jit layer checks that with a
  // clear message). On error nothing is consumed: donated storage is given
  // back to its array.
  Result<std::vector<Array>> Execute(std::vector<CallArgument>& args) override;

  const compiler::Program& program() const override { return *program_; }
  const compiler::MemoryAnalysis& memory_analysis() const override {
    return assignment_.analysis;
  }
  // Donated parameters whose storage no output can use.
  const std::vector<int>& unusable_donations() const override {
    return assignment_.unusable_donations;
  }
  const std::vector<bool>& donated() const override { return donated_; }
  // Updates that copy their operand instead of writing over it, here and in
  // the regions of control-flow steps (bt.jit(require_in_place=True)).
  std::vector<compiler::InPlaceMiss> in_place_misses() const override;
  const compiler::BufferAssignment& assignment() const override {
    return assignment_;
  }
  // Element operations of one call (cost_model.h; see runs_inline()).
  int64_t work() const { return work_; }
  // As a control-flow region (region_step.h): runs on the calling thread.
  // Passed again with the same arena (a loop's next iteration), only the
  // parameters' and outputs' entries of value_data are bound anew.
  // `context` is unused.
  Status RunOnCaller(const std::vector<void*>& params,
                     const std::vector<void*>& out_buffers, void* device_arena,
                     std::vector<void*>& value_data,
                     const void* context) const override;
  // True when the program is cheap enough to run on the caller's thread (see
  // the file comment): at most kInlineWorkLimit element operations, 2^22
  // (about 0.2-2 ms of work on 2 cores; the kernels' ParallelFor still
  // brings in the pool's threads, the caller working too). Handing such a
  // call to the sleeping queue thread costs two wake-ups (the queue thread's,
  // then the caller's), tens of microseconds each on a loaded VM, and makes
  // the time of one call bimodal: on the 2-vCPU AMD VM, call +
  // block_until_ready of tanh on float32[2^18] took 348 us queued and 120
  // inline, [2^20] 482 and 453; a*2+1 on [2^18] 193 and 53. Past ~2 ms the
  // hand-off is a few percent, and a queued call lets the caller prepare the
  // next one (dispatch ahead) while this one computes, so larger programs
  // are queued.
  bool runs_inline() const override { return runs_inline_; }
  static constexpr int64_t kInlineWorkLimit = int64_t{1} << 22;
  // True for programs of at most kBriefWorkLimit element operations, 2^18
  // (tens of microseconds): shorter than handing Python's GIL to another
  // thread and back, so the bindings keep it across such a call and release
  // it for longer inline ones.
  bool keeps_caller_locks() const override { return keeps_caller_locks_; }
  static constexpr int64_t kBriefWorkLimit = int64_t{1} << 18;
  Device* device() const override { return device_; }
  const std::string& name() const override { return name_; }
  // The program after optimization, with each value's buffer and the memory
  // analysis.
  std::string as_text() const override;

 private:
  CpuExecutable();
  Status Run(const std::vector<void*>& value_data, void* device_arena) const;

  std::shared_ptr<const compiler::Program> program_;
  std::vector<bool> donated_;
  Device* device_ = nullptr;  // not owned
  std::string name_;
  compiler::StepPlan plan_;
  compiler::BufferAssignment assignment_;
  // Per step: its fused-tile plan, for kFusedElementwise steps (else null).
  std::vector<std::unique_ptr<FusedStep>> fused_;
  // Per step: its runner, for kFusedReduce steps (else null).
  std::vector<std::unique_ptr<FusedReduceStep>> fused_reduce_;
  // Per step: its runner, for kDotAccumulate steps (else null).
  std::vector<std::unique_ptr<DotAccumulateStep>> dot_accumulate_;
  // Per step: the scratch it needs in the arena (bytes; region steps' and
  // matrix products', at assignment_.step_scratch_offset).
  std::vector<int64_t> step_scratch_bytes_;
  // Per step: a binary op on one int32 element, run without kernel dispatch.
  std::vector<bool> scalar_int32_binary_;
  // Per step: how a kRegion step runs (else null).
  std::vector<std::unique_ptr<RegionStep>> regions_;
  bool runs_inline_ = false;
  bool keeps_caller_locks_ = false;
  int64_t work_ = 0;
  // Allocation labels (memory_stats, OOM reports), built once at compile time
  // rather than on every call: per output buffer, and for the temporaries.
  std::vector<std::string> output_labels_;
  std::string temp_label_;
  // Where a call's (or a region iteration's) values live.
  SlotBinder slot_binder_;
  // Per constant ValueId (others null).
  std::vector<std::shared_ptr<ConstantBuffer>> constants_;
  // What each call's frame reads of the members above.
  FrameLayout layout_;
};

}  // namespace baton::cpu
