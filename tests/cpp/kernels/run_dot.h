// RunDot: DotGeneral with exactly the scratch DotGeneralScratchBytes asks
// for, in a vector of its own, so that a kernel writing past it is caught
// (ASan in CI, and the kernel's own size check).
#pragma once

#include <cstddef>
#include <vector>

#include "baton/backend/cpu/kernels/dot.h"

namespace baton::cpu::testing {

inline void RunDot(DType dtype, const void* lhs, const Shape& lhs_shape,
                   const void* rhs, const Shape& rhs_shape,
                   const DotDimensions& dims, void* out) {
  std::vector<std::byte> scratch(static_cast<size_t>(
      DotGeneralScratchBytes(dtype, lhs_shape, rhs_shape, dims)));
  DotGeneral(dtype, lhs, lhs_shape, rhs, rhs_shape, dims, out, scratch);
}

}  // namespace baton::cpu::testing
