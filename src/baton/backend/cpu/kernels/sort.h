// The sort kernel (compiler SortAttrs): a stable sort along one dimension
// of a dense row-major array, giving the sorted values or the int32
// permutation. Order: baton/core/sort_order.h.
// Ownership: pointers are borrowed for the call only. Thread-safety: a pure
// function of its arguments; many rows are split across
// ThreadPool::Global(). `out` must not overlap `operand`.
#pragma once

#include <cstdint>

#include "baton/core/dtype.h"
#include "baton/core/shape.h"

namespace baton::cpu {

// indices == false: out (operand's dtype) holds each row along `dimension`
// sorted (descending: the ascending row reversed). indices == true: out
// (int32) holds the stable permutation (descending: by the reversed order,
// equal keys still in their original order).
void Sort(DType dtype, const void* operand, const Shape& shape, int dimension,
          bool descending, bool indices, void* out);

}  // namespace baton::cpu
