#include "baton/compiler/shape_inference.h"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

namespace baton::compiler {
namespace {

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

std::string ListToString(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(values[i]);
  }
  return s + "]";
}

std::string Str(const ValueType& t) { return TypeForMessage(t); }

ValueType OnDevice(Shape shape, DType dtype) {
  return ValueType{std::move(shape), dtype, MemoryKind::kDevice};
}

// `role` ("", "result ") prefixes the check's message, "shape (2, -1) ...".
Status CheckShape(const OpContext& op, const Shape& shape,
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

Status CheckListLength(const OpContext& op, const std::vector<int64_t>& list,
                       const std::string& what, const ValueType& operand) {
  if (static_cast<int>(list.size()) == operand.shape.rank()) return OkStatus();
  return op.Fail(what + " " + ListToString(list) + " has " +
                 std::to_string(list.size()) + " entries but the operand " +
                 Str(operand) + " has rank " +
                 std::to_string(operand.shape.rank()));
}

Status CheckIntegerScalar(const OpContext& op, int operand,
                          const std::string& what) {
  const ValueType& t = op.operand(operand);
  if (t.shape.rank() == 0 && is_integer(t.dtype)) return OkStatus();
  return op.Fail(what + " (operand " + std::to_string(operand) +
                 ") must be an integer scalar, got " + Str(t));
}

bool NeedsFloat(UnaryOp op) {
  switch (op) {
    case UnaryOp::kExp:
    case UnaryOp::kLog:
    case UnaryOp::kTanh:
    case UnaryOp::kLogistic:
    case UnaryOp::kSqrt:
    case UnaryOp::kRsqrt:
    case UnaryOp::kSin:
    case UnaryOp::kCos:
    case UnaryOp::kFloor:
    case UnaryOp::kCeil:
    case UnaryOp::kRound:
    case UnaryOp::kLog1p:
    case UnaryOp::kExpm1:
    case UnaryOp::kTan:
    case UnaryOp::kAtan:
      return true;
    default:
      return false;
  }
}

// Shapes and dtypes of two operands that must agree exactly.
Status CheckSameShapeAndDType(const OpContext& op, const ValueType& a,
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

Result<ValueType> InferParameter(const OpContext& op, const ParameterAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(0));
  if (a.index < 0) return op.Fail("negative index " + std::to_string(a.index));
  BATON_RETURN_IF_ERROR(CheckShape(op, a.type.shape, ""));
  return a.type;
}

Result<ValueType> InferConstant(const OpContext& op, const ConstantAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(0));
  if (!a.literal) return op.Fail("has no literal");
  return OnDevice(a.literal->shape(), a.literal->dtype());
}

Result<ValueType> InferIota(const OpContext& op, const IotaAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(0));
  BATON_RETURN_IF_ERROR(CheckShape(op, a.shape, ""));
  if (a.dtype == DType::kBool) return op.Fail("dtype bool is not supported");
  if (a.dimension < 0 || a.dimension >= a.shape.rank()) {
    return op.Fail("dimension " + std::to_string(a.dimension) +
                   " is out of range for shape " + a.shape.to_string());
  }
  return OnDevice(a.shape, a.dtype);
}

Result<ValueType> InferUnary(const OpContext& op, const UnaryAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(1));
  const ValueType& x = op.operand(0);
  if (NeedsFloat(a.op) && !is_floating(x.dtype)) {
    return op.Fail("needs a floating-point operand, got " + Str(x) +
                   "; convert it first");
  }
  if (a.op == UnaryOp::kNot && is_floating(x.dtype)) {
    return op.Fail("needs a bool or integer operand, got " + Str(x));
  }
  if ((a.op == UnaryOp::kNeg || a.op == UnaryOp::kAbs ||
       a.op == UnaryOp::kSign) &&
      x.dtype == DType::kBool) {
    return op.Fail("is not defined for bool operands (got " + Str(x) +
                   "); convert it first");
  }
  return OnDevice(x.shape, x.dtype);
}

