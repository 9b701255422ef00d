// The linalg op: the CPU kernel's decompositions checked by reconstruction
// (L L^T = A, A[p] = L U, Q R = A with Q^T Q = I, V diag(w) V^T = A,
// U diag(s) Vt = A, Z T Z^T = A) and the triangular solve by its residual, batched, in
// float32 and float64; NaNs for a matrix that is not positive definite;
// the reference interpreter agreeing with the kernel; shape inference's
// errors; and the printed form.
#include "baton/backend/cpu/kernels/linalg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/literal.h"
#include "baton/compiler/program_printer.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/shape_inference.h"
#include "interpreted_op.h"

namespace baton::cpu {
namespace {

using compiler::LinalgAttrs;
using compiler::Literal;
using compiler::ValueType;

// A row-major matrix of doubles (the test's own arithmetic).
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  double& operator()(int64_t i, int64_t j) { return v[i * cols + j]; }
  double operator()(int64_t i, int64_t j) const { return v[i * cols + j]; }
};

Mat Zeros(int64_t r, int64_t c) {
  return Mat{r, c, std::vector<double>(r * c)};
}

Mat Mul(const Mat& a, const Mat& b) {
  Mat c = Zeros(a.rows, b.cols);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t k = 0; k < a.cols; ++k)
      for (int64_t j = 0; j < b.cols; ++j) c(i, j) += a(i, k) * b(k, j);
  return c;
}

Mat T(const Mat& a) {
  Mat t = Zeros(a.cols, a.rows);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) t(j, i) = a(i, j);
  return t;
}

double MaxDiff(const Mat& a, const Mat& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  double d = 0;
  for (size_t i = 0; i < a.v.size(); ++i)
    d = std::max(d, std::abs(a.v[i] - b.v[i]));
  return d;
}

// Element `offset` onwards of batch member `b` of a literal whose members
// have `size` elements.
Mat Part(const Literal& lit, int64_t b, int64_t size, int64_t offset,
         int64_t rows, int64_t cols) {
  Mat m = Zeros(rows, cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    m.v[i] = lit.GetAsDouble(b * size + offset + i);
  return m;
}

Literal Random(DType dtype, Shape shape, uint32_t seed, double diag = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(shape.num_elements());
  const int r = shape.rank();
  const int64_t rows = shape[r - 2], cols = shape[r - 1];
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t in = static_cast<int64_t>(i) % (rows * cols);
    v[i] = u(rng) + (in / cols == in % cols ? diag : 0);
  }
  return Literal::FromDoubles(dtype, std::move(shape), v);
}

// Symmetric positive definite matrices: M M^T + n I.
Literal Spd(DType dtype, int64_t batch, int64_t n, uint32_t seed) {
  const Literal m = Random(DType::kFloat64, Shape{batch, n, n}, seed);
  std::vector<double> v;
  for (int64_t b = 0; b < batch; ++b) {
    const Mat x = Part(m, b, n * n, 0, n, n);
    Mat s = Mul(x, T(x));
    for (int64_t i = 0; i < n; ++i) s(i, i) += static_cast<double>(n);
    v.insert(v.end(), s.v.begin(), s.v.end());
  }
  return Literal::FromDoubles(dtype, Shape{batch, n, n}, v);
}

LinalgOptions Options(const LinalgAttrs& a) {
  return {a.kind,      a.lower,         a.transpose_a,
          a.left_side, a.unit_diagonal, a.full_matrices};
}

Result<ValueType> Infer(const LinalgAttrs& a, const std::vector<Literal>& in) {
  std::vector<ValueType> types;
  for (const Literal& l : in) types.push_back(ValueType{l.shape(), l.dtype()});
  return compiler::InferType(a, types);
}

Literal Kernel(const LinalgAttrs& a, const std::vector<Literal>& in) {
  const ValueType t = Infer(a, in).value();
  Literal out(t.shape, t.dtype);
  const bool two = in.size() > 1;
  Linalg(Options(a), in[0].dtype(), in[0].untyped_data(), in[0].shape(),
         two ? in[1].untyped_data() : nullptr, two ? in[1].shape() : Shape{},
         out.untyped_mutable_data());
  return out;
}

