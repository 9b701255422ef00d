// Conversions shared by the bindings: dtypes <-> numpy, memory kind names,
// device arguments, and whether the host can address a memory space.
//
// The numpy dtype objects (bfloat16 from ml_dtypes) are created once at
// import and owned by the module (attribute `_numpy_dtypes`); the borrowed
// pointers here live as long as the module.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <vector>

#include "baton/core/dtype.h"
#include "baton/core/error.h"
#include "baton/core/memory_kind.h"
#include "baton/core/shape.h"
#include "baton/runtime/device.h"

namespace nb = nanobind;

namespace baton::python {

// Creates the dtype table; called once from module init.
void InitDTypes(nb::module_& m);
// numpy dtype object for `t`.
nb::handle NumpyDType(DType t);
// A new, writable numpy array holding a copy of `shape`-many elements of
// `dtype` read from dense row-major `data` (needs the GIL).
nb::object NumpyCopy(const void* data, const Shape& shape, DType dtype);
// A new, C-contiguous numpy array of `shape` and `dtype` with unspecified
// contents; `*data` is set to its first byte (needs the GIL; the memory
// lives as long as the returned object).
nb::object NumpyEmpty(const Shape& shape, DType dtype, void** data);
// The baton dtype named `name` ("float32", "bfloat16", ...); InvalidArgument
// naming the supported dtypes otherwise.
DType DTypeFromName(const std::string& name);
// JAX's x64 switch (bt.config "enable_x64", set through _set_enable_x64 by
// baton._dtypes): with it off (the default) 64-bit host data becomes 32-bit
// where it enters a trace. Any thread may read it.
void SetEnableX64(bool enabled);
bool EnableX64();
// The dtype host data of dtype `t` becomes: float64 -> float32 and int64 ->
// int32 with x64 off; `t` itself otherwise.
DType CanonicalHostDType(DType t);
// numpy's __array_interface__ typestr ("<f4"); bfloat16 travels as "<u2".
const char* ArrayInterfaceTypestr(DType t);

// "device", "pinned_host", "unpinned_host"; ValueError otherwise.
MemoryKind MemoryKindFromName(const std::string& name);
// None -> the default device; a Device -> itself; anything else -> TypeError.
Device* ResolveDevice(nb::handle device);
// A mesh's devices, one per position in row-major order, as the partitioned
// program and ShardedArray take them: None (another process's device) ->
// null, a Device -> itself; anything else -> TypeError.
std::vector<Device*> MeshDevices(const std::vector<nb::handle>& devices);
// Where arrays go when no device is named: this thread's default device
// (SetThreadDefaultDevice) when set, else device 0 of the default platform
// (platforms.h).
Device* DefaultDevice();
// Sets this thread's default device (null: none) and returns the previous
// one (bt.default_device, and each device's thread of bt.shard_map).
Device* SetThreadDefaultDevice(Device* device);
// Whether the host can read and write `kind` memory of `device` directly:
// every kind on the CPU backend, the host kinds on accelerators
// (Device::host_addressable).
bool HostAddressable(const Device* device, MemoryKind kind);

// Host memory baton borrows instead of copying (device_put(may_alias=True),
// from_dlpack) must start at a multiple of this many bytes (and of the
// element size); other memory is copied. numpy's allocations are 16-byte
// aligned.
inline constexpr uintptr_t kMinBorrowAlignment = 16;
bool BorrowableAddress(const void* data, DType dtype);

// Row-major strides in bytes / elements.
std::vector<int64_t> ByteStrides(const Shape& shape, DType dtype);

}  // namespace baton::python
