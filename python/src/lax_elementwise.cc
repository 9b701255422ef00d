// The elementwise ops of baton._baton.lax and the Tracer operators: one
// table of binary and unary ops, applied with numpy broadcasting, promotion
// and weak typing (Python scalars and weak Tracers take the other operand's
// dtype). Declared in lax_internal.h.
#include <nanobind/stl/string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "baton/core/error.h"
#include "lax_internal.h"
#include "trace_frames.h"

namespace baton::python {

using compiler::Tracer;
using compiler::WeakScalar;

bool IsWeak(nb::handle h) {
  if (IsPythonScalar(h)) return true;
  return nb::isinstance<PyTracer>(h) && nb::inst_ptr<PyTracer>(h)->weak;
}

Tracer Unweaken(const Tracer& t, DType other) {
  const WeakScalar kind = t.dtype() == DType::kBool ? WeakScalar(true)
                          : is_complex(t.dtype())   ? WeakScalar(std::complex<double>())
                          : is_floating(t.dtype())  ? WeakScalar(0.0)
                                                    : WeakScalar(int64_t{0});
  return compiler::astype(t, kind.ResultDType(other));
}

namespace {

// JAX's kinds, lowest first: bool < integers < floats < complex.
int KindRank(DType t) {
  if (t == DType::kBool) return 0;
  if (is_complex(t)) return 3;
  return is_floating(t) ? 2 : 1;
}
int KindRank(nb::handle h) {
  PyObject* o = h.ptr();
  if (nb::isinstance<PyTracer>(h)) {
    return KindRank(nb::inst_ptr<PyTracer>(h)->tracer.dtype());
  }
  if (PyBool_Check(o)) return 0;
  if (PyLong_Check(o)) return 1;
  return PyComplex_Check(o) ? 3 : 2;
}

// Applies a binary op: Python scalars and weak Tracers take the other
// operand's dtype. The result is weak when both operands are, and when the
// weak one is of a higher kind than the strong one (JAX's lattice: int32
// times a Python float is a weakly typed float32, so bfloat16 data it meets
// next keeps its type).
Tracer Binary(const std::shared_ptr<TraceFrame>& frame, const char* op, TT tt,
              TS ts, ST st, nb::handle a, nb::handle b, bool* weak) {
  const bool sa = IsPythonScalar(a), sb = IsPythonScalar(b);
  const bool wa = IsWeak(a), wb = IsWeak(b);
  *weak = wa && wb;
  // With one weak operand: weak when it is of a higher kind than the
  // strong one's dtype.
  auto weak_wins = [&](nb::handle w, const Tracer& strong) {
    return KindRank(w) > KindRank(strong.dtype());
  };
  if (sa && sb) {
    const Tracer x = ToTracer(a, frame, op);
    return ts ? ts(x, ToWeakScalar(b, op)) : tt(x, ToTracer(b, frame, op));
  }
  if (sb) {
    const Tracer x = ToTracer(a, frame, op);
    if (!wa) *weak = weak_wins(b, x);
    const WeakScalar s = ToWeakScalar(b, op);
    if (ts) return ts(x, s);
    return tt(x, compiler::full(frame->context(), Shape{}, s,
                                s.ResultDType(x.dtype())));
  }
  if (sa) {
    const Tracer y = ToTracer(b, frame, op);
    if (!wb) *weak = weak_wins(a, y);
    const WeakScalar s = ToWeakScalar(a, op);
    if (st) return st(s, y);
    return tt(
        compiler::full(frame->context(), Shape{}, s, s.ResultDType(y.dtype())),
        y);
  }
  Tracer x = ToTracer(a, frame, op), y = ToTracer(b, frame, op);
  if (wa && !wb) {
    *weak = weak_wins(a, y);
    x = Unweaken(x, y.dtype());
  }
  if (wb && !wa) {
    *weak = weak_wins(b, x);
    y = Unweaken(y, x.dtype());
  }
  return tt(x, y);
}

#define BATON_TT(expr) \
  +[](const Tracer& a, const Tracer& b) -> Tracer { return expr; }
#define BATON_TS(expr) \
  +[](const Tracer& a, WeakScalar b) -> Tracer { return expr; }
#define BATON_ST(expr) \
  +[](WeakScalar a, const Tracer& b) -> Tracer { return expr; }

// fmod after numpy promotion and broadcasting (tracer.h has no wrapper).
Tracer Rem(const Tracer& a, const Tracer& b) {
  constexpr const char* kOp = "rem";
  const DType dtype = promote_types(a.dtype(), b.dtype());
  const Tracer x = compiler::astype(a, dtype), y = compiler::astype(b, dtype);
  const int rank = std::max(x.rank(), y.rank());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    const int ia = x.rank() - rank + i, ib = y.rank() - rank + i;
    const int64_t da = ia >= 0 ? x.shape()[ia] : 1;
    const int64_t db = ib >= 0 ? y.shape()[ib] : 1;
    if (da != db && da != 1 && db != 1) {
      throw InvalidArgumentError(InvalidArgument(
          std::string(kOp) + ": shapes " + x.shape().to_string() + " and " +
          y.shape().to_string() + " cannot be broadcast together"));
    }
    dims[i] = da == 1 ? db : da;
  }
  const Shape shape(std::move(dims));
  const Tracer bx = compiler::broadcast_to(x, shape);
  const Tracer by = compiler::broadcast_to(y, shape);
  return x.context()->Emit(compiler::BinaryAttrs{BinaryOp::kRem}, {bx, by});
}

// numpy's `%`: the remainder has the divisor's sign.
Tracer Mod(const Tracer& a, const Tracer& b) {
  const Tracer r = Rem(a, b);
  if (is_unsigned(r.dtype())) return r;
  const Tracer y = compiler::astype(b, r.dtype());
  const Tracer fix =
      compiler::ne(r, 0) & compiler::ne(compiler::lt(r, 0), compiler::lt(y, 0));
  return compiler::where(fix, r + y, r);
}

// The dtype two operands promote to, or a TypeError (as JAX's lax raises)
// when it is floating (or bool, unless `bool_ok`): the integer-only ops.
DType IntegerOperands(const char* op, const Tracer& a, const Tracer& b,
                      bool bool_ok) {
  const DType d = promote_types(a.dtype(), b.dtype());
  if (is_integer(d) || (bool_ok && d == DType::kBool)) return d;
  throw nb::type_error(
      (std::string(op) + ": needs " +
       (bool_ok ? "integer or bool" : "integer") + " operands, got " +
       std::string(dtype_name(a.dtype())) + " and " +
       std::string(dtype_name(b.dtype())))
          .c_str());
}

Tracer Xor(const Tracer& a, const Tracer& b) {
  IntegerOperands("bitwise_xor", a, b, true);
  return a ^ b;
}
Tracer ShiftLeft(const Tracer& a, const Tracer& b) {
  IntegerOperands("shift_left", a, b, false);
  return compiler::shift_left(a, b);
}
Tracer ShiftRightArithmetic(const Tracer& a, const Tracer& b) {
  IntegerOperands("shift_right_arithmetic", a, b, false);
  return compiler::shift_right_arithmetic(a, b);
}
Tracer ShiftRightLogical(const Tracer& a, const Tracer& b) {
  IntegerOperands("shift_right_logical", a, b, false);
  return compiler::shift_right_logical(a, b);
}

}  // namespace

