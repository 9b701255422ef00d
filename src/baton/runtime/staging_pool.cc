#include "baton/runtime/staging_pool.h"

#include <algorithm>

namespace baton {

Result<void*> StagingPool::Reserve(size_t bytes) {
  bytes = std::min(bytes, capacity_);
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return reserved_ + bytes <= capacity_; });
    reserved_ += bytes;
  }
  Result<void*> chunk = space_->Allocate(
      bytes, kNoQueue,
      AllocationLabel("staging chunk", AllocationKind::kStaging,
                      "baton::StagingPool"));
  if (!chunk.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    reserved_ -= bytes;
    cv_.notify_all();
  }
  return chunk;
}

void StagingPool::Release(void* chunk, size_t bytes) {
  space_->Free(chunk);
  {
    std::lock_guard<std::mutex> lock(mu_);
    reserved_ -= std::min(bytes, capacity_);
  }
  cv_.notify_all();
}

}  // namespace baton
