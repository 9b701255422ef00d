// Reduce: sum, prod, max or min over any set of axes.
//
// Accumulation is in the compute type (float for float16/bfloat16), except
// float32 sums, which accumulate in double (elements -- over an outer axis,
// rows -- are first added in float in groups of 16, to keep vector speed; the
// error stays within ~16 float roundings of sum |x|). Float sums and products
// are reassociated (several accumulators, blocks, per-thread partials), so they
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
#include <functional>
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

// The elements a contiguous reduction adds up as one block, and the piece a
// fused reduction's producer computes at a time (ReduceRows): one constant,
// so that a reduction fed piece by piece is bitwise the one over memory.
inline constexpr int64_t kReducePieceElements = 4096;

// Writes elements [begin, begin + count) (count <= kReducePieceElements) of
// a virtual row-major input into `dst`; false when it could not (the
// producer keeps its own error).
using PieceProducer =
    std::function<bool(int64_t begin, int64_t count, void* dst)>;

// A fused reduction (backend/cpu/fused_reduce_runner.h): out[r] =
// reduction of elements [r * row, (r + 1) * row) of a virtual row-major
// input of rows * row elements of `dtype`, which `produce` computes a piece
// at a time into per-thread buffers. The work is split between threads and
// combined exactly as Reduce splits an input in memory reduced over its
// trailing dimensions, so the result is bitwise Reduce's over the
// materialized input. Returns false as soon as `produce` does (`out` is then
// partly written).
bool ReduceRows(ReduceOp op, DType dtype, int64_t rows, int64_t row,
                const PieceProducer& produce, void* out);

// The float32 sum of elements [begin, begin + count) (count <=
// kReducePieceElements) of a virtual row-major input, bitwise what
// reducing those elements from memory gives (reduce_run.h SumFloatRunOf):
// a producer that sums its values as it makes them (FloatChain::SumRange).
using FloatPieceSum = std::function<double(int64_t begin, int64_t count)>;

// ReduceRows of a float32 sum whose pieces `sum` adds up without a buffer:
// the same split and order, so the same bits, and the producer's values
// never stored.
void SumRowsFloat32(int64_t rows, int64_t row, const FloatPieceSum& sum,
                    float* out);

}  // namespace baton::cpu
