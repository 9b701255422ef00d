// Unary and Convert (elementwise.h).
#include <type_traits>

#include "baton/backend/cpu/kernels/elementwise.h"
#include "baton/backend/cpu/kernels/parallel.h"
#include "baton/backend/cpu/kernels/vector_loop.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/scalar_math.h"

namespace baton::cpu {
namespace {

template <typename T>
constexpr bool kIsHalf =
    std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

// Ops that call into libm (or convert 16-bit floats) cost nanoseconds an
// element, so they are worth splitting at smaller sizes.
template <UnaryOp op, typename T>
constexpr int64_t UnaryGrain() {
  constexpr bool cheap =
      op == UnaryOp::kNeg || op == UnaryOp::kAbs || op == UnaryOp::kNot ||
      op == UnaryOp::kSign || op == UnaryOp::kFloor || op == UnaryOp::kCeil ||
      op == UnaryOp::kRound || op == UnaryOp::kSqrt;
  return (cheap && !kIsHalf<T>) ? kCheapGrain : kExpensiveGrain;
}

template <UnaryOp op, typename T>
void RunUnary(const T* in, T* out, int64_t n) {
  using C = ComputeType<T>;
  ParallelRanges(n, UnaryGrain<op, T>(), [=](int64_t lo, int64_t hi) {
    VectorLoop(lo, hi, [=](int64_t i) {
      out[i] = FromCompute<T>(scalar::Unary<op, C>(ToCompute<T>(in[i])));
    });
  });
}

template <typename To, typename From>
void RunConvert(const From* in, To* out, int64_t n) {
  constexpr bool cheap = !kIsHalf<To> && !kIsHalf<From>;
  ParallelRanges(n, cheap ? kCheapGrain : kExpensiveGrain,
                 [=](int64_t lo, int64_t hi) {
                   VectorLoop(lo, hi, [=](int64_t i) {
                     out[i] = ConvertElement<To, From>(in[i]);
                   });
                 });
}

}  // namespace

void Unary(UnaryOp op, DType dtype, const void* in, void* out, int64_t n) {
  if (n <= 0) return;
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    VisitUnaryOp(op, [&](auto op_c) {
      RunUnary<decltype(op_c)::value, T>(static_cast<const T*>(in),
                                         static_cast<T*>(out), n);
    });
  });
}

void Convert(DType from, DType to, const void* in, void* out, int64_t n) {
  if (n <= 0) return;
  VisitDType(from, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    VisitDType(to, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      RunConvert<To, From>(static_cast<const From*>(in), static_cast<To*>(out),
                           n);
    });
  });
}

}  // namespace baton::cpu
