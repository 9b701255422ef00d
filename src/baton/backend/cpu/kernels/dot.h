// DotGeneral: StableHLO dot_general (matmul, batched matmul, any contracting
// and batch dimensions).
//
// float32/float64 call OpenBLAS (cblas_sgemm/dgemm), which threads itself.
// An operand whose dimensions are already in [batch, free, contracting] or
// [batch, contracting, free] order is passed as is (with BLAS's transpose
// flag); any other order is first transposed into a scratch copy.
// float16/bfloat16 are converted to float32, multiplied with sgemm and
// rounded back (like XLA:CPU), so they match a float32 reference within
// float16/bfloat16 rounding. Integers and bool use blocked loops with
// scalar::Binary's wrapping (bool: and/or), exact in any order.
// Scratch: up to the size of both operands (and the output, for 16-bit
// floats) is allocated inside the call.
// Aliasing: `out` must not overlap lhs or rhs.
// Ownership: pointers are borrowed for the call only; nothing is kept.
// Thread-safety: a pure function of its arguments; safe to call from several
// threads (OpenBLAS serializes or threads internally).
#pragma once

#include <cstdint>
#include <vector>

#include "baton/core/dtype.h"
#include "baton/core/shape.h"

namespace baton::cpu {

// Dimension numbers of a dot_general. lhs_batch[i] pairs with rhs_batch[i]
// and lhs_contracting[i] with rhs_contracting[i] (equal sizes).
struct DotDimensions {
  std::vector<int64_t> lhs_batch;
  std::vector<int64_t> rhs_batch;
  std::vector<int64_t> lhs_contracting;
  std::vector<int64_t> rhs_contracting;
};

// out = sum over the contracting dims of lhs * rhs. out has the shape
// batch dims (in lhs_batch order), then lhs free dims, then rhs free dims
// (free dims in increasing order); lhs, rhs and out all have `dtype`.
void DotGeneral(DType dtype, const void* lhs, const Shape& lhs_shape,
                const void* rhs, const Shape& rhs_shape,
                const DotDimensions& dims, void* out);

// Shape of DotGeneral's result, for callers (and tests) that allocate it.
Shape DotGeneralShape(const Shape& lhs_shape, const Shape& rhs_shape,
                      const DotDimensions& dims);

}  // namespace baton::cpu
