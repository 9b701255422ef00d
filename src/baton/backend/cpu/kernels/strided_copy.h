// StridedCopy: the data-movement engine under transpose, broadcast_in_dim,
// slice, pad, concatenate, dynamic_slice and dynamic_update_slice.
//
// It copies one strided view into another, element by element, knowing only
// the element size, so every layout op is one routine for all dtypes.
// Ownership: pointers are borrowed for the call only; nothing is kept.
// Thread-safety: a pure function of its arguments; splits large copies across
// ThreadPool::Global().
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace baton::cpu {

// For every multi-index i over `dims`, copies the element at
// in + sum(i[d] * in_strides[d]) to out + sum(i[d] * out_strides[d]), strides
// in elements of `elem_size` bytes (1, 2, 4, 8 or 16). An in-stride may be 0
// (broadcast); out positions must be distinct, and the source and destination
// element sets must not overlap. Contiguous inner runs become memcpy, stride-0
// runs become fills, and a 2-D transpose pattern is copied in cache blocks.
void StridedCopy(size_t elem_size, const void* in,
                 std::span<const int64_t> in_strides, void* out,
                 std::span<const int64_t> out_strides,
                 std::span<const int64_t> dims);

// memcpy of `bytes`, split across the pool when large. in == out is a no-op;
// otherwise the ranges must not overlap.
void Copy(const void* in, void* out, int64_t bytes);

}  // namespace baton::cpu
