// Indexing kernels: dynamic_slice, dynamic_update_slice, gather (take along
// one axis) and scatter (.at[idx].set/add/mul/min/max along one axis).
//
// All arrays are dense row-major; `out` is allocated by the caller. Start
// indices arrive already read from their (device) scalars as int64.
// In place: dynamic_update_slice and scatter accept out == operand and then
// touch only the updated elements (O(update) work, not O(operand)); this is
// what lets a donated or dead operand be updated without a copy. No other
// overlap between out and an input is allowed.
// Ownership: pointers are borrowed for the call only; nothing is kept.
// Thread-safety: pure functions of their arguments; large calls are split
// across ThreadPool::Global().
#pragma once

#include <cstdint>
#include <span>

#include "baton/core/dtype.h"
#include "baton/core/gather_bounds.h"
#include "baton/core/op_codes.h"
#include "baton/core/shape.h"

namespace baton::cpu {

// out = operand[starts : starts + sizes], each start clamped (StableHLO) to
// [0, dim - size] so the window is always inside the operand.
void DynamicSlice(DType dtype, const void* operand, const Shape& operand_shape,
                  std::span<const int64_t> starts,
                  std::span<const int64_t> sizes, void* out);

// out = operand with out[starts : starts + update_shape] = update, starts
// clamped to [0, dim - update_dim]. out == operand: only the window is
// written. Otherwise operand is copied to out first. update must not overlap
// out.
void DynamicUpdateSlice(DType dtype, const void* operand,
                        const Shape& operand_shape, const void* update,
                        const Shape& update_shape,
                        std::span<const int64_t> starts, void* out);

// numpy take along `axis`: out has shape operand[:axis] + indices.shape +
// operand[axis+1:] and out[a, j, b] = operand[a, p(indices[j]), b], where
// p is bounds.Position (core/gather_bounds.h): by default the index clamped
// to [0, operand_shape[axis] - 1]; with `bounds`, negatives wrapped once
// and the rest read as the fill value. `indices` holds num_indices elements
// of an integer `index_dtype`; its shape does not matter beyond its element
// count. If operand_shape[axis] == 0 there is nothing to take and a
// non-empty out is the fill value (bounds.fill) or zeros.
void Gather(DType dtype, const void* operand, const Shape& operand_shape,
            const void* indices, DType index_dtype, int64_t num_indices,
            int axis, void* out, const GatherBounds& bounds = {});

// ScatterMode (core/op_codes.h): how an update combines with the element it
// lands on.

// out = operand, then for each update u[a, j, b] (updates has the shape
// Gather would give) in row-major order:
// out[a, indices[j], b] = combine(out[a, indices[j], b], u[a, j, b]).
// Indices outside [0, operand_shape[axis]) are dropped; duplicates apply in
// order (so for kSet the last one wins, and adds accumulate). out == operand:
// only the targets are touched.
void Scatter(ScatterMode mode, DType dtype, const void* operand,
             const Shape& operand_shape, const void* indices, DType index_dtype,
             int64_t num_indices, const void* updates, int axis, void* out);

}  // namespace baton::cpu