Literal Interpreted(const LinalgAttrs& a, const std::vector<Literal>& in) {
  return testing::InterpretedOp(a, in);
}

LinalgAttrs Attrs(LinalgKind kind) {
  LinalgAttrs a;
  a.kind = kind;
  return a;
}

double Tol(DType dt) { return dt == DType::kFloat64 ? 1e-10 : 2e-4; }

class LinalgKernelTest : public ::testing::TestWithParam<DType> {};

TEST_P(LinalgKernelTest, Cholesky) {
  const DType dt = GetParam();
  const int64_t B = 3, n = 5;
  const Literal a = Spd(dt, B, n, 1);
  for (bool lower : {true, false}) {
    LinalgAttrs attrs = Attrs(LinalgKind::kCholesky);
    attrs.lower = lower;
    const Literal l = Kernel(attrs, {a});
    for (int64_t b = 0; b < B; ++b) {
      const Mat f = Part(l, b, n * n, 0, n, n);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
          if (lower ? j > i : j < i) EXPECT_EQ(f(i, j), 0) << i << " " << j;
      const Mat rebuilt = lower ? Mul(f, T(f)) : Mul(T(f), f);
      EXPECT_LT(MaxDiff(rebuilt, Part(a, b, n * n, 0, n, n)), n * Tol(dt));
    }
  }
}

TEST_P(LinalgKernelTest, CholeskyOfNonPositiveDefiniteIsNaN) {
  const DType dt = GetParam();
  // Member 0 is positive definite, member 1 has a negative eigenvalue.
  const Literal a =
      Literal::FromDoubles(dt, Shape{2, 2, 2}, {4, 2, 2, 3, 1, 2, 2, 1});
  const Literal l = Kernel(Attrs(LinalgKind::kCholesky), {a});
  EXPECT_NEAR(l.GetAsDouble(0), 2, 1e-6);
  for (int e = 4; e < 8; ++e) EXPECT_TRUE(std::isnan(l.GetAsDouble(e))) << e;
}

TEST_P(LinalgKernelTest, TriangularSolveEveryVariant) {
  const DType dt = GetParam();
  const int64_t B = 2, n = 4, k = 3;
  const Literal a = Random(dt, Shape{B, n, n}, 2, 4.0);
  for (int v = 0; v < 16; ++v) {
    LinalgAttrs attrs = Attrs(LinalgKind::kTriangularSolve);
    attrs.left_side = v & 1;
    attrs.lower = v & 2;
    attrs.transpose_a = v & 4;
    attrs.unit_diagonal = v & 8;
    SCOPED_TRACE(std::to_string(v));
    const Shape bs = attrs.left_side ? Shape{B, n, k} : Shape{B, k, n};
    const Literal rhs = Random(dt, bs, 3 + v);
    const Literal x = Kernel(attrs, {a, rhs});
    for (int64_t b = 0; b < B; ++b) {
      Mat t = Part(a, b, n * n, 0, n, n);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          if (attrs.lower ? j > i : j < i) t(i, j) = 0;
        }
        if (attrs.unit_diagonal) t(i, i) = 1;
      }
      if (attrs.transpose_a) t = T(t);
      const int64_t r = bs[1], c = bs[2];
      const Mat xb = Part(x, b, r * c, 0, r, c);
      const Mat got = attrs.left_side ? Mul(t, xb) : Mul(xb, t);
      EXPECT_LT(MaxDiff(got, Part(rhs, b, r * c, 0, r, c)), 10 * Tol(dt));
    }
  }
}