const BinaryDef kBinaryOps[] = {
    {"add", BATON_TT(a + b), BATON_TS(a + b), BATON_ST(a + b), "x + y."},
    {"sub", BATON_TT(a - b), BATON_TS(a - b), BATON_ST(a - b), "x - y."},
    {"mul", BATON_TT(a* b), BATON_TS(a* b), BATON_ST(a* b), "x * y."},
    {"div", BATON_TT(compiler::div(a, b)), BATON_TS(compiler::div(a, b)),
     BATON_ST(compiler::div(a, b)),
     "x / y as jax.lax.div: integers divide rounding toward zero and keep "
     "their dtype (x / 0 is -1, as XLA)."},
    {"true_divide", BATON_TT(a / b), BATON_TS(a / b), BATON_ST(a / b),
     "True division x / y (integer and bool operands give float32; the "
     "Tracer's / operator)."},
    {"rem", BATON_TT(Rem(a, b)), nullptr, nullptr,
     "Remainder of x / y with x's sign (C fmod, like jax.lax.rem)."},
    {"mod", BATON_TT(Mod(a, b)), nullptr, nullptr,
     "numpy's x % y: the remainder has y's sign."},
    {"pow", BATON_TT(compiler::pow(a, b)), BATON_TS(compiler::pow(a, b)),
     BATON_ST(compiler::pow(a, b)), "x ** y."},
    {"maximum", BATON_TT(compiler::maximum(a, b)),
     BATON_TS(compiler::maximum(a, b)), BATON_ST(compiler::maximum(b, a)),
     "Elementwise maximum (NaN-propagating)."},
    {"minimum", BATON_TT(compiler::minimum(a, b)),
     BATON_TS(compiler::minimum(a, b)), BATON_ST(compiler::minimum(b, a)),
     "Elementwise minimum (NaN-propagating)."},
    {"bitwise_and", BATON_TT(a& b), BATON_TS(a& b), BATON_ST(b& a),
     "Bitwise and for integers, logical and for bool (numpy's &)."},
    {"bitwise_or", BATON_TT(a | b), BATON_TS(a | b), BATON_ST(b | a),
     "Bitwise or for integers, logical or for bool (numpy's |)."},
    {"bitwise_xor", BATON_TT(Xor(a, b)), nullptr, nullptr,
     "Bitwise xor for integers, logical xor for bool (numpy's ^); floats "
     "raise TypeError."},
    {"shift_left", BATON_TT(ShiftLeft(a, b)), nullptr, nullptr,
     "x << y for integers (TypeError for floats and bool); shift amounts "
     "outside [0, bit width) give 0, as in jax.lax.shift_left."},
    {"shift_right_arithmetic", BATON_TT(ShiftRightArithmetic(a, b)), nullptr,
     nullptr,
     "x >> y shifting in copies of the sign bit (of the bits read as signed, "
     "also for unsigned types); amounts outside [0, bit width) give the sign "
     "fill (0 or -1), as in jax.lax.shift_right_arithmetic."},
    {"shift_right_logical", BATON_TT(ShiftRightLogical(a, b)), nullptr,
     nullptr,
     "x >> y shifting in zeros; amounts outside [0, bit width) give 0, as in "
     "jax.lax.shift_right_logical."},
    {"complex", BATON_TT(compiler::complex(a, b)), nullptr, nullptr,
     "re + im * 1j: float32 (float64) parts make complex64 (complex128)."},
    {"atan2", BATON_TT(compiler::atan2(a, b)), BATON_TS(compiler::atan2(a, b)),
     BATON_ST(compiler::atan2(a, b)),
     "atan2(x, y): the angle of the point (y, x) in [-pi, pi] (x the "
     "ordinate, as in C's atan2 and jax.lax.atan2; integer and bool operands "
     "are converted to float32)."},
    {"eq", BATON_TT(compiler::eq(a, b)), BATON_TS(compiler::eq(a, b)),
     BATON_ST(compiler::eq(b, a)), "x == y (bool result)."},
    {"ne", BATON_TT(compiler::ne(a, b)), BATON_TS(compiler::ne(a, b)),
     BATON_ST(compiler::ne(b, a)), "x != y (bool result)."},
    {"lt", BATON_TT(compiler::lt(a, b)), BATON_TS(compiler::lt(a, b)),
     BATON_ST(compiler::gt(b, a)), "x < y (bool result)."},
    {"le", BATON_TT(compiler::le(a, b)), BATON_TS(compiler::le(a, b)),
     BATON_ST(compiler::ge(b, a)), "x <= y (bool result)."},
    {"gt", BATON_TT(compiler::gt(a, b)), BATON_TS(compiler::gt(a, b)),
     BATON_ST(compiler::lt(b, a)), "x > y (bool result)."},
    {"ge", BATON_TT(compiler::ge(a, b)), BATON_TS(compiler::ge(a, b)),
     BATON_ST(compiler::le(b, a)), "x >= y (bool result)."},
};

