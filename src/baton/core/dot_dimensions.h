// The dimensions of a dot_general operand that are neither batch nor
// contracting ("free" dimensions), in increasing order -- the order they
// take in the result, after the batch dimensions (StableHLO dot_general) --
// and how an operand lies in memory as a batch of matrices. Shared by the
// CPU kernel, the CUDA emitter, the compiler's transpose folding, sharding
// propagation and their tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "baton/core/shape.h"

namespace baton {

inline std::vector<int64_t> DotFreeDimensions(
    int rank, const std::vector<int64_t>& batch,
    const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) ==
            contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

// The number of elements over the dimensions `dims` of `shape` (a batch,
// free or contracting group's extent as one matrix dimension).
inline int64_t DimsSize(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= shape[static_cast<int>(d)];
  return n;
}

// a, b and c, one after another.
inline std::vector<int64_t> ConcatDims(const std::vector<int64_t>& a,
                                       const std::vector<int64_t>& b,
                                       const std::vector<int64_t>& c) {
  std::vector<int64_t> out = a;
  out.insert(out.end(), b.begin(), b.end());
  out.insert(out.end(), c.begin(), c.end());
  return out;
}

// Whether visiting the dimensions `order` walks `shape`'s memory in
// row-major order, size-1 dimensions aside (they can sit anywhere without
// moving data): then the operand already is the row-major array that order
// describes.
inline bool IsMemoryOrder(const Shape& shape, const std::vector<int64_t>& order) {
  int64_t last = -1;
  for (int64_t d : order) {
    if (shape[static_cast<int>(d)] == 1) continue;
    if (d < last) return false;
    last = d;
  }
  return true;
}

// How a dot_general operand whose dimensions group as (batch, rows, cols)
// lies in memory: as the row-major matrices [batch, rows, cols]
// (kRowMajor), as [batch, cols, rows] (kTransposed) -- the two a GEMM
// library reads in place, the second with its transpose flag -- or neither
// (kOther: it is copied into one of them first).
enum class MatrixLayout { kRowMajor, kTransposed, kOther };

inline MatrixLayout MatrixLayoutOf(const Shape& shape,
                                   const std::vector<int64_t>& batch,
                                   const std::vector<int64_t>& rows,
                                   const std::vector<int64_t>& cols) {
  if (IsMemoryOrder(shape, ConcatDims(batch, rows, cols))) {
    return MatrixLayout::kRowMajor;
  }
  if (IsMemoryOrder(shape, ConcatDims(batch, cols, rows))) {
    return MatrixLayout::kTransposed;
  }
  return MatrixLayout::kOther;
}

}  // namespace baton