TEST_P(LinalgKernelTest, LuPermutesRows) {
  const DType dt = GetParam();
  const int64_t B = 3, n = 5;
  const Literal a = Random(dt, Shape{B, n, n}, 4);
  const Literal lu = Kernel(Attrs(LinalgKind::kLu), {a});
  ASSERT_EQ(lu.shape(), (Shape{B, n, n + 1}));
  for (int64_t b = 0; b < B; ++b) {
    const Mat f = Part(lu, b, n * (n + 1), 0, n, n + 1);
    Mat l = Zeros(n, n), u = Zeros(n, n), pa = Zeros(n, n);
    const Mat ab = Part(a, b, n * n, 0, n, n);
    std::vector<bool> seen(n, false);
    for (int64_t i = 0; i < n; ++i) {
      const double p = f(i, n);
      ASSERT_EQ(p, std::round(p));
      ASSERT_TRUE(p >= 0 && p < n && !seen[static_cast<int>(p)]) << p;
      seen[static_cast<int>(p)] = true;
      for (int64_t j = 0; j < n; ++j) {
        if (j < i) l(i, j) = f(i, j);
        if (j >= i) u(i, j) = f(i, j);
        pa(i, j) = ab(static_cast<int64_t>(p), j);
      }
      l(i, i) = 1;
    }
    EXPECT_LT(MaxDiff(Mul(l, u), pa), n * Tol(dt));
  }
}

void CheckQr(DType dt, int64_t m, int64_t n, bool full) {
  SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) +
               (full ? " full" : ""));
  const int64_t B = 2, k = std::min(m, n), c = full ? m : k;
  const Literal a = Random(dt, Shape{B, m, n}, 5);
  LinalgAttrs attrs = Attrs(LinalgKind::kQr);
  attrs.full_matrices = full;
  const Literal qr = Kernel(attrs, {a});
  const int64_t size = m * c + c * n;
  ASSERT_EQ(qr.shape(), (Shape{B, size}));
  for (int64_t b = 0; b < B; ++b) {
    const Mat q = Part(qr, b, size, 0, m, c);
    const Mat r = Part(qr, b, size, m * c, c, n);
    for (int64_t i = 0; i < c; ++i)
      for (int64_t j = 0; j < std::min(i, n); ++j) EXPECT_EQ(r(i, j), 0);
    Mat eye = Zeros(c, c);
    for (int64_t i = 0; i < c; ++i) eye(i, i) = 1;
    EXPECT_LT(MaxDiff(Mul(T(q), q), eye), 10 * Tol(dt));
    EXPECT_LT(MaxDiff(Mul(q, r), Part(a, b, m * n, 0, m, n)), 10 * Tol(dt));
  }
}

TEST_P(LinalgKernelTest, Qr) {
  for (bool full : {false, true}) {
    CheckQr(GetParam(), 5, 3, full);
    CheckQr(GetParam(), 3, 5, full);
    CheckQr(GetParam(), 4, 4, full);
  }
}

TEST_P(LinalgKernelTest, Eigh) {
  const DType dt = GetParam();
  const int64_t B = 3, n = 5;
  const Literal a = Spd(dt, B, n, 6);
  for (bool lower : {true, false}) {
    LinalgAttrs attrs = Attrs(LinalgKind::kEigh);
    attrs.lower = lower;
    const Literal e = Kernel(attrs, {a});
    ASSERT_EQ(e.shape(), (Shape{B, n, n + 1}));
    for (int64_t b = 0; b < B; ++b) {
      const Mat f = Part(e, b, n * (n + 1), 0, n, n + 1);
      Mat v = Zeros(n, n), vd = Zeros(n, n);
      for (int64_t i = 0; i < n; ++i) {
        if (i > 0) EXPECT_LE(f(i - 1, n), f(i, n));
        for (int64_t j = 0; j < n; ++j) {
          v(i, j) = f(i, j);
          vd(i, j) = f(i, j) * f(j, n);
        }
      }
      EXPECT_LT(MaxDiff(Mul(vd, T(v)), Part(a, b, n * n, 0, n, n)),
                n * 10 * Tol(dt));
    }
  }
}

