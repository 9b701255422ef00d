// Classes whose objects only baton's C++ side creates (Array, Donated,
// Device, Tracer, ...). Python's `Cls()` and `Cls.__new__(Cls)` raise a
// TypeError that says how such objects are obtained, instead of making an
// uninitialized instance that would crash the first method that used it.
// nanobind itself never calls tp_new (it allocates instances directly), so
// objects made by baton are unaffected.
#pragma once

#include <Python.h>

namespace baton::python {

// tp_new of every such class.
PyObject* RefuseNew(PyTypeObject* type, PyObject* args, PyObject* kwargs);

// The tp_new slot, for classes that also need other slots.
#define BATON_REFUSE_NEW_SLOT \
  { Py_tp_new, reinterpret_cast<void*>(&::baton::python::RefuseNew) }

// Slots of a class that needs nothing else: pass as nb::type_slots(...).
extern PyType_Slot kNotConstructibleSlots[];

}  // namespace baton::python
