#include "baton/compiler/tracer.h"

#include <limits>
#include <string>

#include "baton/compiler/tracer_internal.h"
#include "baton/core/error.h"

namespace baton::compiler {

using tracer_internal::BroadcastShapes;
using tracer_internal::BroadcastTo;
using tracer_internal::CommonContext;
using tracer_internal::Fail;
using tracer_internal::ScalarConstant;

// ---- TraceContext ----

void TraceContext::CheckNotFinished() const {
  if (finished_) {
    ThrowIfError(FailedPrecondition(
        "this trace has finished (TraceContext::Finish was called); start a "
        "new TraceContext to trace again"));
  }
}

void TraceContext::CheckOperand(const std::string& op, int index,
                                const Tracer& operand) const {
  if (!operand.valid()) {
    Fail(op, "operand " + std::to_string(index) +
                 " is an empty Tracer (default-constructed)");
  }
  if (operand.context() != this) {
    Fail(op, "operand " + std::to_string(index) +
                 " belongs to another trace; values cannot cross traces "
                 "(pass it as a parameter or capture it as a constant)");
  }
}

Tracer TraceContext::AddParameter(ValueType type) {
  CheckNotFinished();
  Result<ValueId> id = program_.AddParameter(std::move(type));
  ThrowIfError(id.status());
  return Tracer(this, id.value(), program_.type(id.value()));
}

Tracer TraceContext::Emit(OpAttrs attrs, const std::vector<Tracer>& operands) {
  CheckNotFinished();
  OperandList ids;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Tracer& t = operands[i];
    if (!t.valid() || t.context() != this) {
      CheckOperand(OpDisplayName(attrs), static_cast<int>(i), t);
    }
    ids.push_back(t.id());
  }
  Result<ValueId> id = program_.Add(std::move(attrs), std::move(ids));
  ThrowIfError(id.status());
  return Tracer(this, id.value(), program_.type(id.value()));
}

Program TraceContext::Finish(const std::vector<Tracer>& outputs) {
  CheckNotFinished();
  std::vector<ValueId> ids;
  for (size_t i = 0; i < outputs.size(); ++i) {
    CheckOperand("Finish", static_cast<int>(i), outputs[i]);
    ids.push_back(outputs[i].id());
  }
  ThrowIfError(program_.SetOutputs(std::move(ids)));
  finished_ = true;
  return std::move(program_);
}

// ---- WeakScalar ----

DType WeakScalar::ResultDType(DType other) const {
  switch (kind_) {
    case Kind::kBool:
      return other;
    case Kind::kInt:
      return other == DType::kBool ? DType::kInt32 : other;
    case Kind::kFloat:
      return is_inexact(other) ? other : DType::kFloat32;
    case Kind::kComplex:
      return is_complex(other) ? other : complex_dtype(other);
  }
  return other;
}

DType WeakScalar::DefaultDType() const {
  switch (kind_) {
    case Kind::kBool:
      return DType::kBool;
    case Kind::kInt:
      return DType::kInt32;
    case Kind::kFloat:
      return DType::kFloat32;
    case Kind::kComplex:
      return DType::kComplex64;
  }
  return DType::kFloat32;
}

// ---- Internal helpers ----

namespace tracer_internal {

void Fail(std::string_view op, const std::string& message) {
  throw InvalidArgumentError(InvalidArgument(std::string(op) + ": " + message));
}

namespace {
void CheckTracer(std::string_view op, int index, const Tracer& t,
                 TraceContext*& ctx) {
  if (!t.valid()) {
    Fail(op, "operand " + std::to_string(index) +
                 " is an empty Tracer (default-constructed)");
  }
  if (ctx == nullptr) ctx = t.context();
  if (t.context() != ctx) {
    Fail(op, "operand " + std::to_string(index) +
                 " belongs to another trace; values cannot cross traces "
                 "(pass it as a parameter or capture it as a constant)");
  }
}
}  // namespace

TraceContext& CommonContext(std::string_view op,
                            std::initializer_list<const Tracer*> operands) {
  TraceContext* ctx = nullptr;
  int i = 0;
  for (const Tracer* t : operands) CheckTracer(op, i++, *t, ctx);
  return *ctx;
}

TraceContext& CommonContext(std::string_view op,
                            const std::vector<Tracer>& operands) {
  if (operands.empty()) Fail(op, "needs at least one operand");
  TraceContext* ctx = nullptr;
  for (size_t i = 0; i < operands.size(); ++i) {
    CheckTracer(op, static_cast<int>(i), operands[i], ctx);
  }
  return *ctx;
}

Shape BroadcastShapes(std::string_view op, const Shape& a, const Shape& b) {
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = a.rank() - rank + i, ib = b.rank() - rank + i;
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      Fail(op, "shapes " + a.to_string() + " and " + b.to_string() +
                   " cannot be broadcast together");
    }
    dims[i] = da == 1 ? db : da;
  }
  return Shape(std::move(dims));
}

