// The C++ tracing API: build a Program by running ordinary C++ on Tracers.
//
//   TraceContext ctx;
//   Tracer x = ctx.AddParameter({Shape{1024}, DType::kFloat32});
//   Tracer y = tanh(exp(x) * 2 + 1);
//   Program program = ctx.Finish({y});
//
// The functions follow numpy / jax.numpy: numpy broadcasting (inserting
// broadcast_in_dim), dtype promotion with promote_types (inserting convert),
// and weakly typed C++ scalars: a scalar takes the other operand's dtype
// (`x * 2` keeps bfloat16), except that a floating scalar with an integer or
// bool tracer gives float32 and an integer scalar with a bool tracer gives
// int32. An integer scalar that does not fit the dtype is an error.
// Division `/` is true division (integers give float32); transcendental and
// rounding functions promote integer operands to float32.
//
// Errors surface at trace time, where the user wrote the op: every function
// throws baton::InvalidArgumentError with the shape-inference message (which
// op, which operands, what to do).
//
// Ownership and thread-safety: a TraceContext owns the Program being built;
// it is non-copyable, non-movable and used by one thread at a time. A Tracer
// is a cheap handle (context pointer, ValueId and type) that refers to its
// context without owning it: it must not outlive the context, and it cannot
// be used in another one.
#pragma once

#include <cstdint>
#include <complex>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/literal.h"

namespace baton::compiler {

class TraceContext;

// A traced value: which context, which value, and its type.
class Tracer {
 public:
  // Refers to nothing; every operation on it throws.
  Tracer() = default;

  bool valid() const { return context_ != nullptr; }
  TraceContext* context() const { return context_; }
  ValueId id() const { return id_; }
  const ValueType& type() const { return type_; }
  const Shape& shape() const { return type_.shape; }
  DType dtype() const { return type_.dtype; }
  int rank() const { return type_.shape.rank(); }
  MemoryKind memory_kind() const { return type_.memory_kind; }

 private:
  friend class TraceContext;
  Tracer(TraceContext* context, ValueId id, ValueType type)
      : context_(context), id_(id), type_(std::move(type)) {}

  TraceContext* context_ = nullptr;  // not owned
  ValueId id_ = kNoValue;
  ValueType type_;
};

class TraceContext {
 public:
  TraceContext() = default;
  TraceContext(const TraceContext&) = delete;
  TraceContext& operator=(const TraceContext&) = delete;

  // The next parameter (numbered from 0 in call order).
  Tracer AddParameter(ValueType type);

  // Appends one IR op; the building block of every function below, public so
  // front ends can emit ops this header has no wrapper for. Operands must
  // belong to this context.
  Tracer Emit(OpAttrs attrs, const std::vector<Tracer>& operands);

  // The program so far (for inspection while tracing).
  const Program& program() const { return program_; }

  // Ends the trace: returns the program with `outputs` as its results. The
  // context cannot be used afterwards (its Tracers neither).
  Program Finish(const std::vector<Tracer>& outputs);

 private:
  void CheckOperand(const std::string& op, int index,
                    const Tracer& operand) const;
  void CheckNotFinished() const;

  Program program_;
  bool finished_ = false;
};

// A C++ number used as an operand, weakly typed (see the top of this file).
// Implicit from any arithmetic type so that `x + 1` and `2.0 * x` work.
class WeakScalar {
 public:
  enum class Kind { kBool, kInt, kFloat, kComplex };

  template <typename T>
  requires std::is_arithmetic_v<T> WeakScalar(
      T value) {  // NOLINT: implicit by design
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::kBool;
      int_ = value;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = Kind::kInt;
      int_ = static_cast<int64_t>(value);
    } else {
      kind_ = Kind::kFloat;
      float_ = static_cast<double>(value);
    }
  }
  WeakScalar(std::complex<double> value)  // NOLINT: implicit by design
      : kind_(Kind::kComplex), float_(value.real()), imag_(value.imag()) {}

