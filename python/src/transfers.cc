// Transfers behind bt.device_put / device_get / empty / full (DESIGN R2, R6).
//
// The Python layer (baton/_transfer.py) walks pytrees, converts scalars and
// array-likes to C-contiguous numpy arrays and validates; these functions do
// one leaf each. numpy memory is read through the buffer protocol without a
// format, so every dtype (bfloat16 included) goes through the same path.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <vector>

#include "allocation_stacks.h"
#include "array_caster.h"
#include "baton/core/error.h"
#include "baton/runtime/copy_into.h"
#include "baton/runtime/device.h"
#include "baton/runtime/strided_import.h"
#include "baton/runtime/transfer.h"
#include "conversions.h"
#include "gil.h"
#include "module.h"

namespace baton::python {
namespace {

// A Py_buffer that is released (with the GIL) when this dies.
struct BufferDeleter {
  void operator()(Py_buffer* b) const {
    PyBuffer_Release(b);
    delete b;
  }
};
using ScopedBuffer = std::unique_ptr<Py_buffer, BufferDeleter>;

ScopedBuffer GetBuffer(nb::handle obj, int flags) {
  auto* b = new Py_buffer{};
  if (PyObject_GetBuffer(obj.ptr(), b, flags) != 0) {
    delete b;
    throw nb::python_error();
  }
  return ScopedBuffer(b);
}

// Shape of a C-contiguous buffer, checked against `dtype`'s element size:
// the exporter's shape must pass Shape::Check() and its length must be the
// elements' bytes (strided_import.h; PyBUF_ND exports have no strides).
Shape BufferShape(const Py_buffer& b, DType dtype) {
  static_assert(sizeof(Py_ssize_t) == sizeof(int64_t));
  BufferView view;
  view.buf = b.buf;
  view.len = static_cast<int64_t>(b.len);
  view.itemsize = static_cast<int64_t>(b.itemsize);
  view.ndim = b.ndim;
  view.shape = reinterpret_cast<const int64_t*>(b.shape);
  view.strides = reinterpret_cast<const int64_t*>(b.strides);
  Result<StridedPlan> plan = PlanBufferImport(view, dtype);
  ThrowIfError(plan.status());
  if (!plan.value().contiguous) {
    ThrowIfError(InvalidArgument(
        "host buffer: the exporter gave a strided buffer for a C-contiguous "
        "request"));
  }
  return std::move(plan).value().shape;
}

void CheckOwnedStorage(const Array& into) {
  auto storage = into.impl()->buffer();
  ThrowIfError(storage.status());
  if (storage.value()->borrowed()) {
    ThrowIfError(InvalidArgument(
        "device_put(into=...): `into` (" + into.impl()->Describe() +
        ") borrows memory it does not own (device_put(may_alias=True) or "
        "from_dlpack); overwriting it would write into the lender's data. "
        "Nothing was consumed."));
  }
}

Array PutNumpy(nb::handle array, const std::string& dtype_name,
               nb::handle device_arg, const std::string& kind_name,
               bool may_alias) {
  baton::python::AllocationStackScope stacks;  // while profiling
  const DType dtype = DTypeFromName(dtype_name);
  Device* device = ResolveDevice(device_arg);
  const MemoryKind kind = MemoryKindFromName(kind_name);
  ScopedBuffer buf = GetBuffer(array, PyBUF_ND);  // C-contiguous, no format
  const HostBuffer host{buf->buf, BufferShape(*buf, dtype), dtype};
  if (may_alias && HostAddressable(device, kind) &&
      BorrowableAddress(buf->buf, dtype)) {
    // The numpy object stays exported (and alive) until the borrowed buffer
    // is released -- possibly on a worker thread.
    Py_buffer* raw = buf.release();
    Result<Array> r =
        DevicePut(host, device, kind, HostBufferSemantics::kZeroCopy, [raw]() {
          WithGil([raw]() { PyBuffer_Release(raw); });
          delete raw;
        });
    if (!r.ok()) BufferDeleter()(raw);  // never borrowed
    return ValueOrThrow(std::move(r));
  }
  Result<Array> r = Status();
  {
    nb::gil_scoped_release release;  // the copy may be large
    r = DevicePut(host, device, kind);
  }
  return ValueOrThrow(std::move(r));
}

Array PutNumpyInto(nb::handle array, const std::string& dtype_name,
                   const Array& into) {
  baton::python::AllocationStackScope stacks;  // while profiling
  const DType dtype = DTypeFromName(dtype_name);
  CheckOwnedStorage(into);
  ScopedBuffer buf = GetBuffer(array, PyBUF_ND);
  const HostBuffer host{buf->buf, BufferShape(*buf, dtype), dtype};
  Result<Array> r = Status();
  {
    nb::gil_scoped_release release;  // may wait for staging memory
    r = DevicePutInto(host, into);
  }
  return ValueOrThrow(std::move(r));
}

Array CopyArrayTo(const Array& src, nb::handle device_arg,
                  const std::string& kind_name) {
  baton::python::AllocationStackScope stacks;  // while profiling
  return ValueOrThrow(
      CopyArray(src, ResolveDevice(device_arg), MemoryKindFromName(kind_name)));
}

Array CopyInto(const Array& src, const Array& into) {
  baton::python::AllocationStackScope stacks;  // while profiling
  CheckOwnedStorage(into);
  Result<Array> r = Status();
  {
    nb::gil_scoped_release release;  // taking `into` waits for enqueues
    r = CopyArrayInto(src, into);
  }
  return ValueOrThrow(std::move(r));
}

Shape ShapeFrom(const std::vector<int64_t>& dims) {
  Shape shape(dims);
  ThrowIfError(shape.Check());
  return shape;
}

Array EmptyArray(const std::vector<int64_t>& dims,
                 const std::string& dtype_name, nb::handle device_arg,
                 const std::string& kind_name) {
  baton::python::AllocationStackScope stacks;  // while profiling
  return ValueOrThrow(Empty(ShapeFrom(dims), DTypeFromName(dtype_name),
                            ResolveDevice(device_arg),
                            MemoryKindFromName(kind_name)));
}

Array FullArray(const std::vector<int64_t>& dims, const std::string& dtype_name,
                nb::bytes value, nb::handle device_arg,
                const std::string& kind_name) {
  baton::python::AllocationStackScope stacks;  // while profiling
  const DType dtype = DTypeFromName(dtype_name);
  if (value.size() != dtype_size(dtype)) {
    ThrowIfError(InvalidArgument(
        "full: fill value has " + std::to_string(value.size()) +
        " bytes, expected one " + std::string(dtype_name) + " element"));
  }
  return ValueOrThrow(Full(ShapeFrom(dims), dtype, value.c_str(),
                           ResolveDevice(device_arg),
                           MemoryKindFromName(kind_name)));
}

void CopyToNumpy(const std::vector<Array>& arrays, nb::list outs) {
  if (arrays.size() != outs.size()) {
    throw nb::value_error("_copy_to_numpy: length mismatch");
  }
  std::vector<ScopedBuffer> bufs;
  std::vector<Event> started;
  Status failed;
  for (size_t i = 0; i < arrays.size() && failed.ok(); ++i) {
    bufs.push_back(GetBuffer(outs[i], PyBUF_WRITABLE | PyBUF_ND));
    Result<Event> e = CopyToHostAsync(arrays[i], bufs.back()->buf,
                                      static_cast<size_t>(bufs.back()->len));
    if (e.ok()) {
      started.push_back(std::move(e).value());
    } else {
      failed = e.status();
    }
  }
  Status s;
  {
    // Every started copy must finish before the numpy buffers may go.
    nb::gil_scoped_release release;
    s = WaitAll(started);
  }
  ThrowIfError(failed);
  ThrowIfError(s);
}

}  // namespace
}  // namespace baton::python

