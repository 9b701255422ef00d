// DLPack (array API): Array.__dlpack__ / __dlpack_device__ and the import
// behind bt.from_dlpack.
//
// Export: a zero-copy export of host-addressable memory holds an external
// reference (like a host view) until the consumer calls the deleter -- e.g.
// when the numpy array np.from_dlpack(x) made is freed -- so the array cannot
// be donated or overwritten meanwhile. Versioned exports are flagged
// read-only (baton arrays are immutable); copy=True exports a host copy.
//
// Import: memory the host can address, C-contiguous and aligned, is borrowed
// (zero-copy; not counted in memory_stats) until the baton array and the work
// on it are gone, then given back through the producer's deleter. Otherwise,
// or with copy=True, the values are copied into baton memory at once. The
// producer's tensor is validated first, without Python, by the runtime
// (baton/runtime/dlpack_abi.h, strided_import.h; fuzzed by
// tests/fuzz/fuzz_dlpack_import.cc): an unknown dtype raises TypeError, a
// device the host cannot read BufferError, and a bad ndim, shape, stride or
// byte offset (overflowing, or reaching outside the address space) ValueError,
// all before the capsule is consumed.
#include "dlpack.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "array_caster.h"
#include "baton/core/error.h"
#include "baton/runtime/device.h"
#include "baton/runtime/host_view.h"
#include "baton/runtime/transfer.h"
#include "conversions.h"
#include "errors.h"
#include "gil.h"
#include "module.h"

