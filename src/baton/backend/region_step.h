// RegionStep: how an executor runs a control-flow step (while, scan, case;
// compiler/control_flow.h) -- its regions compiled once as executables of
// the same backend (RegionExecutable) and run synchronously, one after
// another, inside the parent's work. The CPU executor runs it inside its
// task (cpu/cpu_executable.h); the simulated device inside the command list
// it runs on its compute stream (cuda/gpu_executable.h). Both run it over
// storage the host addresses: copies between carries are memcpy and the
// while condition and case index are read where they lie. A CUDA device's
// GPU executable runs it over device memory, with a RegionMemory that
// enqueues the copies on its stream and reads the condition and the index
// back to the host (each read waits for the work before it); the regions
// enqueue their own work on the same stream.
//
// Memory (DESIGN 5.2): the parent's buffer assignment places each loop
// carry over its initial value where that value dies at the loop, so the
// loop runs in the carries' final buffers. The body is compiled with its
// carries donated: where its buffer assignment writes new carry k over old
// carry k, an iteration copies nothing. A new carry that needs storage of
// its own takes a spare buffer, and the buffer it replaced becomes the next
// spare (buffers rotate, nothing is copied); after the last iteration
// carries that ended up in a spare are copied into their final buffers
// once. Scan reads slice t of each xs in place and its body writes slice t
// of each stacked output straight into the final buffer. Spares, the
// regions' temporaries and the condition's result live in the step's
// scratch, part of the parent's arena (scratch_bytes()).
//
// Ownership: owned by the parent executable; shares its regions'
// executables. Thread-safety: Run may be called concurrently (it keeps its
// per-run state on the stack).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/compiler/buffer_assignment.h"
#include "baton/compiler/ir.h"
#include "baton/compiler/step_plan.h"
#include "baton/core/status.h"

namespace baton {

// What RegionStep needs of a backend's compiled region (CpuExecutable and
// GpuExecutable are ones).
class RegionExecutable {
 public:
  virtual ~RegionExecutable() = default;
  // The region after optimization and scheduling, and its buffers.
  virtual const compiler::Program& program() const = 0;
  virtual const compiler::BufferAssignment& assignment() const = 0;
  // Updates that copy, its own control-flow steps' included.
  virtual std::vector<compiler::InPlaceMiss> in_place_misses() const = 0;
  virtual std::string as_text() const = 0;
  // Runs the region synchronously on the calling thread over storage the
  // caller provides: params per parameter, out_buffers per output buffer
  // (aliased ones included), arena of the region's device temporaries
  // (other memory kinds must need none). value_data is reused scratch: a
  // loop passes the same vector each iteration. `context` is what the
  // parent gave RegionStep::Run, passed on unchanged (the backend's own:
  // none on the CPU, the device-to-host address map on the simulated
  // device).
  virtual Status RunOnCaller(const std::vector<void*>& params,
                             const std::vector<void*>& out_buffers,
                             void* arena, std::vector<void*>& value_data,
                             const void* context) const = 0;
};

// How RegionStep copies and reads storage the host may not address (a
// GPU's), in order with the regions' own work; a backend whose storage the
// host addresses passes none (null: memcpy, and reads where the bytes lie).
// Implementations: cuda/cuda_stream.h (a CUDA stream).
class RegionMemory {
 public:
  virtual ~RegionMemory() = default;
  // Copies `bytes` (> 0) from `src` to `dst` (both the device's, not
  // overlapping) after the work enqueued before it and before the work
  // enqueued after it; may return before the bytes have moved.
  virtual Status Copy(void* dst, const void* src, int64_t bytes) const = 0;
  // Reads `bytes` at device address `src` into host memory `dst` once the
  // work enqueued before it is done (blocks the caller until then).
  virtual Status Read(void* dst, const void* src, int64_t bytes) const = 0;
};

// Compiles one region of a control-flow step on the parent's backend and
// device: `donated` per parameter; `slice_outputs` per output, true for the
// outputs that must get storage of their own (a scan's stacked outputs,
// written into their slices); `name` names it in errors and traces.
using RegionCompiler =
    std::function<Result<std::shared_ptr<const RegionExecutable>>(
        std::shared_ptr<const compiler::Program> region,
        std::vector<bool> donated, std::string name,
        std::vector<bool> slice_outputs)>;

class RegionStep {
 public:
  // `step` is a kRegion step of `program`; `name` names the parent.
  static Result<std::unique_ptr<RegionStep>> Compile(
      const compiler::Program& program, const compiler::Step& step,
      const RegionCompiler& compile, const std::string& name);
  ~RegionStep();

  // Device bytes of scratch Run needs.
  int64_t scratch_bytes() const { return scratch_bytes_; }
  // kWhile, kScan or kCase.
  compiler::OpKind kind() const { return kind_; }
  // Iterations of one run: a scan's length; 1 for case; -1 for while (not
  // known until it runs).
  int64_t trip_count() const;
  // Updates inside the regions that copy, and carries that do not stay in
  // place from one iteration to the next.
  const std::vector<compiler::InPlaceMiss>& in_place_misses() const {
    return misses_;
  }
  // The regions' executables, as text (for the parent's as_text()).
  std::string RegionsText() const;

  // Runs the step: `value_data` is the parent's storage per value, scratch
  // its scratch_bytes() of device memory, both as the host addresses them
  // -- or, with `memory`, as the device does (every copy and read then goes
  // through `memory`); `context` goes to every region's RunOnCaller.
  Status Run(const std::vector<void*>& value_data, void* scratch,
             const void* context = nullptr,
             const RegionMemory* memory = nullptr) const;

 private:
  RegionStep() = default;
  struct Region;
  Status RunWhile(const std::vector<void*>& value_data, char* scratch,
                  const void* context, const RegionMemory* memory) const;
  Status RunScan(const std::vector<void*>& value_data, char* scratch,
                 const void* context, const RegionMemory* memory) const;
  Status RunCase(const std::vector<void*>& value_data, char* scratch,
                 const void* context, const RegionMemory* memory) const;

  compiler::OpKind kind_ = compiler::OpKind::kWhile;
  std::vector<compiler::ValueId> operands_;
  std::vector<compiler::ValueId> results_;
  int num_carries_ = 0;
  int num_xs_ = 0;
  int64_t length_ = 0;
  bool reverse_ = false;
  std::vector<std::unique_ptr<Region>> regions_;  // while: cond, body
  std::vector<int64_t> carry_bytes_;
  std::vector<int64_t> spare_offsets_;  // per spare buffer, in scratch
  std::vector<int64_t> spare_sizes_;
  int64_t arena_offset_ = 0;      // regions' temporaries (they run in turn)
  int64_t cond_result_offset_ = 0;
  int64_t fixup_offset_ = -1;     // one carry-sized buffer for final moves
  int64_t scratch_bytes_ = 0;
  std::vector<compiler::InPlaceMiss> misses_;
};

}  // namespace baton