void CheckSvd(DType dt, int64_t m, int64_t n, bool full) {
  SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) +
               (full ? " full" : ""));
  const int64_t B = 2, k = std::min(m, n);
  const int64_t uc = full ? m : k, vr = full ? n : k;
  const Literal a = Random(dt, Shape{B, m, n}, 7);
  LinalgAttrs attrs = Attrs(LinalgKind::kSvd);
  attrs.full_matrices = full;
  const Literal usv = Kernel(attrs, {a});
  const int64_t size = m * uc + k + vr * n;
  ASSERT_EQ(usv.shape(), (Shape{B, size}));
  for (int64_t b = 0; b < B; ++b) {
    Mat u = Part(usv, b, size, 0, m, uc);
    const Mat s = Part(usv, b, size, m * uc, 1, k);
    const Mat vt = Part(usv, b, size, m * uc + k, vr, n);
    Mat eye = Zeros(uc, uc);
    for (int64_t i = 0; i < uc; ++i) eye(i, i) = 1;
    EXPECT_LT(MaxDiff(Mul(T(u), u), eye), 10 * Tol(dt));
    Mat us = Zeros(m, k), vk = Zeros(k, n);
    for (int64_t j = 0; j < k; ++j) {
      if (j > 0) EXPECT_GE(s(0, j - 1), s(0, j));
      EXPECT_GE(s(0, j), 0);
      for (int64_t i = 0; i < m; ++i) us(i, j) = u(i, j) * s(0, j);
      for (int64_t i = 0; i < n; ++i) vk(j, i) = vt(j, i);
    }
    EXPECT_LT(MaxDiff(Mul(us, vk), Part(a, b, m * n, 0, m, n)), 10 * Tol(dt));
  }
}

TEST_P(LinalgKernelTest, Svd) {
  for (bool full : {false, true}) {
    CheckSvd(GetParam(), 5, 3, full);
    CheckSvd(GetParam(), 3, 5, full);
    CheckSvd(GetParam(), 4, 4, full);
  }
}

// Z T Z^T = A with Z orthogonal and T quasi-upper-triangular: below the
// subdiagonal all zeros, and no two subdiagonal entries in a row (a 2x2
// block per complex eigenvalue pair). The random matrices are nonsymmetric,
// so they have complex pairs.
TEST_P(LinalgKernelTest, Schur) {
  const DType dt = GetParam();
  const int64_t B = 3, n = 6;
  const Literal a = Random(dt, Shape{B, n, n}, 11);
  const Literal tz = Kernel(Attrs(LinalgKind::kSchur), {a});
  ASSERT_EQ(tz.shape(), (Shape{B, n, 2 * n}));
  int blocks = 0;
  for (int64_t b = 0; b < B; ++b) {
    const Mat f = Part(tz, b, 2 * n * n, 0, n, 2 * n);
    Mat t = Zeros(n, n), z = Zeros(n, n), eye = Zeros(n, n);
    for (int64_t i = 0; i < n; ++i) {
      eye(i, i) = 1;
      for (int64_t j = 0; j < n; ++j) {
        t(i, j) = f(i, j);
        z(i, j) = f(i, n + j);
        if (i > j + 1) EXPECT_EQ(t(i, j), 0) << i << "," << j;
      }
      if (i > 0 && t(i, i - 1) != 0) {
        ++blocks;
        if (i > 1) EXPECT_EQ(t(i - 1, i - 2), 0) << "two blocks overlap";
      }
    }
    EXPECT_LT(MaxDiff(Mul(T(z), z), eye), 10 * Tol(dt));
    EXPECT_LT(MaxDiff(Mul(Mul(z, t), T(z)), Part(a, b, n * n, 0, n, n)),
              n * 10 * Tol(dt));
  }
  EXPECT_GT(blocks, 0);  // the test exercised complex eigenvalue pairs
  // A NaN: NaN everywhere, as the other iterative routines.
  std::vector<double> bad(n * n, 1.0);
  bad[3] = std::nan("");
  const Literal nan = Kernel(Attrs(LinalgKind::kSchur),
                             {Literal::FromDoubles(dt, Shape{n, n}, bad)});
  for (int64_t i = 0; i < 2 * n * n; ++i) {
    EXPECT_TRUE(std::isnan(nan.GetAsDouble(i)));
  }
}

