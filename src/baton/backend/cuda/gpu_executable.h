// GpuExecutable: a compiled program bound to one accelerator device -- the
// CUDA backend's Executable (backend/executable.h), and the one the
// simulated device runs.
//
// It compiles with the CPU's passes (memory schedule, step plan, buffer
// assignment with donation and in-place updates) and turns the plan into a
// command list: the kernel emitter's actions (codegen/kernel_emitter.h) --
// kernel launches, copies, GEMMs, steps left to the host -- whose operands
// are buffer references (a value's slot, a step's scratch) resolved at each
// call against that call's frame (call_frame.h). Each step's scratch is a
// temporary of buffer assignment, so memory_analysis() and memory_stats()
// count it.
//
// Targets:
//  - kHostEmulation (the simulated device): the emitted source is compiled
//    for the host (codegen/host_kernel_runner.h, cached on disk by a hash of
//    the source) and a call runs the command list as one piece of work on
//    the device's compute stream (DeviceBackend::EmulateAsync), every
//    device address mapped to the host address the backend gives it. A
//    GEMM action calls the BLAS (codegen/host_gemm.h, the simulated
//    device's cuBLAS). Control-flow steps (while, scan, case) run as
//    RegionStep (backend/region_step.h) over regions compiled as
//    GpuExecutables of their own: their kernels run iteration by
//    iteration, loop carries updated in place as on the CPU, the while
//    condition and the case index read where they lie. The steps no
//    kernel covers yet (sort, linear algebra, FFT, host callbacks) run
//    through the reference interpreter (codegen/host_step.h).
//  - kCuda (a CUDA device, cuda_program.h): the same command list runs on
//    the device's compute stream. Kernels are compiled by NVRTC for the
//    device's architecture and loaded with the CUDA runtime's library API
//    (cuda_kernel_library.h), GEMMs run in cuBLASLt (cublaslt_gemm.h),
//    copies are cudaMemcpyAsync. The whole run is enqueued by one
//    CudaBackend::LaunchAsync: the launching thread enqueues and returns,
//    and the event behind the last command defines the outputs. A step no
//    kernel covers (Action::kHostStep) waits for the stream, copies its
//    inputs to the host, runs there (codegen/host_step.h) and copies its
//    results back; control-flow steps run as RegionSteps whose regions are
//    kCuda GpuExecutables enqueueing on the same stream, the loop carries
//    in device memory, copies between them enqueued on the stream and the
//    while condition and case index read back with a small synchronous
//    copy (the RegionMemory and `context` of a region run is the
//    CudaStream, cuda_stream.h). Compile fails with a clear Status on a
//    device that is not a usable CUDA device.
//
// A call enqueues and returns (runs_inline() is false): outputs are defined
// by the event of the work, inputs and the temporary arena are released
// after it, exactly as on the CPU.
//
// Traces (DESIGN 5.5): while a recording is enabled, a call is recorded as
// an execute span of the compute track once its work is done. On kCuda the
// span is the device's (the CUDA backend brackets the whole run with timing
// events, cuda_backend.h; DeviceBackend::TraceSpan), not the host's time to
// enqueue it; under emulation it is the emulation thread's run, whose
// clock is the device's.
//
// Launch plans (launch_plan.h): the command list is cut into segments --
// the longest runs of kernels, copies and GEMMs with no host step or
// control-flow step between them (those wait for the stream and compute
// on the host, which no graph can hold); the output copies end the last
// segment. Each segment of a top-level call is resolved into LaunchNodes
// and its LaunchPlan decides: run directly, capture, replay, update the
// changed nodes in place, or recapture. On kCuda the recording is a CUDA
// graph (cuda_graph.h); under emulation the recorded nodes themselves,
// run by the host emulation (so a node the plan failed to update runs
// with the stale addresses and the values show it). Regions of
// control-flow steps run directly (each iteration is a call of their own,
// between two reads of the condition). launch_plan_counters() and
// last_launch_decisions() say what the plans did.
//
// Dispatch: a program with no host step and no control-flow step enqueues
// from the calling thread when its compute queue is idle (all earlier
// work of the queue, device work included, done) and its inputs are ready
// (WorkQueue::Dispatch::kInlineWhenIdle): no hand-off to the queue's
// worker, with the queue's order and dependency semantics unchanged. Any
// other call goes through the worker (a host step would make the caller
// wait for the device). direct_dispatches() counts the calls that were
// enqueued by the calling thread.
//
// Ownership: shared (std::shared_ptr) by compile caches and by the work in
// flight; holds its constants (ConstantCache) and its compiled kernels.
// The Device must outlive it.
// Thread-safety: Execute may be called from any thread, concurrently.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "baton/backend/call_frame.h"
#include "baton/backend/constant_cache.h"
#include "baton/backend/cuda/codegen/host_kernel_runner.h"
#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/backend/executable.h"
#include "baton/backend/launch_plan.h"
#include "baton/backend/region_step.h"
#include "baton/compiler/buffer_assignment.h"
#include "baton/compiler/ir.h"
#include "baton/compiler/step_plan.h"
#include "baton/runtime/device_backend.h"

