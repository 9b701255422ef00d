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
// Scratch: the caller passes it in (DotGeneralScratchBytes says how much:
// a transposed copy of an operand, and for 16-bit floats both operands and
// the result in float32); the kernels allocate nothing. A CPU executable
// places it in its arena through buffer assignment (DESIGN.md section 6), so
// it shows in the memory analysis and in memory_stats, and is reused.
// Aliasing: `out` must not overlap lhs or rhs.
// Ownership: pointers are borrowed for the call only; nothing is kept.
// Thread-safety: a pure function of its arguments; safe to call from several
// threads (OpenBLAS serializes or threads internally).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
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

// The scratch, in bytes, that DotGeneral (and DotGeneralAccumulate) needs
// for these operands: 0 for most products; an operand whose dimensions are
// in neither BLAS order needs a transposed copy, and a float16/bfloat16
// product needs its operands and result in float32 (plus any copy of
// those). Each piece is rounded up to 64 bytes.
int64_t DotGeneralScratchBytes(DType dtype, const Shape& lhs_shape,
                               const Shape& rhs_shape,
                               const DotDimensions& dims);

// out = sum over the contracting dims of lhs * rhs. out has the shape
// batch dims (in lhs_batch order), then lhs free dims, then rhs free dims
// (free dims in increasing order); lhs, rhs and out all have `dtype`.
// `scratch` holds at least DotGeneralScratchBytes (a smaller span aborts
// with a message: that is the caller's bug) and may be empty when that is 0.
void DotGeneral(DType dtype, const void* lhs, const Shape& lhs_shape,
                const void* rhs, const Shape& rhs_shape,
                const DotDimensions& dims, void* out,
                std::span<std::byte> scratch);

// out += alpha * DotGeneral(lhs, rhs), as one BLAS call with beta = 1: no
// pass that zeroes `out` first and no separate add pass (an SGD update
// p - lr * (h^T . dz), a residual x + h @ w, gradient accumulation). `out`
// holds the addend on entry. float32 and float64 only. The rounding is the
// BLAS's: alpha times the accumulated sum is added to out in one step, where
// the unfused program rounds the product, the scaled product and the sum
// each to `dtype` (XLA:GPU's cuBLAS epilogue rounds the same way).
// `scratch` as for DotGeneral.
void DotGeneralAccumulate(DType dtype, const void* lhs, const Shape& lhs_shape,
                          const void* rhs, const Shape& rhs_shape,
                          const DotDimensions& dims, double alpha, void* out,
                          std::span<std::byte> scratch);

// Whether DotGeneralAccumulate adds this dot's whole product into `out` in
// one rounding, as the unfused program's add does: float32/float64, a
// matrix-matrix product (gemv adds into its output piece by piece), and a
// contraction no longer than DotAccumulateMaxDepth (OpenBLAS adds each
// block of the contraction into the output separately).
bool AccumulatesInOneRounding(DType dtype, const Shape& lhs_shape,
                              const Shape& rhs_shape, const DotDimensions& dims);

// The longest contraction the loaded BLAS's gemm with beta = 1 adds into
// its output in one step, for `dtype` (float32, float64; 0 for others):
// measured on first use (a few small GEMMs, well under a millisecond) by
// comparing beta = 1 with the product made first and added, since it
// depends on the kernel OpenBLAS picked for this CPU (320 for Haswell's
// sgemm, 448 for SkylakeX's, 128 for its generic kernel). Thread-safe.
int64_t DotAccumulateMaxDepth(DType dtype);

// Shape of DotGeneral's result, for callers (and tests) that allocate it.
Shape DotGeneralShape(const Shape& lhs_shape, const Shape& rhs_shape,
                      const DotDimensions& dims);

}  // namespace baton::cpu
