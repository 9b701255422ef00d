// Error classes (DESIGN section 3 "Errors") and C++ -> Python translation:
//   baton::DeletedArrayError      -> bt.DeletedArrayError (RuntimeError)
//   baton::DonationError          -> bt.DonationError (ValueError)
//   baton::ResourceExhaustedError -> bt.ResourceExhaustedError (MemoryError)
//   baton::InvalidArgumentError   -> ValueError
//   baton::IndexOutOfRangeError   -> IndexError
//   any other baton::Error        -> RuntimeError
// Tracer concretization errors (JAX's classes, all TypeError):
//   ConcretizationTypeError, TracerBoolConversionError (a
//   ConcretizationTypeError), TracerIntegerConversionError,
//   TracerArrayConversionError; raised by python/src/tracer_class.cc.
// bt.DonationWarning and NonConcreteBooleanIndexError are defined in Python
// (baton/errors.py).
#include "errors.h"

#include "baton/core/error.h"
#include "baton/runtime/fork_guard.h"
#include "module.h"

namespace baton::python {
namespace {
PyObject* deleted_array_error = nullptr;       // owned by the module
PyObject* donation_error = nullptr;            // owned by the module
PyObject* deleted_donation_error = nullptr;    // owned by the module
PyObject* resource_exhausted_error = nullptr;  // owned by the module
PyObject* concretization_error = nullptr;      // owned by the module
PyObject* bool_conversion_error = nullptr;     // owned by the module
PyObject* integer_conversion_error = nullptr;  // owned by the module
PyObject* array_conversion_error = nullptr;    // owned by the module
PyObject* in_place_error = nullptr;            // owned by the module

// Creates baton._baton.<name> (a subclass of `base`), owned by the module.
PyObject* NewError(nb::module_& m, const char* name, const char* doc,
                   PyObject* base) {
  std::string qualified = std::string("baton._baton.") + name;
  PyObject* type =
      PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base, nullptr);
  if (!type) throw nb::python_error();
  m.attr(name) = nb::steal(type);
  return type;
}
}  // namespace

PyObject* ConcretizationTypeErrorType() { return concretization_error; }
PyObject* TracerBoolConversionErrorType() { return bool_conversion_error; }
PyObject* TracerIntegerConversionErrorType() {
  return integer_conversion_error;
}
PyObject* TracerArrayConversionErrorType() { return array_conversion_error; }

void ThrowPythonError(PyObject* type, const std::string& msg) {
  PyErr_SetString(type, msg.c_str());
  throw nb::python_error();
}

PyObject* DeletedArrayErrorType() { return deleted_array_error; }
PyObject* InPlaceErrorType() { return in_place_error; }
PyObject* DonationErrorType() { return donation_error; }
PyObject* DeletedArrayDonationErrorType() { return deleted_donation_error; }

void ThrowDonationError(const Status& s) {
  if (s.code() == ErrorCode::kDeletedArray) {
    PyErr_SetString(deleted_donation_error, s.message().c_str());
    throw nb::python_error();
  }
  ThrowIfError(s);
}

void ThrowIfForkedChild() {
  if (ForkGuard::InForkedChild()) {
    ThrowPythonError(PyExc_RuntimeError,
                     ForkGuard::ForkedChildError().message());
  }
}

void SetPythonError(const Status& s, PyObject* precondition) {
  PyObject* type = PyExc_RuntimeError;
  switch (s.code()) {
    case ErrorCode::kInvalidArgument:
      type = PyExc_ValueError;
      break;
    case ErrorCode::kIndex:
      type = PyExc_IndexError;
      break;
    case ErrorCode::kDeletedArray:
      type = deleted_array_error;
      break;
    case ErrorCode::kDonation:
      type = donation_error;
      break;
    case ErrorCode::kResourceExhausted:
      type = resource_exhausted_error;
      break;
    case ErrorCode::kFailedPrecondition:
      type = precondition;
      break;
    case ErrorCode::kUnimplemented:
      type = PyExc_NotImplementedError;  // a RuntimeError, as before
      break;
    default:
      break;
  }
  PyErr_SetString(type, s.message().c_str());
}

}  // namespace baton::python

