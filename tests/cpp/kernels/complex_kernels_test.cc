// The CPU kernels on complex64 / complex128: every unary op with a complex
// form (abs, real and imag writing the real type), the binary arithmetic,
// complex(re, im), eq/ne, select and strided copies of 16-byte elements,
// conversions to and from real types, sum/prod reductions and the BLAS's
// complex GEMM -- each against std::complex computed here.
#include <gtest/gtest.h>

#include <complex>
#include <random>
#include <vector>

#include "baton/backend/cpu/kernels/dot.h"
#include "baton/backend/cpu/kernels/elementwise.h"
#include "baton/backend/cpu/kernels/indexing.h"
#include "baton/backend/cpu/kernels/reduce.h"
#include "baton/backend/cpu/kernels/shape_ops.h"
#include "baton/backend/cpu/kernels/strided_copy.h"
#include "baton/core/dtype_dispatch.h"
#include "run_dot.h"

namespace baton::cpu {
namespace {

using testing::RunDot;

template <typename R>
std::vector<std::complex<R>> RandomComplex(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<R> d(0, 2);
  std::vector<std::complex<R>> v(n);
  for (auto& z : v) z = {d(rng), d(rng)};
  return v;
}

template <typename R>
void ExpectNear(std::complex<R> got, std::complex<R> want, double rel) {
  const double scale = std::max<double>(1, std::abs(want));
  EXPECT_NEAR(got.real(), want.real(), rel * scale) << got << " vs " << want;
  EXPECT_NEAR(got.imag(), want.imag(), rel * scale) << got << " vs " << want;
}

template <typename R>
class ComplexKernelsTest : public ::testing::Test {
 protected:
  using C = std::complex<R>;
  static constexpr DType kComplexType = dtype_of<C>();
  static constexpr DType kRealType = dtype_of<R>();
  static constexpr double kTol = sizeof(R) == 4 ? 2e-6 : 1e-14;
  // Sizes that cover the serial and the split (parallel) paths.
  static constexpr int64_t kSizes[] = {1, 37, 70001};
};

using RealParts = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ComplexKernelsTest, RealParts);

TYPED_TEST(ComplexKernelsTest, UnaryOpsMatchStdComplex) {
  using R = TypeParam;
  using C = std::complex<R>;
  struct Case {
    UnaryOp op;
    C (*ref)(C);
  };
  const Case cases[] = {
      {UnaryOp::kNeg, [](C z) { return -z; }},
      {UnaryOp::kExp, [](C z) { return std::exp(z); }},
      {UnaryOp::kLog, [](C z) { return std::log(z); }},
      {UnaryOp::kSqrt, [](C z) { return std::sqrt(z); }},
      {UnaryOp::kRsqrt, [](C z) { return C(1) / std::sqrt(z); }},
      {UnaryOp::kSin, [](C z) { return std::sin(z); }},
      {UnaryOp::kCos, [](C z) { return std::cos(z); }},
      {UnaryOp::kTan, [](C z) { return std::tan(z); }},
      {UnaryOp::kTanh, [](C z) { return std::tanh(z); }},
      {UnaryOp::kAtan, [](C z) { return std::atan(z); }},
      {UnaryOp::kLogistic, [](C z) { return C(1) / (C(1) + std::exp(-z)); }},
      {UnaryOp::kLog1p, [](C z) { return std::log(C(1) + z); }},
      {UnaryOp::kExpm1, [](C z) { return std::exp(z) - C(1); }},
      {UnaryOp::kSign, [](C z) { return z / std::abs(z); }},
      {UnaryOp::kConj, [](C z) { return std::conj(z); }},
  };
  for (int64_t n : TestFixture::kSizes) {
    const std::vector<C> in = RandomComplex<R>(n, 1);
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(op_name(c.op)) + " n=" + std::to_string(n));
      std::vector<C> out(n);
      Unary(c.op, TestFixture::kComplexType, in.data(), out.data(), n);
      for (int64_t i = 0; i < n; i += 997) {
        ExpectNear(out[i], c.ref(in[i]), 8 * TestFixture::kTol);
      }
    }
  }
}

TYPED_TEST(ComplexKernelsTest, AbsRealImagWriteTheRealType) {
  using R = TypeParam;
  using C = std::complex<R>;
  const int64_t n = 70001;
  const std::vector<C> in = RandomComplex<R>(n, 2);
  std::vector<R> abs(n), re(n), im(n);
  Unary(UnaryOp::kAbs, TestFixture::kComplexType, in.data(), abs.data(), n);
  Unary(UnaryOp::kReal, TestFixture::kComplexType, in.data(), re.data(), n);
  Unary(UnaryOp::kImag, TestFixture::kComplexType, in.data(), im.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(re[i], in[i].real());
    ASSERT_EQ(im[i], in[i].imag());
    ASSERT_EQ(abs[i], std::abs(in[i]));  // hypot, no overflow of |z|^2
  }
  // |z| for parts whose squares overflow.
  const R big = std::numeric_limits<R>::max() / 2;
  const C huge(big, big);
  R a = 0;
  Unary(UnaryOp::kAbs, TestFixture::kComplexType, &huge, &a, 1);
  EXPECT_TRUE(std::isfinite(a));
  EXPECT_NEAR(a / big, std::sqrt(R(2)), 1e-6);
}

