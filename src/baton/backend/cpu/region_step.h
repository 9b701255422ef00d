// RegionStep: how the CPU executor runs a control-flow step (while, scan,
// case; compiler/control_flow.h) -- its regions compiled once as
// executables of their own and run synchronously inside the parent's task.
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
// Ownership: owned by the parent CpuExecutable; shares its regions'
// executables. Thread-safety: Run may be called concurrently (it keeps its
// per-run state on the stack).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "baton/compiler/buffer_assignment.h"
#include "baton/compiler/ir.h"
#include "baton/compiler/step_plan.h"

namespace baton {
class Device;
}

namespace baton::cpu {

class CpuExecutable;

class RegionStep {
 public:
  // `step` is a kRegion step of `program`; `name` names the parent.
  static Result<std::unique_ptr<RegionStep>> Compile(
      const compiler::Program& program, const compiler::Step& step,
      Device* device, const std::string& name);
  ~RegionStep();

  // Device bytes of scratch Run needs.
  int64_t scratch_bytes() const { return scratch_bytes_; }
  // Element operations of one run (cost_model.h). A while loop's trip count
  // is unknown until it runs: its work is kUnboundedWork, so a program
  // holding one is always handed to the device's queue.
  int64_t work() const { return work_; }
  // Updates inside the regions that copy, and carries that do not stay in
  // place from one iteration to the next.
  const std::vector<compiler::InPlaceMiss>& in_place_misses() const {
    return misses_;
  }
  // The regions' executables, as text (for the parent's as_text()).
  std::string RegionsText() const;

  // Runs the step: `value_data` is the parent's storage per value, scratch
  // its scratch_bytes() of device memory.
  Status Run(const std::vector<void*>& value_data, void* scratch) const;

 private:
  RegionStep() = default;
  struct Region;
  Status RunWhile(const std::vector<void*>& value_data, char* scratch) const;
  Status RunScan(const std::vector<void*>& value_data, char* scratch) const;
  Status RunCase(const std::vector<void*>& value_data, char* scratch) const;

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
  int64_t work_ = 0;
  std::vector<compiler::InPlaceMiss> misses_;
};

}  // namespace baton::cpu
