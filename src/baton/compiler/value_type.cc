#include "baton/compiler/value_type.h"

namespace baton::compiler {

std::string_view dtype_short_name(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return "pred";
    case DType::kInt8:
      return "s8";
    case DType::kInt16:
      return "s16";
    case DType::kInt32:
      return "s32";
    case DType::kInt64:
      return "s64";
    case DType::kUInt8:
      return "u8";
    case DType::kUInt32:
      return "u32";
    case DType::kFloat16:
      return "f16";
    case DType::kBFloat16:
      return "bf16";
    case DType::kFloat32:
      return "f32";
    case DType::kFloat64:
      return "f64";
    case DType::kComplex64:
      return "c64";
    case DType::kComplex128:
      return "c128";
  }
  return "?";
}

std::string DimsToString(const Shape& shape) {
  std::string s = "[";
  for (int i = 0; i < shape.rank(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string ValueType::ToString() const {
  std::string s = std::string(dtype_short_name(dtype)) + DimsToString(shape);
  if (memory_kind != MemoryKind::kDevice) {
    s += "{" + std::string(memory_kind_name(memory_kind)) + "}";
  }
  return s;
}

std::string TypeForMessage(const ValueType& type) {
  return std::string(dtype_name(type.dtype)) + DimsToString(type.shape);
}

}  // namespace baton::compiler