const BinaryDef& FindBinary(const std::string& name) {
  for (const BinaryDef& d : kBinaryOps) {
    if (name == d.name) return d;
  }
  throw std::logic_error("no binary op " + name);
}

nb::object ApplyBinary(const BinaryDef& d, nb::handle a, nb::handle b) {
  auto frame = OpFrame(d.name, {a, b});
  bool weak = false;
  Tracer r = Binary(frame, d.name, d.tt, d.ts, d.st, a, b, &weak);
  // Comparisons give (strongly typed) bool.
  return WrapTracer(frame, r, weak && r.dtype() != DType::kBool);
}

const UnaryDef kUnaryOps[] = {
    {"neg", +[](const Tracer& x) { return compiler::neg(x); }, "-x."},
    {"real", +[](const Tracer& x) { return compiler::real(x); },
     "The real part (float32 for complex64; x itself for real x)."},
    {"imag", +[](const Tracer& x) { return compiler::imag(x); },
     "The imaginary part (float32 for complex64; zeros for real x)."},
    {"conj", +[](const Tracer& x) { return compiler::conj(x); },
     "The complex conjugate (x itself for real x)."},
    {"abs", +[](const Tracer& x) { return compiler::abs(x); }, "|x|."},
    {"sign", +[](const Tracer& x) { return compiler::sign(x); },
     "-1, 0 or 1 (NaN for NaN)."},
    {"exp", +[](const Tracer& x) { return compiler::exp(x); },
     "e**x (integer and bool operands are converted to float32 first, as "
     "for every transcendental and rounding function)."},
    {"log", +[](const Tracer& x) { return compiler::log(x); },
     "Natural logarithm."},
    {"log1p", +[](const Tracer& x) { return compiler::log1p(x); },
     "log(1 + x), accurate for small x."},
    {"expm1", +[](const Tracer& x) { return compiler::expm1(x); },
     "e**x - 1, accurate for small x."},
    {"tan", +[](const Tracer& x) { return compiler::tan(x); }, "Tangent."},
    {"atan", +[](const Tracer& x) { return compiler::atan(x); },
     "Arc tangent, in [-pi/2, pi/2]."},
    {"tanh", +[](const Tracer& x) { return compiler::tanh(x); },
     "Hyperbolic tangent."},
    {"logistic", +[](const Tracer& x) { return compiler::logistic(x); },
     "1 / (1 + e**-x)."},
    {"sqrt", +[](const Tracer& x) { return compiler::sqrt(x); },
     "Square root."},
    {"rsqrt", +[](const Tracer& x) { return compiler::rsqrt(x); },
     "1 / sqrt(x)."},
    {"sin", +[](const Tracer& x) { return compiler::sin(x); }, "Sine."},
    {"cos", +[](const Tracer& x) { return compiler::cos(x); }, "Cosine."},
    {"floor", +[](const Tracer& x) { return compiler::floor(x); },
     "Round down."},
    {"ceil", +[](const Tracer& x) { return compiler::ceil(x); }, "Round up."},
    {"round", +[](const Tracer& x) { return compiler::round(x); },
     "Round half to even (numpy's rint)."},
    {"bitwise_not", +[](const Tracer& x) { return ~x; },
     "Bitwise not for integers, logical not for bool (numpy's ~)."},
};

nb::object ApplyUnary(const UnaryDef& d, nb::handle x) {
  auto frame = OpFrame(d.name, {x});
  return WrapTracer(frame, d.fn(ToTracer(x, frame, d.name)), IsWeak(x));
}

const UnaryDef& FindUnary(const std::string& name) {
  for (const UnaryDef& d : kUnaryOps) {
    if (name == d.name) return d;
  }
  throw std::logic_error("no unary op " + name);
}

std::span<const BinaryDef> BinaryOps() { return kBinaryOps; }
std::span<const UnaryDef> UnaryOps() { return kUnaryOps; }

}  // namespace baton::python