  Kind kind() const { return kind_; }
  int64_t int_value() const { return int_; }     // kBool, kInt
  double float_value() const { return float_; }  // kFloat (kComplex: real)
  std::complex<double> complex_value() const {    // kComplex (others: real)
    return {kind_ == Kind::kFloat || kind_ == Kind::kComplex
                ? float_
                : static_cast<double>(int_),
            imag_};
  }

  // The dtype this scalar takes next to a value of dtype `other`.
  DType ResultDType(DType other) const;
  // The dtype it has on its own (bool, int32, float32, complex64).
  DType DefaultDType() const;

 private:
  Kind kind_ = Kind::kInt;
  int64_t int_ = 0;
  double float_ = 0;
  double imag_ = 0;
};

// ---- Elementwise arithmetic (broadcasting, promotion, weak scalars) ----
Tracer operator+(const Tracer& a, const Tracer& b);
Tracer operator+(const Tracer& a, WeakScalar b);
Tracer operator+(WeakScalar a, const Tracer& b);
Tracer operator-(const Tracer& a, const Tracer& b);
Tracer operator-(const Tracer& a, WeakScalar b);
Tracer operator-(WeakScalar a, const Tracer& b);
Tracer operator*(const Tracer& a, const Tracer& b);
Tracer operator*(const Tracer& a, WeakScalar b);
Tracer operator*(WeakScalar a, const Tracer& b);
// True division: integer and bool operands give float32.
Tracer operator/(const Tracer& a, const Tracer& b);
Tracer operator/(const Tracer& a, WeakScalar b);
Tracer operator/(WeakScalar a, const Tracer& b);
// lax.div: floats divide; integers divide rounding toward zero, keeping
// their dtype (x / 0 is -1 and INT_MIN / -1 is INT_MIN, as XLA).
Tracer div(const Tracer& a, const Tracer& b);
Tracer div(const Tracer& a, WeakScalar b);
Tracer div(WeakScalar a, const Tracer& b);
Tracer operator-(const Tracer& a);
// Bitwise for integers, logical for bool (numpy's & | ~).
Tracer operator&(const Tracer& a, const Tracer& b);
Tracer operator&(const Tracer& a, WeakScalar b);
Tracer operator|(const Tracer& a, const Tracer& b);
Tracer operator|(const Tracer& a, WeakScalar b);
Tracer operator~(const Tracer& a);
Tracer operator^(const Tracer& a, const Tracer& b);
Tracer operator^(const Tracer& a, WeakScalar b);
// XLA's shifts of integer operands (floats and bool are refused): amounts
// outside [0, bit width) give 0, or the sign fill for the arithmetic one.
Tracer shift_left(const Tracer& a, const Tracer& b);
Tracer shift_left(const Tracer& a, WeakScalar b);
Tracer shift_right_arithmetic(const Tracer& a, const Tracer& b);
Tracer shift_right_arithmetic(const Tracer& a, WeakScalar b);
Tracer shift_right_logical(const Tracer& a, const Tracer& b);
Tracer shift_right_logical(const Tracer& a, WeakScalar b);

Tracer maximum(const Tracer& a, const Tracer& b);
Tracer maximum(const Tracer& a, WeakScalar b);
Tracer minimum(const Tracer& a, const Tracer& b);
Tracer minimum(const Tracer& a, WeakScalar b);
Tracer pow(const Tracer& a, const Tracer& b);
Tracer pow(const Tracer& a, WeakScalar b);
Tracer pow(WeakScalar a, const Tracer& b);
// atan2(y, x): the angle of the point (x, y); integers give float32.
Tracer atan2(const Tracer& y, const Tracer& x);
Tracer atan2(const Tracer& y, WeakScalar x);
Tracer atan2(WeakScalar y, const Tracer& x);

