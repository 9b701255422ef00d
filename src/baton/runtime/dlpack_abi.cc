#include "baton/runtime/dlpack_abi.h"

#include <span>
#include <string>

namespace baton::dlpack {

DLDataType ToDLDataType(DType t) {
  const auto bits = static_cast<uint8_t>(dtype_size(t) * 8);
  switch (t) {
    case DType::kBool:
      return {kDLBool, 8, 1};
    case DType::kBFloat16:
      return {kDLBfloat, 16, 1};
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return {kDLFloat, bits, 1};
    case DType::kUInt8:
    case DType::kUInt32:
      return {kDLUInt, bits, 1};
    case DType::kComplex64:
    case DType::kComplex128:
      return {kDLComplex, bits, 1};
    default:
      return {kDLInt, bits, 1};
  }
}

std::optional<DType> FromDLDataType(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  switch (t.code) {
    case kDLBool:
      if (t.bits == 8) return DType::kBool;
      break;
    case kDLInt:
      if (t.bits == 8) return DType::kInt8;
      if (t.bits == 16) return DType::kInt16;
      if (t.bits == 32) return DType::kInt32;
      if (t.bits == 64) return DType::kInt64;
      break;
    case kDLUInt:
      if (t.bits == 8) return DType::kUInt8;
      if (t.bits == 32) return DType::kUInt32;
      break;
    case kDLFloat:
      if (t.bits == 16) return DType::kFloat16;
      if (t.bits == 32) return DType::kFloat32;
      if (t.bits == 64) return DType::kFloat64;
      break;
    case kDLBfloat:
      if (t.bits == 16) return DType::kBFloat16;
      break;
    case kDLComplex:
      if (t.bits == 64) return DType::kComplex64;
      if (t.bits == 128) return DType::kComplex128;
      break;
  }
  return std::nullopt;
}

bool HostReadable(DLDevice device) {
  return device.device_type == kDLCPU || device.device_type == kDLCUDAHost;
}

Result<StridedPlan> PlanDLTensorImport(const DLTensor& t,
                                       std::optional<MemoryExtent> extent) {
  const std::optional<DType> dtype = FromDLDataType(t.dtype);
  if (!dtype) {
    return InvalidArgument(
        "from_dlpack: baton has no dtype for DLPack type (code " +
        std::to_string(t.dtype.code) + ", bits " +
        std::to_string(t.dtype.bits) + ", lanes " +
        std::to_string(t.dtype.lanes) + ")");
  }
  if (!HostReadable(t.device)) {
    return InvalidArgument(
        "from_dlpack: the producer's memory is on DLPack device type " +
        std::to_string(t.device.device_type) +
        ", which this backend cannot read; copy it to the host first");
  }
  if (t.ndim < 0 || t.ndim > kMaxImportRank) {
    return InvalidArgument("from_dlpack: ndim " + std::to_string(t.ndim) +
                           " is not in [0, " + std::to_string(kMaxImportRank) +
                           "]");
  }
  if (t.ndim > 0 && t.shape == nullptr) {
    return InvalidArgument("from_dlpack: the tensor has " +
                           std::to_string(t.ndim) +
                           " dimensions but no shape array");
  }
  const auto rank = static_cast<size_t>(t.ndim);
  StridedSource src;
  src.data = t.data;
  src.byte_offset = t.byte_offset;
  src.dtype = *dtype;
  src.shape = std::span<const int64_t>(t.shape, rank);
  if (t.strides != nullptr) {
    src.strides = std::span<const int64_t>(t.strides, rank);
  }
  src.stride_unit = StrideUnit::kElements;
  src.extent = extent;
  src.what = "from_dlpack";
  return PlanStridedImport(src);
}

}  // namespace baton::dlpack
