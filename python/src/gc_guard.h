// The Array type's deallocation hook for bt.array_garbage_collection_guard
// (gc_guard.cc says how arrays freed by the cycle collector are found).
#pragma once

#include <Python.h>

namespace baton::python {

// Wraps array_type's tp_dealloc (once, when the type is made).
void WrapArrayDealloc(PyObject* array_type);

}  // namespace baton::python
