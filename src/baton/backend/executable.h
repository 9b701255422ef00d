// Executable: a compiled program bound to one device, as the jit layer sees
// it -- whichever backend runs it (DESIGN section 6, "One compiler, one
// jit"). cpu::CpuExecutable implements it; a device's platform decides
// which implementation CompileExecutable builds. The jit (C++ and the
// Python bindings) holds executables only through this interface and never
// names a backend.
//
// A call (Execute) validates its arguments, consumes the donated ones,
// enqueues the work on the device and returns output arrays defined by the
// events of that work; it may also run the work before returning (see
// runs_inline()). A call that fails consumes nothing: donated storage is
// given back to its array.
//
// Ownership: shared (std::shared_ptr) by compile caches and by the work in
// flight; the Device must outlive it. Thread-safety: every method may be
// called from any thread, concurrently (the const ones read state fixed at
// compile time).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "baton/compiler/buffer_assignment.h"
#include "baton/compiler/ir.h"
#include "baton/core/status.h"
#include "baton/runtime/array.h"

namespace baton {

class Device;

// One argument of a call: an array read in place, or donated storage taken
// from `array` (already consumed; given back if the call fails to start).
struct CallArgument {
  Array array;
  bool donated = false;
  ArrayImpl::Taken taken;  // when donated
};

class Executable {
 public:
  virtual ~Executable() = default;

  // Runs the program asynchronously. Arguments must match the program's
  // parameter types and live on this executable's device (the jit layer
  // checks that with a clear message). On error nothing is consumed:
  // donated storage is given back to its array.
  virtual Result<std::vector<Array>> Execute(
      std::vector<CallArgument>& args) = 0;

  // The program as compiled (after the backend's reordering for memory).
  virtual const compiler::Program& program() const = 0;
  // Bytes of arguments, outputs, aliasing and temporaries of one call.
  virtual const compiler::MemoryAnalysis& memory_analysis() const = 0;
  // Donated parameters whose storage no output can use.
  virtual const std::vector<int>& unusable_donations() const = 0;
  // Per parameter: it arrives as donated storage.
  virtual const std::vector<bool>& donated() const = 0;
  // Updates that copy their operand instead of writing over it, control-flow
  // regions included (bt.jit(require_in_place=True)).
  virtual std::vector<compiler::InPlaceMiss> in_place_misses() const = 0;
  // True when a call costs less on the calling thread than handed to
  // another one: Execute then does it there whenever the device's queue is
  // idle and the inputs are ready, and returns with the work done.
  virtual bool runs_inline() const = 0;
  // True when such an inline call is also shorter than handing a lock to
  // another thread and back, so a caller may keep a lock other threads wait
  // on (Python's GIL) across Execute. Implies runs_inline(); a longer
  // inline call should be made with such locks released.
  virtual bool keeps_caller_locks() const = 0;
  virtual Device* device() const = 0;
  // Appears in traces and error messages.
  virtual const std::string& name() const = 0;
  // The program after optimization, with each value's buffer and the memory
  // analysis.
  virtual std::string as_text() const = 0;
};

// Compiles `program` for `device` with the backend of the device's platform.
// `donated[i]`: parameter i arrives as donated storage. `name` appears in
// traces and error messages. `fresh_outputs` (per output, may be empty):
// outputs the caller gives storage of their own, never a donated
// parameter's. A platform without executables: Unimplemented.
Result<std::shared_ptr<Executable>> CompileExecutable(
    std::shared_ptr<const compiler::Program> program, std::vector<bool> donated,
    Device* device, std::string name, std::vector<bool> fresh_outputs = {});

}  // namespace baton
