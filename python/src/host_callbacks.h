// What other files need of host_callbacks.cc: letting Python's garbage
// collector see the functions that compiled programs hold.
//
// A compiled program holds its callbacks' Python functions from C++, where
// the collector cannot look: a jitted function whose print calls a function
// of the same module (module -> jitted -> cache -> program -> callback ->
// module) would be a cycle it never frees. Owners of programs visit them in
// their tp_traverse with this.
#pragma once

#include <Python.h>

#include "baton/compiler/ir.h"

namespace baton::python {

// Py_VISITs the function of every Python host callback in `program` and the
// programs nested in it; returns visit's first nonzero result, else 0.
int VisitPythonCallbacks(const compiler::Program& program, visitproc visit,
                         void* arg);

}  // namespace baton::python
