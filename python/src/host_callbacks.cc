// Host callbacks from Python (bt.debug.callback, bt.debug.print): a
// compiler::HostCallback that calls a Python function, the private
// lax._host_callback that puts one into the program being traced, and
// effects_barrier, which waits until every callback enqueued so far has run.
//
// The Python function runs on the thread that runs the program (a device
// queue's worker, or the caller when a small program runs inline), holding
// the GIL only while it runs. It receives one numpy array per operand: a
// copy, so it may keep it. It may call back into baton -- call a jitted
// function, transfer, read the results (np.asarray): work it launches runs
// at once on its thread, inside the running program (runtime/work_queue.h).
// Waiting for work that can only run after the program (a computation
// launched later on the same device, effects_barrier()) would never end and
// raises RuntimeError instead.
//
// A Python exception in the function fails the execution that called it
// (its outputs raise RuntimeError naming the exception when read) and its
// traceback is printed to stderr at once, since a program whose outputs
// nobody reads would otherwise fail silently.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/host_callback.h"
#include "baton/runtime/client.h"
#include "conversions.h"
#include "errors.h"
#include "host_callbacks.h"
#include "lax_internal.h"
#include "module.h"
#include "platforms.h"
#include "trace_frames.h"

namespace baton::python {
namespace {

thread_local int callbacks_running = 0;  // on this thread, nested

bool InterpreterAlive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

class PyHostCallback final : public compiler::HostCallback {
 public:
  PyHostCallback(nb::object fn, std::string name)
      : fn_(std::move(fn)), name_(std::move(name)) {}

  // Programs die on whichever thread drops them last: the function is
  // released under the GIL (taken if this thread lacks it), or leaked when
  // another thread cannot take it any more (the interpreter is exiting).
  ~PyHostCallback() override {
    if (Py_IsInitialized() && PyGILState_Check()) {
      fn_.reset();
      return;
    }
    if (!InterpreterAlive()) {
      fn_.release();
      return;
    }
    nb::gil_scoped_acquire gil;
    fn_.reset();
  }

  Status Call(std::span<const compiler::HostCallbackOperand> operands)
      const override {
    if (!InterpreterAlive()) {
      return FailedPrecondition(name_ +
                                ": the Python interpreter is shutting down");
    }
    nb::gil_scoped_acquire gil;
    ++callbacks_running;
    struct Leave {
      ~Leave() { --callbacks_running; }
    } leave;
    try {
      nb::list args;
      for (const compiler::HostCallbackOperand& op : operands) {
        args.append(NumpyCopy(op.data, op.type->shape, op.type->dtype));
      }
      fn_(*args);
      return OkStatus();
    } catch (nb::python_error& e) {
      const std::string what =
          std::string(nb::type_name(e.type()).c_str()) + ": " +
          nb::str(e.value()).c_str();
      try {
        nb::module_::import_("traceback")
            .attr("print_exception")(e.type(), e.value(), e.traceback());
      } catch (nb::python_error&) {
        // Printing failed too; the status still says what happened.
      }
      return Internal(name_ + ": the callback raised " + what);
    } catch (const std::exception& e) {
      return Internal(name_ + ": the callback failed: " + e.what());
    }
  }

  std::string name() const override { return name_; }
  PyObject* function() const { return fn_.ptr(); }

 private:
  nb::object fn_;  // called with one numpy array per operand
  std::string name_;
};

}  // namespace

int VisitPythonCallbacks(const compiler::Program& program, visitproc visit,
                         void* arg) {
  for (const compiler::Instruction& inst : program.instructions()) {
    if (const auto* a = inst.attrs_if<compiler::HostCallbackAttrs>()) {
      if (const auto* py = dynamic_cast<const PyHostCallback*>(a->callback.get())) {
        Py_VISIT(py->function());
      }
    }
    for (const compiler::Program* r : compiler::Regions(inst.attrs)) {
      if (int v = VisitPythonCallbacks(*r, visit, arg)) return v;
    }
    if (const auto* c = inst.attrs_if<compiler::CallAttrs>()) {
      for (const auto& p : {c->body, c->rule, c->rule2}) {
        if (!p) continue;
        if (int v = VisitPythonCallbacks(*p, visit, arg)) return v;
      }
    }
  }
  return 0;
}

}  // namespace baton::python

void init_host_callbacks(nb::module_& m) {
  using namespace baton;
  using namespace baton::python;
  nb::module_ lax = nb::borrow<nb::module_>(m.attr("lax"));
  lax.def(
      "_host_callback",
      [](nb::object fn, const std::vector<nb::handle>& operands,
         const std::string& name) {
        if (!PyCallable_Check(fn.ptr())) {
          ThrowType(name + ": the callback must be callable, got a " +
                    nb::type_name(fn.type()).c_str());
        }
        auto frame = OpFrame(name.c_str(), operands);
        std::vector<compiler::Tracer> ops;
        for (nb::handle h : operands) {
          ops.push_back(ToTracer(h, frame, name.c_str()));
        }
        auto callback = std::make_shared<const PyHostCallback>(fn, name);
        frame->context().Emit(compiler::HostCallbackAttrs{std::move(callback)},
                              ops);
      },
      nb::arg("fn"), nb::arg("operands"), nb::arg("name"),
      "Appends a host callback to the innermost trace: each time the program "
      "runs, fn(*arrays) is called on the host with one numpy array per "
      "operand (a copy), in program order among the program's callbacks. "
      "Private: bt.debug.callback and bt.debug.print build on it.");
  m.def(
      "effects_barrier",
      [] {
        if (callbacks_running > 0) {
          ThrowPythonError(
              PyExc_RuntimeError,
              "effects_barrier: called from inside a host callback, which "
              "runs on the device queue it would wait for; call it from the "
              "code that runs the program instead");
        }
        Status s;
        {
          nb::gil_scoped_release release;  // callbacks need the GIL
          for (Device* d : AllDevices()) {
            s = d->Synchronize();
            if (!s.ok()) break;
          }
        }
        ThrowIfError(s);
      },
      "Waits until every computation enqueued so far, on every device, has "
      "finished -- and so every bt.debug.print and bt.debug.callback it "
      "makes has run (as jax.effects_barrier).");
}