// Comparisons (functions, since operator== on handles would mislead).
Tracer eq(const Tracer& a, const Tracer& b);
Tracer eq(const Tracer& a, WeakScalar b);
Tracer ne(const Tracer& a, const Tracer& b);
Tracer ne(const Tracer& a, WeakScalar b);
Tracer lt(const Tracer& a, const Tracer& b);
Tracer lt(const Tracer& a, WeakScalar b);
Tracer le(const Tracer& a, const Tracer& b);
Tracer le(const Tracer& a, WeakScalar b);
Tracer gt(const Tracer& a, const Tracer& b);
Tracer gt(const Tracer& a, WeakScalar b);
Tracer ge(const Tracer& a, const Tracer& b);
Tracer ge(const Tracer& a, WeakScalar b);

// Unary math. Integer and bool operands are converted to float32 first for
// exp .. atan, floor, ceil and round.
Tracer exp(const Tracer& x);
Tracer log(const Tracer& x);
Tracer log1p(const Tracer& x);  // log(1 + x), accurate for small x
Tracer expm1(const Tracer& x);  // exp(x) - 1, accurate for small x
Tracer tan(const Tracer& x);
Tracer atan(const Tracer& x);
Tracer tanh(const Tracer& x);
Tracer logistic(const Tracer& x);
Tracer sqrt(const Tracer& x);
Tracer rsqrt(const Tracer& x);
Tracer sin(const Tracer& x);
Tracer cos(const Tracer& x);
Tracer floor(const Tracer& x);
Tracer ceil(const Tracer& x);
Tracer round(const Tracer& x);  // half to even
Tracer abs(const Tracer& x);
Tracer sign(const Tracer& x);
Tracer neg(const Tracer& x);
// The parts of complex numbers: real and imag give the real type of x's
// parts (float32 for complex64); conj keeps x's type. On real x: x, zeros
// and x, as numpy's.
Tracer real(const Tracer& x);
Tracer imag(const Tracer& x);
Tracer conj(const Tracer& x);
// re + im*1j, elementwise after promotion and broadcasting: float64 parts
// give complex128, any other real parts (converted to float32) complex64.
// Complex operands are refused.
Tracer complex(const Tracer& re, const Tracer& im);

// select: `pred` is converted to bool (nonzero is true) if it is not; the
// three operands broadcast together and on_true/on_false promote.
Tracer where(const Tracer& pred, const Tracer& on_true, const Tracer& on_false);
Tracer where(const Tracer& pred, const Tracer& on_true, WeakScalar on_false);
Tracer where(const Tracer& pred, WeakScalar on_true, const Tracer& on_false);

// convert; returns x itself when it already has that dtype.
Tracer astype(const Tracer& x, DType dtype);
// transfer to another memory kind; x itself when it is already there.
Tracer to_memory_kind(const Tracer& x, MemoryKind kind);

// ---- Shapes ----
// One entry may be -1 (inferred, as in numpy).
Tracer reshape(const Tracer& x, std::vector<int64_t> dims);
Tracer transpose(const Tracer& x);  // reverses the dimensions
Tracer transpose(const Tracer& x, std::vector<int64_t> permutation);
// numpy broadcasting to `shape`.
Tracer broadcast_to(const Tracer& x, const Shape& shape);
// The IR op itself (StableHLO semantics).
Tracer broadcast_in_dim(const Tracer& x, const Shape& shape,
                        std::vector<int64_t> broadcast_dimensions);
// Static strided slice; an empty `stride` means all 1.
Tracer slice(const Tracer& x, std::vector<int64_t> start,
             std::vector<int64_t> limit, std::vector<int64_t> stride = {});
// Starts are integer scalar tracers, clamped so the slice fits.
Tracer dynamic_slice(const Tracer& x, const std::vector<Tracer>& starts,
                     std::vector<int64_t> slice_sizes);
// `update` is converted to x's dtype; starts are clamped.
Tracer dynamic_update_slice(const Tracer& x, const Tracer& update,
                            const std::vector<Tracer>& starts);