Result<ValueType> InferBinary(const OpContext& op, const BinaryAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(2));
  const ValueType& x = op.operand(0);
  BATON_RETURN_IF_ERROR(CheckSameShapeAndDType(op, x, op.operand(1)));
  const bool shift = a.op == BinaryOp::kShiftLeft ||
                     a.op == BinaryOp::kShiftRightArithmetic ||
                     a.op == BinaryOp::kShiftRightLogical;
  if (shift && !is_integer(x.dtype)) {
    return op.Fail("needs integer operands, got " + Str(x) + " and " +
                   Str(op.operand(1)));
  }
  if (a.op == BinaryOp::kAtan2 && !is_floating(x.dtype)) {
    return op.Fail("needs floating-point operands, got " + Str(x) + " and " +
                   Str(op.operand(1)) + "; convert them first");
  }
  if ((a.op == BinaryOp::kAnd || a.op == BinaryOp::kOr ||
       a.op == BinaryOp::kXor) &&
      is_floating(x.dtype)) {
    return op.Fail("needs bool or integer operands, got " + Str(x) + " and " +
                   Str(op.operand(1)));
  }
  if ((a.op == BinaryOp::kSub || a.op == BinaryOp::kDiv ||
       a.op == BinaryOp::kPow || a.op == BinaryOp::kRem) &&
      x.dtype == DType::kBool) {
    return op.Fail("is not defined for bool operands; convert them first");
  }
  return OnDevice(x.shape, x.dtype);
}

Result<ValueType> InferCompare(const OpContext& op) {
  BATON_RETURN_IF_ERROR(op.CheckArity(2));
  BATON_RETURN_IF_ERROR(
      CheckSameShapeAndDType(op, op.operand(0), op.operand(1)));
  return OnDevice(op.operand(0).shape, DType::kBool);
}

Result<ValueType> InferSelect(const OpContext& op) {
  BATON_RETURN_IF_ERROR(op.CheckArity(3));
  const ValueType &pred = op.operand(0), &t = op.operand(1), &f = op.operand(2);
  if (pred.dtype != DType::kBool) {
    return op.Fail("the predicate must be bool, got " + Str(pred));
  }
  if (pred.shape != t.shape || t.shape != f.shape) {
    return op.Fail("predicate, on_true and on_false shapes " +
                   pred.shape.to_string() + ", " + t.shape.to_string() +
                   " and " + f.shape.to_string() +
                   " differ; broadcast them first");
  }
  if (t.dtype != f.dtype) {
    return op.Fail("on_true and on_false dtypes " +
                   std::string(dtype_name(t.dtype)) + " and " +
                   std::string(dtype_name(f.dtype)) +
                   " differ; convert one of them first");
  }
  return OnDevice(t.shape, t.dtype);
}

Result<ValueType> InferBroadcastInDim(const OpContext& op,
                                      const BroadcastInDimAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(1));
  const ValueType& x = op.operand(0);
  BATON_RETURN_IF_ERROR(CheckShape(op, a.shape, "result "));
  BATON_RETURN_IF_ERROR(
      CheckListLength(op, a.broadcast_dimensions, "broadcast_dimensions", x));
  BATON_RETURN_IF_ERROR(CheckDimList(
      op, a.broadcast_dimensions, a.shape.rank(), "broadcast_dimensions",
      [&] { return "result shape " + a.shape.to_string(); }));
  for (int i = 0; i < x.shape.rank(); ++i) {
    const int64_t out = a.shape[static_cast<int>(a.broadcast_dimensions[i])];
    if (x.shape[i] != 1 && x.shape[i] != out) {
      return op.Fail("operand " + Str(x) + " dimension " + std::to_string(i) +
                     " has size " + std::to_string(x.shape[i]) +
                     ", which is neither 1 nor the size " +
                     std::to_string(out) + " of result dimension " +
                     std::to_string(a.broadcast_dimensions[i]) + " in " +
                     a.shape.to_string());
    }
  }
  return OnDevice(a.shape, x.dtype);
}

