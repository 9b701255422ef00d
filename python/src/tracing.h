// Tracing Python functions: the state shared by baton._baton.lax (tracer.cc)
// and bt.jit (jit.cc).
//
// A TraceFrame is one trace in progress: the C++ TraceContext that records
// the program, the TraceScope that turns captured baton Arrays into hidden
// arguments, and the snapshots of captured host data. The frames being
// traced on a thread form a stack (innermost last); lax functions whose
// operands are not Tracers (creation ops, captured arrays) use the innermost.
//
// The Python class `Tracer` wraps a PyTracer: the C++ compiler::Tracer plus a
// shared reference to its frame. A Tracer that escapes its trace (stored in
// a global, returned through a side channel) keeps the frame's memory alive
// but any use raises an error saying so, never touches a finished context.
//
// Ownership: frames are shared by the thread's stack and the Tracers made in
// them; captured arrays and snapshots are dropped when the trace finishes.
// Thread-safety: a frame is used by the thread that traces it (with the GIL
// held); the stack is thread-local.
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "baton/compiler/literal.h"
#include "baton/compiler/tracer.h"
#include "baton/jit/jit.h"
#include "baton/runtime/device.h"

namespace nb = nanobind;

namespace baton::python {

class TraceFrame {
 public:
  // `device`: the device the program is compiled for (captured arrays must
  // live there). `fn_name` names the traced function in messages.
  TraceFrame(Device* device, std::string fn_name);
  TraceFrame(const TraceFrame&) = delete;
  TraceFrame& operator=(const TraceFrame&) = delete;

  compiler::TraceContext& context() { return ctx_; }
  Device* device() const { return device_; }
  const std::string& fn_name() const { return fn_name_; }
  bool active() const { return active_; }

  // A baton Array used in the function: a hidden argument (never a
  // constant). The same array captured twice is one argument.
  compiler::Tracer Capture(const Array& array);
  // Host data (a C-contiguous buffer) used in the function: a snapshot taken
  // now. The same unchanged host memory captured again shares the snapshot.
  compiler::Tracer Snapshot(const void* data, size_t nbytes, Shape shape,
                            DType dtype);

  // Ends the trace: the program with `outputs` as results. Afterwards the
  // frame is inactive and its Tracers unusable; the captured arrays (hidden
  // arguments, in order) are returned.
  compiler::Program Finish(const std::vector<compiler::Tracer>& outputs,
                           std::vector<Array>* captured);
  // Marks the frame finished without a program (the trace failed).
  void Abandon();

 private:
  struct SnapshotEntry {
    const void* data;
    size_t nbytes;
    std::shared_ptr<const compiler::Literal> literal;
  };
  compiler::TraceContext ctx_;
  std::unique_ptr<TraceScope> scope_;  // null once finished
  Device* device_;                     // not owned
  std::string fn_name_;
  bool active_ = true;
  std::vector<SnapshotEntry> snapshots_;
};

// One traced value as Python sees it. `weak`: it stands for a Python scalar
// (a jit argument passed as a Python bool/int/float, or a value computed
// only from such): like a scalar literal it takes the other operand's dtype
// (JAX's weak types), so `step(params_bf16, 0.1)` stays bfloat16.
struct PyTracer {
  std::shared_ptr<TraceFrame> frame;
  compiler::Tracer tracer;
  bool weak = false;
};

// The innermost frame being traced on this thread, or null.
const std::shared_ptr<TraceFrame>& CurrentFrame();
// True while some function is being traced on this thread.
bool IsTracing();

// Pushes a frame for the duration of a trace.
class FrameGuard {
 public:
  explicit FrameGuard(std::shared_ptr<TraceFrame> frame);
  ~FrameGuard();
  FrameGuard(const FrameGuard&) = delete;
  FrameGuard& operator=(const FrameGuard&) = delete;
};

// A new Python Tracer.
nb::object WrapTracer(const std::shared_ptr<TraceFrame>& frame,
                      compiler::Tracer t, bool weak = false);
// A Python bool, int or float (numpy scalars are not: they are typed).
bool IsPythonScalar(nb::handle h);
// A numpy array or numpy scalar.
bool IsNumpyData(nb::handle h);
// The C++ Tracer of a Python Tracer that belongs to an active trace; throws
// (naming `op`) for an escaped one. Null if `h` is not a Tracer.
const PyTracer* AsPyTracer(nb::handle h, const char* op);
// Converts any operand to a Tracer in `frame`: Tracers as they are, baton
// Arrays captured (hidden arguments), numpy data and Python scalars as
// snapshotted constants. TypeError (naming `op`) otherwise.
compiler::Tracer ToTracer(nb::handle h,
                          const std::shared_ptr<TraceFrame>& frame,
                          const char* op);

// Throws (naming `op`) if `t`'s trace has finished.
void CheckActive(const PyTracer& t, const char* op);
// A user's dtype argument (numpy dtype, name, numpy type, bool/int/float).
DType ToDType(nb::handle h, const char* op);

}  // namespace baton::python
