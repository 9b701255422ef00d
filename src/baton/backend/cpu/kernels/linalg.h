// The linalg kernel (compiler LinalgAttrs): LAPACK decompositions and BLAS
// triangular solves of a batch of row-major float32/float64 matrices, each
// computed by core/linalg_lapack.h (which the reference interpreter runs
// too). Batch members are split across ThreadPool::Global().
// Ownership: pointers are borrowed for the call only. Thread-safety: a pure
// function of its arguments, safe to call concurrently. `out` must not
// overlap the operands.
#pragma once

#include "baton/core/dtype.h"
#include "baton/core/linalg_lapack.h"
#include "baton/core/shape.h"

namespace baton::cpu {

// a has shape a_shape; b (a triangular solve's right-hand sides, else
// null) b_shape; out the packed result (LinalgAttrs, op_attrs.h).
void Linalg(const LinalgOptions& options, DType dtype, const void* a,
            const Shape& a_shape, const void* b, const Shape& b_shape,
            void* out);

}  // namespace baton::cpu
