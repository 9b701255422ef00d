// The CPU FFT kernel (pocketfft) against the reference interpreter's plain
// DFT in double precision: all four transform types, 1 to 3 dimensions,
// even, odd and prime lengths (prime lengths above pocketfft's radices go
// through Bluestein), batches split across threads, float32 and float64;
// plus identities no DFT code is needed to know (a delta transforms to
// ones, irfft undoes rfft).
#include "baton/backend/cpu/kernels/fft.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/literal.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/shape_inference.h"
#include "baton/core/dtype_dispatch.h"
#include "interpreted_op.h"

namespace baton::cpu {
namespace {

using compiler::FftAttrs;
using compiler::FftType;
using compiler::Literal;

FftMode ModeOf(FftType t) {
  switch (t) {
    case FftType::kFft:
      return FftMode::kForward;
    case FftType::kIfft:
      return FftMode::kInverse;
    case FftType::kRfft:
      return FftMode::kRealForward;
    case FftType::kIrfft:
      return FftMode::kRealInverse;
  }
  return FftMode::kForward;
}

compiler::ValueType ResultType(const Literal& x, const FftAttrs& a) {
  const std::vector<compiler::ValueType> in = {{x.shape(), x.dtype()}};
  auto t = compiler::InferType(compiler::OpAttrs(a), in);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return t.value();
}

Literal Interpreted(const Literal& x, const FftAttrs& a) {
  return testing::InterpretedOp(a, {x});
}

Literal Kernel(const Literal& x, const FftAttrs& a) {
  const compiler::ValueType t = ResultType(x, a);
  Literal out(t.shape, t.dtype);
  Fft(ModeOf(a.type), x.dtype(), x.untyped_data(), x.shape(), a.lengths,
      out.untyped_mutable_data());
  return out;
}

Literal Random(Shape shape, DType dtype, uint64_t seed) {
  Literal l(shape, dtype);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(0, 1);
  for (int64_t i = 0; i < l.num_elements(); ++i) {
    switch (dtype) {
      case DType::kFloat32:
        l.Set<float>(i, static_cast<float>(d(rng)));
        break;
      case DType::kFloat64:
        l.Set<double>(i, d(rng));
        break;
      case DType::kComplex64:
        l.Set<complex64>(
            i, {static_cast<float>(d(rng)), static_cast<float>(d(rng))});
        break;
      default:
        l.Set<complex128>(i, {d(rng), d(rng)});
        break;
    }
  }
  return l;
}

std::complex<double> At(const Literal& l, int64_t i) {
  switch (l.dtype()) {
    case DType::kFloat32:
      return {l.Get<float>(i), 0.0};
    case DType::kFloat64:
      return {l.Get<double>(i), 0.0};
    case DType::kComplex64: {
      const complex64 v = l.Get<complex64>(i);
      return {v.real(), v.imag()};
    }
    default:
      return l.Get<complex128>(i);
  }
}

// Max |got - want| relative to the largest |want|.
double RelativeError(const Literal& got, const Literal& want) {
  EXPECT_EQ(got.shape(), want.shape());
  EXPECT_EQ(got.dtype(), want.dtype());
  double err = 0, scale = 1e-30;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    err = std::max(err, std::abs(At(got, i) - At(want, i)));
    scale = std::max(scale, std::abs(At(want, i)));
  }
  return err / scale;
}

// The operand's shape for transforms of `lengths` over batch dims `batch`.
Shape OperandShape(const std::vector<int64_t>& batch,
                   const std::vector<int64_t>& lengths, FftType type) {
  std::vector<int64_t> dims = batch;
  dims.insert(dims.end(), lengths.begin(), lengths.end());
  if (type == FftType::kIrfft) dims.back() = lengths.back() / 2 + 1;
  return Shape(dims);
}

struct Case {
  std::vector<int64_t> batch;
  std::vector<int64_t> lengths;
};

const Case kCases[] = {
    {{}, {1}},      {{}, {2}},      {{3}, {8}},       {{2}, {5}},
    {{4}, {7}},     {{2, 3}, {12}}, {{}, {97}},       {{2}, {127}},
    {{3}, {4, 6}},  {{}, {5, 3}},   {{2}, {3, 4, 5}}, {{}, {2, 3, 7}},
    {{1}, {16, 9}}, {{}, {1, 1}},   {{2}, {11, 1}},
};

void CheckAgainstReference(FftType type, DType real, double tol) {
  const bool real_in = type == FftType::kRfft;
  const DType dtype = real_in ? real : complex_dtype(real);
  uint64_t seed = 1;
  for (const Case& c : kCases) {
    const FftAttrs a{type, c.lengths};
    const Literal x =
        Random(OperandShape(c.batch, c.lengths, type), dtype, seed++);
    SCOPED_TRACE(std::string(compiler::fft_type_name(type)) + " " +
                 x.shape().to_string() + " " + std::string(dtype_name(dtype)));
    EXPECT_LT(RelativeError(Kernel(x, a), Interpreted(x, a)), tol);
  }
}

TEST(FftKernelTest, EveryTypeMatchesThePlainDftInFloat32) {
  for (FftType t :
       {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft}) {
    CheckAgainstReference(t, DType::kFloat32, 2e-6);
  }
}

TEST(FftKernelTest, EveryTypeMatchesThePlainDftInFloat64) {
  for (FftType t :
       {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft}) {
    CheckAgainstReference(t, DType::kFloat64, 1e-12);
  }
}

TEST(FftKernelTest, ADeltaTransformsToOnesAndInverseScalesByOneOverN) {
  Literal delta(Shape{2, 6}, DType::kComplex128);
  delta.Set<complex128>(0, {1, 0});
  delta.Set<complex128>(6, {2, 0});
  const Literal f = Kernel(delta, {FftType::kFft, {6}});
  const Literal inv = Kernel(delta, {FftType::kIfft, {6}});
  for (int64_t k = 0; k < 6; ++k) {
    EXPECT_EQ(f.Get<complex128>(k), complex128(1, 0));
    EXPECT_EQ(f.Get<complex128>(6 + k), complex128(2, 0));
    EXPECT_NEAR(inv.Get<complex128>(k).real(), 1.0 / 6, 1e-15);
  }
}

TEST(FftKernelTest, IrfftUndoesRfftForOddAndEvenLengthsAndManyRows) {
  // 3000 rows: enough work per call for the batch to be split over the
  // pool's threads.
  for (const std::vector<int64_t>& lengths :
       std::vector<std::vector<int64_t>>{{64}, {63}, {9, 10}, {4, 3, 5}}) {
    const Literal x = Random(OperandShape({3000}, lengths, FftType::kRfft),
                             DType::kFloat64, 7);
    const Literal back = Kernel(Kernel(x, {FftType::kRfft, lengths}),
                                {FftType::kIrfft, lengths});
    EXPECT_LT(RelativeError(back, x), 1e-13);
  }
}

TEST(FftKernelTest, ManyRowsSplitAcrossThreadsMatchTheReference) {
  const Literal x = Random(Shape{4096, 16}, DType::kComplex64, 11);
  const FftAttrs a{FftType::kFft, {16}};
  EXPECT_LT(RelativeError(Kernel(x, a), Interpreted(x, a)), 2e-6);
}

// A single transform of 2^17 points or more in 2-3 dimensions runs one
// dimension at a time, each pass split across the pool; the same transform
// as one member of a batch of two goes through pocketfft's own
// multi-dimensional path. The two must agree, and the per-pass path must
// match the plain DFT.
TEST(FftKernelTest, ALargeSingleTransformRunsByAxesAndAgreesWithTheBatchPath) {
  for (FftType type :
       {FftType::kFft, FftType::kIfft, FftType::kRfft, FftType::kIrfft}) {
    for (const std::vector<int64_t>& lengths :
         std::vector<std::vector<int64_t>>{{512, 256}, {40, 64, 53}}) {
      for (DType real : {DType::kFloat32, DType::kFloat64}) {
        const DType dtype = type == FftType::kRfft ? real : complex_dtype(real);
        const FftAttrs a{type, lengths};
        const Literal one = Random(OperandShape({}, lengths, type), dtype, 3);
        // Two copies of `one` as a batch of two.
        const Shape two_shape = OperandShape({2}, lengths, type);
        Literal two(two_shape, dtype);
        const size_t bytes = one.num_elements() * dtype_size(dtype);
        auto* dst = static_cast<uint8_t*>(two.untyped_mutable_data());
        std::memcpy(dst, one.untyped_data(), bytes);
        std::memcpy(dst + bytes, one.untyped_data(), bytes);
        const Literal by_axes = Kernel(one, a);
        const Literal batched = Kernel(two, a);
        SCOPED_TRACE(std::string(compiler::fft_type_name(type)) + " " +
                     one.shape().to_string() + " " +
                     std::string(dtype_name(dtype)));
        double err = 0, scale = 1e-30;
        for (int64_t i = 0; i < by_axes.num_elements(); ++i) {
          err = std::max(err, std::abs(At(by_axes, i) - At(batched, i)));
          scale = std::max(scale, std::abs(At(batched, i)));
        }
        EXPECT_LT(err / scale, real == DType::kFloat32 ? 2e-6 : 1e-13);
      }
    }
  }
  const Literal x = Random(Shape{512, 256}, DType::kComplex128, 5);
  const FftAttrs a{FftType::kIfft, {512, 256}};
  EXPECT_LT(RelativeError(Kernel(x, a), Interpreted(x, a)), 1e-12);
}

TEST(FftKernelTest, EmptyBatchesWriteNothing) {
  const Literal x(Shape{0, 8}, DType::kFloat32);
  const Literal out = Kernel(x, {FftType::kRfft, {8}});
  EXPECT_EQ(out.shape(), (Shape{0, 5}));
}

TEST(FftShapeInferenceTest, RefusesWrongDtypesAndLengthsNamingThem) {
  auto error = [](const compiler::ValueType& t, const FftAttrs& a) {
    const std::vector<compiler::ValueType> in = {t};
    auto r = compiler::InferType(compiler::OpAttrs(a), in);
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.status().message();
  };
  const compiler::ValueType f32{Shape{2, 8}, DType::kFloat32};
  const compiler::ValueType c64{Shape{2, 8}, DType::kComplex64};
  const compiler::ValueType f16{Shape{2, 8}, DType::kFloat16};
  EXPECT_NE(error(f32, {FftType::kFft, {8}}).find("complex64 or complex128"),
            std::string::npos);
  EXPECT_NE(error(c64, {FftType::kRfft, {8}}).find("float32 or float64"),
            std::string::npos);
  EXPECT_NE(error(f16, {FftType::kRfft, {8}}).find("float32 or float64"),
            std::string::npos);
  EXPECT_NE(error(c64, {FftType::kFft, {4}}).find("fft_lengths [4]"),
            std::string::npos);
  EXPECT_NE(error(c64, {FftType::kIrfft, {8}}).find("n/2 + 1"),
            std::string::npos);
  EXPECT_NE(error(c64, {FftType::kFft, {}}).find("1 to 3"), std::string::npos);
  EXPECT_NE(error(c64, {FftType::kFft, {1, 1, 2, 8}}).find("1 to 3"),
            std::string::npos);
  EXPECT_NE(error(c64, {FftType::kFft, {0}}).find("positive"),
            std::string::npos);
  EXPECT_NE(error(c64, {FftType::kFft, {3, 2, 8}}).find("more entries"),
            std::string::npos);
  // What the types are when they are right.
  auto ok = [](const compiler::ValueType& t, const FftAttrs& a) {
    const std::vector<compiler::ValueType> in = {t};
    return compiler::InferType(compiler::OpAttrs(a), in).value();
  };
  EXPECT_EQ(ok(f32, {FftType::kRfft, {8}}).shape, (Shape{2, 5}));
  EXPECT_EQ(ok(f32, {FftType::kRfft, {8}}).dtype, DType::kComplex64);
  const compiler::ValueType half{Shape{2, 5}, DType::kComplex128};
  EXPECT_EQ(ok(half, {FftType::kIrfft, {9}}).shape, (Shape{2, 9}));
  EXPECT_EQ(ok(half, {FftType::kIrfft, {9}}).dtype, DType::kFloat64);
  EXPECT_EQ(ok(half, {FftType::kIrfft, {2, 8}}).shape, (Shape{2, 8}));
  EXPECT_EQ(compiler::OpDisplayName(FftAttrs{FftType::kIrfft, {8}}), "irfft");
}

}  // namespace
}  // namespace baton::cpu
