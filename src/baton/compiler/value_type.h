// ValueId and ValueType: how the IR names a value and what it knows about it.
//
// Both are plain values (cheap to copy, no ownership, safe to share between
// threads once built).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "baton/core/dtype.h"
#include "baton/core/memory_kind.h"
#include "baton/core/shape.h"

namespace baton::compiler {

// The name of an IR value: the index, in its Program, of the instruction that
// produces it. Dense (0..num_values-1), so passes can keep per-value data in
// plain vectors indexed by ValueId.
using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

// Everything the compiler knows about a value before it runs: shape, element
// type and the memory kind it lives in (DESIGN R8: computed values live in
// device memory; parameters and transfers name their own kind).
struct ValueType {
  Shape shape;
  DType dtype = DType::kFloat32;
  MemoryKind memory_kind = MemoryKind::kDevice;

  int64_t num_elements() const { return shape.num_elements(); }
  int64_t byte_size() const {
    return num_elements() * static_cast<int64_t>(dtype_size(dtype));
  }
  bool operator==(const ValueType&) const = default;

  // Compact HLO-style text: "f32[2,3]", "pred[]", "bf16[8]{pinned_host}"
  // (the memory kind is printed only when it is not device).
  std::string ToString() const;
};

// HLO's short element type names: "pred", "s8", "u32", "bf16", "f32", ...
std::string_view dtype_short_name(DType dtype);

// "[2,3]", "[]" for a scalar.
std::string DimsToString(const Shape& shape);

// numpy-flavoured long form for error messages: "float32[2,3]".
std::string TypeForMessage(const ValueType& type);

}  // namespace baton::compiler
