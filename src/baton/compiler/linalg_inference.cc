// Type inference for the linalg op (declared in shape_inference.h; the
// kinds, operands and packed results are documented at LinalgAttrs).
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "baton/compiler/shape_inference.h"

namespace baton::compiler {
namespace {

Status Fail(const LinalgAttrs& a, const std::string& message) {
  return InvalidArgument(std::string(linalg_kind_name(a.kind)) + ": " +
                         message);
}

// a (or b) must be a float32/float64 matrix or a batch of them, with
// dimensions LAPACK's 32-bit integers can index.
Status CheckMatrix(const LinalgAttrs& a, const ValueType& t, const char* what) {
  if (t.dtype != DType::kFloat32 && t.dtype != DType::kFloat64) {
    return Fail(a, std::string(what) + " must be float32 or float64, got " +
                       TypeForMessage(t) + "; convert it first");
  }
  if (t.shape.rank() < 2) {
    return Fail(a, std::string(what) +
                       " must have rank >= 2 (a matrix, or a batch of "
                       "matrices in its leading dimensions), got " +
                       TypeForMessage(t));
  }
  const int r = t.shape.rank();
  if (t.shape[r - 2] >= INT_MAX || t.shape[r - 1] >= INT_MAX ||
      t.shape[r - 2] * t.shape[r - 1] >= INT_MAX) {
    return Fail(a, std::string(what) + " " + TypeForMessage(t) +
                       " has matrices too large for LAPACK's 32-bit indices");
  }
  return OkStatus();
}

Status CheckSquare(const LinalgAttrs& a, const ValueType& t, const char* what) {
  const int r = t.shape.rank();
  if (t.shape[r - 2] != t.shape[r - 1]) {
    return Fail(a, std::string(what) +
                       " must be square in its last two dimensions, got " +
                       TypeForMessage(t));
  }
  return OkStatus();
}

std::vector<int64_t> BatchDims(const Shape& s) {
  return std::vector<int64_t>(s.dims().begin(), s.dims().end() - 2);
}

ValueType Typed(std::vector<int64_t> dims, DType dtype) {
  return ValueType{Shape(std::move(dims)), dtype, MemoryKind::kDevice};
}

}  // namespace

Result<ValueType> InferLinalgType(const LinalgAttrs& a,
                                  std::span<const ValueType> operands) {
  const int want = a.kind == LinalgKind::kTriangularSolve ? 2 : 1;
  if (static_cast<int>(operands.size()) != want) {
    return Fail(a, "expects " + std::to_string(want) + " operand" +
                       (want == 1 ? "" : "s") + ", got " +
                       std::to_string(operands.size()));
  }
  const ValueType& x = operands[0];
  BATON_RETURN_IF_ERROR(CheckMatrix(a, x, "a"));
  const int r = x.shape.rank();
  const int64_t m = x.shape[r - 2], n = x.shape[r - 1];
  const int64_t k = std::min(m, n);
  std::vector<int64_t> dims = BatchDims(x.shape);
  switch (a.kind) {
    case LinalgKind::kCholesky:
      BATON_RETURN_IF_ERROR(CheckSquare(a, x, "a"));
      return Typed(x.shape.dims(), x.dtype);
    case LinalgKind::kTriangularSolve: {
      BATON_RETURN_IF_ERROR(CheckSquare(a, x, "a"));
      const ValueType& b = operands[1];
      BATON_RETURN_IF_ERROR(CheckMatrix(a, b, "b"));
      if (b.dtype != x.dtype) {
        return Fail(a, "a " + TypeForMessage(x) + " and b " +
                           TypeForMessage(b) + " must have one dtype");
      }
      if (BatchDims(b.shape) != dims) {
        return Fail(a, "a " + TypeForMessage(x) + " and b " +
                           TypeForMessage(b) +
                           " must have equal batch (leading) dimensions; "
                           "broadcast them first");
      }
      const int br = b.shape.rank();
      const int64_t along = a.left_side ? b.shape[br - 2] : b.shape[br - 1];
      if (along != n) {
        return Fail(a, std::string("b ") + TypeForMessage(b) + " must have " +
                           std::to_string(n) +
                           (a.left_side ? " rows" : " columns") +
                           " to match a " + TypeForMessage(x) +
                           (a.left_side ? " (left_side: op(a) x = b)"
                                        : " (right side: x op(a) = b)"));
      }
      return Typed(b.shape.dims(), b.dtype);
    }
    case LinalgKind::kLu:
    case LinalgKind::kEigh:
      BATON_RETURN_IF_ERROR(CheckSquare(a, x, "a"));
      dims.push_back(n);
      dims.push_back(n + 1);
      return Typed(std::move(dims), x.dtype);
    case LinalgKind::kSchur:
      BATON_RETURN_IF_ERROR(CheckSquare(a, x, "a"));
      dims.push_back(n);
      dims.push_back(2 * n);
      return Typed(std::move(dims), x.dtype);
    case LinalgKind::kQr: {
      const int64_t c = a.full_matrices ? m : k;
      dims.push_back(m * c + c * n);
      return Typed(std::move(dims), x.dtype);
    }
    case LinalgKind::kSvd: {
      const int64_t u = a.full_matrices ? m : k;
      const int64_t v = a.full_matrices ? n : k;
      dims.push_back(m * u + k + v * n);
      return Typed(std::move(dims), x.dtype);
    }
  }
  return Fail(a, "unknown linalg kind");
}

}  // namespace baton::compiler
