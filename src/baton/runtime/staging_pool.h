// StagingPool: bounded host staging for transfers that cannot write their
// destination yet (device_put(into=) while the old value is still being read).
//
// A transfer reserves a chunk, copies (snapshots) the caller's bytes into it,
// and a queue task later moves the chunk to its destination and returns it.
// At most `capacity` bytes are reserved at once per device; Reserve blocks
// until enough is returned, which bounds the memory a parameter swap needs to
// parameters + capacity (DESIGN R2). Chunks come from the pinned_host memory
// space, where they are counted.
//
// Ownership: owned by its Device; the memory space outlives it.
// Thread-safety: all methods are thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>

#include "baton/core/status.h"
#include "baton/runtime/memory_space.h"

namespace baton {

class StagingPool {
 public:
  static constexpr size_t kDefaultCapacity = size_t{16} << 20;  // 16 MiB
  static constexpr size_t kChunkBytes = size_t{4} << 20;        // 4 MiB

  StagingPool(MemorySpace* space, size_t capacity)
      : space_(space), capacity_(capacity) {}

  size_t capacity() const { return capacity_; }
  // Blocks until `bytes` (<= capacity) fit, then allocates them.
  Result<void*> Reserve(size_t bytes);
  // Returns a chunk from Reserve; wakes waiters.
  void Release(void* chunk, size_t bytes);

 private:
  MemorySpace* const space_;  // not owned
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t reserved_ = 0;  // guarded by mu_
};

}  // namespace baton