TYPED_TEST(ComplexKernelsTest, BinaryArithmeticAndScalarSides) {
  using R = TypeParam;
  using C = std::complex<R>;
  for (int64_t n : TestFixture::kSizes) {
    const std::vector<C> a = RandomComplex<R>(n, 3), b = RandomComplex<R>(n, 4);
    for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul,
                        BinaryOp::kDiv, BinaryOp::kPow}) {
      auto ref = [op](C x, C y) {
        switch (op) {
          case BinaryOp::kAdd: return x + y;
          case BinaryOp::kSub: return x - y;
          case BinaryOp::kMul: return x * y;
          case BinaryOp::kDiv: return x / y;
          default: return std::pow(x, y);
        }
      };
      SCOPED_TRACE(std::string(op_name(op)) + " n=" + std::to_string(n));
      std::vector<C> out(n);
      Binary(op, TestFixture::kComplexType, a.data(), b.data(), out.data(), n);
      for (int64_t i = 0; i < n; i += 997) {
        ExpectNear(out[i], ref(a[i], b[i]), 8 * TestFixture::kTol);
      }
      Binary(op, TestFixture::kComplexType, a.data(), b.data(), out.data(), n,
             ScalarOperand::kRhs);
      for (int64_t i = 0; i < n; i += 997) {
        ExpectNear(out[i], ref(a[i], b[0]), 8 * TestFixture::kTol);
      }
    }
  }
  // XLA's pow: x^0 = 1 for every x, 0 included.
  const C zero(0), result_of_zero_power = [&] {
    C r;
    Binary(BinaryOp::kPow, TestFixture::kComplexType, &zero, &zero, &r, 1);
    return r;
  }();
  EXPECT_EQ(result_of_zero_power, C(1));
}

TYPED_TEST(ComplexKernelsTest, ComplexFromPartsCompareAndSelect) {
  using R = TypeParam;
  using C = std::complex<R>;
  const int64_t n = 70001;
  std::vector<R> re(n), im(n);
  for (int64_t i = 0; i < n; ++i) {
    re[i] = static_cast<R>(i) * R(0.5);
    im[i] = -static_cast<R>(i % 7);
  }
  std::vector<C> z(n);
  Binary(BinaryOp::kComplex, TestFixture::kRealType, re.data(), im.data(),
         z.data(), n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(z[i], C(re[i], im[i]));
  const R one = 1;
  Binary(BinaryOp::kComplex, TestFixture::kRealType, &one, im.data(), z.data(),
         n, ScalarOperand::kLhs);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(z[i], C(1, im[i]));

  // eq / ne compare both parts.
  std::vector<C> w = z;
  w[5] = C(z[5].real(), z[5].imag() + 1);
  std::unique_ptr<bool[]> eq(new bool[n]), ne(new bool[n]);
  Compare(CompareOp::kEq, TestFixture::kComplexType, z.data(), w.data(),
          eq.get(), n);
  Compare(CompareOp::kNe, TestFixture::kComplexType, z.data(), w.data(),
          ne.get(), n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(eq[i], i != 5);
    ASSERT_EQ(ne[i], i == 5);
  }

  // Select moves whole elements (16 bytes for complex128).
  std::unique_ptr<bool[]> pred(new bool[n]);
  for (int64_t i = 0; i < n; ++i) pred[i] = i % 3 == 0;
  std::vector<C> out(n);
  Select(TestFixture::kComplexType, pred.get(), z.data(), w.data(), out.data(),
         n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], pred[i] ? z[i] : w[i]);
}

TYPED_TEST(ComplexKernelsTest, ConvertsToAndFromRealTypes) {
  using R = TypeParam;
  using C = std::complex<R>;
  const std::vector<C> z = {{1.5, -2}, {0, 0}, {-3.75, 0.25}, {0, 1}};
  const int64_t n = static_cast<int64_t>(z.size());
  std::vector<float> f(n);
  Convert(TestFixture::kComplexType, DType::kFloat32, z.data(), f.data(), n);
  EXPECT_EQ(f, (std::vector<float>{1.5f, 0, -3.75f, 0}));  // real part
  std::vector<int32_t> k(n);
  Convert(TestFixture::kComplexType, DType::kInt32, z.data(), k.data(), n);
  EXPECT_EQ(k, (std::vector<int32_t>{1, 0, -3, 0}));
  std::unique_ptr<bool[]> b(new bool[n]);
  Convert(TestFixture::kComplexType, DType::kBool, z.data(), b.get(), n);
  EXPECT_TRUE(b[0] && !b[1] && b[2] && b[3]);  // either part nonzero
  const std::vector<int32_t> ints = {-2, 7};
  std::vector<C> back(2);
  Convert(DType::kInt32, TestFixture::kComplexType, ints.data(), back.data(), 2);
  EXPECT_EQ(back[0], C(-2, 0));
  EXPECT_EQ(back[1], C(7, 0));
  // complex64 <-> complex128 keeps both parts.
  std::vector<complex128> wide(n);
  Convert(TestFixture::kComplexType, DType::kComplex128, z.data(), wide.data(),
          n);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(wide[i], complex128(z[i].real(), z[i].imag()));
  }
}

