// Layout kernels: broadcast_in_dim, transpose, slice, concatenate, pad, iota
// (and Copy, from strided_copy.h, for reshape).
//
// Semantics are StableHLO's; all arrays are dense row-major with the given
// shapes, and `out` is allocated by the caller with the result's shape.
// Arguments are assumed valid (the compiler's shape inference checks them).
// Except for reshape (Copy, where in == out is allowed), `out` must not
// overlap any input: these kernels read inputs in a different order than
// they write.
// Ownership: pointers are borrowed for the call only; nothing is kept.
// Thread-safety: pure functions of their arguments; large calls are split
// across ThreadPool::Global().
#pragma once

#include <cstdint>
#include <span>

#include "baton/backend/cpu/kernels/strided_copy.h"
#include "baton/core/dtype.h"
#include "baton/core/shape.h"

namespace baton::cpu {

// out[i] = in[j] where j[k] = i[broadcast_dimensions[k]], or 0 where
// in_shape[k] == 1 (a size-1 dimension broadcasts).
void BroadcastInDim(DType dtype, const void* in, const Shape& in_shape,
                    std::span<const int64_t> broadcast_dimensions, void* out,
                    const Shape& out_shape);

// out dimension d is in dimension permutation[d]. Cache-blocked when the
// innermost output dimension is strided in the input.
void Transpose(DType dtype, const void* in, const Shape& in_shape,
               std::span<const int64_t> permutation, void* out);

// out[i] = in[start + i * stride] per dimension; the result has
// ceil((limit - start) / stride) elements along each dimension.
void Slice(DType dtype, const void* in, const Shape& in_shape,
           std::span<const int64_t> start, std::span<const int64_t> limit,
           std::span<const int64_t> stride, void* out);

// Joins inputs[i] (shape shapes[i]) along `dimension`; the other dimensions
// of all inputs are equal.
void Concatenate(DType dtype, std::span<const void* const> inputs,
                 std::span<const Shape> shapes, int dimension, void* out);

// Pads `in` with the one element at `padding_value`: along each dimension d,
// low[d] elements before, high[d] after and interior[d] between neighbours.
// Negative low/high crop instead. The result dimension is
// low + high + size + max(size - 1, 0) * interior (caller ensures >= 0).
void Pad(DType dtype, const void* in, const Shape& in_shape,
         const void* padding_value, std::span<const int64_t> low,
         std::span<const int64_t> high, std::span<const int64_t> interior,
         void* out);

// out[i] = i[dimension], converted to `dtype` with ConvertElement.
void Iota(DType dtype, const Shape& shape, int dimension, void* out);

}  // namespace baton::cpu
