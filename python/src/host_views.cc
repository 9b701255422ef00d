#include "host_views.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>

#include <vector>

#include "array_caster.h"
#include "conversions.h"
#include "errors.h"
#include "module.h"
#include "not_constructible.h"

namespace baton::python {
namespace {

// What a buffer-protocol export keeps until PyBuffer_Release: the hold and
// the arrays the Py_buffer points into.
struct BufferExport {
  HostView view;
  std::vector<Py_ssize_t> shape;
  std::vector<Py_ssize_t> strides;
};

// struct-module format of each dtype; bfloat16 has none.
const char* BufferFormat(DType t) {
  switch (t) {
    case DType::kBool:
      return "?";
    case DType::kInt8:
      return "b";
    case DType::kInt16:
      return "h";
    case DType::kInt32:
      return "i";
    case DType::kInt64:
      return "q";
    case DType::kUInt8:
      return "B";
    case DType::kUInt32:
      return "I";
    case DType::kFloat16:
      return "e";
    case DType::kFloat32:
      return "f";
    case DType::kFloat64:
      return "d";
    case DType::kComplex64:
      return "Zf";
    case DType::kComplex128:
      return "Zd";
    case DType::kBFloat16:
      return nullptr;
  }
  return nullptr;
}

Status AcquireView(const Array& array, bool writable, const std::string& holder,
                   HostView* out) {
  Result<HostView> view = [&] {
    nb::gil_scoped_release release;  // waits for the value
    return HostView::Acquire(array, writable, holder);
  }();
  if (!view.ok()) return view.status();
  *out = std::move(view).value();
  return OkStatus();
}

int ArrayGetBuffer(PyObject* self, Py_buffer* view, int flags) {
  view->obj = nullptr;
  ArrayImpl* impl = nb::inst_ptr<ArrayImpl>(self);
  Array array(impl->shared_from_this());
  if (flags & PyBUF_WRITABLE) {
    PyErr_SetString(PyExc_BufferError,
                    "baton arrays are read-only through the buffer protocol; "
                    "for a writable view of pinned_host or unpinned_host "
                    "memory use `with x.host_view(writable=True) as a:`");
    return -1;
  }
  const char* format = BufferFormat(array.dtype());
  if ((flags & PyBUF_FORMAT) == PyBUF_FORMAT && format == nullptr) {
    PyErr_SetString(PyExc_BufferError,
                    "bfloat16 has no buffer-protocol format; use np.asarray(x) "
                    "(ml_dtypes.bfloat16) instead of memoryview(x)");
    return -1;
  }
  if (array.IsDeleted()) {
    SetPythonError(array.impl()->DeletedError(), PyExc_BufferError);
    return -1;
  }
  if (!HostAddressable(array.device(), array.memory_kind())) {
    PyErr_SetString(PyExc_BufferError,
                    "this array's memory cannot be addressed by the host; "
                    "copy it first with bt.device_get(x)");
    return -1;
  }
  auto exp = std::make_unique<BufferExport>();
  Status s = AcquireView(array, /*writable=*/false,
                         "np.asarray/memoryview view", &exp->view);
  if (!s.ok()) {
    SetPythonError(s, PyExc_BufferError);
    return -1;
  }
  const Shape& shape = array.shape();
  for (int64_t d : shape.dims()) exp->shape.push_back(d);
  for (int64_t st : ByteStrides(shape, array.dtype())) {
    exp->strides.push_back(st);
  }
  view->buf = exp->view.data();
  view->len = static_cast<Py_ssize_t>(array.nbytes());
  view->itemsize = static_cast<Py_ssize_t>(dtype_size(array.dtype()));
  view->readonly = 1;
  view->ndim = shape.rank();
  view->format = (flags & PyBUF_FORMAT) == PyBUF_FORMAT
                     ? const_cast<char*>(format)
                     : nullptr;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? exp->shape.data() : nullptr;
  view->strides =
      (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? exp->strides.data() : nullptr;
  view->suboffsets = nullptr;
  view->internal = exp.release();
  view->obj = self;
  Py_INCREF(self);
  return 0;
}

void ArrayReleaseBuffer(PyObject*, Py_buffer* view) {
  delete static_cast<BufferExport*>(view->internal);  // releases the hold
  view->internal = nullptr;
}

}  // namespace

PyType_Slot kArrayBufferSlots[] = {
    {Py_bf_getbuffer, reinterpret_cast<void*>(ArrayGetBuffer)},
    {Py_bf_releasebuffer, reinterpret_cast<void*>(ArrayReleaseBuffer)},
    BATON_REFUSE_NEW_SLOT,
    {0, nullptr}};

nb::dict HostViewHold::ArrayInterface() const {
  if (released()) {
    throw nb::buffer_error(
        "this host view was released (its `with x.host_view()` block ended); "
        "take a new view");
  }
  nb::list shape;
  for (int64_t d : shape_.dims()) shape.append(d);
  nb::dict d;
  d["version"] = 3;
  d["shape"] = nb::tuple(shape);
  d["typestr"] = ArrayInterfaceTypestr(dtype_);
  d["data"] = nb::make_tuple(reinterpret_cast<uintptr_t>(data_), !writable_);
  d["strides"] = nb::none();  // C-contiguous
  return d;
}

std::unique_ptr<HostViewHold> AcquireHostViewHold(const Array& array,
                                                  bool writable,
                                                  const std::string& holder) {
  // The storage first (DeletedArrayError if consumed); the view then holds
  // the same buffer: an array's storage only ever changes to "none".
  std::shared_ptr<TrackedBuffer> storage = ValueOrThrow(array.impl()->buffer());
  if (!HostAddressable(array.device(), array.memory_kind())) {
    throw nb::buffer_error(
        "this array's memory cannot be addressed by the host; copy it with "
        "bt.device_get(x) or device_put it to a host memory kind first");
  }
  if (writable && storage->borrowed() && is_host_kind(array.memory_kind())) {
    throw nb::value_error(
        ("a writable host view needs storage baton owns, but this " +
         array.impl()->Describe() +
         " borrows memory (device_put(..., may_alias=True) or from_dlpack); "
         "writing it would change the lender's data. Copy it first: "
         "bt.device_put(x, memory_kind=...)")
            .c_str());
  }
  HostView view;
  Status s = AcquireView(array, writable, holder, &view);
  if (!s.ok()) {
    SetPythonError(s, PyExc_BufferError);
    throw nb::python_error();
  }
  return std::make_unique<HostViewHold>(std::move(view), std::move(storage),
                                        array, holder);
}

}  // namespace baton::python

void init_host_views(nb::module_& m) {
  using baton::python::HostViewHold;
  nb::class_<HostViewHold>(
      m, "_HostViewHold", nb::type_slots(baton::python::kNotConstructibleSlots),
      "The owner of a host view of a baton array (the `base` of the numpy "
      "array np.asarray(x) returns). The view's hold lives as long as this "
      "object; release() ends it early.")
      .def_prop_ro("__array_interface__", &HostViewHold::ArrayInterface)
      .def("release", &HostViewHold::Release,
           "Drops the hold now (idempotent). The storage stays allocated "
           "until this object dies, but its contents are no longer "
           "guaranteed.")
      .def_prop_ro("released", &HostViewHold::released)
      .def_prop_ro("writable", &HostViewHold::writable)
      .def_prop_ro("holder", &HostViewHold::holder);

  m.def(
      "_acquire_host_view",
      [](const baton::Array& array, bool writable, const std::string& holder) {
        return baton::python::AcquireHostViewHold(array, writable, holder);
      },
      nb::arg("array"), nb::arg("writable"), nb::arg("holder"),
      "Takes a host view of `array` (see _HostViewHold).");
}
