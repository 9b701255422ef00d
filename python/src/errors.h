// The Python exception classes of baton (created in errors.cc, owned by the
// module) and the translation of baton's C++ exceptions into them.
#pragma once

#include <nanobind/nanobind.h>

#include <string>

#include "baton/core/status.h"

namespace baton::python {

// bt.DeletedArrayError (RuntimeError) and bt.DonationError (ValueError).
PyObject* DeletedArrayErrorType();
PyObject* DonationErrorType();
// Raised when a deleted array is donated: both a DeletedArrayError (the
// array is consumed) and a DonationError (a donation refused, nothing
// consumed), so that either `except` clause catches it.
PyObject* DeletedArrayDonationErrorType();

// The JAX error classes for a Tracer used where a concrete value is needed
// (bt.errors; DESIGN 5.4), all TypeErrors: ConcretizationTypeError (int(),
// float()), its subclass TracerBoolConversionError (bool()),
// TracerIntegerConversionError (__index__), TracerArrayConversionError
// (numpy conversion). Owned by the module.
PyObject* ConcretizationTypeErrorType();
PyObject* TracerBoolConversionErrorType();
// bt.InPlaceError (ValueError): bt.jit(require_in_place=True) refused a
// program with an update that copies.
PyObject* InPlaceErrorType();
PyObject* TracerIntegerConversionErrorType();
PyObject* TracerArrayConversionErrorType();

// Raises RuntimeError (ForkGuard's message) in a child forked while baton's
// threads ran: nothing baton runs there could finish (fork_guard.h).
void ThrowIfForkedChild();

// Raises `type` (a Python exception class) with `msg`.
[[noreturn]] void ThrowPythonError(PyObject* type, const std::string& msg);

// Throws the Python exception for a failed donation status: a deleted array
// raises DeletedArrayDonationError, everything else as ThrowIfError does.
void ThrowDonationError(const Status& s);

// Sets the Python error for a failed status without throwing (for type
// slots such as the buffer protocol). `precondition` is the exception type
// for kFailedPrecondition (e.g. PyExc_BufferError for a view conflict).
void SetPythonError(const Status& s, PyObject* precondition);

}  // namespace baton::python
