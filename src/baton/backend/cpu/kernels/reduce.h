// Reduce: sum, prod, max or min over any set of axes.
//
// Accumulation is in the compute type (float for float16/bfloat16), except
// float32 sums, which accumulate in double (elements -- over an outer axis,
// rows -- are first added in float in groups of 16, to keep vector speed; the
// error stays within ~16 float roundings of sum |x|). Float sums and products are
// reassociated (several accumulators, blocks, per-thread partials), so they
// match a sequential reference only within rounding; integer reductions wrap
// as scalar::ReduceCombine does and are exact; max/min are exact and
// propagate NaN.
// Aliasing: `out` must not overlap `in`.
// Ownership: pointers are borrowed for the call only; nothing is kept.
// Thread-safety: a pure function of its arguments; large calls are split
// across ThreadPool::Global() (over output rows, or over the reduced elements
// when there are too few rows to keep every thread busy).
#pragma once

#include <cstdint>
#include <span>

#include "baton/core/dtype.h"
#include "baton/core/op_codes.h"
#include "baton/core/shape.h"

namespace baton::cpu {

// out = reduction of `in` over `axes` (distinct, any order; empty means each
// element is combined once with the identity). out has in_shape with those
// axes removed and the same dtype. Reducing over a size-0 axis gives the
// identity (0, 1, -inf/lowest, +inf/max).
void Reduce(ReduceOp op, DType dtype, const void* in, const Shape& in_shape,
            std::span<const int64_t> axes, void* out);

}  // namespace baton::cpu