Tracer BroadcastTo(std::string_view op, const Tracer& x, const Shape& shape) {
  TraceContext& ctx = CommonContext(op, {&x});
  if (x.shape() == shape) return x;
  const int offset = shape.rank() - x.rank();
  bool ok = offset >= 0;
  for (int i = 0; ok && i < x.rank(); ++i) {
    ok = x.shape()[i] == 1 || x.shape()[i] == shape[offset + i];
  }
  if (!ok) {
    Fail(op, "cannot broadcast " + TypeForMessage(x.type()) + " to shape " +
                 shape.to_string());
  }
  std::vector<int64_t> dims(x.rank());
  for (int i = 0; i < x.rank(); ++i) dims[i] = offset + i;
  return ctx.Emit(BroadcastInDimAttrs{shape, std::move(dims)}, {x});
}

Tracer ScalarConstant(TraceContext& ctx, WeakScalar value, DType dtype,
                      std::string_view op) {
  Literal lit(Shape{}, dtype);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = lit.mutable_data<T>();
    switch (value.kind()) {
      case WeakScalar::Kind::kBool:
        *out = ConvertElement<T, bool>(value.int_value() != 0);
        break;
      case WeakScalar::Kind::kInt:
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          const int64_t v = value.int_value();
          // uint32 max fits int64, so these comparisons are exact.
          if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
              v > static_cast<int64_t>(std::numeric_limits<T>::max())) {
            Fail(op, "the scalar " + std::to_string(v) + " does not fit " +
                         std::string(dtype_name(dtype)) +
                         "; convert the array to a wider type first");
          }
        }
        *out = ConvertElement<T, int64_t>(value.int_value());
        break;
      case WeakScalar::Kind::kFloat:
        *out = ConvertElement<T, double>(value.float_value());
        break;
      case WeakScalar::Kind::kComplex:
        *out = ConvertElement<T, complex128>(value.complex_value());
        break;
    }
  });
  return ctx.Emit(
      ConstantAttrs{std::make_shared<const Literal>(std::move(lit))}, {});
}

int64_t NormalizeAxis(std::string_view op, int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    Fail(op, "axis " + std::to_string(axis) + " is out of range for rank " +
                 std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

std::string ListToString(const std::vector<int64_t>& values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(values[i]);
  }
  return s + "]";
}

}  // namespace tracer_internal

// ---- Elementwise ----