TEST_P(LinalgKernelTest, InterpreterAgreesWithKernel) {
  const DType dt = GetParam();
  const Literal sq = Spd(dt, 4, 6, 8);
  const Literal wide = Random(dt, Shape{4, 3, 6}, 9);
  const Literal rhs = Random(dt, Shape{4, 6, 2}, 10);
  std::vector<std::pair<LinalgAttrs, std::vector<Literal>>> cases;
  for (LinalgKind k :
       {LinalgKind::kCholesky, LinalgKind::kLu, LinalgKind::kEigh,
        LinalgKind::kSchur}) {
    cases.push_back({Attrs(k), {sq}});
  }
  for (LinalgKind k : {LinalgKind::kQr, LinalgKind::kSvd}) {
    LinalgAttrs a = Attrs(k);
    cases.push_back({a, {wide}});
    a.full_matrices = true;
    cases.push_back({a, {sq}});
  }
  cases.push_back({Attrs(LinalgKind::kTriangularSolve), {sq, rhs}});
  for (const auto& [attrs, in] : cases) {
    SCOPED_TRACE(std::string(linalg_kind_name(attrs.kind)));
    const Literal want = Interpreted(attrs, in);
    const Literal got = Kernel(attrs, in);
    ASSERT_EQ(got.shape(), want.shape());
    for (int64_t e = 0; e < got.num_elements(); ++e) {
      EXPECT_NEAR(got.GetAsDouble(e), want.GetAsDouble(e), Tol(dt)) << e;
    }
  }
}

TEST_P(LinalgKernelTest, ManyBatchMembersAcrossThreads) {
  const DType dt = GetParam();
  const int64_t B = 200, n = 3;
  const Literal a = Spd(dt, B, n, 11);
  const Literal l = Kernel(Attrs(LinalgKind::kCholesky), {a});
  const Literal want = Interpreted(Attrs(LinalgKind::kCholesky), {a});
  for (int64_t e = 0; e < l.num_elements(); ++e) {
    ASSERT_EQ(l.GetAsDouble(e), want.GetAsDouble(e)) << e;
  }
}

INSTANTIATE_TEST_SUITE_P(Float, LinalgKernelTest,
                         ::testing::Values(DType::kFloat32, DType::kFloat64),
                         [](const auto& info) {
                           return std::string(dtype_name(info.param));
                         });

TEST(LinalgKernelTest, EmptyMatricesAndBatches) {
  const Literal e = Literal::FromDoubles(DType::kFloat32, Shape{0, 3, 3}, {});
  EXPECT_EQ(Kernel(Attrs(LinalgKind::kCholesky), {e}).num_elements(), 0);
  const Literal z = Literal::FromDoubles(DType::kFloat64, Shape{2, 0, 0}, {});
  EXPECT_EQ(Kernel(Attrs(LinalgKind::kEigh), {z}).shape(), (Shape{2, 0, 1}));
  LinalgAttrs full = Attrs(LinalgKind::kQr);
  full.full_matrices = true;
  const Literal tall = Literal::FromDoubles(DType::kFloat64, Shape{2, 0}, {});
  const Literal q = Kernel(full, {tall});  // Q = I (2x2), R 2x0
  ASSERT_EQ(q.shape(), (Shape{4}));
  EXPECT_EQ(q.GetAsDouble(0), 1);
  EXPECT_EQ(q.GetAsDouble(1), 0);
  EXPECT_EQ(q.GetAsDouble(3), 1);
}

