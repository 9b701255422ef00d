#include "baton/compiler/shape_inference.h"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "baton/compiler/shape_inference_internal.h"

namespace baton::compiler {
namespace inference {
namespace {

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

// The unary ops with a complex form (scalar_math.h).
bool AdmitsComplex(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNot:
    case UnaryOp::kFloor:
    case UnaryOp::kCeil:
    case UnaryOp::kRound:
      return false;
    default:
      return true;
  }
}

bool AdmitsComplex(BinaryOp op) {
  return op == BinaryOp::kAdd || op == BinaryOp::kSub ||
         op == BinaryOp::kMul || op == BinaryOp::kDiv ||
         op == BinaryOp::kPow || op == BinaryOp::kMax || op == BinaryOp::kMin;
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
  if (is_complex(x.dtype)) {
    if (!AdmitsComplex(a.op)) {
      return op.Fail("is not defined for complex operands (got " + Str(x) +
                     ")");
    }
    const bool to_real = a.op == UnaryOp::kAbs || a.op == UnaryOp::kReal ||
                         a.op == UnaryOp::kImag;
    return OnDevice(x.shape, to_real ? real_dtype(x.dtype) : x.dtype);
  }
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
  if (a.op == BinaryOp::kComplex) {
    if (x.dtype != DType::kFloat32 && x.dtype != DType::kFloat64) {
      return op.Fail("needs float32 or float64 operands (the real and "
                     "imaginary parts), got " +
                     Str(x) + " and " + Str(op.operand(1)) +
                     "; convert them first");
    }
    return OnDevice(x.shape, complex_dtype(x.dtype));
  }
  if (is_complex(x.dtype) && !AdmitsComplex(a.op)) {
    return op.Fail("is not defined for complex operands (got " + Str(x) +
                   " and " + Str(op.operand(1)) + ")");
  }
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

Result<ValueType> InferCompare(const OpContext& op, const CompareAttrs& a) {
  BATON_RETURN_IF_ERROR(op.CheckArity(2));
  BATON_RETURN_IF_ERROR(
      CheckSameShapeAndDType(op, op.operand(0), op.operand(1)));
  if (is_complex(op.operand(0).dtype) && a.op != CompareOp::kEq &&
      a.op != CompareOp::kNe) {
    return op.Fail("complex numbers have no order: only EQ and NE compare " +
                   Str(op.operand(0)) + " operands");
  }
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
}  // namespace inference

Result<ValueType> InferType(const OpAttrs& attrs,
                            std::span<const ValueType> operands) {
  using namespace inference;  // NOLINT: the Infer* family
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
      return InferCompare(op, std::get<CompareAttrs>(attrs));
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
    case OpKind::kHostCallback:
      // Any operands (the callback reads them as they are); the token.
      if (!std::get<HostCallbackAttrs>(attrs).callback) {
        return op.Fail("has no callback");
      }
      return OnDevice(Shape{}, DType::kBool);
    case OpKind::kCall:
      return InferCallType(std::get<CallAttrs>(attrs), operands);
    case OpKind::kWhile:
      return InferWhileType(std::get<WhileAttrs>(attrs), operands);
    case OpKind::kScan:
      return InferScanType(std::get<ScanAttrs>(attrs), operands);
    case OpKind::kCase:
      return InferCaseType(std::get<CaseAttrs>(attrs), operands);
    case OpKind::kFft:
      return InferFft(op, std::get<FftAttrs>(attrs));
  }
  return Internal("InferType: unknown op kind");
}

}  // namespace baton::compiler
