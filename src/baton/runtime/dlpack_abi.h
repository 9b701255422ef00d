// The DLPack ABI (https://dmlc.github.io/dlpack/latest/c_api.html, v1.0) --
// the structs baton exchanges with other array libraries through
// __dlpack__ / from_dlpack; only what baton uses is declared -- and how
// baton reads a producer's DLTensor: its dtype, its device and, through
// strided_import.h, its shape, strides and byte offset.
//
// Plain C structs and pure functions: no ownership, thread-safe. The
// Python bindings (python/src/dlpack.cc) own the capsules.
#pragma once

#include <cstdint>
#include <optional>

#include "baton/core/dtype.h"
#include "baton/core/status.h"
#include "baton/runtime/strided_import.h"

namespace baton::dlpack {

enum DeviceType : int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,  // pinned host memory of CUDA
};

enum DataTypeCode : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6,
};

struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};

struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null means compact row-major
  uint64_t byte_offset;
};

// The legacy (unversioned) managed tensor, capsule name "dltensor".
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};

inline constexpr uint32_t kMajorVersion = 1;
inline constexpr uint32_t kMinorVersion = 0;
inline constexpr uint64_t kFlagReadOnly = uint64_t{1} << 0;
inline constexpr uint64_t kFlagIsCopied = uint64_t{1} << 1;

// The versioned managed tensor, capsule name "dltensor_versioned".
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

// The DLPack type of a baton dtype (bool is kDLBool of 8 bits).
DLDataType ToDLDataType(DType t);
// The baton dtype of a DLPack type; nullopt when baton has none (lanes != 1,
// unsupported code or width).
std::optional<DType> FromDLDataType(DLDataType t);

// Whether the host can read memory on this DLPack device type (kDLCPU,
// kDLCUDAHost).
bool HostReadable(DLDevice device);

// Checks a producer's tensor, in this order, and plans reading it:
//  - a dtype baton has ("from_dlpack: baton has no dtype for DLPack type
//    (code 2, bits 8, lanes 1)"), FromDLDataType;
//  - memory the host can read ("from_dlpack: the producer's memory is on
//    DLPack device type 2, which this backend cannot read; copy it to the
//    host first"), HostReadable;
//  - ndim in [0, kMaxImportRank], a shape array when ndim > 0, then
//    PlanStridedImport (strides in elements, null meaning row-major).
// `extent`: the memory known to be valid, if the caller knows it (DLPack
// does not say; tests and fuzzers do). All errors are InvalidArgument.
Result<StridedPlan> PlanDLTensorImport(
    const DLTensor& t, std::optional<MemoryExtent> extent = std::nullopt);

}  // namespace baton::dlpack
