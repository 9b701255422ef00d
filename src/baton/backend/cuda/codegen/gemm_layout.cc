// An Action::kGemm as a column-major library computes it (gemm_layout.h).
#include "baton/backend/cuda/codegen/gemm_layout.h"

namespace baton::cuda::codegen {

ColumnMajorGemm ToColumnMajor(const Action& gemm) {
  ColumnMajorGemm g;
  g.m = gemm.n;
  g.n = gemm.m;
  g.k = gemm.k;
  g.batch = gemm.batch;
  const bool batched = gemm.batch > 1;
  // The library's A = b^T (n x k). b stored row-major [k][n] is, read
  // column-major, the n x k matrix b^T itself (ld n); stored [n][k]
  // (trans_b) it is the k x n matrix b (ld k), read transposed.
  g.a.transposed = gemm.trans_b;
  g.a.rows = gemm.trans_b ? gemm.k : gemm.n;
  g.a.cols = gemm.trans_b ? gemm.n : gemm.k;
  g.a.ld = g.a.rows;
  g.a.batch_stride = batched ? gemm.k * gemm.n : 0;
  // The library's B = a^T (k x m). a stored [m][k] is, column-major, the
  // k x m matrix a^T (ld k); stored [k][m] (trans_a) the m x k matrix a
  // (ld m), read transposed.
  g.b.transposed = gemm.trans_a;
  g.b.rows = gemm.trans_a ? gemm.m : gemm.k;
  g.b.cols = gemm.trans_a ? gemm.k : gemm.m;
  g.b.ld = g.b.rows;
  g.b.batch_stride = batched ? gemm.m * gemm.k : 0;
  // D = c^T (n x m): c stored [m][n] read column-major, ld n.
  g.d.rows = gemm.n;
  g.d.cols = gemm.m;
  g.d.ld = gemm.n;
  g.d.batch_stride = batched ? gemm.m * gemm.n : 0;
  return g;
}

}  // namespace baton::cuda::codegen
