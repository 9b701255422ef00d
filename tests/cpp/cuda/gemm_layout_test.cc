// What runs a GEMM on a CUDA device without one: the row-major Action::kGemm
// as cuBLASLt's column-major problem (codegen/gemm_layout.h), checked by
// computing that problem as a column-major library defines it -- op(A),
// op(B), leading dimensions, strided batches -- and comparing with the
// action's own row-major definition; and the launch grid of the emitted
// kernels (cuda_kernel_library.h). Every build, every machine.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "baton/backend/cuda/codegen/gemm_layout.h"
#include "baton/backend/cuda/cuda_kernel_library.h"

namespace baton {
namespace {

using cuda::codegen::Action;
using cuda::codegen::ColumnMajorGemm;
using cuda::codegen::ColumnMajorOperand;
using cuda::codegen::ToColumnMajor;

Action Gemm(int64_t batch, int64_t m, int64_t n, int64_t k, bool trans_a,
            bool trans_b) {
  Action g;
  g.kind = Action::Kind::kGemm;
  g.batch = batch;
  g.m = m;
  g.n = n;
  g.k = k;
  g.trans_a = trans_a;
  g.trans_b = trans_b;
  return g;
}

// Small integers: every product and sum below is exact in double.
std::vector<double> Values(int64_t n, int seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[static_cast<size_t>(i)] = static_cast<double>((i * 7 + seed * 13) % 11) - 5;
  }
  return v;
}

// The action as kernel_emitter.h defines it: row-major c[q][i][j] =
// sum_l a[q][i][l] * b[q][l][j], a stored [k][m] when trans_a, b [n][k]
// when trans_b.
std::vector<double> RowMajor(const Action& g, const std::vector<double>& a,
                             const std::vector<double>& b) {
  std::vector<double> c(static_cast<size_t>(g.batch * g.m * g.n));
  for (int64_t q = 0; q < g.batch; ++q) {
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < g.k; ++l) {
          const double x = g.trans_a ? a[q * g.m * g.k + l * g.m + i]
                                     : a[q * g.m * g.k + i * g.k + l];
          const double y = g.trans_b ? b[q * g.k * g.n + j * g.k + l]
                                     : b[q * g.k * g.n + l * g.n + j];
          sum += x * y;
        }
        c[q * g.m * g.n + i * g.n + j] = sum;
      }
    }
  }
  return c;
}

// Element (r, c) of op(X), X stored column-major as `o` describes it.
double Op(const ColumnMajorOperand& o, const std::vector<double>& x, int64_t q,
          int64_t r, int64_t c) {
  const int64_t row = o.transposed ? c : r, col = o.transposed ? r : c;
  EXPECT_LT(row, o.rows);
  EXPECT_LT(col, o.cols);
  return x[static_cast<size_t>(q * o.batch_stride + row + col * o.ld)];
}

// What a column-major library computes from the description: D = op(A)
// op(B), D stored column-major. `lib_a`/`lib_b` are the buffers handed to
// it as A and B.
std::vector<double> ColumnMajor(const ColumnMajorGemm& g,
                                const std::vector<double>& lib_a,
                                const std::vector<double>& lib_b,
                                size_t d_size) {
  std::vector<double> d(d_size, -1);
  for (int64_t q = 0; q < g.batch; ++q) {
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < g.k; ++l) {
          sum += Op(g.a, lib_a, q, i, l) * Op(g.b, lib_b, q, l, j);
        }
        d[static_cast<size_t>(q * g.d.batch_stride + i + j * g.d.ld)] = sum;
      }
    }
  }
  return d;
}

