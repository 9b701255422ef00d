// bt.jit's call path (DESIGN section 3 "Compilation"): JitFunction and
// bt.clear_caches. Argument parsing is in jit_arguments.h, cache keys and
// output building in jit_cache.h, Lowered / Compiled in compiled.cc; the
// donation mode it reads is set by config.cc.
//
// A call runs here, in C++, from Python's tp_call slot:
//   1. split the arguments into static ones (hashed into the cache key) and
//      dynamic ones; flatten the dynamic ones into leaves (plain dicts,
//      lists and tuples in C++; other pytrees through optree);
//   2. validate before consuming anything: one device, no deleted arrays,
//      unused markers; numpy and scalar leaves are put on the device (a
//      snapshot);
//   3. look the signature up (structure, static args, per-leaf shape, dtype,
//      memory kind, donated, weak); on a miss trace the Python function with
//      Tracers (baton/_jit.py rebuilds the pytrees and flattens the outputs)
//      and compile it (CompileExecutable: the device's backend);
//   4. refuse or report donations (same array twice, unusable buffers:
//      DonationWarning naming each one, or DonationError in "error" mode),
//      take the donated storage, run; a failure gives everything back;
//   5. rebuild the output pytree (plain containers in C++).
// A jitted function called while another is being traced is inlined (the
// outer trace captures its arrays; nothing is consumed).
//
// Ownership: a JitFunction owns its cache (executables, captured arrays,
// constants through the executables); dropping it drops them, and
// bt.clear_caches() drops every cache. Thread-safety: calls may come from
// any thread; the cache has its own mutex, which is never held while Python
// code runs (so the garbage collector may traverse it at any time).
#include "allocation_stacks.h"
#include "baton/jit/jit.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "array_caster.h"
#include "baton/backend/executable.h"
#include "baton/compiler/passes.h"
#include "baton/core/config.h"
#include "baton/core/error.h"
#include "baton/jit/donation.h"
#include "baton/jit/jitted_call.h"
#include "errors.h"
#include "host_callbacks.h"
#include "jit_arguments.h"
#include "jit_cache.h"
#include "module.h"
#include "trace_frames.h"

namespace baton::python {
namespace {

class JitFunction;
std::mutex registry_mu;
std::set<JitFunction*>& Registry() {
  static auto* r = new std::set<JitFunction*>();
  return *r;
}

class JitFunction {
 public:
  JitFunction(nb::object fn, std::string name, std::vector<int> static_argnums,
              std::vector<std::string> static_argnames,
              std::vector<int> donate_argnums,
              std::vector<std::string> donate_argnames,
              std::vector<int> unverified_argnums, bool require_in_place)
      : fn_(std::move(fn)),
        name_(std::move(name)),
        require_in_place_(require_in_place) {
    rules_.name = name_;
    rules_.static_names = {static_argnames.begin(), static_argnames.end()};
    rules_.donate_names = {donate_argnames.begin(), donate_argnames.end()};
    rules_.unverified = std::move(unverified_argnums);
    for (int i : static_argnums) SetBit(rules_.static_pos, i);
    for (int i : donate_argnums) SetBit(rules_.donate_pos, i);
    std::lock_guard<std::mutex> lock(registry_mu);
    Registry().insert(this);
  }
  ~JitFunction() {
    {
      std::lock_guard<std::mutex> lock(registry_mu);
      Registry().erase(this);
    }
    ClearCache();
  }
  JitFunction(const JitFunction&) = delete;
  JitFunction& operator=(const JitFunction&) = delete;

  nb::object Call(nb::handle self, PyObject* args, PyObject* kwargs);
  // The entry for these arguments; compiled on a miss unless `compile` is
  // false (then null on a miss).
  std::shared_ptr<const Entry> Lower(nb::handle self, PyObject* args,
                                     PyObject* kwargs, bool compile = true);

  using Cache = std::unordered_multimap<uint64_t, std::shared_ptr<const Entry>>;