TYPED_TEST(ComplexKernelsTest, SumAndProductReductions) {
  using R = TypeParam;
  using C = std::complex<R>;
  const Shape shape{3, 1001};
  const std::vector<C> in = RandomComplex<R>(shape.num_elements(), 5);
  std::vector<C> sum(3), prod(1001);
  const int64_t last[] = {1}, first[] = {0};
  Reduce(ReduceOp::kSum, TestFixture::kComplexType, in.data(), shape, last,
         sum.data());
  Reduce(ReduceOp::kProd, TestFixture::kComplexType, in.data(), shape, first,
         prod.data());
  for (int r = 0; r < 3; ++r) {
    std::complex<double> s = 0;
    for (int c = 0; c < 1001; ++c) s += std::complex<double>(in[r * 1001 + c]);
    ExpectNear(std::complex<double>(sum[r]), s, sizeof(R) == 4 ? 1e-4 : 1e-12);
  }
  for (int c = 0; c < 1001; c += 50) {
    const std::complex<double> p = std::complex<double>(in[c]) *
                                   std::complex<double>(in[1001 + c]) *
                                   std::complex<double>(in[2002 + c]);
    ExpectNear(std::complex<double>(prod[c]), p, sizeof(R) == 4 ? 1e-5 : 1e-13);
  }
}

TYPED_TEST(ComplexKernelsTest, DotGeneralIsTheComplexGemm) {
  using R = TypeParam;
  using C = std::complex<R>;
  // [batch 2, m 5, k 7] x [batch 2, n 3, k 7] (rhs transposed in memory).
  const Shape ls{2, 5, 7}, rs{2, 3, 7};
  const std::vector<C> a = RandomComplex<R>(ls.num_elements(), 6),
                       b = RandomComplex<R>(rs.num_elements(), 7);
  DotDimensions dims{{0}, {0}, {2}, {2}};
  const Shape os = DotGeneralShape(ls, rs, dims);
  ASSERT_EQ(os, (Shape{2, 5, 3}));
  std::vector<C> out(os.num_elements());
  RunDot(TestFixture::kComplexType, a.data(), ls, b.data(), rs, dims,
         out.data());
  for (int bt = 0; bt < 2; ++bt) {
    for (int i = 0; i < 5; ++i) {
      for (int j = 0; j < 3; ++j) {
        std::complex<double> s = 0;
        for (int k = 0; k < 7; ++k) {
          s += std::complex<double>(a[(bt * 5 + i) * 7 + k]) *
               std::complex<double>(b[(bt * 3 + j) * 7 + k]);  // no conj
        }
        ExpectNear(std::complex<double>(out[(bt * 5 + i) * 3 + j]), s,
                   sizeof(R) == 4 ? 1e-5 : 1e-13);
      }
    }
  }
}

TYPED_TEST(ComplexKernelsTest, GatherMovesWholeElements) {
  using R = TypeParam;
  using C = std::complex<R>;
  // Rows of a [5, 3] table by index, and single elements of a flat one
  // (16-byte elements for complex128).
  const std::vector<C> table = RandomComplex<R>(15, 8);
  const std::vector<int32_t> idx = {4, 0, 2, 2};
  std::vector<C> rows(12);
  Gather(TestFixture::kComplexType, table.data(), Shape{5, 3}, idx.data(),
         DType::kInt32, 4, 0, rows.data());
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(rows[r * 3 + c], table[idx[r] * 3 + c]);
  }
  std::vector<C> elems(4);
  Gather(TestFixture::kComplexType, table.data(), Shape{15}, idx.data(),
         DType::kInt32, 4, 0, elems.data());
  for (int r = 0; r < 4; ++r) EXPECT_EQ(elems[r], table[idx[r]]);
}

TEST(ComplexKernelsTest, StridedCopyAndTransposeMoveSixteenByteElements) {
  const Shape shape{3, 4};
  std::vector<complex128> in(12);
  for (int i = 0; i < 12; ++i) in[i] = {double(i), -double(i) / 4};
  std::vector<complex128> out(12);
  const int64_t perm[] = {1, 0};
  Transpose(DType::kComplex128, in.data(), shape, perm, out.data());
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) EXPECT_EQ(out[c * 3 + r], in[r * 4 + c]);
  }
  std::vector<complex128> filled(5);
  const complex128 v(2.5, -1);
  const int64_t zero_stride[] = {0}, unit_stride[] = {1}, count[] = {5};
  StridedCopy(sizeof(complex128), &v, zero_stride, filled.data(), unit_stride,
              count);
  for (const complex128& x : filled) EXPECT_EQ(x, v);
}

}  // namespace
}  // namespace baton::cpu
