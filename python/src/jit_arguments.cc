// Turning a jitted call's arguments into leaves and a cache key (declared
// in jit_arguments.h).
#include "jit_arguments.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "array_caster.h"
#include "baton/core/error.h"
#include "baton/runtime/client.h"
#include "baton/runtime/transfer.h"
#include "conversions.h"
#include "donation.h"
#include "errors.h"
#include "trace_frames.h"

namespace baton::python {

JitPythonFunctions& JitPython() {
  static JitPythonFunctions functions;
  return functions;
}

nb::object Kwargs(PyObject* kwargs) {
  return kwargs ? nb::borrow(kwargs) : nb::object(nb::dict());
}

void Raise(PyObject* type, const std::string& msg) {
  PyErr_SetString(type, msg.c_str());
  throw nb::python_error();
}

void RestoreMarkers(Parsed& p) {
  for (Leaf& l : p.leaves) {
    if (l.kind == Leaf::Kind::kMarker && l.taken.buffer) {
      l.array.impl()->Untake(std::move(l.taken));
      l.taken = ArrayImpl::Taken{};
    }
  }
}

namespace {

// Markers parsing never claimed still hold their storage themselves.
void RestoreUnclaimed(nb::handle h, int depth) {
  if (depth > 64) return;  // a pathological nesting: what parsing refused
  if (nb::isinstance<Donated>(h)) {
    Donated* d = nb::inst_ptr<Donated>(h);
    if (d->taken.buffer) {
      d->array.impl()->Untake(std::move(d->taken));
      d->taken = ArrayImpl::Taken{};
    }
    return;
  }
  if (PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) {
    for (nb::handle c : h) RestoreUnclaimed(c, depth + 1);
  } else if (PyDict_Check(h.ptr())) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(h.ptr(), &pos, &key, &value)) {
      RestoreUnclaimed(value, depth + 1);
    }
  }
}

}  // namespace

void RestoreMarkers(Parsed& p, PyObject* args, PyObject* kwargs) {
  RestoreMarkers(p);
  if (args) RestoreUnclaimed(args, 0);
  if (kwargs) RestoreUnclaimed(kwargs, 0);
}

namespace {

// A Python bool / int / float / complex leaf as a 0-d bool / int32 /
// float32 / complex64 array
// on `device` (what bt.device_put makes of it). False for anything else and
// for ints that do not fit int32 (the Python path raises the error).
bool PutPythonScalar(nb::handle h, Device* device, Array* out) {
  if (!IsPythonScalar(h)) return false;
  PyObject* o = h.ptr();
  union {
    bool b;
    int32_t i;
    float f;
    float c[2];
  } v;
  DType dtype;
  if (PyBool_Check(o)) {
    v.b = o == Py_True;
    dtype = DType::kBool;
  } else if (PyLong_Check(o)) {
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0 || x < INT32_MIN || x > INT32_MAX) return false;
    v.i = static_cast<int32_t>(x);
    dtype = DType::kInt32;
  } else if (PyComplex_Check(o)) {
    v.c[0] = static_cast<float>(PyComplex_RealAsDouble(o));
    v.c[1] = static_cast<float>(PyComplex_ImagAsDouble(o));
    dtype = DType::kComplex64;
  } else {
    v.f = static_cast<float>(PyFloat_AS_DOUBLE(o));
    dtype = DType::kFloat32;
  }
  *out = ValueOrThrow(
      DevicePut(HostBuffer{&v, Shape{}, dtype}, device, MemoryKind::kDevice));
  return true;
}