Result<ValueType> InferReshape(const OpContext& op, const ReshapeAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(1));
  const ValueType& x = op.operand(0);
  BATON_RETURN_IF_ERROR(CheckShape(op, a.shape, "result "));
  if (a.shape.num_elements() != x.num_elements()) {
    return op.Fail("cannot reshape " + Str(x) + " (" +
                   std::to_string(x.num_elements()) + " elements) to " +
                   a.shape.to_string() + " (" +
                   std::to_string(a.shape.num_elements()) + " elements)");
  }
  return OnDevice(a.shape, x.dtype);
}

Result<ValueType> InferTranspose(const OpContext& op, const TransposeAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(1));
  const ValueType& x = op.operand(0);
  BATON_RETURN_IF_ERROR(CheckListLength(op, a.permutation, "permutation", x));
  BATON_RETURN_IF_ERROR(CheckDimList(op, a.permutation, x.shape.rank(),
                                     "permutation",
                                     [&] { return "operand " + Str(x); }));
  std::vector<int64_t> dims;
  for (int64_t p : a.permutation) dims.push_back(x.shape[static_cast<int>(p)]);
  return OnDevice(Shape(std::move(dims)), x.dtype);
}

Result<ValueType> InferSlice(const OpContext& op, const SliceAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(1));
  const ValueType& x = op.operand(0);
  BATON_RETURN_IF_ERROR(CheckListLength(op, a.start, "start", x));
  BATON_RETURN_IF_ERROR(CheckListLength(op, a.limit, "limit", x));
  BATON_RETURN_IF_ERROR(CheckListLength(op, a.stride, "stride", x));
  std::vector<int64_t> dims;
  for (int i = 0; i < x.shape.rank(); ++i) {
    const int64_t start = a.start[i], limit = a.limit[i], stride = a.stride[i];
    if (start < 0 || start > limit || limit > x.shape[i] || stride < 1) {
      return op.Fail("dimension " + std::to_string(i) + " of " + Str(x) +
                     ": start " + std::to_string(start) + ", limit " +
                     std::to_string(limit) + ", stride " +
                     std::to_string(stride) +
                     " do not fit (need 0 <= start <= limit <= " +
                     std::to_string(x.shape[i]) + " and stride >= 1)");
    }
    // ceil((limit - start) / stride) without the overflow of the usual
    // (n + stride - 1) / stride for huge strides.
    const int64_t n = limit - start;  // >= 0, checked above
    dims.push_back(n == 0 ? 0 : 1 + (n - 1) / stride);
  }
  return OnDevice(Shape(std::move(dims)), x.dtype);
}

Result<ValueType> InferDynamicSlice(const OpContext& op,
                                    const DynamicSliceAttrs& a) {
  if (op.num_operands() < 1) return op.CheckArity(1);
  const ValueType& x = op.operand(0);
  const int rank = x.shape.rank();
  if (op.num_operands() != 1 + rank) {
    return op.Fail("expects the operand and " + std::to_string(rank) +
                   " start indices (one per dimension of " + Str(x) +
                   "), got " + std::to_string(op.num_operands()) + " operands");
  }
  for (int i = 0; i < rank; ++i) {
    BATON_RETURN_IF_ERROR(
        CheckIntegerScalar(op, 1 + i, "start index " + std::to_string(i)));
  }
  BATON_RETURN_IF_ERROR(CheckListLength(op, a.slice_sizes, "slice_sizes", x));
  for (int i = 0; i < rank; ++i) {
    if (a.slice_sizes[i] < 0 || a.slice_sizes[i] > x.shape[i]) {
      return op.Fail("slice_sizes " + ListToString(a.slice_sizes) + ": size " +
                     std::to_string(a.slice_sizes[i]) +
                     " does not fit dimension " + std::to_string(i) + " of " +
                     Str(x));
    }
  }
  return OnDevice(Shape(a.slice_sizes), x.dtype);
}

