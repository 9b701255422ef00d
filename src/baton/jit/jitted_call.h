// RunJittedCall: one call of a compiled function, from "the arguments are
// converted and the executable found" to "the outputs exist" -- the one
// implementation behind C++'s Jitted (jit.h) and Python's bt.jit
// (python/src/jit.cc), which only convert arguments and name them.
//
//  1. Refusals, before anything is taken (DonationRefused, nothing
//     consumed): an array donated twice, or donated and also passed
//     undonated, or donated while the function reads it as a captured
//     (closed-over) array; storage no output can reuse when the donation
//     mode is "error". A captured array consumed since tracing:
//     DeletedArray, with how to re-trace.
//  2. Takes the donated storage (call-site donations arrive taken). If a
//     take fails, every storage taken is given back and the error says
//     which argument could not be donated (*failed_donation names it).
//  3. Warns of donated storage no output can reuse -- only once every take
//     succeeded, so a donation refused for another reason never first
//     announces frees that do not happen; a warning turned into an error
//     consumes nothing.
//  4. Executes; on failure the executable gives every donation back.
//
// Thread-safety: any thread. The hooks are called on the calling thread
// (Python's acquire the GIL in them).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "baton/backend/executable.h"
#include "baton/core/status.h"
#include "baton/runtime/array.h"

namespace baton {

// One argument of the call.
struct JitArgument {
  Array array;
  bool donated = false;  // its storage goes to the call
  // A call-site donation whose storage the caller already took (`taken`);
  // given back to its array if the call fails.
  bool taken_already = false;
  ArrayImpl::Taken taken;
  // Made by the caller for this call only (host data put on the device):
  // it cannot alias another argument, and its unusable donation is not
  // reported.
  bool fresh = false;
};

// What only the caller knows.
struct JittedCallHooks {
  // Argument i as messages name it: "argument 0 (float32[3])", or the
  // Python leaf path. Called only to write an error or a warning.
  std::function<std::string(size_t)> describe;
  // Argument i by name alone, where a message points at a second argument
  // ("also passed undonated as y", "... as argument 1").
  std::function<std::string(size_t)> name;
  // Emits a warning (unusable donations). A failed status -- warnings made
  // errors -- refuses the call, consuming nothing.
  std::function<Status(const std::string&)> warn;
};

// Runs `exe` (compiled for these arguments; `captured` are its hidden
// arguments after them) as a call of the function named `name`. Call-site
// donations not consumed (any error) are given back to their arrays.
// `failed_donation` (may be null): set to the argument whose storage could
// not be taken, else -1.
Result<std::vector<Array>> RunJittedCall(Executable& exe,
                                         const std::string& name,
                                         std::vector<JitArgument>& args,
                                         const std::vector<Array>& captured,
                                         const JittedCallHooks& hooks,
                                         int* failed_donation = nullptr);

}  // namespace baton
