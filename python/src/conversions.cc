#include "conversions.h"

#include <nanobind/stl/string.h>

#include <array>
#include <atomic>
#include <cstring>

#include "baton/runtime/client.h"
#include "platforms.h"

namespace baton::python {
namespace {
std::array<PyObject*, kNumDTypes> numpy_dtypes{};  // borrowed from the module
std::atomic<bool> enable_x64{false};
}  // namespace

void SetEnableX64(bool enabled) {
  enable_x64.store(enabled, std::memory_order_relaxed);
}

bool EnableX64() { return enable_x64.load(std::memory_order_relaxed); }

DType CanonicalHostDType(DType t) {
  if (EnableX64()) return t;
  if (t == DType::kFloat64) return DType::kFloat32;
  if (t == DType::kInt64) return DType::kInt32;
  if (t == DType::kComplex128) return DType::kComplex64;
  return t;
}

void InitDTypes(nb::module_& m) {
  nb::module_ np = nb::module_::import_("numpy");
  nb::module_ ml = nb::module_::import_("ml_dtypes");
  nb::list table;
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType t = static_cast<DType>(i);
    nb::object dt = t == DType::kBFloat16
                        ? np.attr("dtype")(ml.attr("bfloat16"))
                        : np.attr("dtype")(std::string(dtype_name(t)));
    table.append(dt);
    numpy_dtypes[i] = dt.ptr();  // kept alive by the module attribute
  }
  m.attr("_numpy_dtypes") = nb::tuple(table);
}

nb::handle NumpyDType(DType t) { return numpy_dtypes[static_cast<int>(t)]; }

nb::object NumpyEmpty(const Shape& shape, DType dtype, void** data) {
  nb::list dims;
  for (int64_t d : shape.dims()) dims.append(d);
  nb::object a = nb::module_::import_("numpy").attr("empty")(
      nb::tuple(dims), NumpyDType(dtype));
  *data = reinterpret_cast<void*>(
      nb::cast<uintptr_t>(a.attr("__array_interface__")["data"][0]));
  return a;
}

nb::object NumpyCopy(const void* data, const Shape& shape, DType dtype) {
  void* dst = nullptr;
  nb::object a = NumpyEmpty(shape, dtype, &dst);
  const size_t bytes =
      static_cast<size_t>(shape.num_elements()) * dtype_size(dtype);
  if (bytes > 0) std::memcpy(dst, data, bytes);
  return a;
}

DType DTypeFromName(const std::string& name) {
  if (auto t = dtype_from_name(name)) return *t;
  std::string known;
  for (int i = 0; i < kNumDTypes; ++i) {
    if (i) known += ", ";
    known += dtype_name(static_cast<DType>(i));
  }
  ThrowIfError(InvalidArgument("baton has no dtype '" + name +
                               "'; supported dtypes: " + known));
  return DType::kFloat32;  // not reached
}

const char* ArrayInterfaceTypestr(DType t) {
  switch (t) {
    case DType::kBool:
      return "|b1";
    case DType::kInt8:
      return "|i1";
    case DType::kInt16:
      return "<i2";
    case DType::kInt32:
      return "<i4";
    case DType::kInt64:
      return "<i8";
    case DType::kUInt8:
      return "|u1";
    case DType::kUInt32:
      return "<u4";
    case DType::kFloat16:
      return "<f2";
    case DType::kBFloat16:
      return "<u2";
    case DType::kFloat32:
      return "<f4";
    case DType::kFloat64:
      return "<f8";
    case DType::kComplex64:
      return "<c8";
    case DType::kComplex128:
      return "<c16";
  }
  return "|V1";
}

MemoryKind MemoryKindFromName(const std::string& name) {
  if (auto k = memory_kind_from_name(name)) return *k;
  ThrowIfError(InvalidArgument(
      "unknown memory kind '" + name +
      "'; a device has 'device', 'pinned_host' and 'unpinned_host' memory"));
  return MemoryKind::kDevice;  // not reached
}

Device* ResolveDevice(nb::handle device) {
  if (device.is_none()) return DefaultDevice();
  Device* d = nullptr;
  if (nb::try_cast<Device*>(device, d) && d != nullptr) return d;
  throw nb::type_error(
      (std::string("device must be a baton Device (from bt.devices()) or "
                   "None, not ") +
       nb::type_name(device.type()).c_str())
          .c_str());
}

std::vector<Device*> MeshDevices(const std::vector<nb::handle>& devices) {
  std::vector<Device*> out;
  out.reserve(devices.size());
  for (nb::handle h : devices) {
    out.push_back(h.is_none() ? nullptr : ResolveDevice(h));
  }
  return out;
}

bool HostAddressable(const Device* device, MemoryKind kind) {
  return device->host_addressable(kind);
}

namespace {
thread_local Device* thread_default_device = nullptr;
}  // namespace

Device* DefaultDevice() {
  return thread_default_device != nullptr ? thread_default_device
                                          : DefaultDevices().front();
}

Device* SetThreadDefaultDevice(Device* device) {
  Device* previous = thread_default_device;
  thread_default_device = device;
  return previous;
}

bool BorrowableAddress(const void* data, DType dtype) {
  const auto p = reinterpret_cast<uintptr_t>(data);
  return p % kMinBorrowAlignment == 0 && p % dtype_size(dtype) == 0;
}

std::vector<int64_t> ByteStrides(const Shape& shape, DType dtype) {
  std::vector<int64_t> s = shape.strides();
  for (int64_t& v : s) v *= static_cast<int64_t>(dtype_size(dtype));
  return s;
}

}  // namespace baton::python