TEST(GemmLayout, EveryTransposeAndBatchComputesTheRowMajorProduct) {
  for (int64_t batch : {1, 3}) {
    for (bool trans_a : {false, true}) {
      for (bool trans_b : {false, true}) {
        const Action g = Gemm(batch, 5, 3, 4, trans_a, trans_b);
        const ColumnMajorGemm cm = ToColumnMajor(g);
        SCOPED_TRACE(::testing::Message() << "batch " << batch << " trans_a "
                                          << trans_a << " trans_b " << trans_b);
        // Shapes agree: op(A) is m x k, op(B) k x n, D m x n.
        EXPECT_EQ(cm.m, g.n);
        EXPECT_EQ(cm.n, g.m);
        EXPECT_EQ(cm.k, g.k);
        EXPECT_EQ(cm.batch, batch);
        EXPECT_EQ(cm.a.transposed ? cm.a.cols : cm.a.rows, cm.m);
        EXPECT_EQ(cm.a.transposed ? cm.a.rows : cm.a.cols, cm.k);
        EXPECT_EQ(cm.b.transposed ? cm.b.cols : cm.b.rows, cm.k);
        EXPECT_EQ(cm.b.transposed ? cm.b.rows : cm.b.cols, cm.n);
        EXPECT_FALSE(cm.d.transposed);
        EXPECT_EQ(cm.d.rows, cm.m);
        EXPECT_EQ(cm.d.cols, cm.n);
        for (const ColumnMajorOperand* o : {&cm.a, &cm.b, &cm.d}) {
          EXPECT_GE(o->ld, o->rows);
          EXPECT_EQ(o->batch_stride, batch > 1 ? o->rows * o->cols : 0);
        }
        // And the library's product is the action's.
        const std::vector<double> a = Values(batch * g.m * g.k, 1);
        const std::vector<double> b = Values(batch * g.k * g.n, 2);
        const std::vector<double> want = RowMajor(g, a, b);
        // The library's A is the action's b, its B the action's a.
        EXPECT_EQ(ColumnMajor(cm, b, a, want.size()), want);
      }
    }
  }
}

TEST(GemmLayout, TheStoredOrderDecidesTransposeAndLeadingDimension) {
  // c[2][3] = a[2][4] b[4][3], both as stored: c^T = b^T a^T with b read
  // as the 3 x 4 column-major matrix b^T (ld 3) and a as 4 x 2 (ld 4).
  const ColumnMajorGemm plain = ToColumnMajor(Gemm(1, 2, 3, 4, false, false));
  EXPECT_FALSE(plain.a.transposed);
  EXPECT_EQ(plain.a.rows, 3);
  EXPECT_EQ(plain.a.ld, 3);
  EXPECT_FALSE(plain.b.transposed);
  EXPECT_EQ(plain.b.rows, 4);
  EXPECT_EQ(plain.b.ld, 4);
  EXPECT_EQ(plain.d.ld, 3);
  // a stored [4][2], b stored [3][4]: both read transposed.
  const ColumnMajorGemm both = ToColumnMajor(Gemm(1, 2, 3, 4, true, true));
  EXPECT_TRUE(both.a.transposed);
  EXPECT_EQ(both.a.rows, 4);
  EXPECT_EQ(both.a.ld, 4);
  EXPECT_TRUE(both.b.transposed);
  EXPECT_EQ(both.b.rows, 2);
  EXPECT_EQ(both.b.ld, 2);
}

TEST(KernelLaunch, GridCoversTheWorkWithinTheThreadLimit) {
  using cuda::CudaKernelLibrary;
  constexpr int64_t block = CudaKernelLibrary::kBlockThreads;
  EXPECT_EQ(CudaKernelLibrary::GridBlocks(1), 1);
  EXPECT_EQ(CudaKernelLibrary::GridBlocks(block), 1);
  EXPECT_EQ(CudaKernelLibrary::GridBlocks(block + 1), 2);
  EXPECT_EQ(CudaKernelLibrary::GridBlocks(1000 * block - 1), 1000);
  // Past 2^31 threads the grid-stride loop does the rest.
  const int64_t max_blocks = cuda::codegen::kMaxThreadsPerLaunch / block;
  EXPECT_EQ(CudaKernelLibrary::GridBlocks(cuda::codegen::kMaxThreadsPerLaunch),
            max_blocks);
  EXPECT_EQ(CudaKernelLibrary::GridBlocks(int64_t{1} << 40), max_blocks);
  EXPECT_LE(max_blocks * block, cuda::codegen::kMaxThreadsPerLaunch);
  EXPECT_LE(max_blocks, int64_t{2147483647});  // gridDim.x's limit
  EXPECT_EQ(CudaKernelLibrary::Architecture(9, 0), "sm_90");
  EXPECT_EQ(CudaKernelLibrary::Architecture(10, 0), "sm_100");
}

}  // namespace
}  // namespace baton