namespace {

struct Aligned {
  Tracer lhs, rhs;
};

// Promotes two tracers to a common dtype (float32 at least when
// `to_float`) and broadcasts them to a common shape.
Aligned Align(std::string_view op, const Tracer& a, const Tracer& b,
              bool to_float = false) {
  CommonContext(op, {&a, &b});
  DType dtype = promote_types(a.dtype(), b.dtype());
  if (to_float && !is_inexact(dtype)) dtype = DType::kFloat32;
  const Shape shape = BroadcastShapes(op, a.shape(), b.shape());
  return {BroadcastTo(op, astype(a, dtype), shape),
          BroadcastTo(op, astype(b, dtype), shape)};
}

// The same with a weakly typed scalar on the left (scalar_first) or right.
Aligned Align(std::string_view op, const Tracer& t, WeakScalar s,
              bool scalar_first, bool to_float = false) {
  TraceContext& ctx = CommonContext(op, {&t});
  DType dtype = s.ResultDType(t.dtype());
  if (to_float && !is_inexact(dtype)) dtype = DType::kFloat32;
  const Tracer x = astype(t, dtype);
  const Tracer c =
      BroadcastTo(op, ScalarConstant(ctx, s, dtype, op), x.shape());
  return scalar_first ? Aligned{c, x} : Aligned{x, c};
}

Tracer EmitBinary(BinaryOp op, const Aligned& p) {
  return p.lhs.context()->Emit(BinaryAttrs{op}, {p.lhs, p.rhs});
}
Tracer EmitCompare(CompareOp op, const Aligned& p) {
  TraceContext& ctx = *p.lhs.context();
  if (is_complex(p.lhs.dtype()) && op != CompareOp::kEq &&
      op != CompareOp::kNe) {
    // numpy's and jax.numpy's lexicographic order: the real parts, then
    // the imaginary parts where the real parts are equal (the compare op
    // itself has no order for complex operands).
    auto part = [&](UnaryOp which, const Tracer& x) {
      return ctx.Emit(UnaryAttrs{which}, {x});
    };
    const Tracer ra = part(UnaryOp::kReal, p.lhs), rb = part(UnaryOp::kReal, p.rhs);
    const Tracer ia = part(UnaryOp::kImag, p.lhs), ib = part(UnaryOp::kImag, p.rhs);
    const CompareOp strict = (op == CompareOp::kLt || op == CompareOp::kLe)
                                 ? CompareOp::kLt
                                 : CompareOp::kGt;
    const Tracer first = ctx.Emit(CompareAttrs{strict}, {ra, rb});
    const Tracer tie = ctx.Emit(CompareAttrs{CompareOp::kEq}, {ra, rb});
    const Tracer second = ctx.Emit(CompareAttrs{op}, {ia, ib});
    return first | (tie & second);
  }
  return ctx.Emit(CompareAttrs{op}, {p.lhs, p.rhs});
}

Tracer Binary(BinaryOp op, const Tracer& a, const Tracer& b,
              bool to_float = false) {
  return EmitBinary(op, Align(op_name(op), a, b, to_float));
}
Tracer Binary(BinaryOp op, const Tracer& a, WeakScalar b,
              bool to_float = false) {
  return EmitBinary(op, Align(op_name(op), a, b, false, to_float));
}
Tracer Binary(BinaryOp op, WeakScalar a, const Tracer& b,
              bool to_float = false) {
  return EmitBinary(op, Align(op_name(op), b, a, true, to_float));
}

std::string CompareName(CompareOp op) {
  return "compare " + std::string(op_name(op));
}
Tracer Compare(CompareOp op, const Tracer& a, const Tracer& b) {
  return EmitCompare(op, Align(CompareName(op), a, b));
}
Tracer Compare(CompareOp op, const Tracer& a, WeakScalar b) {
  return EmitCompare(op, Align(CompareName(op), a, b, false));
}

Tracer Unary(UnaryOp op, const Tracer& x, bool to_float) {
  TraceContext& ctx = CommonContext(op_name(op), {&x});
  const bool convert = to_float && !is_inexact(x.dtype());
  return ctx.Emit(UnaryAttrs{op}, {convert ? astype(x, DType::kFloat32) : x});
}

}  // namespace

