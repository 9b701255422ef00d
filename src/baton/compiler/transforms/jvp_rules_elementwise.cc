// JVP rules of the elementwise ops: convert, unary, binary and select
// (jvp_rules.h). Each follows JAX's rule for the same lax primitive
// (jax/_src/lax/lax.py), written with the tracer's numpy-style functions;
// operands of a binary op already share shape and dtype, so the functions
// insert no broadcast or convert, and weak scalars take the operand's dtype.
#include <vector>

#include "baton/compiler/transforms/jvp_rules.h"

namespace baton::compiler::transforms::jvp_rules {
namespace {

Tracer UnaryTangent(UnaryOp op, const Tracer& x, const Tracer& ans,
                    const Tracer& t) {
  switch (op) {
    case UnaryOp::kNeg:
      return -t;
    case UnaryOp::kAbs:
      // Complex x: d|x| = real(conj(x) dx) / |x| (0 at x == 0, as JAX).
      if (is_complex(x.dtype())) return real(conj(sign(x)) * t);
      // JAX's choice at x == 0: the derivative of the branch x >= 0.
      return where(ge(x, 0), t, -t);
    case UnaryOp::kReal:
      return real(t);
    case UnaryOp::kImag:
      return imag(t);
    case UnaryOp::kConj:
      return conj(t);
    case UnaryOp::kExp:
      return t * ans;
    case UnaryOp::kLog:
      return t / x;
    case UnaryOp::kTanh:
      // (1 + ans)(1 - ans) keeps precision where |ans| is near 1.
      return (t + t * ans) * (1 - ans);
    case UnaryOp::kLogistic:
      return t * (ans * (1 - ans));
    case UnaryOp::kSqrt:
      return t * (0.5 / ans);
    case UnaryOp::kRsqrt:
      return t * (-0.5 * (ans / x));
    case UnaryOp::kSin:
      return t * cos(x);
    case UnaryOp::kCos:
      return -(t * sin(x));
    case UnaryOp::kLog1p:
      return t / (x + 1);
    case UnaryOp::kExpm1:
      return t * (ans + 1);
    case UnaryOp::kTan:
      return t * (ans * ans + 1);
    case UnaryOp::kAtan:
      return t / (x * x + 1);
    case UnaryOp::kNot:  // 0/1 results, piecewise constant
    case UnaryOp::kSign:
    case UnaryOp::kFloor:
    case UnaryOp::kCeil:
    case UnaryOp::kRound:
      return Tracer();
  }
  return Tracer();
}

// JAX's _balanced_eq: 1 where x chose the result, halved where y tied.
Tracer BalancedEq(const Tracer& x, const Tracer& ans, const Tracer& y) {
  return astype(eq(x, ans), ans.dtype()) /
         (astype(eq(y, ans), ans.dtype()) + 1);
}

Tracer BinaryTangent(BinaryOp op, const Tracer& x, const Tracer& y,
                     const Tracer& ans, const Tracer& tx, const Tracer& ty) {
  // Each operand's contribution, skipped for a symbolic zero.
  Tracer dx, dy;
  switch (op) {
    case BinaryOp::kAdd:
      return AddTangents(tx, ty);
    case BinaryOp::kSub:
      return AddTangents(tx, ty.valid() ? -ty : Tracer());
    case BinaryOp::kMul:
      if (tx.valid()) dx = tx * y;
      if (ty.valid()) dy = x * ty;
      break;
    case BinaryOp::kDiv:
      if (tx.valid()) dx = tx / y;
      if (ty.valid()) dy = -(ty * (ans / y));  // -t x / y^2
      break;
    case BinaryOp::kPow:
      // JAX's care at zeros: d/dx is 0 where y == 0 (even for x == 0), and
      // d/dy uses log(1) where x == 0 (0^y has derivative 0 there for y>0).
      if (tx.valid()) dx = tx * where(eq(y, 0), 0.0, y * pow(x, y - 1));
      if (ty.valid()) dy = ty * (log(where(eq(x, 0), 1.0, x)) * ans);
      break;
    case BinaryOp::kMax:
    case BinaryOp::kMin:
      // Ties split the tangent evenly, as in JAX.
      if (tx.valid()) dx = tx * BalancedEq(x, ans, y);
      if (ty.valid()) dy = ty * BalancedEq(y, ans, x);
      break;
    case BinaryOp::kRem: {
      // rem(x, y) = x - y * trunc(x / y): d/dy = -trunc(x / y).
      if (tx.valid()) dx = tx;
      if (ty.valid()) {
        const Tracer q = x / y;
        dy = -(ty * (sign(q) * floor(abs(q))));
      }
      break;
    }
    case BinaryOp::kAtan2: {
      // atan2(x, y) (x the ordinate): d/dx = y / (x^2 + y^2),
      // d/dy = -x / (x^2 + y^2).
      const Tracer r2 = x * x + y * y;
      if (tx.valid()) dx = tx * (y / r2);
      if (ty.valid()) dy = -(ty * (x / r2));
      break;
    }
    case BinaryOp::kComplex:
      return complex(Instantiate(tx, x), Instantiate(ty, y));
    case BinaryOp::kAnd:  // 0/1 results on floats
    case BinaryOp::kOr:
    case BinaryOp::kXor:
    case BinaryOp::kShiftLeft:  // integers only: never differentiated
    case BinaryOp::kShiftRightArithmetic:
    case BinaryOp::kShiftRightLogical:
      return Tracer();
  }
  return AddTangents(dx, dy);
}

}  // namespace

Tracer ElementwiseTangent(const Instruction& inst,
                          const std::vector<Tracer>& operands,
                          const Tracer& result,
                          const std::vector<Tracer>& tangents) {
  TraceContext& ctx = *result.context();
  switch (inst.kind()) {
    case OpKind::kConvert:
      // Only a floating operand has a tangent, and the result is floating
      // (the caller's precondition): float -> float converts the tangent.
      return ctx.Emit(inst.attrs, {tangents[0]});
    case OpKind::kUnary:
      return UnaryTangent(inst.attrs_as<UnaryAttrs>().op, operands[0], result,
                          tangents[0]);
    case OpKind::kBinary:
      return BinaryTangent(inst.attrs_as<BinaryAttrs>().op, operands[0],
                           operands[1], result, tangents[0], tangents[1]);
    case OpKind::kSelect:
      // The predicate is bool and has no tangent.
      return ctx.Emit(SelectAttrs{},
                      {operands[0], Instantiate(tangents[1], operands[1]),
                       Instantiate(tangents[2], operands[2])});
    default:
      break;
  }
  ThrowUnimplemented(inst.attrs);
}

}  // namespace baton::compiler::transforms::jvp_rules