Result<ValueType> InferDynamicUpdateSlice(const OpContext& op) {
  if (op.num_operands() < 2) return op.CheckArity(2);
  const ValueType &x = op.operand(0), &update = op.operand(1);
  const int rank = x.shape.rank();
  if (op.num_operands() != 2 + rank) {
    return op.Fail(
        "expects the operand, the update and " + std::to_string(rank) +
        " start indices (one per dimension "
        "of " +
        Str(x) + "), got " + std::to_string(op.num_operands()) + " operands");
  }
  for (int i = 0; i < rank; ++i) {
    BATON_RETURN_IF_ERROR(
        CheckIntegerScalar(op, 2 + i, "start index " + std::to_string(i)));
  }
  if (update.shape.rank() != rank) {
    return op.Fail("update " + Str(update) + " and operand " + Str(x) +
                   " differ in rank");
  }
  for (int i = 0; i < rank; ++i) {
    if (update.shape[i] > x.shape[i]) {
      return op.Fail("update " + Str(update) + " does not fit operand " +
                     Str(x) + " (dimension " + std::to_string(i) + ")");
    }
  }
  if (update.dtype != x.dtype) {
    return op.Fail("update dtype " + std::string(dtype_name(update.dtype)) +
                   " differs from operand dtype " +
                   std::string(dtype_name(x.dtype)) + "; convert it first");
  }
  return OnDevice(x.shape, x.dtype);
}

Result<ValueType> InferConcatenate(const OpContext& op,
                                   const ConcatenateAttrs& a) {
  if (op.num_operands() == 0) return op.Fail("needs at least one operand");
  const ValueType& first = op.operand(0);
  const int rank = first.shape.rank();
  if (rank == 0)
    return op.Fail("cannot concatenate scalars; reshape them first");
  if (a.dimension < 0 || a.dimension >= rank) {
    return op.Fail("dimension " + std::to_string(a.dimension) +
                   " is out of range for operands of rank " +
                   std::to_string(rank));
  }
  std::vector<int64_t> dims = first.shape.dims();
  dims[a.dimension] = 0;
  for (int k = 0; k < op.num_operands(); ++k) {
    const ValueType& t = op.operand(k);
    if (t.dtype != first.dtype) {
      return op.Fail("operand " + std::to_string(k) + " " + Str(t) +
                     " and operand 0 " + Str(first) +
                     " differ in dtype; convert them first");
    }
    bool compatible = t.shape.rank() == rank;
    for (int i = 0; compatible && i < rank; ++i) {
      compatible = i == a.dimension || t.shape[i] == first.shape[i];
    }
    if (!compatible) {
      return op.Fail("operand " + std::to_string(k) + " " + Str(t) +
                     " and operand 0 " + Str(first) +
                     " must have equal shapes except in dimension " +
                     std::to_string(a.dimension));
    }
    // Each size passed Shape::Check, but enough of them can still sum
    // beyond int64 (17 operands near kMaxElements).
    if (__builtin_add_overflow(dims[a.dimension],
                               t.shape[static_cast<int>(a.dimension)],
                               &dims[a.dimension])) {
      return op.Fail("the operands' sizes along dimension " +
                     std::to_string(a.dimension) +
                     " add up to more than 64 bits can hold");
    }
  }
  return OnDevice(Shape(std::move(dims)), first.dtype);
}