Tracer operator+(const Tracer& a, const Tracer& b) {
  return Binary(BinaryOp::kAdd, a, b);
}
Tracer operator+(const Tracer& a, WeakScalar b) {
  return Binary(BinaryOp::kAdd, a, b);
}
Tracer operator+(WeakScalar a, const Tracer& b) {
  return Binary(BinaryOp::kAdd, a, b);
}
Tracer operator-(const Tracer& a, const Tracer& b) {
  return Binary(BinaryOp::kSub, a, b);
}
Tracer operator-(const Tracer& a, WeakScalar b) {
  return Binary(BinaryOp::kSub, a, b);
}
Tracer operator-(WeakScalar a, const Tracer& b) {
  return Binary(BinaryOp::kSub, a, b);
}
Tracer operator*(const Tracer& a, const Tracer& b) {
  return Binary(BinaryOp::kMul, a, b);
}
Tracer operator*(const Tracer& a, WeakScalar b) {
  return Binary(BinaryOp::kMul, a, b);
}
Tracer operator*(WeakScalar a, const Tracer& b) {
  return Binary(BinaryOp::kMul, a, b);
}
Tracer operator/(const Tracer& a, const Tracer& b) {
  return Binary(BinaryOp::kDiv, a, b, true);
}
Tracer operator/(const Tracer& a, WeakScalar b) {
  return Binary(BinaryOp::kDiv, a, b, true);
}
Tracer operator/(WeakScalar a, const Tracer& b) {
  return Binary(BinaryOp::kDiv, a, b, true);
}
Tracer div(const Tracer& a, const Tracer& b) {
  return Binary(BinaryOp::kDiv, a, b);
}
Tracer div(const Tracer& a, WeakScalar b) {
  return Binary(BinaryOp::kDiv, a, b);
}
Tracer div(WeakScalar a, const Tracer& b) {
  return Binary(BinaryOp::kDiv, a, b);
}
Tracer operator-(const Tracer& a) { return Unary(UnaryOp::kNeg, a, false); }
Tracer operator&(const Tracer& a, const Tracer& b) {
  return Binary(BinaryOp::kAnd, a, b);
}
Tracer operator&(const Tracer& a, WeakScalar b) {
  return Binary(BinaryOp::kAnd, a, b);
}
Tracer operator|(const Tracer& a, const Tracer& b) {
  return Binary(BinaryOp::kOr, a, b);
}
Tracer operator|(const Tracer& a, WeakScalar b) {
  return Binary(BinaryOp::kOr, a, b);
}
Tracer operator~(const Tracer& a) { return Unary(UnaryOp::kNot, a, false); }
Tracer operator^(const Tracer& a, const Tracer& b) {
  return Binary(BinaryOp::kXor, a, b);
}
Tracer operator^(const Tracer& a, WeakScalar b) {
  return Binary(BinaryOp::kXor, a, b);
}
Tracer shift_left(const Tracer& a, const Tracer& b) {
  return Binary(BinaryOp::kShiftLeft, a, b);
}
Tracer shift_left(const Tracer& a, WeakScalar b) {
  return Binary(BinaryOp::kShiftLeft, a, b);
}
Tracer shift_right_arithmetic(const Tracer& a, const Tracer& b) {
  return Binary(BinaryOp::kShiftRightArithmetic, a, b);
}
Tracer shift_right_arithmetic(const Tracer& a, WeakScalar b) {
  return Binary(BinaryOp::kShiftRightArithmetic, a, b);
}
Tracer shift_right_logical(const Tracer& a, const Tracer& b) {
  return Binary(BinaryOp::kShiftRightLogical, a, b);
}
Tracer shift_right_logical(const Tracer& a, WeakScalar b) {
  return Binary(BinaryOp::kShiftRightLogical, a, b);
}

Tracer maximum(const Tracer& a, const Tracer& b) {
  return Binary(BinaryOp::kMax, a, b);
}
Tracer maximum(const Tracer& a, WeakScalar b) {
  return Binary(BinaryOp::kMax, a, b);
}
Tracer minimum(const Tracer& a, const Tracer& b) {
  return Binary(BinaryOp::kMin, a, b);
}
Tracer minimum(const Tracer& a, WeakScalar b) {
  return Binary(BinaryOp::kMin, a, b);
}
Tracer pow(const Tracer& a, const Tracer& b) {
  return Binary(BinaryOp::kPow, a, b);
}
Tracer pow(const Tracer& a, WeakScalar b) {
  // An empty Tracer throws here like everywhere (its default type is
  // float32, which would otherwise take the integer-power path below and
  // return it as is, or dereference its null context for x ** 0).
  CommonContext("pow", {&a});
  // A floating (or complex) value to a Python integer power (x ** 3), and
  // an integer one to a non-negative power, is a chain of multiplications
  // by repeated squaring, as JAX's integer_pow: a few vectorized multiplies
  // (fused with their neighbours) instead of a pow per element, and
  // derivatives through plain products. Integer multiplication wraps as
  // the integer pow does, so the values are the same.
  if (b.kind() == WeakScalar::Kind::kInt &&
      (is_inexact(a.dtype()) ||
       (is_integer(a.dtype()) && b.int_value() >= 0))) {
    int64_t n = b.int_value();
    const bool reciprocal = n < 0;
    // -n would overflow for INT64_MIN; such a power is 0, 1 or inf anyway.
    if (n == std::numeric_limits<int64_t>::min()) {
      return Binary(BinaryOp::kPow, a, b);
    }
    if (reciprocal) n = -n;
    if (n == 0) return full(*a.context(), a.shape(), 1, a.dtype());
    Tracer acc, x = a;
    while (n > 0) {
      if (n & 1) acc = acc.valid() ? acc * x : x;
      n >>= 1;
      if (n > 0) x = x * x;
    }
    return reciprocal ? 1 / acc : acc;
  }
  return Binary(BinaryOp::kPow, a, b);
}
Tracer pow(WeakScalar a, const Tracer& b) {
  return Binary(BinaryOp::kPow, a, b);
}
Tracer atan2(const Tracer& y, const Tracer& x) {
  return Binary(BinaryOp::kAtan2, y, x, true);
}
Tracer atan2(const Tracer& y, WeakScalar x) {
  return Binary(BinaryOp::kAtan2, y, x, true);
}
Tracer atan2(WeakScalar y, const Tracer& x) {
  return Binary(BinaryOp::kAtan2, y, x, true);
}

