// The generated elementwise kernels (backend/cuda/codegen/
// emit_elementwise.cc) against the reference interpreter: each function is
// planned as the CPU backend plans it, emitted, compiled for the host and
// run there (codegen_harness.h; one compiler run per test). Needs no GPU.
//
// Every result must be bitwise the reference's, the float transcendentals
// included: float32 exp, log, tanh and logistic are core/fast_math.h's on
// both sides, and the others call the C math library, which under host
// emulation is the reference's own. (On a GPU those others are CUDA's math
// library, a few ulp away: device_prelude.inc.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "codegen/codegen_harness.h"

namespace baton {
namespace {

using compiler::Literal;
using namespace baton::testing;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr DType kAllDTypes[] = {
    DType::kBool,     DType::kInt8,    DType::kInt16,  DType::kInt32,
    DType::kInt64,    DType::kUInt8,   DType::kUInt32, DType::kFloat16,
    DType::kBFloat16, DType::kFloat32, DType::kFloat64};
constexpr DType kFloatDTypes[] = {DType::kFloat16, DType::kBFloat16,
                                  DType::kFloat32, DType::kFloat64};

// Special values: signed zeros, halves (rounding), values out of the range
// of f16 and of the integers, infinities and NaN.
const std::vector<double> kFloatValues = {
    0.0,    -0.0, 1.0,   -1.0,  0.5,   -2.5, 3.75, 0.1,  -7.3,  100.5, 1e-8,
    -1e-30, 1e30, 65504, 70000, 255.5, -129, 3e9,  kInf, -kInf, kNaN};
// Integers around the edges of every integer type (FromDoubles saturates
// them into the narrower ones), shift amounts past the width among them.
const std::vector<double> kIntValues = {
    0,    1,    -1,  2,   -2,   3,          7,
    -8,   31,   32,  33,  63,   64,         100,
    127,  -128, 255, 1e4, -1e5, 2147483647, -2147483648.0,
    1e12, -1e12};

std::vector<double> ValuesFor(DType dtype) {
  if (dtype == DType::kBool) return {0, 1};
  return is_floating(dtype) ? kFloatValues : kIntValues;
}

Literal Values(DType dtype, const std::vector<double>& v) {
  return Literal::FromDoubles(dtype, Shape{static_cast<int64_t>(v.size())}, v);
}

// All pairs (x, y) of `v`, as two arrays.
std::vector<Literal> Pairs(DType dtype, const std::vector<double>& v) {
  std::vector<double> x, y;
  for (double a : v) {
    for (double b : v) {
      x.push_back(a);
      y.push_back(b);
    }
  }
  return {Values(dtype, x), Values(dtype, y)};
}

// A ramp of n values in [-3, 3), not symmetric (no exact zeros).
Literal Ramp(DType dtype, Shape shape, double scale = 1.0) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = scale * (std::sin(0.37 * static_cast<double>(i)) * 3.0 + 0.01);
  }
  return Literal::FromDoubles(dtype, std::move(shape), v);
}

bool Transcendental(UnaryOp op) {
  switch (op) {
    case UnaryOp::kExp:
    case UnaryOp::kLog:
    case UnaryOp::kTanh:
    case UnaryOp::kLogistic:
    case UnaryOp::kSin:
    case UnaryOp::kCos:
    case UnaryOp::kLog1p:
    case UnaryOp::kExpm1:
    case UnaryOp::kTan:
    case UnaryOp::kAtan:
      return true;
    default:
      return false;
  }
}
bool Transcendental(BinaryOp op) {
  return op == BinaryOp::kPow || op == BinaryOp::kAtan2;
}

// Appends op(operands) to `out` unless shape inference refuses it for
// these operands' dtype (e.g. sqrt of an integer, shifts of floats).
void TryEmit(const compiler::OpAttrs& attrs, const std::vector<Tracer>& args,
             std::vector<Tracer>* out) {
  try {
    out->push_back(args[0].context()->Emit(attrs, args));
  } catch (const Error&) {
  }
}

// Every unary (binary) op defined on the argument's dtype, one output each;
// float transcendentals only when `transcendental`, the others only when
// not. The argument itself comes last, so there is always an output.
TraceFn AllUnary(bool transcendental) {
  return [=](TraceScope&, const std::vector<Tracer>& a) {
    std::vector<Tracer> out;
    for (int c = 0; c < kNumUnaryOps; ++c) {
      const auto op = static_cast<UnaryOp>(c);
      const bool approx = is_floating(a[0].dtype()) && Transcendental(op);
      if (approx == transcendental) TryEmit(compiler::UnaryAttrs{op}, a, &out);
    }
    out.push_back(a[0]);
    return out;
  };
}
TraceFn AllBinary(bool transcendental) {
  return [=](TraceScope&, const std::vector<Tracer>& a) {
    std::vector<Tracer> out;
    for (int c = 0; c < kNumBinaryOps; ++c) {
      const auto op = static_cast<BinaryOp>(c);
      if (op == BinaryOp::kComplex) continue;  // complex: not on CUDA yet
      const bool approx = is_floating(a[0].dtype()) && Transcendental(op);
      if (approx == transcendental) TryEmit(compiler::BinaryAttrs{op}, a, &out);
    }
    out.push_back(a[0]);
    return out;
  };
}

