// ParallelCopy: memcpy split across the global ThreadPool for large sizes
// (a single core cannot saturate memory bandwidth on most machines).
#pragma once

#include <cstddef>

namespace baton {

// Copies `bytes` from `src` to `dst` (non-overlapping).
void ParallelCopy(void* dst, const void* src, size_t bytes);

}  // namespace baton
