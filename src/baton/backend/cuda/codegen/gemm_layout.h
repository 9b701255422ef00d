// ColumnMajorGemm: an Action::kGemm (kernel_emitter.h) as a column-major
// GEMM library (cuBLASLt, cublaslt_gemm.h) is asked to compute it.
//
// The action is row-major: c[batch][m][n] = a[batch][m][k] * b[batch][k][n],
// a stored as [k][m] when trans_a and b as [n][k] when trans_b. A row-major
// r x c matrix read column-major is its transpose (c x r, leading dimension
// c), so the library computes c^T = b^T a^T: its first operand is the
// action's b, its second the action's a, its result the action's c, and the
// problem is (n x k) * (k x m) -> n x m. Each operand is described as the
// library stores it -- rows and columns of the stored column-major matrix,
// its leading dimension, whether the library reads it transposed -- and
// the distance between the matrices of a strided batch (elements; 0 when
// batch is 1).
//
// Thread-safety: a pure function.
#pragma once

#include <cstdint>

#include "baton/backend/cuda/codegen/kernel_emitter.h"

namespace baton::cuda::codegen {

struct ColumnMajorOperand {
  bool transposed = false;  // the library reads op(X) = X^T
  int64_t rows = 0;         // of the stored column-major matrix
  int64_t cols = 0;
  int64_t ld = 0;            // leading dimension (elements), >= rows
  int64_t batch_stride = 0;  // elements from one matrix to the next
};

struct ColumnMajorGemm {
  // D (m x n) = op(A) (m x k) * op(B) (k x n), column-major.
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  ColumnMajorOperand a;  // the library's A: the action's b
  ColumnMajorOperand b;  // the library's B: the action's a
  ColumnMajorOperand d;  // the result: the action's c (never transposed)
};

// The column-major problem of `gemm` (an Action::kGemm with m, n, k >= 1).
ColumnMajorGemm ToColumnMajor(const Action& gemm);

}  // namespace baton::cuda::codegen
