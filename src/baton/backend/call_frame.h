// CallFrame: the storage of one call of a compiled program -- its pinned
// inputs, the temporary arena of each memory kind and the output buffers --
// and where each of the program's values lives in it, as a buffer
// assignment (compiler/buffer_assignment.h) places them. Every backend's
// Executable::Execute is the same sequence around it:
//
//   Prepare   validate the argument count, pin inputs, allocate arenas and
//             outputs (donated storage where assigned); on any error give
//             every donated storage back and consume nothing;
//   (enqueue) the backend enqueues its work after dependencies(), reading
//             and writing value_data(), and gets the work's event;
//   Finish    release inputs and arenas after that event, hand donated
//             storage to its new owner, define the outputs by the event and
//             return the output arrays.
//
// Addresses are the device's (value_data() may hold addresses the host
// cannot touch: a backend translates them where it runs host code).
//
// Ownership: a frame owns its holds and buffers until Finish; dropped
// without Finish (an enqueue that failed), it releases them at once and the
// caller gives donated storage back (GiveBack).
// Thread-safety: one frame is used by one thread.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/backend/constant_cache.h"
#include "baton/backend/executable.h"
#include "baton/compiler/buffer_assignment.h"
#include "baton/compiler/ir.h"
#include "baton/core/memory_kind.h"
#include "baton/runtime/array.h"
#include "baton/runtime/event.h"
#include "baton/runtime/tracked_buffer.h"

namespace baton {

// Where each of a compiled program's values lives in one run. A run's
// "slots" are, per ValueId, the value's address (null for values without
// storage), then per output buffer its address (the target of an output
// copy); they are bound from the run's parameters, output buffers,
// constants and temporary arenas as the buffer assignment places them.
// Every executable binds its slots through this, for whole calls
// (CallFrame) and for the regions of control-flow steps (RunOnCaller).
//
// Ownership: a value (copies what it needs of the assignment).
// Thread-safety: const methods may be called from any thread.
class SlotBinder {
 public:
  SlotBinder() = default;
  SlotBinder(const compiler::Program& program,
             const compiler::BufferAssignment& assignment);

  // The address, as the running code sees it, of the constant with ValueId
  // `value` (`bytes` long; may be 0).
  using ConstantAddress = std::function<Result<void*>(int value, int64_t bytes)>;

  // Binds every slot (resizing `slots`): a temporary at the arena of its
  // memory kind plus its offset. Fails only where `constant` does.
  Status Bind(const void* const* params, void* const* outputs,
              const std::array<void*, kNumMemoryKinds>& arenas,
              const ConstantAddress& constant,
              std::vector<void*>& slots) const;

  // For runs repeated over one arena (a loop's iterations): the first call
  // with `slots` binds every slot (every temporary in `arena`) and records
  // `arena` in one extra, last slot; a later call with the same arena
  // rebinds only the parameters and outputs.
  Status BindRepeated(const std::vector<void*>& params,
                      const std::vector<void*>& outputs, void* arena,
                      const ConstantAddress& constant,
                      std::vector<void*>& slots) const;

 private:
  struct Rebind {
    int slot;
    int index;
  };
  std::vector<compiler::BufferLocation> location_;  // per ValueId
  std::vector<MemoryKind> memory_kind_;             // per ValueId
  std::vector<int64_t> bytes_;                      // per ValueId
  int num_outputs_ = 0;                             // output buffers
  std::vector<Rebind> parameter_rebinds_;
  std::vector<Rebind> output_rebinds_;  // outputs' values, then buffers
};

// What a frame reads of its executable (fixed at compile time).
struct FrameLayout {
  const compiler::Program* program = nullptr;
  const compiler::BufferAssignment* assignment = nullptr;
  // Per ValueId: the device copy of a constant (else null).
  const std::vector<std::shared_ptr<ConstantBuffer>>* constants = nullptr;
  // Allocation labels (memory_stats, OOM reports): per output buffer, and
  // for the temporaries.
  const std::vector<std::string>* output_labels = nullptr;
  const std::string* temp_label = nullptr;
  const std::string* name = nullptr;  // the executable's, for messages
  const char* origin = "";            // the allocating function, for labels
  const SlotBinder* slots = nullptr;  // how a call's values are bound
};

// What a FrameLayout points to, made at compile time the same way by every
// executable: per ValueId the device copy of each constant (ConstantCache;
// null for other values), and an allocation label per output buffer
// ("float32[3]").
Result<std::vector<std::shared_ptr<ConstantBuffer>>> DeviceConstants(
    const compiler::Program& program, Device* device);
std::vector<std::string> OutputLabels(
    const compiler::BufferAssignment& assignment);

// The program an executable plans: `program` verified (Internal when
// malformed: programs from the tracer always verify) and reordered to need
// less memory (compiler/memory_schedule.h); `donated` is sized to its
// parameters first. `name` appears in the error.
Result<std::shared_ptr<const compiler::Program>> VerifyAndSchedule(
    const compiler::Program& program, std::vector<bool>& donated,
    const std::vector<bool>& fresh_outputs, const std::string& name);

class CallFrame {
 public:
  // Pins the inputs and allocates this call's storage on `device` (stream-
  // ordered for `queue_id`). On error nothing is consumed.
  static Result<CallFrame> Prepare(const FrameLayout& layout, Device* device,
                                   int queue_id,
                                   std::vector<CallArgument>& args);

  // Gives every donated argument's storage back to its array (a call that
  // fails after Prepare).
  static void GiveBack(std::vector<CallArgument>& args);

  // The events the work must wait for: the inputs' definitions.
  std::vector<Event>& dependencies() { return deps_; }
  // Per ValueId its address (null for values without storage), then per
  // output buffer its address (the target of an output copy).
  std::vector<void*>& value_data() { return value_data_; }
  // The temporary arena of memory kind `kind` (null when it needs none).
  void* arena(MemoryKind kind) const {
    return arenas_[static_cast<int>(kind)];
  }

  // After the work is enqueued with event `done`: releases the inputs and
  // arenas once it completes, hands donated storage on, defines the outputs
  // by `done` and returns one array per program output.
  std::vector<Array> Finish(const Event& done, std::vector<CallArgument>& args);

  // A moved-from frame owns nothing.
  CallFrame(CallFrame&& other) noexcept;
  CallFrame& operator=(CallFrame&&) = delete;
  ~CallFrame();

 private:
  CallFrame() = default;
  void FreeArenas();

  FrameLayout layout_;
  Device* device_ = nullptr;
  std::vector<UsageHold> holds_;
  std::vector<Event> deps_;
  std::array<void*, kNumMemoryKinds> arenas_{};
  std::vector<std::shared_ptr<TrackedBuffer>> out_buffers_;
  std::vector<void*> value_data_;
};

}  // namespace baton