namespace baton::python {
namespace {

using namespace dlpack;

constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kUsedVersionedName = "used_dltensor_versioned";
constexpr const char* kLegacyName = "dltensor";
constexpr const char* kUsedLegacyName = "used_dltensor";

// Where a consumer finds the exported data: host memory as it is; CUDA
// memory on its GPU; other memory the host cannot address (the simulated
// platform's) as a host copy.
DLDevice DeviceOf(const Array& a) {
  if (HostAddressable(a.device(), a.memory_kind())) return {kDLCPU, 0};
  if (a.device()->platform() == "cuda") {
    return {kDLCUDA, a.device()->ordinal()};
  }
  return {kDLCPU, 0};
}

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

// What an export keeps alive until its deleter runs.
struct ExportContext {
  HostView view;                            // zero-copy: the hold
  std::unique_ptr<void, AlignedFree> copy;  // copy: the bytes
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

template <typename Managed>
void DeleteManaged(Managed* self) {
  // Runs on the consumer's thread, with or without the GIL: only C++ here.
  delete static_cast<ExportContext*>(self->manager_ctx);
  delete self;
}

template <typename Managed>
void CapsuleDestructor(PyObject* capsule) {
  constexpr bool kVersioned = std::is_same_v<Managed, DLManagedTensorVersioned>;
  const char* name = kVersioned ? kVersionedName : kLegacyName;
  // A capsule nobody consumed still owns its tensor.
  if (!PyCapsule_IsValid(capsule, name)) return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (managed && managed->deleter) managed->deleter(managed);
  PyErr_Restore(type, value, tb);
}

nb::object Export(const Array& a,
                  std::optional<std::pair<int, int>> max_version,
                  std::optional<std::pair<int, int>> dl_device,
                  std::optional<bool> copy) {
  std::shared_ptr<TrackedBuffer> storage = ValueOrThrow(a.impl()->buffer());
  (void)storage;
  const bool addressable = HostAddressable(a.device(), a.memory_kind());
  DLDevice device = DeviceOf(a);
  if (dl_device && (dl_device->first != device.device_type ||
                    dl_device->second != device.device_id)) {
    if (dl_device->first != kDLCPU) {
      throw nb::buffer_error(
          "__dlpack__: baton can export to its own device or to the host "
          "(kDLCPU, 0) only");
    }
    device = {kDLCPU, 0};  // a host copy of non-addressable memory
  }
  if (device.device_type != kDLCPU) {
    throw nb::buffer_error(
        "__dlpack__: exporting CUDA memory in place is not implemented yet; "
        "ask for a host copy with x.__dlpack__(dl_device=(1, 0)) or "
        "np.from_dlpack(x, device=\"cpu\")");
  }
  const bool must_copy = !addressable;
  if (must_copy && copy.has_value() && !*copy) {
    throw nb::buffer_error(
        "__dlpack__(copy=False): this array's memory cannot be addressed by "
        "the host, so exporting it needs a copy");
  }
  const bool do_copy = must_copy || (copy.has_value() && *copy);

  auto ctx = std::make_unique<ExportContext>();
  for (int64_t d : a.shape().dims()) ctx->shape.push_back(d);
  ctx->strides = a.shape().strides();
  void* data = nullptr;
  if (do_copy) {
    const size_t n = static_cast<size_t>(a.nbytes());
    const size_t rounded = (n + 63) / 64 * 64 + 64;
    ctx->copy.reset(std::aligned_alloc(64, rounded));
    if (!ctx->copy) throw std::bad_alloc();
    Status s;
    {
      nb::gil_scoped_release release;
      s = CopyToHost(a, ctx->copy.get(), n);
    }
    ThrowIfError(s);
    data = ctx->copy.get();
  } else {
    Result<HostView> view = [&] {
      nb::gil_scoped_release release;
      return HostView::Acquire(a, /*writable=*/false, "DLPack export");
    }();
    if (!view.ok()) {
      SetPythonError(view.status(), PyExc_BufferError);
      throw nb::python_error();
    }
    ctx->view = std::move(view).value();
    data = ctx->view.data();
  }

  DLTensor t{};
  t.data = data;
  t.device = device;
  t.ndim = a.shape().rank();
  t.dtype = ToDLDataType(a.dtype());
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  t.byte_offset = 0;

  const bool versioned = max_version && max_version->first >= 1;
  PyObject* capsule = nullptr;
  if (versioned) {
    auto* m = new DLManagedTensorVersioned{};
    m->version = {kMajorVersion, kMinorVersion};
    m->manager_ctx = ctx.release();
    m->deleter = &DeleteManaged<DLManagedTensorVersioned>;
    m->flags = do_copy ? kFlagIsCopied : kFlagReadOnly;
    m->dl_tensor = t;
    capsule = PyCapsule_New(m, kVersionedName,
                            &CapsuleDestructor<DLManagedTensorVersioned>);
    if (!capsule) {
      m->deleter(m);
      throw nb::python_error();
    }
  } else {
    auto* m = new DLManagedTensor{};
    m->dl_tensor = t;
    m->manager_ctx = ctx.release();
    m->deleter = &DeleteManaged<DLManagedTensor>;
    capsule =
        PyCapsule_New(m, kLegacyName, &CapsuleDestructor<DLManagedTensor>);
    if (!capsule) {
      m->deleter(m);
      throw nb::python_error();
    }
  }
  return nb::steal(capsule);
}

Array Import(nb::handle capsule, nb::handle device_arg,
             std::optional<bool> copy) {
  PyObject* cap = capsule.ptr();
  const bool versioned = PyCapsule_IsValid(cap, kVersionedName);
  if (!versioned && !PyCapsule_IsValid(cap, kLegacyName)) {
    throw nb::type_error(
        "from_dlpack: expected an object with __dlpack__ or an unused DLPack "
        "capsule ('dltensor' / 'dltensor_versioned'); a capsule can be "
        "imported only once");
  }
  DLManagedTensorVersioned* mv = nullptr;
  DLManagedTensor* ml = nullptr;
  DLTensor* t = nullptr;
  if (versioned) {
    mv = static_cast<DLManagedTensorVersioned*>(
        PyCapsule_GetPointer(cap, kVersionedName));
    if (mv->version.major > kMajorVersion) {
      throw nb::buffer_error(("from_dlpack: DLPack version " +
                              std::to_string(mv->version.major) + "." +
                              std::to_string(mv->version.minor) +
                              " is newer than baton supports (1.x)")
                                 .c_str());
    }
    t = &mv->dl_tensor;
  } else {
    ml = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kLegacyName));
    t = &ml->dl_tensor;
  }
  // Validate before taking ownership: on error the capsule stays unused.
  // Everything the producer says is checked (dlpack_abi.h): dtype
  // (TypeError), device (BufferError), then shape, strides and byte offset
  // (ValueError), with arithmetic that cannot overflow.
  Result<StridedPlan> planned = PlanDLTensorImport(*t);
  if (!planned.ok()) {
    const std::string& message = planned.status().message();
    if (!FromDLDataType(t->dtype)) throw nb::type_error(message.c_str());
    if (!HostReadable(t->device)) throw nb::buffer_error(message.c_str());
    ThrowIfError(planned.status());
  }
  const StridedPlan plan = std::move(planned).value();
  const DType dtype = plan.dtype;
  Device* device = ResolveDevice(device_arg);
  const Shape& shape = plan.shape;
  const char* data = reinterpret_cast<const char*>(plan.first);
  const bool contiguous = plan.contiguous;
  const bool borrow = !(copy.has_value() && *copy) && contiguous &&
                      BorrowableAddress(data, dtype) &&
                      HostAddressable(device, MemoryKind::kDevice);
  if (copy.has_value() && !*copy && !borrow) {
    throw nb::buffer_error(
        "from_dlpack(copy=False): this tensor cannot be shared (it is not "
        "C-contiguous or not aligned to 16 bytes); pass copy=None to copy it");
  }