TEST(EmittedElementwiseTest, UnaryOpsOnEveryDType) {
  CodegenBatch b;
  for (DType dtype : kAllDTypes) {
    b.SetContext(std::string(dtype_name(dtype)));
    const std::vector<Literal> args = {Values(dtype, ValuesFor(dtype))};
    b.ExpectSameBits("unary", AllUnary(false), args);
    if (is_floating(dtype)) {
      b.ExpectSameBits("unary_transcendental", AllUnary(true), args);
    }
  }
  b.Run();
}

TEST(EmittedElementwiseTest, BinaryOpsOnEveryDType) {
  CodegenBatch b;
  for (DType dtype : kAllDTypes) {
    b.SetContext(std::string(dtype_name(dtype)));
    const std::vector<Literal> args = Pairs(dtype, ValuesFor(dtype));
    b.ExpectSameBits("binary", AllBinary(false), args);
    if (is_floating(dtype)) {
      b.ExpectSameBits("binary_transcendental", AllBinary(true), args);
    }
  }
  b.Run();
}

TEST(EmittedElementwiseTest, CompareOpsOnEveryDType) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    std::vector<Tracer> out;
    for (int c = 0; c <= static_cast<int>(CompareOp::kGe); ++c) {
      TryEmit(compiler::CompareAttrs{static_cast<CompareOp>(c)}, a, &out);
    }
    return out;
  };
  for (DType dtype : kAllDTypes) {
    b.SetContext(std::string(dtype_name(dtype)));
    b.ExpectSameBits("compare", fn, Pairs(dtype, ValuesFor(dtype)));
  }
  b.Run();
}

TEST(EmittedElementwiseTest, SelectMovesStorageBits) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{where(gt(a[0], a[1]), a[0], a[1]),
                               where(lt(a[0], a[1]), a[1], 0),
                               where(a[2], a[0], a[1])};
  };
  for (DType dtype : kAllDTypes) {
    b.SetContext(std::string(dtype_name(dtype)));
    std::vector<Literal> args = Pairs(dtype, ValuesFor(dtype));
    std::vector<double> pred(static_cast<size_t>(args[0].num_elements()));
    for (size_t i = 0; i < pred.size(); ++i) pred[i] = (i * 7) % 3 == 0;
    args.push_back(Values(DType::kBool, pred));
    b.ExpectSameBits("select", fn, args);
  }
  // f16 NaNs with payloads (and a signaling one): select copies them as
  // they are, where a trip through float would quiet or drop them.
  const uint16_t bits[] = {0x7e01, 0x7d00, 0xfe55, 0x3c00, 0x8000, 0x7c00};
  const Shape shape{6};
  std::vector<Literal> args = {Literal::FromBytes(shape, DType::kFloat16, bits),
                               Values(DType::kFloat16, {1, 2, 3, 4, 5, 6}),
                               Values(DType::kBool, {1, 1, 1, 0, 1, 0})};
  b.ExpectSameBits("select_nan_payloads", fn, args);
  b.Run();
}

TEST(EmittedElementwiseTest, ConvertBetweenEveryPairOfDTypes) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    std::vector<Tracer> out;
    for (DType to : kAllDTypes) out.push_back(astype(a[0], to));
    return out;
  };
  for (DType from : kAllDTypes) {
    b.SetContext(std::string(dtype_name(from)));
    b.ExpectSameBits("convert", fn, {Values(from, ValuesFor(from))});
  }
  b.Run();
}

TEST(EmittedElementwiseTest, IotaInEveryDType) {
  CodegenBatch b;
  // The argument only places the executable on the device under test.
  const TraceFn fn = [](TraceScope& s, const std::vector<Tracer>& a) {
    std::vector<Tracer> out;
    for (DType dtype : kAllDTypes) {
      if (dtype == DType::kBool) continue;  // iota refuses bool
      out.push_back(iota(s.context(), dtype, Shape{3, 70}, 1));
      out.push_back(iota(s.context(), dtype, Shape{3, 4, 5}, 0));
      // Past 255 (u8 and i8 wrap), past f16's exact integers (2048).
      out.push_back(iota(s.context(), dtype, Shape{3000}, 0));
    }
    out.push_back(a[0]);
    return out;
  };
  b.ExpectSameBits("iota", fn, {Values(DType::kFloat32, {1})});
  b.Run();
}

TEST(EmittedElementwiseTest, VirtualScalars) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{a[0] * 2 + 1, 2 - a[0] / 3,
                               where(gt(a[0], 0), a[0], 0),
                               maximum(a[0], 1) * a[0]};
  };
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                      DType::kFloat64, DType::kInt32, DType::kUInt8}) {
    b.SetContext(std::string(dtype_name(dtype)));
    b.ExpectSameBits("scalars", fn, {Ramp(dtype, Shape{5, 7}, 10)});
  }
  b.Run();
}