void AddArgument(nb::handle arg, bool donated, Parsed& p) {
  auto classify = [&](nb::handle h) {
    Leaf l;
    l.obj = h;
    l.donated = donated;
    if (nb::isinstance<ArrayImpl>(h)) {
      l.kind = Leaf::Kind::kArray;
      l.array = nb::cast<Array>(h);
    } else if (nb::isinstance<Donated>(h)) {
      l.kind = Leaf::Kind::kMarker;
      l.marker = nb::inst_ptr<Donated>(h);
      l.array = l.marker->array;
      l.donated = true;
    } else {
      l.kind = Leaf::Kind::kHost;
      const int sharded = PyObject_IsInstance(h.ptr(), JitPython().sharded_types);
      if (sharded < 0) throw nb::python_error();
      p.sharded |= sharded == 1;
    }
    p.leaves.push_back(std::move(l));
  };
  if (nb::isinstance<ArrayImpl>(arg) || nb::isinstance<Donated>(arg)) {
    p.sig.trees.push_back(ArgTree{"*", nb::object()});
    classify(arg);
    return;
  }
  ArgTree tree;
  std::vector<nb::handle> fast;
  if (FastFlatten(arg, tree.code, fast, 0)) {
    p.sig.trees.push_back(std::move(tree));
    for (nb::handle h : fast) classify(h);
    return;
  }
  nb::object r = nb::borrow(JitPython().flatten)(
      arg, nb::none(), nb::arg("none_is_leaf") = false,
      nb::arg("namespace") = "baton");
  nb::object leaves = nb::borrow(PyTuple_GET_ITEM(r.ptr(), 0));
  p.sig.trees.push_back(
      ArgTree{std::string(), nb::borrow(PyTuple_GET_ITEM(r.ptr(), 1))});
  const Py_ssize_t n = PyList_GET_SIZE(leaves.ptr());
  for (Py_ssize_t i = 0; i < n; ++i) classify(PyList_GET_ITEM(leaves.ptr(), i));
  p.keep.push_back(std::move(leaves));
}

}  // namespace

std::vector<std::string> LeafNames(nb::handle self, PyObject* args,
                                   PyObject* kwargs) {
  nb::object names = nb::borrow(JitPython().leaf_names)(self, nb::handle(args),
                                                        Kwargs(kwargs));
  return nb::cast<std::vector<std::string>>(names);
}

namespace {

// Static arguments into the key (hashed), dynamic ones into leaves; returns
// the hash of the statics and the structure.
uint64_t SplitArguments(const ArgumentRules& rules, PyObject* args,
                        PyObject* kwargs, Parsed& p) {
  const std::string& fname = rules.name;
  const Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  for (int n : rules.unverified) {
    if (n >= nargs) {
      Raise(PyExc_ValueError,
            fname + ": static_argnums/donate_argnums contains " +
                std::to_string(n) + " but the call passes only " +
                std::to_string(nargs) +
                " positional argument(s); pass that argument positionally or "
                "fix the argnums");
    }
  }
  uint64_t h = 0;
  std::optional<nb::list> statics;  // made on first use: most calls have none
  bool any_static = false;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    nb::handle a = PyTuple_GET_ITEM(args, i);
    if (ArgumentRules::Bit(rules.static_pos, i)) {
      if (!statics) statics.emplace();
      statics->append(a);
      any_static = true;
      continue;
    }
    AddArgument(a, ArgumentRules::Bit(rules.donate_pos, i), p);
  }
  if (kwargs != nullptr && PyDict_GET_SIZE(kwargs) > 0) {
    std::vector<std::pair<std::string, nb::handle>> kws;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      kws.emplace_back(nb::cast<std::string>(nb::handle(key)), value);
    }
    std::sort(kws.begin(), kws.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [name, value] : kws) {
      if (rules.static_names.count(name)) {
        if (!statics) statics.emplace();
        statics->append(nb::make_tuple(name, value));
        any_static = true;
        continue;
      }
      p.sig.kw_names.push_back(name);
      AddArgument(value, rules.donate_names.count(name) > 0, p);
    }
  }
  if (any_static) {
    for (nb::handle s : *statics) {
      if (nb::isinstance<Donated>(s)) {
        Raise(PyExc_ValueError,
              fname +
                  ": a bt.donate() marker was passed as a static "
                  "argument; static arguments are hashed, not "
                  "donated. Pass it in a non-static position.");
      }
    }
    p.sig.static_key = nb::tuple(*statics);
    const Py_hash_t sh = PyObject_Hash(p.sig.static_key.ptr());
    if (sh == -1) {
      PyErr_Clear();
      for (nb::handle s : *statics) {
        if (PyObject_Hash(s.ptr()) == -1) {
          PyErr_Clear();
          Raise(PyExc_TypeError,
                fname + ": static arguments must be hashable, but got a " +
                    std::string(nb::type_name(s.type()).c_str()) + " (" +
                    std::string(nb::repr(s).c_str()).substr(0, 80) +
                    "). Make it hashable (a tuple instead of a list) or pass "
                    "it as a dynamic argument.");
        }
      }
      throw nb::python_error();
    }
    h = Mix(h, static_cast<uint64_t>(sh));
  }
  for (const ArgTree& t : p.sig.trees) {
    if (!t.treedef.is_valid()) {
      h = Mix(h, std::hash<std::string>()(t.code));
      continue;
    }
    const Py_hash_t th = PyObject_Hash(t.treedef.ptr());
    if (th == -1) throw nb::python_error();
    h = Mix(h, static_cast<uint64_t>(th));
  }
  for (const std::string& k : p.sig.kw_names)
    h = Mix(h, std::hash<std::string>()(k));

  return h;
}