TEST(LinalgShapeInferenceTest, ResultTypes) {
  auto type = [](LinalgAttrs a, std::vector<ValueType> in) {
    return compiler::InferType(a, in).value();
  };
  const ValueType sq{Shape{2, 4, 4}, DType::kFloat32};
  const ValueType tall{Shape{5, 3}, DType::kFloat64};
  EXPECT_EQ(type(Attrs(LinalgKind::kCholesky), {sq}), sq);
  EXPECT_EQ(type(Attrs(LinalgKind::kLu), {sq}).shape, (Shape{2, 4, 5}));
  EXPECT_EQ(type(Attrs(LinalgKind::kEigh), {sq}).shape, (Shape{2, 4, 5}));
  EXPECT_EQ(type(Attrs(LinalgKind::kQr), {tall}).shape, (Shape{5 * 3 + 3 * 3}));
  EXPECT_EQ(type(Attrs(LinalgKind::kSvd), {tall}).shape,
            (Shape{5 * 3 + 3 + 3 * 3}));
  LinalgAttrs full = Attrs(LinalgKind::kSvd);
  full.full_matrices = true;
  EXPECT_EQ(type(full, {tall}).shape, (Shape{5 * 5 + 3 + 3 * 3}));
  full.kind = LinalgKind::kQr;
  EXPECT_EQ(type(full, {tall}).shape, (Shape{5 * 5 + 5 * 3}));
  LinalgAttrs ts = Attrs(LinalgKind::kTriangularSolve);
  ts.left_side = false;
  const ValueType b{Shape{2, 7, 4}, DType::kFloat32};
  EXPECT_EQ(type(ts, {sq, b}), b);
}

void ExpectError(const LinalgAttrs& a, std::vector<ValueType> in,
                 const std::string& part) {
  Result<ValueType> r = compiler::InferType(a, in);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(part), std::string::npos)
      << r.status().message();
}

TEST(LinalgShapeInferenceTest, Errors) {
  const ValueType sq{Shape{4, 4}, DType::kFloat32};
  const ValueType rect{Shape{3, 4}, DType::kFloat32};
  const ValueType vec{Shape{4}, DType::kFloat32};
  const ValueType ints{Shape{4, 4}, DType::kInt32};
  const ValueType half{Shape{4, 4}, DType::kFloat16};
  const ValueType b_bad{Shape{3, 2}, DType::kFloat32};
  const ValueType b64{Shape{4, 2}, DType::kFloat64};
  const ValueType b_batch{Shape{2, 4, 2}, DType::kFloat32};
  ExpectError(Attrs(LinalgKind::kCholesky), {rect},
              "cholesky: a must be square in its last two dimensions");
  ExpectError(Attrs(LinalgKind::kLu), {rect}, "lu: a must be square");
  ExpectError(Attrs(LinalgKind::kEigh), {rect}, "eigh: a must be square");
  ExpectError(Attrs(LinalgKind::kQr), {vec}, "qr: a must have rank >= 2");
  ExpectError(Attrs(LinalgKind::kSvd), {ints},
              "svd: a must be float32 or float64");
  ExpectError(Attrs(LinalgKind::kCholesky), {half}, "float32 or float64");
  ExpectError(Attrs(LinalgKind::kCholesky), {sq, sq}, "expects 1 operand");
  const LinalgAttrs ts = Attrs(LinalgKind::kTriangularSolve);
  ExpectError(ts, {sq}, "expects 2 operands");
  ExpectError(ts, {rect, b_bad}, "a must be square");
  ExpectError(ts, {sq, b_bad}, "must have 4 rows");
  ExpectError(ts, {sq, b64}, "must have one dtype");
  ExpectError(ts, {sq, b_batch}, "equal batch");
  ExpectError(ts, {sq, vec}, "b must have rank >= 2");
}

TEST(LinalgShapeInferenceTest, PrintedAndDistinguished) {
  EXPECT_EQ(compiler::op_kind_name(compiler::OpKind::kLinalg), "linalg");
  EXPECT_EQ(compiler::OpDisplayName(Attrs(LinalgKind::kEigh)), "eigh");
  LinalgAttrs upper = Attrs(LinalgKind::kCholesky);
  upper.lower = false;
  EXPECT_FALSE(upper == Attrs(LinalgKind::kCholesky));
  compiler::Program p;
  const compiler::ValueId x =
      p.AddParameter(ValueType{Shape{3, 3}, DType::kFloat32}).value();
  const compiler::ValueId y = p.Add(upper, {x}).value();
  ASSERT_TRUE(p.SetOutputs({y}).ok());
  const std::string text = compiler::ProgramToText(p);
  EXPECT_NE(text.find("linalg"), std::string::npos) << text;
  EXPECT_NE(text.find("kind=cholesky, upper"), std::string::npos) << text;
}

}  // namespace
}  // namespace baton::cpu