Result<ValueType> InferPad(const OpContext& op, const PadAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(2));
  const ValueType &x = op.operand(0), &value = op.operand(1);
  if (value.shape.rank() != 0 || value.dtype != x.dtype) {
    return op.Fail(
        "the padding value must be a scalar of the operand's "
        "dtype " +
        std::string(dtype_name(x.dtype)) + ", got " + Str(value));
  }
  BATON_RETURN_IF_ERROR(CheckListLength(op, a.low, "low", x));
  BATON_RETURN_IF_ERROR(CheckListLength(op, a.high, "high", x));
  BATON_RETURN_IF_ERROR(CheckListLength(op, a.interior, "interior", x));
  std::vector<int64_t> dims;
  for (int i = 0; i < x.shape.rank(); ++i) {
    if (a.interior[i] < 0) {
      return op.Fail("interior " + ListToString(a.interior) +
                     " has a negative entry");
    }
    // No padding can be larger than an array: beyond that the attributes
    // are garbage, and executors computing positions from them (low +
    // i * (interior + 1)) would overflow.
    if (a.interior[i] > kMaxElements || a.low[i] > kMaxElements ||
        a.low[i] < -kMaxElements || a.high[i] > kMaxElements ||
        a.high[i] < -kMaxElements) {
      return op.Fail("dimension " + std::to_string(i) + " of " + Str(x) +
                     ": low " + std::to_string(a.low[i]) + ", high " +
                     std::to_string(a.high[i]) + " or interior " +
                     std::to_string(a.interior[i]) + " is beyond " +
                     std::to_string(kMaxElements) +
                     ", the largest size an array can have");
    }
    const int64_t d = x.shape[i];
    // low + high + d + (d - 1) * interior, refused rather than wrapped when
    // hostile attributes take it beyond int64.
    int64_t size = 0, gaps = 0;
    if (__builtin_mul_overflow(std::max<int64_t>(d - 1, 0), a.interior[i],
                               &gaps) ||
        __builtin_add_overflow(d, gaps, &size) ||
        __builtin_add_overflow(size, a.low[i], &size) ||
        __builtin_add_overflow(size, a.high[i], &size)) {
      return op.Fail("dimension " + std::to_string(i) + " of " + Str(x) +
                     " would have a size beyond 64 bits (low " +
                     std::to_string(a.low[i]) + ", high " +
                     std::to_string(a.high[i]) + ", interior " +
                     std::to_string(a.interior[i]) + ")");
    }
    if (size < 0) {
      return op.Fail("dimension " + std::to_string(i) + " of " + Str(x) +
                     " would have negative size " + std::to_string(size) +
                     " (low " + std::to_string(a.low[i]) + ", high " +
                     std::to_string(a.high[i]) + ", interior " +
                     std::to_string(a.interior[i]) + ")");
    }
    dims.push_back(size);
  }
  return OnDevice(Shape(std::move(dims)), x.dtype);
}

// The result shape of gather (and the updates shape scatter expects).
Result<Shape> GatherShape(const OpContext& op, const ValueType& x,
                          const ValueType& indices, int64_t axis) {
  if (!is_integer(indices.dtype)) {
    return op.Fail("indices must be integers, got " + Str(indices));
  }
  if (x.shape.rank() == 0) {
    return op.Fail("cannot index into the scalar operand " + Str(x));
  }
  if (axis < 0 || axis >= x.shape.rank()) {
    return op.Fail("axis " + std::to_string(axis) +
                   " is out of range for operand " + Str(x));
  }
  const int ax = static_cast<int>(axis);
  std::vector<int64_t> dims(x.shape.dims().begin(),
                            x.shape.dims().begin() + ax);
  dims.insert(dims.end(), indices.shape.dims().begin(),
              indices.shape.dims().end());
  dims.insert(dims.end(), x.shape.dims().begin() + ax + 1,
              x.shape.dims().end());
  return Shape(std::move(dims));
}

Result<ValueType> InferGather(const OpContext& op, const GatherAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(2));
  const ValueType &x = op.operand(0), &indices = op.operand(1);
  BATON_ASSIGN_OR_RETURN(Shape shape, GatherShape(op, x, indices, a.axis));
  // The result joins two shapes' dimensions: check it before counting its
  // elements (the product may not fit int64).
  BATON_RETURN_IF_ERROR(CheckShape(op, shape, "result "));
  // Clamping into an empty axis has no element to return.
  if (x.shape[static_cast<int>(a.axis)] == 0 && shape.num_elements() > 0) {
    return op.Fail("cannot take from axis " + std::to_string(a.axis) + " of " +
                   Str(x) + ", which is empty");
  }
  return OnDevice(std::move(shape), x.dtype);
}

Result<ValueType> InferSort(const OpContext& op, const SortAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(1));
  const ValueType& x = op.operand(0);
  if (a.dimension < 0 || a.dimension >= x.shape.rank()) {
    return op.Fail("dimension " + std::to_string(a.dimension) +
                   " is out of range for operand " + Str(x));
  }
  if (a.indices && x.shape[static_cast<int>(a.dimension)] > INT32_MAX) {
    return op.Fail("dimension " + std::to_string(a.dimension) + " of " +
                   Str(x) + " is too long for int32 indices");
  }
  return OnDevice(x.shape, a.indices ? DType::kInt32 : x.dtype);
}

