// Internal to type inference (shape_inference.h): the op context every
// rule reports through and the checks the rule families share. The rules
// live in shape_inference.cc (elementwise, layout and reduction ops, and the
// dispatch) and shape_inference_indexing.cc (slicing, padding,
// concatenation, gather, scatter, sort and fft). Not used outside those files.
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "baton/compiler/op_attrs.h"
#include "baton/compiler/value_type.h"
#include "baton/core/status.h"

namespace baton::compiler::inference {

// Every message starts with the op's name; this carries the op around and
// names it only when something is wrong (inference runs for every traced
// op, so the common path builds no strings).
class OpContext {
 public:
  OpContext(const OpAttrs& attrs, std::span<const ValueType> operands)
      : attrs_(attrs), operands_(operands) {}

  const ValueType& operand(int i) const { return operands_[i]; }
  int num_operands() const { return static_cast<int>(operands_.size()); }

  Status Fail(const std::string& message) const {
    return InvalidArgument(OpDisplayName(attrs_) + ": " + message);
  }

  Status CheckArity(int expected) const {
    if (num_operands() == expected) return OkStatus();
    return Fail("expects " + std::to_string(expected) + " operand" +
                (expected == 1 ? "" : "s") + ", got " +
                std::to_string(num_operands()));
  }

 private:
  const OpAttrs& attrs_;
  std::span<const ValueType> operands_;
};

inline std::string ListToString(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(values[i]);
  }
  return s + "]";
}

inline std::string Str(const ValueType& t) { return TypeForMessage(t); }

inline ValueType OnDevice(Shape shape, DType dtype) {
  return ValueType{std::move(shape), dtype, MemoryKind::kDevice};
}

// `role` ("", "result ") prefixes the check's message, "shape (2, -1) ...".
inline Status CheckShape(const OpContext& op, const Shape& shape,
                  const std::string& role) {
  if (Status s = shape.Check(); !s.ok()) return op.Fail(role + s.message());
  return OkStatus();
}

// Each entry of `dims` (named `what`) must be in [0, bound) and distinct;
// `of()` describes what the dimensions index, built only for a message.
template <typename DescribeFn>
Status CheckDimList(const OpContext& op, const std::vector<int64_t>& dims,
                    int64_t bound, std::string_view what, DescribeFn of) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(bound, 0)));
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= bound) {
      return op.Fail(std::string(what) + " " + ListToString(dims) + ": " +
                     std::to_string(dims[i]) + " is out of range for " + of() +
                     " of rank " + std::to_string(bound));
    }
    if (seen[dims[i]]) {
      return op.Fail(std::string(what) + " " + ListToString(dims) +
                     " repeats dimension " + std::to_string(dims[i]));
    }
    seen[dims[i]] = true;
  }
  return OkStatus();
}

inline Status CheckListLength(const OpContext& op, const std::vector<int64_t>& list,
                       const std::string& what, const ValueType& operand) {
  if (static_cast<int>(list.size()) == operand.shape.rank()) return OkStatus();
  return op.Fail(what + " " + ListToString(list) + " has " +
                 std::to_string(list.size()) + " entries but the operand " +
                 Str(operand) + " has rank " +
                 std::to_string(operand.shape.rank()));
}

inline Status CheckIntegerScalar(const OpContext& op, int operand,
                          const std::string& what) {
  const ValueType& t = op.operand(operand);
  if (t.shape.rank() == 0 && is_integer(t.dtype)) return OkStatus();
  return op.Fail(what + " (operand " + std::to_string(operand) +
                 ") must be an integer scalar, got " + Str(t));
}

// Shapes and dtypes of two operands that must agree exactly.
inline Status CheckSameShapeAndDType(const OpContext& op, const ValueType& a,
                              const ValueType& b) {
  if (a.shape != b.shape) {
    return op.Fail("operand shapes " + a.shape.to_string() + " and " +
                   b.shape.to_string() +
                   " differ; broadcast one of them first");
  }
  if (a.dtype != b.dtype) {
    return op.Fail("operand dtypes " + std::string(dtype_name(a.dtype)) +
                   " and " + std::string(dtype_name(b.dtype)) +
                   " differ; convert one of them first");
  }
  return OkStatus();
}

// The indexing family (shape_inference_indexing.cc).
Result<ValueType> InferSlice(const OpContext& op, const SliceAttrs& a);
Result<ValueType> InferDynamicSlice(const OpContext& op,
                                    const DynamicSliceAttrs& a);
Result<ValueType> InferDynamicUpdateSlice(const OpContext& op);
Result<ValueType> InferConcatenate(const OpContext& op,
                                   const ConcatenateAttrs& a);
Result<ValueType> InferPad(const OpContext& op, const PadAttrs& a);
Result<ValueType> InferGather(const OpContext& op, const GatherAttrs& a);
Result<ValueType> InferScatter(const OpContext& op, const ScatterAttrs& a);
Result<ValueType> InferSort(const OpContext& op, const SortAttrs& a);
Result<ValueType> InferFft(const OpContext& op, const FftAttrs& a);

}  // namespace baton::compiler::inference