  // Empties the cache; the caller drops the result outside any lock (that
  // releases Python objects, which may run Python code).
  Cache TakeCache() {
    Cache dropped;
    std::lock_guard<std::mutex> lock(mu_);
    dropped.swap(cache_);
    return dropped;
  }
  void ClearCache() { Cache dropped = TakeCache(); }
  size_t cache_size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cache_.size();
  }
  const std::string& name() const { return name_; }
  const nb::object& fn() const { return fn_; }

  int Traverse(visitproc visit, void* arg) {
    Py_VISIT(fn_.ptr());
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [h, e] : cache_) {
      Py_VISIT(e->sig.static_key.ptr());
      Py_VISIT(e->out_treedef.ptr());
      for (const ArgTree& t : e->sig.trees) Py_VISIT(t.treedef.ptr());
      if (e->exe) {
        if (int v = VisitPythonCallbacks(e->exe->program(), visit, arg)) return v;
      }
    }
    return 0;
  }
  void Clear() {
    ClearCache();
    fn_ = nb::none();
  }

 private:
  static void SetBit(std::vector<bool>& v, int i) {
    if (i < 0) return;  // normalized by the Python layer
    if (static_cast<size_t>(i) >= v.size()) v.resize(i + 1, false);
    v[i] = true;
  }
  void Parse(nb::handle self, PyObject* args, PyObject* kwargs, bool for_call,
             Parsed& p) {
    ParseArguments(rules_, self, args, kwargs, for_call, p);
  }
  static std::string Describe(const ArgSpec& spec, const std::string& name) {
    return name + " (" + SpecText(spec) + ")";
  }
  std::shared_ptr<const Entry> Find(const Signature& sig);
  std::shared_ptr<const Entry> Compile(nb::handle self, PyObject* args,
                                       PyObject* kwargs, Parsed& p);

  nb::object fn_;
  std::string name_;
  bool require_in_place_ = false;  // bt.jit(require_in_place=True)
  void CheckInPlace(const Executable& exe) const;
  ArgumentRules rules_;
  mutable std::mutex mu_;
  Cache cache_;  // guarded by mu_
};