  // From here on the tensor is ours: mark the capsule used.
  PyCapsule_SetName(cap, versioned ? kUsedVersionedName : kUsedLegacyName);
  auto release = [mv, ml]() {
    if (mv && mv->deleter) mv->deleter(mv);
    if (ml && ml->deleter) ml->deleter(ml);
  };
  const HostBuffer host{data, shape, dtype};
  if (borrow) {
    Result<Array> r = DevicePut(host, device, MemoryKind::kDevice,
                                HostBufferSemantics::kZeroCopy,
                                [release]() { WithGil(release); });
    if (!r.ok()) release();
    return ValueOrThrow(std::move(r));
  }
  Result<Array> r = Status();
  {
    nb::gil_scoped_release unlocked;
    if (contiguous) {
      r = DevicePut(host, device, MemoryKind::kDevice);
    } else if (!HostAddressable(device, MemoryKind::kDevice)) {
      // Gather on the host, then one copy into memory the host cannot touch.
      std::vector<char> dense(static_cast<size_t>(shape.num_elements()) *
                              dtype_size(dtype));
      CopyStridedToDense(plan, dense.data());
      r = DevicePut(HostBuffer{dense.data(), shape, dtype}, device,
                    MemoryKind::kDevice);
    } else {
      r = Empty(shape, dtype, device, MemoryKind::kDevice);
      if (r.ok()) {
        // A fresh array nobody else can see yet: fill its storage directly,
        // reading only the bytes the plan checked.
        auto storage = r.value().impl()->buffer();
        CopyStridedToDense(plan, storage.value()->data());
      }
    }
  }
  release();
  return ValueOrThrow(std::move(r));
}

}  // namespace
}  // namespace baton::python

void init_dlpack(nb::module_& m) {
  using namespace baton::python;
  nb::handle cls = m.attr("Array");
  nb::handle scope = cls;
  nb::cpp_function_def(
      [](const baton::Array& a, nb::handle stream,
         std::optional<std::pair<int, int>> max_version,
         std::optional<std::pair<int, int>> dl_device,
         std::optional<bool> copy) {
        if (!stream.is_none()) {
          throw nb::buffer_error(
              "__dlpack__: baton's CPU arrays take stream=None");
        }
        return Export(a, max_version, dl_device, copy);
      },
      nb::scope(scope), nb::name("__dlpack__"), nb::is_method(), nb::kw_only(),
      nb::arg("stream") = nb::none(),
      nb::arg("max_version").none() = nb::none(),
      nb::arg("dl_device").none() = nb::none(),
      nb::arg("copy").none() = nb::none(),
      "Exports the array through DLPack (array API). Host-addressable "
      "memory is shared zero-copy and read-only; the export holds the array "
      "like a host view (no donation or overwrite) until the consumer frees "
      "it. copy=True exports a host copy. max_version >= (1, 0) gets a "
      "versioned capsule.");
  nb::cpp_function_def(
      [](const baton::Array& a) {
        baton::ValueOrThrow(a.impl()->buffer());
        const DLDevice d = DeviceOf(a);
        return nb::make_tuple(d.device_type, d.device_id);
      },
      nb::scope(scope), nb::name("__dlpack_device__"), nb::is_method(),
      "(device type, device id) of the memory: (1, 0) (kDLCPU) for memory "
      "the host can address.");

  m.def("_from_dlpack_capsule", &Import, nb::arg("capsule"),
        nb::arg("device").none() = nb::none(),
        nb::arg("copy").none() = nb::none(),
        "Imports a DLPack capsule (see bt.from_dlpack).");
}