// One device, no deleted arrays, unused markers -- before anything is
// consumed. Sets p.device.
void CheckLeaves(const ArgumentRules& rules, nb::handle self, PyObject* args,
                 PyObject* kwargs, bool for_call, Parsed& p) {
  const std::string& fname = rules.name;
  const Leaf* first = nullptr;
  for (size_t i = 0; i < p.leaves.size(); ++i) {
    Leaf& l = p.leaves[i];
    if (l.kind == Leaf::Kind::kHost) continue;
    if (l.kind == Leaf::Kind::kMarker) {
      for (size_t j = 0; j < i; ++j) {
        if (p.leaves[j].kind == Leaf::Kind::kMarker &&
            p.leaves[j].marker == l.marker) {
          auto names = LeafNames(self, args, kwargs);
          Raise(PyExc_ValueError,
                fname + ": arguments " + names[j] + " and " + names[i] +
                    " are the same bt.donate() marker; a donated array can "
                    "be passed once. Nothing was consumed.");
        }
      }
      if (!Holds(*l.marker)) {
        Raise(PyExc_ValueError, fname + ": argument " +
                                    LeafNames(self, args, kwargs)[i] + ": " +
                                    UnusableMarkerMessage(*l.marker));
      }
      if (for_call) {
        // The claim: check and move in one step under the GIL, so of
        // several calls receiving this marker at once exactly one gets it.
        l.taken = std::move(l.marker->taken);
        l.marker->taken = ArrayImpl::Taken{};
      }
    }
    if (for_call && l.kind == Leaf::Kind::kArray && l.array.IsDeleted()) {
      const Status s = l.array.impl()->DeletedError();
      const Status named(s.code(), fname + ": argument " +
                                       LeafNames(self, args, kwargs)[i] + ": " +
                                       s.message());
      if (l.donated) ThrowDonationError(named);
      ThrowIfError(named);
    }
    if (first == nullptr) {
      first = &l;
    } else if (l.array.device() != first->array.device()) {
      auto names = LeafNames(self, args, kwargs);
      const size_t j = first - p.leaves.data();
      Raise(PyExc_ValueError,
            fname + ": arguments are on different devices: " + names[j] +
                " is on " + first->array.device()->ToString() + " but " +
                names[i] + " is on " + l.array.device()->ToString() +
                ". Move them to one device with bt.device_put first. "
                "Nothing was consumed.");
    }
  }
  p.device = first ? first->array.device() : DefaultDevice();
  p.sig.device_id = p.device->id();
}