void init_errors(nb::module_& m) {
  using namespace baton::python;
  m.def(
      "_runtime_threads", [] { return baton::ForkGuard::RuntimeThreads(); },
      "baton's worker threads running in this process (os.fork() warns "
      "when there are any).");
  m.def(
      "_check_not_forked", [] { ThrowIfForkedChild(); },
      "Raises RuntimeError in a child forked while baton's threads ran.");
  auto deleted = nb::exception<baton::DeletedArrayError>(m, "DeletedArrayError",
                                                         PyExc_RuntimeError);
  deleted.attr("__doc__") =
      "A deleted, donated or overwritten array was used. The message says "
      "how it was consumed (deleted, donated to which function, overwritten "
      "by device_put(into=...)) and gives its shape and dtype.";
  auto donation =
      nb::exception<baton::DonationError>(m, "DonationError", PyExc_ValueError);
  donation.attr("__doc__") =
      "A donation (or in-place overwrite) was refused, e.g. because the array "
      "has live host views, which the message names. Nothing was consumed.";
  auto exhausted = nb::exception<baton::ResourceExhaustedError>(
      m, "ResourceExhaustedError", PyExc_MemoryError);
  exhausted.attr("__doc__") =
      "A memory space ran out of memory or hit its limit "
      "(bt.set_memory_limit). The message lists the largest live arrays. "
      "Nothing was allocated.";
  deleted_array_error = deleted.ptr();
  donation_error = donation.ptr();
  resource_exhausted_error = exhausted.ptr();

  nb::object bases =
      nb::make_tuple(nb::handle(deleted.ptr()), nb::handle(donation.ptr()));
  deleted_donation_error = PyErr_NewExceptionWithDoc(
      "baton._baton.DeletedArrayDonationError",
      "A deleted or already donated array was donated. It is a "
      "DeletedArrayError (the array was consumed before) and a DonationError "
      "(this donation was refused; nothing else was consumed).",
      bases.ptr(), nullptr);
  if (!deleted_donation_error) throw nb::python_error();
  m.attr("DeletedArrayDonationError") =
      nb::steal(deleted_donation_error);  // the module owns it

  concretization_error = NewError(
      m, "ConcretizationTypeError",
      "A traced value was used where a concrete Python value is needed "
      "(int(), float(), a shape, a Python branch). A TypeError, as in JAX.",
      PyExc_TypeError);
  bool_conversion_error = NewError(
      m, "TracerBoolConversionError",
      "A traced value was converted to a Python bool (`if`, `and`, `while` "
      "on a Tracer). A ConcretizationTypeError, as in JAX.",
      concretization_error);
  integer_conversion_error = NewError(
      m, "TracerIntegerConversionError",
      "A traced value was used as a Python index (__index__: list indexing, "
      "range()). A TypeError, as in JAX.",
      PyExc_TypeError);
  in_place_error = NewError(
      m, "InPlaceError",
      "bt.jit(fun, require_in_place=True) found an update (.at[], "
      "dynamic_update_slice, a loop carry) that would need a copy of its "
      "operand; the message names each and why (not donated, read again "
      "afterwards). A ValueError.",
      PyExc_ValueError);
  array_conversion_error = NewError(
      m, "TracerArrayConversionError",
      "A traced value was converted to a numpy array. A TypeError, as in "
      "JAX.",
      PyExc_TypeError);

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const baton::InvalidArgumentError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const baton::IndexOutOfRangeError& e) {
      PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const baton::Error& e) {
      // Not built yet (a computation on a device without executables):
      // NotImplementedError, still a RuntimeError as every other Error.
      if (e.code() != baton::ErrorCode::kUnimplemented) throw;  // next one
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    }
  });
}
