// Type inference of the indexing ops: slice, dynamic_slice,
// dynamic_update_slice, concatenate, pad, gather, scatter and sort
// (shape_inference_internal.h).
#include <climits>
#include <string>
#include <vector>

#include "baton/compiler/shape_inference_internal.h"

namespace baton::compiler::inference {

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

namespace {

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

}  // namespace

Result<ValueType> InferGather(const OpContext& op, const GatherAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(2));
  const ValueType &x = op.operand(0), &indices = op.operand(1);
  BATON_ASSIGN_OR_RETURN(Shape shape, GatherShape(op, x, indices, a.axis));
  // The result joins two shapes' dimensions: check it before counting its
  // elements (the product may not fit int64).
  BATON_RETURN_IF_ERROR(CheckShape(op, shape, "result "));
  if (a.bounds.fill && dtype_size(x.dtype) > sizeof(a.bounds.fill_bits)) {
    return op.Fail("cannot fill out-of-range reads of " + Str(x) +
                   ": a fill value holds at most 8 bytes; select the fill "
                   "around a clamped gather instead");
  }
  // Clamping into an empty axis has no element to return.
  if (x.shape[static_cast<int>(a.axis)] == 0 && shape.num_elements() > 0 &&
      !a.bounds.fill) {
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
  if (is_complex(x.dtype)) {
    return op.Fail("does not sort complex operands yet (got " + Str(x) +
                   "); sort by real and imaginary parts explicitly");
  }
  if (a.indices && x.shape[static_cast<int>(a.dimension)] > INT32_MAX) {
    return op.Fail("dimension " + std::to_string(a.dimension) + " of " +
                   Str(x) + " is too long for int32 indices");
  }
  return OnDevice(x.shape, a.indices ? DType::kInt32 : x.dtype);
}

Result<ValueType> InferFft(const OpContext& op, const FftAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(1));
  const ValueType& x = op.operand(0);
  const int k = static_cast<int>(a.lengths.size());
  if (k < 1 || k > 3) {
    return op.Fail("fft_lengths " + ListToString(a.lengths) +
                   " must have 1 to 3 entries");
  }
  if (x.shape.rank() < k) {
    return op.Fail("fft_lengths " + ListToString(a.lengths) +
                   " has more entries than the operand " + Str(x) +
                   " has dimensions");
  }
  for (int64_t n : a.lengths) {
    if (n < 1) {
      return op.Fail("fft_lengths " + ListToString(a.lengths) +
                     " must be positive");
    }
  }
  const bool real_in = a.type == FftType::kRfft;
  if (real_in ? !is_floating(x.dtype) || x.dtype == DType::kFloat16 ||
                    x.dtype == DType::kBFloat16
              : !is_complex(x.dtype)) {
    return op.Fail(
        std::string("operand must be ") +
        (real_in ? "float32 or float64" : "complex64 or complex128") +
        ", got " + Str(x) +
        (real_in ? "; convert it first"
                 : "; convert it with lax.complex or convert first"));
  }
  // The operand's trailing dimensions the lengths describe.
  std::vector<int64_t> expected = a.lengths;
  if (a.type == FftType::kIrfft) expected.back() = a.lengths.back() / 2 + 1;
  const int lead = x.shape.rank() - k;
  for (int i = 0; i < k; ++i) {
    if (x.shape[lead + i] != expected[i]) {
      return op.Fail("operand " + Str(x) + " must end in dimensions " +
                     ListToString(expected) + " for fft_lengths " +
                     ListToString(a.lengths) +
                     (a.type == FftType::kIrfft
                          ? " (irfft's last operand dimension is n/2 + 1)"
                          : ""));
    }
  }
  std::vector<int64_t> dims = x.shape.dims();
  switch (a.type) {
    case FftType::kFft:
    case FftType::kIfft:
      return OnDevice(x.shape, x.dtype);
    case FftType::kRfft:
      dims.back() = a.lengths.back() / 2 + 1;
      return OnDevice(Shape(std::move(dims)), complex_dtype(x.dtype));
    case FftType::kIrfft:
      dims.back() = a.lengths.back();
      return OnDevice(Shape(std::move(dims)), real_dtype(x.dtype));
  }
  return op.Fail("unknown fft type");
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

}  // namespace baton::compiler::inference