TEST(EmittedElementwiseTest, AllOperandsScalar) {
  CodegenBatch b;
  // Every operand of the multiply is a broadcast scalar: each work item
  // reads element 0 (the CPU computes one element and repeats it).
  const TraceFn fn = [](TraceScope& s, const std::vector<Tracer>& a) {
    Tracer c = full(s.context(), Shape{4, 3}, 2.5);
    return std::vector<Tracer>{c * 3 + a[0], c * 4};
  };
  b.ExpectSameBits("all_scalar", fn, {Ramp(DType::kFloat32, Shape{4, 3})});
  b.Run();
}

TEST(EmittedElementwiseTest, RowAndColumnBroadcastsFused) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    const Tracer& x = a[0];                                 // [4, 6]
    Tracer row = broadcast_in_dim(a[1], Shape{4, 6}, {1});  // bias[None, :]
    Tracer col = broadcast_in_dim(a[2], Shape{4, 6}, {0});  // mean[:, None]
    Tracer mid = broadcast_in_dim(a[1], Shape{3, 6, 5}, {1});
    return std::vector<Tracer>{x + row, x - col, (x - col) * row + 0.5,
                               a[3] * mid};
  };
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kInt32}) {
    b.SetContext(std::string(dtype_name(dtype)));
    b.ExpectSameBits(
        "broadcasts", fn,
        {Ramp(dtype, Shape{4, 6}, 5), Ramp(dtype, Shape{6}, 2),
         Ramp(dtype, Shape{4}, 3), Ramp(dtype, Shape{3, 6, 5}, 4)});
  }
  // Through the tracer's numpy broadcasting: x + bias.
  const TraceFn numpy = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{a[0] + a[1], (a[0] + a[1]) * 2 - 1};
  };
  b.ExpectSameBits(
      "numpy_broadcast", numpy,
      {Ramp(DType::kFloat32, Shape{8, 33}), Ramp(DType::kFloat32, Shape{33})});
  b.Run();
}

TEST(EmittedElementwiseTest, TakeClampsOutOfRangeIndices) {
  CodegenBatch b;
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{take(a[0], a[1]), take(a[0], a[1] * 2) + 1,
                               take(a[2], a[1]), take(a[0], a[3])};
  };
  const std::vector<double> idx = {-5,         0, 3, 9,  10, 100, -2147483648.0,
                                   2147483647, 1, 2, -1, 5};
  for (DType index : {DType::kInt32, DType::kInt64, DType::kInt8,
                      DType::kUInt32, DType::kUInt8}) {
    b.SetContext(std::string(dtype_name(index)));
    b.ExpectSameBits("take", fn,
                     {Ramp(DType::kFloat32, Shape{10}), Values(index, idx),
                      Ramp(DType::kFloat16, Shape{7}),
                      Literal::FromDoubles(index, Shape{3, 4}, idx)});
  }
  b.Run();
}

TEST(EmittedElementwiseTest, LongFusedChains) {
  CodegenBatch b;
  // Unary, binary, compare, select and convert members, a virtual scalar
  // and a row broadcast, all in one fused step.
  const TraceFn fn = [](TraceScope&, const std::vector<Tracer>& a) {
    const Tracer& x = a[0];
    Tracer y = x * 1.5 + 0.25;
    y = maximum(y, x) - abs(x) / 3;
    y = where(gt(y, 0.5), y * y, -y);
    y = floor(y * 4) + ceil(x) - round(y * 2.5);
    y = sqrt(abs(y) + 1) * sign(x) + broadcast_in_dim(a[1], x.shape(), {1});
    Tracer n = astype(astype(y * 10, DType::kInt32) & 7, x.dtype());
    y = minimum(y, n) + where(eq(n, 0), 1, n);
    return std::vector<Tracer>{y * 0.125 - 3};
  };
  for (DType dtype : kFloatDTypes) {
    b.SetContext(std::string(dtype_name(dtype)));
    b.ExpectSameBits("chain", fn,
                     {Ramp(dtype, Shape{9, 40}, 3), Ramp(dtype, Shape{40})});
  }
  const TraceFn ints = [](TraceScope&, const std::vector<Tracer>& a) {
    const Tracer& x = a[0];
    Tracer y = (x * 3 + 7) ^ shift_right_logical(x, 2);
    y = where(lt(y, x), y - x, div(y, x)) | shift_left(x, 3);
    y = maximum(y, 100) * (y & 15) + abs(x);
    return std::vector<Tracer>{~y, y};
  };
  for (DType dtype :
       {DType::kInt32, DType::kInt64, DType::kInt8, DType::kUInt32}) {
    b.SetContext(std::string(dtype_name(dtype)));
    b.ExpectSameBits("ints", ints, {Values(dtype, kIntValues)});
  }
  b.Run();
}

}  // namespace
}  // namespace baton