Tracer eq(const Tracer& a, const Tracer& b) {
  return Compare(CompareOp::kEq, a, b);
}
Tracer eq(const Tracer& a, WeakScalar b) {
  return Compare(CompareOp::kEq, a, b);
}
Tracer ne(const Tracer& a, const Tracer& b) {
  return Compare(CompareOp::kNe, a, b);
}
Tracer ne(const Tracer& a, WeakScalar b) {
  return Compare(CompareOp::kNe, a, b);
}
Tracer lt(const Tracer& a, const Tracer& b) {
  return Compare(CompareOp::kLt, a, b);
}
Tracer lt(const Tracer& a, WeakScalar b) {
  return Compare(CompareOp::kLt, a, b);
}
Tracer le(const Tracer& a, const Tracer& b) {
  return Compare(CompareOp::kLe, a, b);
}
Tracer le(const Tracer& a, WeakScalar b) {
  return Compare(CompareOp::kLe, a, b);
}
Tracer gt(const Tracer& a, const Tracer& b) {
  return Compare(CompareOp::kGt, a, b);
}
Tracer gt(const Tracer& a, WeakScalar b) {
  return Compare(CompareOp::kGt, a, b);
}
Tracer ge(const Tracer& a, const Tracer& b) {
  return Compare(CompareOp::kGe, a, b);
}
Tracer ge(const Tracer& a, WeakScalar b) {
  return Compare(CompareOp::kGe, a, b);
}

Tracer exp(const Tracer& x) { return Unary(UnaryOp::kExp, x, true); }
Tracer log(const Tracer& x) { return Unary(UnaryOp::kLog, x, true); }
Tracer log1p(const Tracer& x) { return Unary(UnaryOp::kLog1p, x, true); }
Tracer expm1(const Tracer& x) { return Unary(UnaryOp::kExpm1, x, true); }
Tracer tan(const Tracer& x) { return Unary(UnaryOp::kTan, x, true); }
Tracer atan(const Tracer& x) { return Unary(UnaryOp::kAtan, x, true); }
Tracer tanh(const Tracer& x) { return Unary(UnaryOp::kTanh, x, true); }
Tracer logistic(const Tracer& x) { return Unary(UnaryOp::kLogistic, x, true); }
Tracer sqrt(const Tracer& x) { return Unary(UnaryOp::kSqrt, x, true); }
Tracer rsqrt(const Tracer& x) { return Unary(UnaryOp::kRsqrt, x, true); }
Tracer sin(const Tracer& x) { return Unary(UnaryOp::kSin, x, true); }
Tracer cos(const Tracer& x) { return Unary(UnaryOp::kCos, x, true); }
Tracer floor(const Tracer& x) { return Unary(UnaryOp::kFloor, x, true); }
Tracer ceil(const Tracer& x) { return Unary(UnaryOp::kCeil, x, true); }
Tracer round(const Tracer& x) { return Unary(UnaryOp::kRound, x, true); }
Tracer abs(const Tracer& x) { return Unary(UnaryOp::kAbs, x, false); }
Tracer sign(const Tracer& x) { return Unary(UnaryOp::kSign, x, false); }
Tracer neg(const Tracer& x) { return Unary(UnaryOp::kNeg, x, false); }
// On real operands real and conj are x itself and imag is zeros: no
// instruction, so conj(x) * x is the program x * x.
Tracer real(const Tracer& x) {
  if (!is_complex(x.dtype())) return x;
  return Unary(UnaryOp::kReal, x, false);
}
Tracer imag(const Tracer& x) {
  if (!is_complex(x.dtype())) {
    return full(CommonContext("imag", {&x}), x.shape(), 0, x.dtype());
  }
  return Unary(UnaryOp::kImag, x, false);
}
Tracer conj(const Tracer& x) {
  if (!is_complex(x.dtype())) return x;
  return Unary(UnaryOp::kConj, x, false);
}

