// Tracing Python functions: the state shared by baton._baton.lax (tracer_class.cc)
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
// Sub-traces (bt.grad, bt.vmap, bt.checkpoint, custom rules: transforms.cc)
// are frames nested in the frame that was innermost when they started (their
// parent). They lift: a Tracer of an enclosing frame used inside becomes a
// new parameter of the sub-program (through every frame in between), and so
// does a baton Array; Finish returns those outer values in parameter order,
// after the explicit parameters, so the caller passes them when it applies
// the program. A jit trace is a root frame (no parent): arrays become hidden
// arguments of the executable instead.
//
// Ownership: frames are shared by the thread's stack and the Tracers made in
// them; a sub-frame holds its parent (and the outer values it lifted) until
// it finishes; captured arrays and snapshots are dropped when the trace
// finishes. Thread-safety: a frame is used by the thread that traces it (with
// the GIL held); the stack is thread-local.
#pragma once

#include <nanobind/nanobind.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/compiler/literal.h"
#include "baton/compiler/tracer.h"
#include "baton/jit/jit.h"
#include "baton/runtime/device.h"

namespace nb = nanobind;

namespace baton::python {

struct PyTracer;

class TraceFrame {
 public:
  // A root frame (bt.jit). `device`: the device the program is compiled for
  // (captured arrays must live there). `fn_name` names the traced function
  // in messages.
  TraceFrame(Device* device, std::string fn_name);
  // A sub-trace nested in `parent` (null outside any trace: then it still
  // lifts arrays into parameters), compiling for `device`.
  TraceFrame(std::shared_ptr<TraceFrame> parent, Device* device,
             std::string fn_name);
  TraceFrame(const TraceFrame&) = delete;
  TraceFrame& operator=(const TraceFrame&) = delete;

  compiler::TraceContext& context() { return ctx_; }
  Device* device() const { return device_; }
  const std::string& fn_name() const { return fn_name_; }
  bool active() const { return active_; }
  // The enclosing frame of a sub-trace (null for roots).
  const std::shared_ptr<TraceFrame>& parent() const { return parent_; }
  // True for sub-traces: outer values become parameters.
  bool lifts() const { return lifts_; }
  // True when `outer` is this frame or encloses it (through parents).
  bool IsWithin(const TraceFrame* outer) const;

  // A baton Array used in the function: a hidden argument (never a
  // constant); in a sub-trace, a parameter. The same array captured twice
  // is one argument.
  compiler::Tracer Capture(const Array& array);
  // A Tracer of an enclosing frame (IsWithin(outer.frame)) as a value of
  // this one: a parameter, added once per outer value.
  compiler::Tracer Lift(const PyTracer& outer);
  // Host data (a C-contiguous buffer) used in the function: a snapshot taken
  // now. The same unchanged host memory captured again shares the snapshot.
  compiler::Tracer Snapshot(const void* data, size_t nbytes, Shape shape,
                            DType dtype);

  // Ends the trace: the program with `outputs` as results. Afterwards the
  // frame is inactive and its Tracers unusable; the captured arrays (hidden
  // arguments, in order) are returned.
  compiler::Program Finish(const std::vector<compiler::Tracer>& outputs,
                           std::vector<Array>* captured);
  // Ends a sub-trace: the program with `outputs` as results; `lifted`
  // receives the outer values (Python Tracers of the parent frame, or
  // Arrays) that its parameters after the explicit ones stand for, in order.
  compiler::Program FinishSubtrace(const std::vector<compiler::Tracer>& outputs,
                                   std::vector<nb::object>* lifted);
  // Marks the frame finished without a program (the trace failed).
  void Abandon();

  // What parameter `param` stands for, where the caller knows it: an Array,
  // host data, or a Tracer of the parent frame. bt.grad and its siblings
  // called outside bt.jit bind their arguments, so a traced value can be
  // made concrete (bool(x) on a value: baton/_concrete.py); lifted
  // parameters and captured arrays are bound as they are added.
  void Bind(compiler::ValueId param, nb::object value);
  // The bound value, or None where nothing is known.
  nb::object Bound(compiler::ValueId param) const;

 private:
  struct SnapshotEntry {
    const void* data;
    size_t nbytes;
    std::shared_ptr<const compiler::Literal> literal;
  };
  compiler::Tracer AddLifted(const compiler::ValueType& type, nb::object outer);

  compiler::TraceContext ctx_;
  std::unique_ptr<TraceScope> scope_;   // roots only; null once finished
  std::shared_ptr<TraceFrame> parent_;  // sub-traces; released at the end
  bool lifts_ = false;
  Device* device_;  // not owned
  std::string fn_name_;
  bool active_ = true;
  std::vector<SnapshotEntry> snapshots_;
  // Sub-traces: the outer value of each lifted parameter, in order, and
  // where each outer value (frame and ValueId, or array) was lifted to.
  std::vector<nb::object> lifted_;
  std::map<std::pair<const TraceFrame*, compiler::ValueId>, compiler::Tracer>
      lifted_values_;
  std::map<const void*, compiler::Tracer> lifted_arrays_;
  std::map<compiler::ValueId, nb::object> bound_;
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
// Converts any operand to a Tracer in `frame`: its Tracers as they are,
// Tracers of enclosing frames lifted (TraceFrame::Lift), baton Arrays
// captured (hidden arguments), numpy data and Python scalars as
// snapshotted constants. TypeError (naming `op`) otherwise; ValueError for
// a Tracer of an unrelated trace.
compiler::Tracer ToTracer(nb::handle h,
                          const std::shared_ptr<TraceFrame>& frame,
                          const char* op);

// The value of `t` as a numpy array when it can be computed from the values
// its trace's parameters are bound to (TraceFrame::Bind; concrete.cc), None
// otherwise (under bt.jit, inside vmap, or once the trace has finished).
nb::object ConcreteValue(const PyTracer& t);

// Throws (naming `op`) if `t`'s trace has finished.
void CheckActive(const PyTracer& t, const char* op);
// `t` itself while its trace is active; once it has finished, the value a
// substitution in force on this thread stands in for it with (see
// SubstitutionGuard), else throws as CheckActive.
const PyTracer& Resolve(const PyTracer& t, const char* op);

// While alive, each Tracer of `finished` (Tracers of a trace that has
// finished, on this thread) stands for the Tracer at the same position of
// `values` wherever an op uses it (AsPyTracer / Resolve): a function traced
// once in a trace that has since finished can be traced again elsewhere
// with the values it closed over rebound (baton/_batching_hook.py's rules
// run a vmapped body's grad over the batched values it captured). Holds
// references to both lists; guards nest, the innermost first.
class SubstitutionGuard {
 public:
  SubstitutionGuard(nb::list finished, nb::list values);
  ~SubstitutionGuard();
  SubstitutionGuard(const SubstitutionGuard&) = delete;
  SubstitutionGuard& operator=(const SubstitutionGuard&) = delete;

 private:
  nb::list finished_;
  nb::list values_;
};
// A user's dtype argument (numpy dtype, name, numpy type, bool/int/float).
DType ToDType(nb::handle h, const char* op);

}  // namespace baton::python