// Per-leaf specs (and their hash); for a call, numpy and scalar leaves
// become device arrays first.
uint64_t LeafSpecs(const ArgumentRules& rules, nb::handle self, PyObject* args,
                   PyObject* kwargs, bool for_call, Parsed& p) {
  const std::string& fname = rules.name;
  uint64_t h = 0;
  p.sig.specs.reserve(p.leaves.size());
  nb::object device_obj;
  for (size_t i = 0; i < p.leaves.size(); ++i) {
    Leaf& l = p.leaves[i];
    ArgSpec spec;
    if (l.kind == Leaf::Kind::kHost && for_call &&
        PutPythonScalar(l.obj, p.device, &l.array)) {
      // A Python scalar: put here, without the Python transfer path.
    } else if (l.kind == Leaf::Kind::kHost && for_call) {
      if (!device_obj.is_valid()) {
        device_obj = nb::cast(p.device, nb::rv_policy::reference);
      }
      nb::object a;
      try {
        a = nb::borrow(JitPython().to_array)(l.obj, device_obj);
      } catch (nb::python_error& e) {
        if (!e.matches(PyExc_TypeError)) throw;
        const std::string what = nb::str(e.value()).c_str();
        Raise(PyExc_TypeError,
              fname + ": argument " + LeafNames(self, args, kwargs)[i] +
                  " is not an array (" + what +
                  "). Pass arrays, numpy data or scalars, or mark the "
                  "argument static (static_argnums / static_argnames).");
      }
      l.array = nb::cast<Array>(a);
      p.keep.push_back(std::move(a));
    }
    if (l.kind == Leaf::Kind::kHost && !for_call) {
      nb::object s;
      try {
        s = nb::borrow(JitPython().host_spec)(l.obj);
      } catch (nb::python_error& e) {
        if (!e.matches(PyExc_TypeError)) throw;
        const std::string what = nb::str(e.value()).c_str();
        Raise(PyExc_TypeError, fname + ": argument " +
                                   LeafNames(self, args, kwargs)[i] +
                                   " is not an array (" + what + ")");
      }
      spec.shape = Shape(nb::cast<std::vector<int64_t>>(
          nb::handle(PyTuple_GET_ITEM(s.ptr(), 0))));
      spec.dtype = DTypeFromName(
          nb::cast<std::string>(nb::handle(PyTuple_GET_ITEM(s.ptr(), 1))));
      spec.memory_kind = MemoryKind::kDevice;
    } else {
      spec.shape = l.array.shape();
      spec.dtype = l.array.dtype();
      spec.memory_kind = l.array.memory_kind();
    }
    spec.donated = l.donated;
    const bool weak = l.kind == Leaf::Kind::kHost && IsPythonScalar(l.obj);
    p.sig.weak.push_back(weak);
    uint64_t sh =
        Mix(static_cast<uint64_t>(spec.dtype) * 2 + weak,
            static_cast<uint64_t>(spec.memory_kind) * 2 + spec.donated);
    for (int64_t d : spec.shape.dims()) sh = Mix(sh, static_cast<uint64_t>(d));
    h = Mix(h, Mix(sh, spec.shape.rank()));
    p.sig.specs.push_back(std::move(spec));
  }
  return h;
}

}  // namespace

void ParseArguments(const ArgumentRules& rules, nb::handle self, PyObject* args,
                    PyObject* kwargs, bool for_call, Parsed& p) {
  uint64_t h = SplitArguments(rules, args, kwargs, p);
  if (p.sharded && for_call) return;  // the call is sharded_call's
  CheckLeaves(rules, self, args, kwargs, for_call, p);
  h = Mix(h, static_cast<uint64_t>(p.sig.device_id));
  h = Mix(h, LeafSpecs(rules, self, args, kwargs, for_call, p));
  p.sig.x64 = EnableX64();
  p.sig.hash = Mix(h, static_cast<uint64_t>(p.sig.x64));
}

}  // namespace baton::python
