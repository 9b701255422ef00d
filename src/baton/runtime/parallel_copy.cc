#include "baton/runtime/parallel_copy.h"

#include <algorithm>
#include <cstring>

#include "baton/runtime/thread_pool.h"

namespace baton {

void ParallelCopy(void* dst, const void* src, size_t bytes) {
  constexpr size_t kMinChunk = size_t{4} << 20;  // below this, one thread wins
  if (bytes < 2 * kMinChunk) {
    if (bytes) std::memcpy(dst, src, bytes);
    return;
  }
  // Chunks are multiples of 4 KiB so each thread writes whole pages.
  const int64_t pages = static_cast<int64_t>((bytes + 4095) / 4096);
  ThreadPool::Global().ParallelFor(
      pages, static_cast<int64_t>(kMinChunk / 4096), [&](int64_t b, int64_t e) {
        const size_t begin = static_cast<size_t>(b) * 4096;
        const size_t end = std::min(bytes, static_cast<size_t>(e) * 4096);
        std::memcpy(static_cast<char*>(dst) + begin,
                    static_cast<const char*>(src) + begin, end - begin);
      });
}

}  // namespace baton