Result<ValueType> InferScatter(const OpContext& op, const ScatterAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(3));
  const ValueType &x = op.operand(0), &indices = op.operand(1),
                  &updates = op.operand(2);
  BATON_ASSIGN_OR_RETURN(Shape shape, GatherShape(op, x, indices, a.axis));
  if (updates.shape != shape) {
    return op.Fail("updates shape " + updates.shape.to_string() + " must be " +
                   shape.to_string() + ", the shape gather gives for operand " +
                   Str(x) + ", indices " + Str(indices) + " and axis " +
                   std::to_string(a.axis));
  }
  if (updates.dtype != x.dtype) {
    return op.Fail("updates dtype " + std::string(dtype_name(updates.dtype)) +
                   " differs from operand dtype " +
                   std::string(dtype_name(x.dtype)) + "; convert it first");
  }
  return OnDevice(x.shape, x.dtype);
}

Result<ValueType> InferReduce(const OpContext& op, const ReduceAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(1));
  const ValueType& x = op.operand(0);
  BATON_RETURN_IF_ERROR(CheckDimList(op, a.axes, x.shape.rank(), "axes",
                                     [&] { return "operand " + Str(x); }));
  std::vector<int64_t> dims;
  for (int i = 0; i < x.shape.rank(); ++i) {
    if (std::find(a.axes.begin(), a.axes.end(), i) == a.axes.end()) {
      dims.push_back(x.shape[i]);
    }
  }
  return OnDevice(Shape(std::move(dims)), x.dtype);
}

Result<ValueType> InferDotGeneral(const OpContext& op,
                                  const DotGeneralAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(2));
  const ValueType &lhs = op.operand(0), &rhs = op.operand(1);
  auto operands = [&] {
    return " (lhs " + Str(lhs) + ", rhs " + Str(rhs) + ")";
  };
  if (lhs.dtype != rhs.dtype) {
    return op.Fail("operand dtypes differ" + operands() +
                   "; convert one first");
  }
  if (lhs.dtype == DType::kBool) {
    return op.Fail("needs numeric operands, got bool" + operands());
  }
  if (a.lhs_batch.size() != a.rhs_batch.size() ||
      a.lhs_contracting.size() != a.rhs_contracting.size()) {
    return op.Fail(
        "lhs and rhs need as many batch dimensions (" +
        ListToString(a.lhs_batch) + " vs " + ListToString(a.rhs_batch) +
        ") and contracting dimensions (" + ListToString(a.lhs_contracting) +
        " vs " + ListToString(a.rhs_contracting) + ") as each other");
  }
  // Batch and contracting dimensions of one side must all be distinct.
  std::vector<int64_t> lhs_used = a.lhs_batch, rhs_used = a.rhs_batch;
  lhs_used.insert(lhs_used.end(), a.lhs_contracting.begin(),
                  a.lhs_contracting.end());
  rhs_used.insert(rhs_used.end(), a.rhs_contracting.begin(),
                  a.rhs_contracting.end());
  BATON_RETURN_IF_ERROR(CheckDimList(op, lhs_used, lhs.shape.rank(),
                                     "lhs batch + contracting dimensions",
                                     [&] { return "lhs " + Str(lhs); }));
  BATON_RETURN_IF_ERROR(CheckDimList(op, rhs_used, rhs.shape.rank(),
                                     "rhs batch + contracting dimensions",
                                     [&] { return "rhs " + Str(rhs); }));
  auto check_sizes = [&](const std::vector<int64_t>& l,
                         const std::vector<int64_t>& r,
                         const char* what) -> Status {
    for (size_t i = 0; i < l.size(); ++i) {
      const int64_t ls = lhs.shape[static_cast<int>(l[i])];
      const int64_t rs = rhs.shape[static_cast<int>(r[i])];
      if (ls != rs) {
        return op.Fail(std::string(what) + " dimension " +
                       std::to_string(l[i]) + " of lhs has size " +
                       std::to_string(ls) + " but " + what + " dimension " +
                       std::to_string(r[i]) + " of rhs has size " +
                       std::to_string(rs) + operands());
      }
    }
    return OkStatus();
  };
  BATON_RETURN_IF_ERROR(check_sizes(a.lhs_batch, a.rhs_batch, "batch"));
  BATON_RETURN_IF_ERROR(
      check_sizes(a.lhs_contracting, a.rhs_contracting, "contracting"));
  std::vector<int64_t> dims;
  for (int64_t d : a.lhs_batch) dims.push_back(lhs.shape[static_cast<int>(d)]);
  auto append_free = [&dims](const ValueType& t,
                             const std::vector<int64_t>& used) {
    for (int i = 0; i < t.shape.rank(); ++i) {
      if (std::find(used.begin(), used.end(), i) == used.end()) {
        dims.push_back(t.shape[i]);
      }
    }
  };
  append_free(lhs, lhs_used);
  append_free(rhs, rhs_used);
  return OnDevice(Shape(std::move(dims)), lhs.dtype);
}

}  // namespace

