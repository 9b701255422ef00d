// The cache of a jitted function (jit.cc): what a compiled program is keyed
// by (Signature), what it keeps (Entry), and how arguments and outputs made
// of plain containers are flattened / rebuilt without optree.
//
// Ownership: plain values holding Python objects (treedefs, static
// arguments, dict keys): create, compare and destroy them with the GIL held.
// Signature::CppEqual runs no Python code (so it may run under a lock);
// PyEqual may.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/backend/executable.h"
#include "baton/jit/jit.h"

namespace nb = nanobind;

namespace baton::python {

uint64_t Mix(uint64_t h, uint64_t v);
// "float32(4, 3)" (", pinned_host" when not device memory).
std::string SpecText(const ArgSpec& s);

// The structure of one dynamic argument: a code for plain containers
// (dicts with str keys, lists, tuples, None) of array-like leaves, built in
// C++ ("*" for a bare leaf); otherwise optree's treedef (namedtuples,
// registered dataclasses, ...), with `code` empty.
struct ArgTree {
  std::string code;
  nb::object treedef;
  bool operator==(const ArgTree& o) const {
    return code == o.code && treedef.is_valid() == o.treedef.is_valid();
  }
};

// What a compiled program depends on: the cache key.
struct Signature {
  int device_id = 0;
  // bt.config "enable_x64" when traced: it decides the dtypes of captured
  // numpy constants, so a program traced under one setting is not reused
  // under the other.
  bool x64 = false;
  std::vector<ArgTree> trees;         // per dynamic argument
  std::vector<std::string> kw_names;  // dynamic keyword arguments, sorted
  nb::object static_key;              // tuple of static values, or null
  std::vector<ArgSpec> specs;         // per leaf
  // Per leaf: passed as a Python scalar (a weakly typed Tracer when traced).
  std::vector<bool> weak;
  uint64_t hash = 0;

  // The parts compared without running Python code.
  bool CppEqual(const Signature& o) const {
    if (hash != o.hash || device_id != o.device_id || x64 != o.x64 ||
        specs != o.specs ||
        weak != o.weak || kw_names != o.kw_names || trees != o.trees ||
        static_key.is_valid() != o.static_key.is_valid()) {
      return false;
    }
    return true;
  }
  // The rest (may run Python __eq__, so never under a lock).
  bool PyEqual(const Signature& o) const {
    auto eq = [](const nb::object& a, const nb::object& b) {
      if (a.ptr() == b.ptr()) return true;
      const int r = PyObject_RichCompareBool(a.ptr(), b.ptr(), Py_EQ);
      if (r < 0) throw nb::python_error();
      return r == 1;
    };
    for (size_t i = 0; i < trees.size(); ++i) {
      if (trees[i].treedef.is_valid() &&
          !eq(trees[i].treedef, o.trees[i].treedef)) {
        return false;
      }
    }
    return !static_key.is_valid() || eq(static_key, o.static_key);
  }
};

// How to build the output from the result arrays without optree, for
// plain containers: nodes in pre-order; a dict keeps the function's key
// order (`keys`), its children are the next nodes.
struct OutNode {
  char kind;        // '*' leaf, 'n' None, 'l' list, 't' tuple, 'd' dict
  int leaf = -1;    // '*': index of the result array
  int size = 0;     // containers: number of children
  nb::object keys;  // 'd': tuple of keys, in the order of the children
};

// One compiled signature.
struct Entry {
  Signature sig;
  std::shared_ptr<Executable> exe;
  std::vector<Array> captured;  // hidden arguments, in order
  nb::object out_treedef;
  std::vector<OutNode> out_nodes;  // empty: build with out_treedef
};

// Appends the structure code of `h` to `code` and its leaves to `leaves` if
// it is made of plain containers whose leaves are arrays, markers, Python
// scalars or numpy data -- the cases where the order is known without
// optree (dict leaves in sorted key order, as optree flattens them). False
// otherwise (the caller discards what was appended).
bool FastFlatten(nb::handle h, std::string& code,
                 std::vector<nb::handle>& leaves, int depth = 0);
// Parses the output description baton/_jit.py gives for plain containers
// (nested tuples: ('*', i), ('n',), ('l', [c...]), ('t', [c...]),
// ('d', (keys...), [c...])) into pre-ordered nodes.
void ParseOutNodes(nb::handle spec, std::vector<OutNode>& nodes);
// Builds the output from `outs` following nodes[*at...]; advances *at.
nb::object BuildOutput(const std::vector<OutNode>& nodes, size_t* at,
                       std::vector<Array>& outs);

// Calls the jitted function `fn` if (args, kwargs) have the signature of
// `entry`; raises TypeError naming both signatures otherwise.
using CompiledCall = std::function<nb::object(
    nb::handle fn, const std::shared_ptr<const Entry>&, nb::args, nb::kwargs)>;

// What lower() and compile() return: one compiled signature of the jitted
// function `fn`, which they hold. That reference may close a cycle (a
// module's globals hold the Compiled, and `fn`'s function has those
// globals), so the classes tell the garbage collector about it (tp_traverse,
// tp_clear in compiled.cc); otherwise such a cycle lives past interpreter
// exit and nanobind reports leaked instances, types and functions. `call`
// captures nothing. The entry's Python objects are the jitted function's
// cache's to report, not these.
struct Compiled {
  std::shared_ptr<const Entry> entry;
  std::string fn_name;
  nb::object fn;
  CompiledCall call;
};
struct Lowered {
  std::shared_ptr<const Entry> entry;
  std::string fn_name;
  nb::object fn;
  CompiledCall call;
};

}  // namespace baton::python