std::shared_ptr<const Entry> JitFunction::Find(const Signature& sig) {
  // Candidates with equal C++ parts under the lock; Python parts after.
  std::shared_ptr<const Entry> candidates[4];
  std::vector<std::shared_ptr<const Entry>> more;
  int n = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [b, e] = cache_.equal_range(sig.hash);
    for (auto it = b; it != e; ++it) {
      if (!it->second->sig.CppEqual(sig)) continue;
      if (n < 4) {
        candidates[n++] = it->second;
      } else {
        more.push_back(it->second);
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    if (candidates[i]->sig.PyEqual(sig)) return candidates[i];
  }
  for (auto& c : more) {
    if (c->sig.PyEqual(sig)) return c;
  }
  return nullptr;
}

// InPlaceError listing every update of `exe` that copies its operand.
void JitFunction::CheckInPlace(const Executable& exe) const {
  const std::vector<compiler::InPlaceMiss> misses = exe.in_place_misses();
  if (misses.empty()) return;
  std::string msg = name_ + ": require_in_place=True, but " +
                    std::to_string(misses.size()) +
                    (misses.size() == 1 ? " update needs a copy of its operand:"
                                        : " updates need a copy of their operand:");
  for (const compiler::InPlaceMiss& m : misses) {
    msg += "\n  - " + m.what + ": " + m.why;
  }
  msg +=
      "\nDonate the arguments that are updated (donate_argnums or "
      "bt.donate), and read an old value before its update, not after.";
  ThrowPythonError(InPlaceErrorType(), msg);
}

std::shared_ptr<const Entry> JitFunction::Compile(nb::handle self,
                                                  PyObject* args,
                                                  PyObject* kwargs, Parsed& p) {
  baton::python::AllocationStackScope stacks;  // while profiling
  auto frame = std::make_shared<TraceFrame>(p.device, name_);
  nb::list tracers;
  for (size_t i = 0; i < p.sig.specs.size(); ++i) {
    const ArgSpec& s = p.sig.specs[i];
    tracers.append(WrapTracer(frame,
                              frame->context().AddParameter(compiler::ValueType{
                                  s.shape, s.dtype, s.memory_kind}),
                              p.sig.weak[i]));
  }
  // The frame stays on this thread's stack until the trace is finished; if
  // anything raises, the guard abandons it.
  FrameGuard guard(frame);
  nb::object result = nb::borrow(JitPython().trace)(self, nb::handle(args),
                                                    Kwargs(kwargs), tracers);
  nb::handle outs = PyTuple_GET_ITEM(result.ptr(), 0);
  std::vector<compiler::Tracer> out_tracers;
  for (nb::handle o : nb::iter(outs)) {
    const PyTracer* t =
        nb::isinstance<PyTracer>(o) ? nb::inst_ptr<PyTracer>(o) : nullptr;
    if (t == nullptr || t->frame != frame) {
      Raise(PyExc_TypeError,
            name_ +
                ": an output is a Tracer of another trace (it escaped "
                "from an inner traced function); return values computed "
                "in this function");
    }
    out_tracers.push_back(t->tracer);
  }
  auto entry = std::make_shared<Entry>();
  entry->out_treedef = nb::borrow(PyTuple_GET_ITEM(result.ptr(), 1));
  nb::handle out_spec = PyTuple_GET_ITEM(result.ptr(), 2);
  if (!out_spec.is_none()) ParseOutNodes(out_spec, entry->out_nodes);
  compiler::Program traced = frame->Finish(out_tracers, &entry->captured);
  std::vector<bool> donated;
  for (const ArgSpec& s : p.sig.specs) donated.push_back(s.donated);
  Result<std::shared_ptr<Executable>> exe = Status();
  {
    nb::gil_scoped_release release;
    auto program =
        std::make_shared<const compiler::Program>(compiler::Optimize(traced));
    donated.resize(program->num_parameters(), false);  // hidden: never donated
    exe = CompileExecutable(program, donated, p.device, name_);
  }
  ThrowIfError(exe.status());
  if (require_in_place_) CheckInPlace(*exe.value());
  entry->exe = std::move(exe).value();
  // Another thread may have compiled the same signature meanwhile (tracing
  // runs Python code, which lets other threads in): keep the first.
  if (auto first = Find(p.sig)) return first;
  entry->sig = std::move(p.sig);
  {
    std::lock_guard<std::mutex> lock(mu_);
    cache_.emplace(entry->sig.hash, entry);
  }
  return entry;
}

std::shared_ptr<const Entry> JitFunction::Lower(nb::handle self, PyObject* args,
                                                PyObject* kwargs, bool compile) {
  Parsed p;
  Parse(self, args, kwargs, /*for_call=*/false, p);
  if (auto e = Find(p.sig)) return e;
  if (!compile) return nullptr;
  return Compile(self, args, kwargs, p);
}

nb::object JitFunction::Call(nb::handle self, PyObject* args,
                             PyObject* kwargs) {
  baton::python::ThrowIfForkedChild();  // before any runtime lock
  baton::python::AllocationStackScope stacks;  // while profiling
  if (IsTracing()) {
    // Inside another trace: inline (the outer trace captures arrays and
    // consumes nothing).
    return nb::borrow(JitPython().inline_call)(self, nb::handle(args),
                                               Kwargs(kwargs));
  }
  Parsed p;
  std::shared_ptr<const Entry> entry;
  try {
    // A call that fails before running consumes nothing: call-site markers
    // give their storage back.
    Parse(self, args, kwargs, /*for_call=*/true, p);
    if (p.sharded) {
      // Sharded arguments: the call partitions the program over their mesh
      // or runs it shard by shard (baton/_sharded_call.py).
      RestoreMarkers(p);
      return nb::borrow(JitPython().sharded_call)(self, nb::handle(args),
                                                  Kwargs(kwargs));
    }
    entry = Find(p.sig);
    if (!entry) entry = Compile(self, args, kwargs, p);
  } catch (nb::python_error& err) {
    RestoreMarkers(p, args, kwargs);  // parsed or not: the call failed
    throw;
  } catch (...) {
    RestoreMarkers(p, args, kwargs);
    throw;
  }
  const Entry& e = *entry;
  const size_t n = p.leaves.size();

  // Refuse, take donated storage, run: the jit's one sequence
  // (baton/jit/jitted_call.h); here only the leaves and their names.
  std::vector<JitArgument> call(n);
  for (size_t i = 0; i < n; ++i) {
    Leaf& l = p.leaves[i];
    call[i].array = l.array;
    call[i].donated = l.donated;
    call[i].fresh = l.kind == Leaf::Kind::kHost;
    if (l.kind == Leaf::Kind::kMarker) {
      call[i].taken_already = true;
      call[i].taken = std::move(l.taken);  // claimed when parsed
      l.taken = ArrayImpl::Taken{};
    }
  }
  std::optional<std::vector<std::string>> names;  // made on first use
  std::optional<nb::python_error> warning_raised;
  JittedCallHooks hooks;
  hooks.describe = [&](size_t i) {
    nb::gil_scoped_acquire gil;
    if (!names) names = LeafNames(self, args, kwargs);
    return "argument " + Describe(e.sig.specs[i], (*names)[i]);
  };
  hooks.name = [&](size_t i) {
    nb::gil_scoped_acquire gil;
    if (!names) names = LeafNames(self, args, kwargs);
    return (*names)[i];
  };
  hooks.warn = [&](const std::string& message) -> Status {
    nb::gil_scoped_acquire gil;
    try {
      nb::borrow(JitPython().warn)(message);
      return OkStatus();
    } catch (nb::python_error& err) {
      warning_raised.emplace(std::move(err));
      return Internal("the donation warning was raised as an error");
    }
  };
  Result<std::vector<Array>> out = Status();
  int failed_donation = -1;
  {
    // A brief program that runs inline finishes in less time than handing
    // the GIL over and back costs, and nothing on that path blocks; keep it.
    // Longer inline work (the caller's thread computing for up to a few
    // milliseconds) lets other Python threads run meanwhile.
    std::optional<nb::gil_scoped_release> release;
    if (!e.exe->keeps_caller_locks()) release.emplace();
    out = RunJittedCall(*e.exe, name_, call, e.captured, hooks,
                        &failed_donation);
  }
  if (warning_raised) throw std::move(*warning_raised);  // nothing consumed
  if (!out.ok()) {
    if (failed_donation >= 0) ThrowDonationError(out.status());
    ThrowIfError(out.status());
  }
  std::vector<Array>& outputs = out.value();
  if (!e.out_nodes.empty()) {
    size_t at = 0;
    return BuildOutput(e.out_nodes, &at, outputs);
  }
  nb::list leaves;
  for (Array& a : outputs) leaves.append(nb::cast(std::move(a)));
  return e.out_treedef.attr("unflatten")(leaves);
}

// Python exceptions from C++ ones, for the raw tp_call slot.
void SetErrorFromException() {
  try {
    throw;
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const baton::Error& e) {
    SetPythonError(Status(e.code(), e.what()), PyExc_RuntimeError);
  } catch (const nb::builtin_exception& e) {
    PyObject* type = PyExc_RuntimeError;
    switch (e.type()) {
      case nb::exception_type::type_error:
        type = PyExc_TypeError;
        break;
      case nb::exception_type::value_error:
        type = PyExc_ValueError;
        break;
      case nb::exception_type::index_error:
        type = PyExc_IndexError;
        break;
      default:
        break;
    }
    PyErr_SetString(type, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

PyObject* JitCall(PyObject* self, PyObject* args, PyObject* kwargs) {
  try {
    if (!nb::inst_ready(self)) {
      PyErr_SetString(PyExc_TypeError,
                      "this jitted function was not initialized");
      return nullptr;
    }
    JitFunction* f = nb::inst_ptr<JitFunction>(self);
    return f->Call(self, args, kwargs).release().ptr();
  } catch (...) {
    SetErrorFromException();
    return nullptr;
  }
}

int JitTraverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  return nb::inst_ptr<JitFunction>(self)->Traverse(visit, arg);
}

int JitClear(PyObject* self) {
  if (nb::inst_ready(self)) nb::inst_ptr<JitFunction>(self)->Clear();
  return 0;
}

PyType_Slot jit_slots[] = {
    {Py_tp_call, reinterpret_cast<void*>(JitCall)},
    {Py_tp_traverse, reinterpret_cast<void*>(JitTraverse)},
    {Py_tp_clear, reinterpret_cast<void*>(JitClear)},
    {0, nullptr}};

void ClearAllCaches() {
  std::vector<JitFunction*> fns;
  {
    std::lock_guard<std::mutex> lock(registry_mu);
    fns.assign(Registry().begin(), Registry().end());
  }
  // With the GIL held no JitFunction dies while caches are taken (no Python
  // code runs); they are dropped together afterwards.
  std::vector<JitFunction::Cache> dropped;
  for (JitFunction* f : fns) dropped.push_back(f->TakeCache());
}

}  // namespace
}  // namespace baton::python

void init_jit(nb::module_& m) {
  using namespace baton;
  using namespace baton::python;

  nb::class_<JitFunction>(
      m, "JitFunction", nb::type_slots(jit_slots),
      "What bt.jit returns (see bt.jit). Calls run through a C++ fast path.")
      .def(nb::init<nb::object, std::string, std::vector<int>,
                    std::vector<std::string>, std::vector<int>,
                    std::vector<std::string>, std::vector<int>, bool>(),
           nb::arg("fn"), nb::arg("name"), nb::arg("static_argnums"),
           nb::arg("static_argnames"), nb::arg("donate_argnums"),
           nb::arg("donate_argnames"), nb::arg("unverified_argnums"),
           nb::arg("require_in_place") = false)
      .def(
          "lower",
          [](nb::handle self, nb::args args, nb::kwargs kwargs) {
            JitFunction* f = nb::inst_ptr<JitFunction>(self);
            CompiledCall call = [](nb::handle fn,
                                   const std::shared_ptr<const Entry>& entry,
                                   nb::args a, nb::kwargs k) -> nb::object {
              JitFunction* jf = nb::inst_ptr<JitFunction>(fn);
              auto found = jf->Lower(fn, a.ptr(), k.ptr(), /*compile=*/false);
              if (found != entry) {
                throw nb::type_error(
                    (jf->name() + ": this Compiled was compiled for other "
                     "argument shapes, dtypes or static arguments than the "
                     "ones given; call the jitted function itself to "
                     "compile for them, or lower() it again.")
                        .c_str());
              }
              return jf->Call(fn, a.ptr(), k.ptr());
            };
            return Lowered{f->Lower(self, args.ptr(), kwargs.ptr()), f->name(),
                           nb::borrow(self), std::move(call)};
          },
          "Traces and compiles for these arguments without running anything "
          "or consuming any array (donate markers stay unused). Returns a "
          "Lowered; .compile() gives memory_analysis() and as_text().")
      .def_prop_ro("_fn", [](const JitFunction& f) { return f.fn(); })
      .def("_cache_size", &JitFunction::cache_size,
           "Distinct compiled signatures.")
      .def("_clear_cache", &JitFunction::ClearCache,
           "Drops the compiled programs (and what they keep alive).");

  m.def(
      "_jit_undonate",
      [](Donated& d) {
        if (d.taken.buffer) {
          d.array.impl()->Untake(std::move(d.taken));
          d.taken = ArrayImpl::Taken{};
        }
        return d.array;
      },
      nb::arg("marker"),
      "Gives an unused marker's storage back to its array and returns the "
      "array (a jitted function inlined into another trace consumes "
      "nothing).");
  m.def("_jit_clear_caches", &ClearAllCaches,
        "Drops the compiled programs of every jitted function.");
  m.def(
      "_jit_set_helpers",
      [](nb::object flatten, nb::object trace, nb::object inline_call,
         nb::object to_array, nb::object host_spec, nb::object leaf_names,
         nb::object warn, nb::object sharded_types,
         nb::object sharded_call) {
        // Kept for the life of the process (module-level functions).
        JitPython() = JitPythonFunctions{
            flatten.release().ptr(),     trace.release().ptr(),
            inline_call.release().ptr(), to_array.release().ptr(),
            host_spec.release().ptr(),   leaf_names.release().ptr(),
            warn.release().ptr(),        sharded_types.release().ptr(),
            sharded_call.release().ptr()};
      },
      "Installs baton/_jit.py's helpers (called once at import).");
}