// Operands promote to a common dtype; axis may be negative.
Tracer concatenate(const std::vector<Tracer>& xs, int64_t axis = 0);
// `value` is converted to x's dtype; an empty `interior` means all 0.
Tracer pad(const Tracer& x, const Tracer& value, std::vector<int64_t> low,
           std::vector<int64_t> high, std::vector<int64_t> interior = {});
Tracer pad(const Tracer& x, WeakScalar value, std::vector<int64_t> low,
           std::vector<int64_t> high, std::vector<int64_t> interior = {});

// ---- Indexing ----
// numpy take along `axis` (may be negative). Out-of-range indices clamp
// (negative ones to 0) unless `bounds` (core/gather_bounds.h) says
// otherwise: jax.numpy's take wraps negatives and fills the rest.
Tracer take(const Tracer& x, const Tracer& indices, int64_t axis = 0,
            const GatherBounds& bounds = {});
// x with the slices `indices` along `axis` combined with `updates` (which
// broadcast to take's result shape and convert to x's dtype); out-of-range
// indices are dropped, repeated ones combine (`.at[indices].set/add/...`).
Tracer scatter(const Tracer& x, const Tracer& indices, const Tracer& updates,
               int64_t axis = 0, ScatterMode mode = ScatterMode::kSet);
Tracer scatter(const Tracer& x, const Tracer& indices, WeakScalar updates,
               int64_t axis = 0, ScatterMode mode = ScatterMode::kSet);

// ---- Reductions ----
// Over all axes, or over `axes` (may be negative; {} reduces nothing).
// sum and prod of bool, int8 and int16 give int32 and of uint8 give uint32,
// as in JAX.
Tracer sum(const Tracer& x);
Tracer sum(const Tracer& x, std::vector<int64_t> axes, bool keepdims = false);
Tracer prod(const Tracer& x);
Tracer prod(const Tracer& x, std::vector<int64_t> axes, bool keepdims = false);
Tracer max(const Tracer& x);
Tracer max(const Tracer& x, std::vector<int64_t> axes, bool keepdims = false);
Tracer min(const Tracer& x);
Tracer min(const Tracer& x, std::vector<int64_t> axes, bool keepdims = false);

// ---- Contractions ----
// numpy matmul: 1-D operands are vectors; leading (batch) dimensions of
// operands of rank > 2 broadcast.
Tracer matmul(const Tracer& a, const Tracer& b);
// The IR op, after promoting the operands to a common dtype.
Tracer dot_general(const Tracer& a, const Tracer& b,
                   const DotGeneralAttrs& dimensions);

// ---- Creation ----
Tracer iota(TraceContext& ctx, DType dtype, const Shape& shape,
            int64_t dimension = 0);
// A scalar constant broadcast to `shape` (never a large constant). Without
// a dtype, the scalar's own: bool, int32 or float32.
Tracer full(TraceContext& ctx, const Shape& shape, WeakScalar value,
            std::optional<DType> dtype = std::nullopt);
Tracer zeros(TraceContext& ctx, const Shape& shape,
             DType dtype = DType::kFloat32);
Tracer ones(TraceContext& ctx, const Shape& shape,
            DType dtype = DType::kFloat32);
// Captures a host value: the data is copied now (a snapshot, DESIGN R5), so
// later changes to the source never reach the program.
Tracer constant(TraceContext& ctx, const Literal& value);
template <typename T>
Tracer constant(TraceContext& ctx, const std::vector<T>& values, Shape shape) {
  return constant(ctx, Literal::FromVector(values, std::move(shape)));
}
// Shares an immutable literal without copying it.
Tracer constant(TraceContext& ctx, std::shared_ptr<const Literal> value);

}  // namespace baton::compiler

namespace baton {
// The public C++ API names (DESIGN.md section 3).
using compiler::TraceContext;
using compiler::Tracer;
}  // namespace baton
