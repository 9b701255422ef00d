// HostCallback: a function on the host that a running program calls
// (op_attrs.h HostCallbackAttrs; bt.debug.print and bt.debug.callback).
//
// The backends and the reference interpreter call Call() once each time the
// op runs, from whichever thread runs the program, with the operands'
// values in dense row-major storage that is valid only during the call (an
// implementation that keeps a value copies it). Calls of one program come in
// program order (effects.h); executions on one device come in the order they
// were enqueued.
//
// An error from Call() fails the execution that made it: the program's
// outputs carry the error, as for any failed execution, and later ops of
// that execution do not run.
//
// Ownership: held by the instructions that call it (std::shared_ptr), so it
// lives as long as the longest-lived program or executable that calls it;
// its destructor may run on any thread. Thread-safety: Call() may run on
// several threads at once when executions on different devices overlap.
#pragma once

#include <span>
#include <string>

#include "baton/compiler/value_type.h"
#include "baton/core/status.h"

namespace baton::compiler {

// One operand's value as the callback sees it.
struct HostCallbackOperand {
  const void* data = nullptr;  // dense row-major, valid during the call
  const ValueType* type = nullptr;
};

class HostCallback {
 public:
  virtual ~HostCallback() = default;
  virtual Status Call(std::span<const HostCallbackOperand> operands) const = 0;
  // What it is, for printed programs and messages: "debug.print".
  virtual std::string name() const = 0;
};

}  // namespace baton::compiler
