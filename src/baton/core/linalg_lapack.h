// The linalg op's computation (compiler/op_attrs.h, LinalgAttrs, which
// documents each kind's operands and packed result), one matrix at a time,
// by LAPACK and BLAS (OpenBLAS): shared by the reference interpreter and
// the CPU kernel (backend/cpu/kernels/linalg.h) so the two cannot disagree.
// Each matrix is copied from its row-major operand into column-major
// scratch, LAPACK runs on it with a workspace query first, and the results
// are written out in the packed layout.
//
// Ownership: pointers are borrowed for the call only; scratch is allocated
// inside it. Thread-safety: reentrant (all state is in the arguments and
// the call's own scratch), so disjoint batch ranges may run concurrently.
#pragma once

#include <cstdint>

#include "baton/core/dtype.h"
#include "baton/core/linalg_kind.h"
#include "baton/core/shape.h"

namespace baton {

// What one call computes: `batch` matrices a (m x n), for a triangular
// solve with right-hand sides b (b_rows x b_cols), each giving `out_size`
// result elements (consecutive per batch, in the packed layout).
struct LinalgGeometry {
  int64_t batch = 0;
  int64_t m = 0, n = 0;
  int64_t b_rows = 0, b_cols = 0;
  int64_t out_size = 0;
};

// The geometry of well-formed operands (shape inference has checked them):
// a's shape, and b's for a triangular solve (ignored otherwise).
LinalgGeometry LinalgGeometryOf(const LinalgOptions& options, const Shape& a,
                                const Shape& b);

// Computes the batch members [begin, end) (dtype float32 or float64): a
// (and b) are whole operands, out the whole result.
void LinalgBatches(const LinalgOptions& options, DType dtype,
                   const LinalgGeometry& g, const void* a, const void* b,
                   void* out, int64_t begin, int64_t end);

}  // namespace baton