Tracer complex(const Tracer& re, const Tracer& im) {
  constexpr std::string_view kOp = "complex";
  if (is_complex(re.dtype()) || is_complex(im.dtype())) {
    Fail(kOp, "takes real parts, got " +
                                   TypeForMessage(re.type()) + " and " +
                                   TypeForMessage(im.type()) +
                                   "; take real() and imag() first");
  }
  DType parts = promote_types(re.dtype(), im.dtype());
  if (parts != DType::kFloat64) parts = DType::kFloat32;
  const Aligned p = Align(kOp, astype(re, parts), astype(im, parts));
  return EmitBinary(BinaryOp::kComplex, p);
}

namespace {
Tracer Select(const Tracer& pred, const Tracer& on_true,
              const Tracer& on_false) {
  constexpr std::string_view kOp = "select";
  TraceContext& ctx = CommonContext(kOp, {&pred, &on_true, &on_false});
  const Shape shape =
      BroadcastShapes(kOp, BroadcastShapes(kOp, pred.shape(), on_true.shape()),
                      on_false.shape());
  const DType dtype = promote_types(on_true.dtype(), on_false.dtype());
  return ctx.Emit(SelectAttrs{},
                  {BroadcastTo(kOp, astype(pred, DType::kBool), shape),
                   BroadcastTo(kOp, astype(on_true, dtype), shape),
                   BroadcastTo(kOp, astype(on_false, dtype), shape)});
}
}  // namespace

Tracer where(const Tracer& pred, const Tracer& on_true,
             const Tracer& on_false) {
  return Select(pred, on_true, on_false);
}
Tracer where(const Tracer& pred, const Tracer& on_true, WeakScalar on_false) {
  TraceContext& ctx = CommonContext("select", {&pred, &on_true});
  const DType dtype = on_false.ResultDType(on_true.dtype());
  return Select(pred, astype(on_true, dtype),
                ScalarConstant(ctx, on_false, dtype, "select"));
}
Tracer where(const Tracer& pred, WeakScalar on_true, const Tracer& on_false) {
  TraceContext& ctx = CommonContext("select", {&pred, &on_false});
  const DType dtype = on_true.ResultDType(on_false.dtype());
  return Select(pred, ScalarConstant(ctx, on_true, dtype, "select"),
                astype(on_false, dtype));
}

Tracer astype(const Tracer& x, DType dtype) {
  TraceContext& ctx = CommonContext("convert", {&x});
  if (x.dtype() == dtype) return x;
  return ctx.Emit(ConvertAttrs{dtype}, {x});
}

Tracer to_memory_kind(const Tracer& x, MemoryKind kind) {
  TraceContext& ctx = CommonContext("transfer", {&x});
  if (x.memory_kind() == kind) return x;
  return ctx.Emit(TransferAttrs{kind}, {x});
}

Tracer broadcast_to(const Tracer& x, const Shape& shape) {
  return BroadcastTo("broadcast_to", x, shape);
}

Tracer broadcast_in_dim(const Tracer& x, const Shape& shape,
                        std::vector<int64_t> broadcast_dimensions) {
  TraceContext& ctx = CommonContext("broadcast_in_dim", {&x});
  return ctx.Emit(BroadcastInDimAttrs{shape, std::move(broadcast_dimensions)},
                  {x});
}

// ---- Creation ----

Tracer iota(TraceContext& ctx, DType dtype, const Shape& shape,
            int64_t dimension) {
  return ctx.Emit(IotaAttrs{shape, dtype, dimension}, {});
}

Tracer full(TraceContext& ctx, const Shape& shape, WeakScalar value,
            std::optional<DType> dtype) {
  const Tracer c =
      ScalarConstant(ctx, value, dtype.value_or(value.DefaultDType()), "full");
  if (shape.rank() == 0) return c;
  return ctx.Emit(BroadcastInDimAttrs{shape, {}}, {c});
}

Tracer zeros(TraceContext& ctx, const Shape& shape, DType dtype) {
  return full(ctx, shape, 0, dtype);
}

Tracer ones(TraceContext& ctx, const Shape& shape, DType dtype) {
  return full(ctx, shape, 1, dtype);
}

Tracer constant(TraceContext& ctx, const Literal& value) {
  return ctx.Emit(ConstantAttrs{std::make_shared<const Literal>(value)}, {});
}

Tracer constant(TraceContext& ctx, std::shared_ptr<const Literal> value) {
  return ctx.Emit(ConstantAttrs{std::move(value)}, {});
}

}  // namespace baton::compiler
