// How a jitted call's arguments become leaves and a cache key (jit.cc):
// static arguments are hashed, dynamic ones flattened (plain containers in
// C++, other pytrees through optree), checked (one device, no deleted
// arrays, unused markers) and, for a call, put on the device when they are
// numpy data or scalars.
//
// Ownership: a Parsed borrows the call's argument objects (the caller keeps
// args / kwargs alive) and owns what it created (flattened lists, converted
// arrays). Use with the GIL held.
#pragma once

#include <nanobind/nanobind.h>

#include <set>
#include <string>
#include <vector>

#include "baton/jit/donation.h"
#include "jit_cache.h"

namespace nb = nanobind;

namespace baton::python {

// The functions of baton/_jit.py the jit calls back into (installed once at
// import by _jit_set_helpers; never freed).
struct JitPythonFunctions {
  PyObject* flatten = nullptr;      // optree.tree_flatten
  PyObject* trace = nullptr;        // (jitted, args, kwargs, tracers)
                                    //   -> (outs, treedef, out_spec)
  PyObject* inline_call = nullptr;  // (jitted, args, kwargs) -> result
  PyObject* to_array = nullptr;     // (leaf, device) -> Array
  PyObject* host_spec = nullptr;    // leaf -> (shape tuple, dtype name)
  PyObject* leaf_names = nullptr;   // (jitted, args, kwargs) -> [str]
  PyObject* warn = nullptr;         // message -> None (DonationWarning)
  // The sharded array types (baton/_sharded_array.py: ShardedArray and
  // its donation marker), a tuple: a call with a leaf of one of them goes
  // to sharded_call (jitted, args, kwargs) -> result (baton/_sharded_call.py).
  PyObject* sharded_types = nullptr;
  PyObject* sharded_call = nullptr;
};
JitPythonFunctions& JitPython();

// The call's keyword arguments as a dict (an empty one for none).
nb::object Kwargs(PyObject* kwargs);
// Sets a Python exception and throws it.
[[noreturn]] void Raise(PyObject* type, const std::string& msg);

// Which arguments are static or donated (bt.jit's options, already
// validated and cross-filled by baton/_jit.py).
struct ArgumentRules {
  std::string name;  // the function's, for messages
  std::vector<bool> static_pos, donate_pos;
  std::set<std::string> static_names, donate_names;
  // argnums the signature could not confirm: checked against each call.
  std::vector<int> unverified;

  static bool Bit(const std::vector<bool>& v, size_t i) {
    return i < v.size() && v[i];
  }
};

// One dynamic leaf of a call.
struct Leaf {
  enum class Kind : uint8_t { kArray, kMarker, kHost };
  nb::handle obj;  // borrowed: alive through the call's args / kept lists
  Kind kind = Kind::kArray;
  bool donated = false;
  Array array;                // kArray; kMarker: its array; kHost: converted
  Donated* marker = nullptr;  // kMarker
  // kMarker, parsed for a call: the storage this call claimed from the
  // marker (see donation.h); given back to the array if the call fails.
  ArrayImpl::Taken taken;
};

struct Parsed {
  std::vector<Leaf> leaves;
  std::vector<nb::object> keep;  // flattened leaf lists, converted arrays
  Signature sig;
  Device* device = nullptr;
  // A leaf is a sharded array (JitPythonFunctions::sharded_types): parsed
  // for a call, nothing past the split was done; the call is sharded_call's.
  bool sharded = false;
};

// Fills `p` from the call's arguments. `for_call`: deleted arrays are
// refused and numpy / scalar leaves are put on the device -- unless a leaf
// is sharded (p.sharded: the leaves are only split); otherwise (lower())
// only their shapes and dtypes are read. Raises (nothing
// consumed; the caller restores markers already listed in p.leaves).
void ParseArguments(const ArgumentRules& rules, nb::handle self, PyObject* args,
                    PyObject* kwargs, bool for_call, Parsed& p);

// How the user writes each dynamic leaf: "x", "state.u", "params['w'][0]".
std::vector<std::string> LeafNames(nb::handle self, PyObject* args,
                                   PyObject* kwargs);

// Gives the storage call-site markers handed to this call back to their
// arrays (nothing consumed; the markers stay used): the parsed ones, and
// those in `args`/`kwargs` (tuples, lists, dicts) that parsing had not
// reached when it failed -- a deleted argument before `bt.donate(y)` must not
// leave y consumed.
void RestoreMarkers(Parsed& p);
void RestoreMarkers(Parsed& p, PyObject* args, PyObject* kwargs);

}  // namespace baton::python