namespace baton::cuda {

class CudaProgram;  // cuda_program.h
class CudaStream;   // cuda_stream.h

class GpuExecutable : public Executable,
                      public RegionExecutable,
                      public std::enable_shared_from_this<GpuExecutable> {
 public:
  enum class Target { kCuda, kHostEmulation };

  ~GpuExecutable() override;
  // As CpuExecutable::Compile (cpu_executable.h), for `target`.
  static Result<std::shared_ptr<GpuExecutable>> Compile(
      std::shared_ptr<const compiler::Program> program,
      std::vector<bool> donated, Device* device, std::string name,
      std::vector<bool> fresh_outputs, Target target);

  Result<std::vector<Array>> Execute(std::vector<CallArgument>& args) override;

  const compiler::Program& program() const override { return *program_; }
  const compiler::MemoryAnalysis& memory_analysis() const override {
    return assignment_.analysis;
  }
  const std::vector<int>& unusable_donations() const override {
    return assignment_.unusable_donations;
  }
  const std::vector<bool>& donated() const override { return donated_; }
  // Updates that copy, here and in the regions of control-flow steps.
  std::vector<compiler::InPlaceMiss> in_place_misses() const override {
    return in_place_misses_;
  }
  const compiler::BufferAssignment& assignment() const override {
    return assignment_;
  }
  // As a control-flow region of a parent GpuExecutable (region_step.h).
  // kHostEmulation: params, out_buffers and arena are host addresses,
  // `context` the parent's DeviceBackend::HostAddressOf (for this
  // executable's constants). kCuda: they are device addresses, `context`
  // the parent run's CudaStream (cuda_stream.h), on which this region's
  // commands are enqueued.
  Status RunOnCaller(const std::vector<void*>& params,
                     const std::vector<void*>& out_buffers, void* arena,
                     std::vector<void*>& value_data,
                     const void* context) const override;
  bool runs_inline() const override { return false; }
  bool keeps_caller_locks() const override { return false; }
  Device* device() const override { return device_; }
  const std::string& name() const override { return name_; }
  std::string as_text() const override;

  // The command list (the emitter's actions) and its kernels' source.
  const codegen::EmittedProgram& emitted() const { return emitted_; }
  // How many steps run on the host (Action::kHostStep; control-flow steps,
  // which run as RegionSteps, are not counted).
  int host_steps() const { return host_steps_; }

  // Launch plans: the segments of the command list (class comment), what
  // their plans decided summed over them, and each one's last decision
  // (kDirect before its first run). Read once the calls are done (their
  // outputs ready): the decisions are made when the run is launched.
  int num_segments() const { return static_cast<int>(segments_.size()); }
  LaunchPlan::Counters launch_plan_counters() const;
  std::vector<LaunchPlan::Decision> last_launch_decisions() const;
  // Whether calls may enqueue from the calling thread (class comment), and
  // how many did.
  bool dispatches_directly() const { return dispatch_directly_; }
  int64_t direct_dispatches() const { return direct_dispatches_.load(); }

 private:
  // Actions [begin, end) of emitted_.actions, none a kHostStep, and
  // whether the output copies follow them.
  struct Segment {
    int begin = 0, end = 0;
    bool output_copies = false;
  };
  struct SegmentState;  // gpu_executable.cc: plan, graph, mutex
  // Cuts the command list into segments_ and run_order_.
  void PlanSegments();
  // Segment `seg` of one call as nodes over device addresses (`scratch`
  // per step): kernels over no item and copies onto themselves are no
  // node. Node commands are action indices; output copy k is
  // actions.size() + k (an index into assignment_.outputs).
  std::vector<LaunchNode> ResolveSegment(
      const Segment& seg, const std::vector<void*>& value_data,
      const std::vector<void*>& scratch) const;
  // The bytes a copy node moves.
  int64_t CopyBytes(int command) const;
  // kCuda: enqueues one node as a plain launch.
  Status EnqueueNode(const LaunchNode& node, const CudaStream& stream) const;
  // kCuda: segment `index` of a top-level call, as its plan decides.
  Status RunSegmentOnDevice(int index, std::vector<LaunchNode> nodes,
                            const CudaStream& stream) const;

  GpuExecutable() = default;
  // Each step's scratch in the temporary arena at `arena` (null where a
  // step has none).
  std::vector<void*> StepScratch(char* arena) const;
  // Runs the command list over one call's storage, given as device
  // addresses, with `host_address` mapping them (kHostEmulation).
  Status RunEmulated(const std::vector<void*>& value_data, void* device_arena,
                     const DeviceBackend::HostAddressOf& host_address) const;
  // The same over host addresses: `host` per slot, `host_arena` the device
  // temporaries; `host_address` maps what a region's constants need.
  Status RunOnHostStorage(const std::vector<void*>& host, char* host_arena,
                          const DeviceBackend::HostAddressOf& host_address) const;
  // kCuda: enqueues the command list on `stream` over device addresses
  // (`value_data` per slot, `arena` the device temporaries); with
  // `top_level` (a call, not a region's iteration) through the segments'
  // launch plans.
  Status RunOnDevice(const std::vector<void*>& value_data, char* arena,
                     const CudaStream& stream, bool top_level) const;
  // kCuda: step `step`, left to the host (Action::kHostStep), over device
  // storage: waits for the stream, copies the step's inputs to the host,
  // runs it there and writes its results back.
  Status RunHostStepOnDevice(int step, const std::vector<void*>& value_data,
                             const CudaStream& stream) const;

  std::shared_ptr<const compiler::Program> program_;
  std::vector<bool> donated_;
  Device* device_ = nullptr;  // not owned
  std::string name_;
  Target target_ = Target::kHostEmulation;
  compiler::StepPlan plan_;
  compiler::BufferAssignment assignment_;
  codegen::EmittedProgram emitted_;
  int host_steps_ = 0;
  // Per step: how a control-flow step runs (else null), and the scratch
  // each step needs (the emitter's, or the RegionStep's).
  std::vector<std::unique_ptr<RegionStep>> regions_;
  std::vector<int64_t> step_scratch_bytes_;
  std::vector<compiler::InPlaceMiss> in_place_misses_;
  // kHostEmulation: the kernels compiled for the host (null when there are
  // none).
  std::unique_ptr<codegen::HostKernelLibrary> host_kernels_;
  // kCuda: the device, its loaded kernels and GEMM plans.
  std::unique_ptr<CudaProgram> cuda_;
  std::vector<std::shared_ptr<ConstantBuffer>> constants_;  // per ValueId
  std::vector<std::string> output_labels_;
  std::string temp_label_;
  SlotBinder slot_binder_;
  FrameLayout layout_;
  std::vector<Segment> segments_;
  // The top-level run in order: a segment's index (>= 0), or ~a for the
  // host or control-flow step of action a.
  std::vector<int> run_order_;
  std::vector<std::unique_ptr<SegmentState>> segment_state_;
  bool dispatch_directly_ = false;
  mutable std::atomic<int64_t> direct_dispatches_{0};
};

}  // namespace baton::cuda
