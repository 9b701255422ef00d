// The Array class: a handle to one baton array (DESIGN section 3 "Arrays").
//
// Only the core is bound here: metadata, lifetime (delete, readiness) and
// copies. Host views and the buffer protocol are in host_views.cc, DLPack in
// dlpack.cc, and the Python-level methods (repr, numpy conversion, item,
// tolist, ...) are attached by baton/_array_methods.py; operators, indexing
// and .at[] will be attached the same way by their own modules.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "allocation_stacks.h"
#include "array_caster.h"
#include "baton/core/error.h"
#include "baton/runtime/device.h"
#include "baton/runtime/transfer.h"
#include "conversions.h"
#include "gc_guard.h"
#include "host_views.h"
#include "module.h"

namespace {

using baton::Array;
using baton::ArrayImpl;

const char* ConsumedName(baton::ConsumedReason::Kind k) {
  switch (k) {
    case baton::ConsumedReason::Kind::kLive:
      return "live";
    case baton::ConsumedReason::Kind::kDeleted:
      return "deleted";
    case baton::ConsumedReason::Kind::kDonated:
      return "donated";
    case baton::ConsumedReason::Kind::kOverwritten:
      return "overwritten";
  }
  return "?";
}

}  // namespace

void init_array(nb::module_& m) {
  nb::class_<ArrayImpl> cls(
      m, "Array", nb::type_slots(baton::python::kArrayBufferSlots),
      nb::is_weak_referenceable(),
      "An n-dimensional array on one device and memory kind.\n\n"
      "Arrays are immutable handles; the storage is released as soon as no "
      "handle refers to it and the work enqueued on it is done (never by a "
      "garbage collector). delete() releases it now. A deleted, donated or "
      "overwritten array keeps .shape, .dtype, .nbytes and .memory_kind; any "
      "other use raises DeletedArrayError. Create arrays with "
      "bt.device_put, bt.zeros, ...");
  cls.def_prop_ro(
         "shape",
         [](const ArrayImpl& a) {
           nb::list l;
           for (int64_t d : a.shape().dims()) l.append(d);
           return nb::tuple(l);
         },
         "The dimensions, as a tuple of ints.")
      .def_prop_ro(
          "dtype",
          [](const ArrayImpl& a) {
            return nb::borrow(baton::python::NumpyDType(a.dtype()));
          },
          "The element type, as a numpy dtype (bfloat16 from ml_dtypes).")
      .def_prop_ro(
          "ndim", [](const ArrayImpl& a) { return a.shape().rank(); },
          "The number of dimensions.")
      .def_prop_ro(
          "size", [](const ArrayImpl& a) { return a.shape().num_elements(); },
          "The number of elements.")
      .def_prop_ro(
          "itemsize",
          [](const ArrayImpl& a) { return baton::dtype_size(a.dtype()); },
          "Bytes per element.")
      .def_prop_ro("nbytes", &ArrayImpl::nbytes,
                   "Bytes of the elements (size * itemsize).")
      .def_prop_ro("device", &ArrayImpl::device, nb::rv_policy::reference,
                   "The Device holding the array.")
      .def_prop_ro(
          "memory_kind",
          [](const ArrayImpl& a) {
            return std::string(baton::memory_kind_name(a.memory_kind()));
          },
          "'device', 'pinned_host' or 'unpinned_host'.")
      .def("delete", &ArrayImpl::Delete,
           "Releases the storage now (once work already enqueued on it is "
           "done), without waiting for the garbage collector. Idempotent. "
           "Live host views keep the storage until they die. Any later use "
           "raises DeletedArrayError.")
      .def("is_deleted", &ArrayImpl::IsDeleted,
           "True once deleted, donated or overwritten (for every reference).")
      .def(
          "unsafe_buffer_pointer",
          [](const ArrayImpl& a) {
            auto buffer = baton::ValueOrThrow(a.buffer());
            return reinterpret_cast<uintptr_t>(buffer->data());
          },
          "The address of the array's storage, as JAX's "
          "Array.unsafe_buffer_pointer(): a device address on an accelerator "
          "(the host cannot read it there). Equal addresses are the same "
          "storage, which is how tests see donation and in-place updates "
          "reuse it. Raises DeletedArrayError once the array is consumed.\n\n"
          "    >>> y = bt.jit(lambda a: a + 1, donate_argnums=0)(x)  # x's storage\n")
      .def(
          "is_ready",
          [](const ArrayImpl& a) {
            return baton::ValueOrThrow(a.ReadyEvent()).IsReady();
          },
          "True if the value has been computed (does not wait).")
      .def(
          "block_until_ready",
          [](Array a) {
            {
              nb::gil_scoped_release release;
              a.BlockUntilReady();
            }
            return a;
          },
          "Waits until the value is computed and returns this array; raises "
          "the producer's error if it failed.")
      .def(
          "copy",
          [](const Array& a) {
            baton::python::AllocationStackScope stacks;  // while profiling
            return baton::ValueOrThrow(
                baton::CopyArray(a, a.device(), a.memory_kind()));
          },
          "An independent copy on the same device and memory kind.")
      .def_prop_ro(
          "_id", &ArrayImpl::id,
          "Process-unique id of the underlying array (same for every handle).")
      .def_prop_ro(
          "_is_borrowed",
          [](const ArrayImpl& a) {
            auto b = a.buffer();
            return b.ok() && b.value()->borrowed();
          },
          "True if the storage is borrowed memory (may_alias=True, "
          "from_dlpack), not counted in memory_stats().")
      .def_prop_ro(
          "_external_references",
          [](const ArrayImpl& a) {
            auto b = a.buffer();
            return b.ok() ? b.value()->external_references() : 0;
          },
          "Live host views and DLPack exports of the storage (0 once "
          "consumed).")
      .def_prop_ro(
          "_consumed",
          [](const ArrayImpl& a) {
            return ConsumedName(a.consumed_reason().kind);
          },
          "'live', 'deleted', 'donated' or 'overwritten'.")
      .def("_describe", &ArrayImpl::Describe, "'float32(2, 3)'.")
      .def(
          "_check_live",
          [](const ArrayImpl& a) { baton::ValueOrThrow(a.buffer()); },
          "Raises DeletedArrayError if the array was consumed.");
  // Arrays compare by value once operators exist; like numpy and JAX arrays
  // they are unhashable.
  cls.attr("__hash__") = nb::none();
  baton::python::WrapArrayDealloc(cls.ptr());  // gc_guard.cc
}