Result<ValueType> InferType(const OpAttrs& attrs,
                            std::span<const ValueType> operands) {
  const OpContext op(attrs, operands);
  switch (KindOf(attrs)) {
    case OpKind::kParameter:
      return InferParameter(op, std::get<ParameterAttrs>(attrs));
    case OpKind::kConstant:
      return InferConstant(op, std::get<ConstantAttrs>(attrs));
    case OpKind::kIota:
      return InferIota(op, std::get<IotaAttrs>(attrs));
    case OpKind::kConvert:
      BATON_RETURN_IF_ERROR(op.CheckArity(1));
      return OnDevice(operands[0].shape, std::get<ConvertAttrs>(attrs).dtype);
    case OpKind::kUnary:
      return InferUnary(op, std::get<UnaryAttrs>(attrs));
    case OpKind::kBinary:
      return InferBinary(op, std::get<BinaryAttrs>(attrs));
    case OpKind::kCompare:
      return InferCompare(op);
    case OpKind::kSelect:
      return InferSelect(op);
    case OpKind::kBroadcastInDim:
      return InferBroadcastInDim(op, std::get<BroadcastInDimAttrs>(attrs));
    case OpKind::kReshape:
      return InferReshape(op, std::get<ReshapeAttrs>(attrs));
    case OpKind::kTranspose:
      return InferTranspose(op, std::get<TransposeAttrs>(attrs));
    case OpKind::kSlice:
      return InferSlice(op, std::get<SliceAttrs>(attrs));
    case OpKind::kDynamicSlice:
      return InferDynamicSlice(op, std::get<DynamicSliceAttrs>(attrs));
    case OpKind::kDynamicUpdateSlice:
      return InferDynamicUpdateSlice(op);
    case OpKind::kConcatenate:
      return InferConcatenate(op, std::get<ConcatenateAttrs>(attrs));
    case OpKind::kPad:
      return InferPad(op, std::get<PadAttrs>(attrs));
    case OpKind::kGather:
      return InferGather(op, std::get<GatherAttrs>(attrs));
    case OpKind::kScatter:
      return InferScatter(op, std::get<ScatterAttrs>(attrs));
    case OpKind::kReduce:
      return InferReduce(op, std::get<ReduceAttrs>(attrs));
    case OpKind::kDotGeneral:
      return InferDotGeneral(op, std::get<DotGeneralAttrs>(attrs));
    case OpKind::kTransfer: {
      BATON_RETURN_IF_ERROR(op.CheckArity(1));
      ValueType t = operands[0];
      t.memory_kind = std::get<TransferAttrs>(attrs).memory_kind;
      return t;
    }
    case OpKind::kSort:
      return InferSort(op, std::get<SortAttrs>(attrs));
    case OpKind::kLinalg:
      return InferLinalgType(std::get<LinalgAttrs>(attrs), operands);
    case OpKind::kCall:
      return InferCallType(std::get<CallAttrs>(attrs), operands);
    case OpKind::kWhile:
      return InferWhileType(std::get<WhileAttrs>(attrs), operands);
    case OpKind::kScan:
      return InferScanType(std::get<ScanAttrs>(attrs), operands);
    case OpKind::kCase:
      return InferCaseType(std::get<CaseAttrs>(attrs), operands);
  }
  return Internal("InferType: unknown op kind");
}

}  // namespace baton::compiler