void init_transfers(nb::module_& m) {
  using namespace baton::python;
  m.def("_put_numpy", &PutNumpy, nb::arg("array"), nb::arg("dtype"),
        nb::arg("device").none(), nb::arg("memory_kind"), nb::arg("may_alias"),
        "A new array with the values of a C-contiguous numpy array: a "
        "snapshot, or with may_alias=True a zero-copy borrow when the memory "
        "is host-addressable and 16-byte aligned (the numpy array is kept "
        "alive until the baton buffer is released).");
  m.def("_put_numpy_into", &PutNumpyInto, nb::arg("array"), nb::arg("dtype"),
        nb::arg("into"),
        "Writes a C-contiguous numpy array into `into`'s storage after the "
        "work enqueued on it; `into` is consumed.");
  m.def("_copy_array", &CopyArrayTo, nb::arg("src"), nb::arg("device").none(),
        nb::arg("memory_kind"), "An independent copy of `src`.");
  m.def("_copy_array_into", &CopyInto, nb::arg("src"), nb::arg("into"),
        "Writes `src`'s values into `into`'s storage; `into` is consumed.");
  m.def("_empty", &EmptyArray, nb::arg("shape"), nb::arg("dtype"),
        nb::arg("device").none(), nb::arg("memory_kind"),
        "An array with unspecified contents.");
  m.def("_full", &FullArray, nb::arg("shape"), nb::arg("dtype"),
        nb::arg("value"), nb::arg("device").none(), nb::arg("memory_kind"),
        "An array filled with one element given as its bytes.");
  m.def("_copy_to_numpy", &CopyToNumpy, nb::arg("arrays"), nb::arg("outs"),
        "Copies each array into the matching writable C-contiguous numpy "
        "array; the copies run concurrently.");
}
