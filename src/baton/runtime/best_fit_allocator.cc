#include "baton/runtime/best_fit_allocator.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdio>
#include <string>
#include <utility>

namespace baton {

namespace {

// Large requests get regions rounded to 2 MiB so that they map onto whole huge
// pages and a slightly different size later can still reuse the region.
constexpr size_t kLargeRegionAlign = size_t{2} << 20;

// No machine has 256 TiB of memory; refusing larger requests up front keeps
// every size computation below far from overflow.
constexpr size_t kMaxRequestBytes = size_t{1} << 48;

size_t RoundUp(size_t n, size_t align) {  // align is a power of two
  return (n + align - 1) & ~(align - 1);
}

// The granularity must be a power of two for RoundUp and so that offsets that
// are multiples of it keep the region's alignment.
BestFitAllocator::Options Normalize(BestFitAllocator::Options o) {
  o.granularity = std::bit_ceil(std::max<size_t>(o.granularity, 1));
  o.min_region_bytes =
      RoundUp(std::max(o.min_region_bytes, o.granularity), o.granularity);
  return o;
}

}  // namespace

BestFitAllocator::BestFitAllocator(RegionProvider* provider, Options options)
    : provider_(provider), options_(Normalize(options)) {
  assert(provider_ != nullptr);
}

BestFitAllocator::~BestFitAllocator() {
#ifndef NDEBUG
  if (!live_.empty() || !pending_tokens_.empty()) {
    std::fprintf(stderr,
                 "baton: BestFitAllocator destroyed with %zu live block(s) and "
                 "%zu pending free(s) outstanding (%lld bytes in use); their "
                 "memory is released anyway, so any later use is a bug\n",
                 live_.size(), pending_tokens_.size(),
                 static_cast<long long>(stats_.bytes_in_use));
  }
#endif
  for (const std::unique_ptr<Region>& r : regions_) {
    for (Block* b = r->first; b != nullptr;) {
      Block* next = b->next;
      delete b;
      b = next;
    }
    provider_->FreeRegion(r->base, r->size);
  }
}

size_t BestFitAllocator::RoundedSize(size_t bytes) const {
  // Clamped so that an absurd request still rounds to an absurd size rather
  // than wrapping to a small one.
  bytes = std::clamp<size_t>(bytes, 1, kMaxRequestBytes + 1);
  return RoundUp(bytes, options_.granularity);
}

Result<void*> BestFitAllocator::Allocate(size_t bytes, int queue_id,
                                         int64_t limit) {
  if (bytes > kMaxRequestBytes) {
    return ResourceExhausted("cannot allocate " + std::to_string(bytes) +
                             " bytes: larger than any memory baton manages");
  }
  const size_t size = RoundedSize(bytes);
  std::lock_guard<std::mutex> lock(mu_);

  // Work on `queue_id` runs after the work that still uses its pending blocks,
  // so such a block can be handed out now; its bytes already count as in use,
  // which is why this path ignores the limit.
  if (queue_id != kNoQueue) {
    auto q = pending_by_queue_.find(queue_id);
    if (q != pending_by_queue_.end()) {
      if (Block* b = BestFit(q->second, size)) {
        const PendingToken from = b->token;
        UnindexPending(b);
        Block* live = SplitLive(b, size);
        live->reused_from = from;
        live->reused_queue = queue_id;
        stats_.bytes_pending -= static_cast<int64_t>(live->size);
        CountAlloc(live);
        return static_cast<void*>(live->ptr);
      }
    }
  }

  // Checked before anything is touched so that a refusal changes nothing.
  const int64_t added = static_cast<int64_t>(size);
  if (limit < stats_.bytes_in_use || added > limit - stats_.bytes_in_use) {
    return ResourceExhausted(
        "allocating " + std::to_string(size) +
        " bytes would exceed the memory limit of " + std::to_string(limit) +
        " bytes (" + std::to_string(stats_.bytes_in_use) +
        " bytes in use, of which " + std::to_string(stats_.bytes_pending) +
        " wait for enqueued work to finish)");
  }

  Block* b = BestFit(free_, size);
  if (b != nullptr) {
    free_.erase({b->size, b});
    b = ColorFront(b, size);
  } else {
    b = NewRegion(size);
    if (b == nullptr) {
      return ResourceExhausted(
          "out of memory: the system refused a region for " +
          std::to_string(size) + " bytes even after cached memory was " +
          "released (" + std::to_string(stats_.bytes_in_use) +
          " bytes in use); free or delete arrays and retry");
    }
  }
  Block* live = SplitLive(b, size);
  stats_.bytes_in_use += added;
  CountAlloc(live);
  return static_cast<void*>(live->ptr);
}

void BestFitAllocator::Free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) {
    assert(false && "Free of a pointer that is not a live block");
    return;  // release builds: ignoring is safer than corrupting the lists
  }
  Block* b = it->second;
  live_.erase(it);
  if (b->reused_from != 0 && outstanding_tokens_.count(b->reused_from) != 0) {
    // Taken over by stream-ordered reuse and given up before the work of the
    // pending free it came from finished (its new owner ordered nothing
    // after that work): that work may still use the bytes, so the block goes
    // back to that pending free (class comment).
    b->state = Block::State::kPending;
    b->queue_id = b->reused_queue;
    b->token = b->reused_from;
    b->reused_from = 0;
    b->reused_queue = kNoQueue;
    IndexPending(b);
    stats_.bytes_pending += static_cast<int64_t>(b->size);
    return;
  }
  stats_.bytes_in_use -= static_cast<int64_t>(b->size);
  MakeFree(b);
}

BestFitAllocator::PendingToken BestFitAllocator::FreeWhenDone(void* ptr,
                                                              int queue_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) {
    assert(ptr == nullptr && "FreeWhenDone of a pointer that is not live");
    return 0;  // CompletePending(0) does nothing
  }
  Block* b = it->second;
  live_.erase(it);
  b->state = Block::State::kPending;
  b->queue_id = queue_id;
  b->token = next_token_++;
  b->reused_from = 0;
  b->reused_queue = kNoQueue;
  outstanding_tokens_.insert(b->token);
  IndexPending(b);
  stats_.bytes_pending += static_cast<int64_t>(b->size);
  return b->token;
}

void BestFitAllocator::CompletePending(
    PendingToken token, const std::function<void(void*, size_t)>& on_freed) {
  std::lock_guard<std::mutex> lock(mu_);
  outstanding_tokens_.erase(token);
  // UnindexPending drops the entry once its last block leaves, which ends the
  // loop; blocks already reused by the same queue are no longer in it.
  for (auto it = pending_tokens_.find(token); it != pending_tokens_.end();
       it = pending_tokens_.find(token)) {
    Block* b = *it->second.begin();
    UnindexPending(b);
    stats_.bytes_pending -= static_cast<int64_t>(b->size);
    stats_.bytes_in_use -= static_cast<int64_t>(b->size);
    if (on_freed) on_freed(b->ptr, b->size);
    MakeFree(b);
  }
}

size_t BestFitAllocator::BlockSize(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  return it == live_.end() ? 0 : it->second->size;
}

std::vector<BestFitAllocator::RegionView> BestFitAllocator::Regions() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RegionView> out;
  out.reserve(regions_.size());
  for (const auto& r : regions_) {
    RegionView v;
    v.base = r->base;
    v.size = r->size;
    for (const Block* b = r->first; b != nullptr; b = b->next) {
      using S = RegionView::Block::State;
      const S state = b->state == Block::State::kFree   ? S::kFree
                      : b->state == Block::State::kLive ? S::kLive
                                                        : S::kPending;
      v.blocks.push_back({b->ptr, b->size, state});
    }
    out.push_back(std::move(v));
  }
  return out;
}

MemoryStats BestFitAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void BestFitAllocator::ResetPeak() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_bytes_in_use = stats_.bytes_in_use;
}

size_t BestFitAllocator::Trim() {
  std::lock_guard<std::mutex> lock(mu_);
  return TrimLocked();
}

BestFitAllocator::Block* BestFitAllocator::BestFit(const SizeIndex& index,
                                                   size_t size) {
  auto it = index.lower_bound({size, nullptr});
  return it == index.end() ? nullptr : it->second;
}

BestFitAllocator::Block* BestFitAllocator::SplitLive(Block* b, size_t size) {
  if (b->size > size) {
    // The tail keeps b's state: a free tail cannot touch another free block
    // (b was free, so its successor is not), and a pending tail still belongs
    // to the same token and queue.
    Block* tail = new Block(*b);
    tail->ptr = b->ptr + size;
    tail->size = b->size - size;
    tail->prev = b;
    if (tail->next != nullptr) tail->next->prev = tail;
    b->next = tail;
    b->size = size;
    if (tail->state == Block::State::kFree) {
      free_.emplace(tail->size, tail);
    } else {
      IndexPending(tail);
    }
  }
  b->state = Block::State::kLive;
  b->queue_id = kNoQueue;
  b->token = 0;
  live_.emplace(b->ptr, b);
  return b;
}

void BestFitAllocator::IndexPending(Block* b) {
  if (b->queue_id != kNoQueue) {
    pending_by_queue_[b->queue_id].emplace(b->size, b);
  }
  pending_tokens_[b->token].insert(b);
}

void BestFitAllocator::UnindexPending(Block* b) {
  if (b->queue_id != kNoQueue) {
    auto q = pending_by_queue_.find(b->queue_id);
    q->second.erase({b->size, b});
    if (q->second.empty()) pending_by_queue_.erase(q);
  }
  auto t = pending_tokens_.find(b->token);
  t->second.erase(b);
  if (t->second.empty()) pending_tokens_.erase(t);
}

void BestFitAllocator::MakeFree(Block* b) {
  b->state = Block::State::kFree;
  b->queue_id = kNoQueue;
  b->token = 0;
  b->reused_from = 0;
  b->reused_queue = kNoQueue;
  // Gives the block after `keep` to `keep`. The absorbed block always has a
  // predecessor, so region->first never changes here.
  auto absorb_next = [](Block* keep) {
    Block* gone = keep->next;
    keep->size += gone->size;
    keep->next = gone->next;
    if (keep->next != nullptr) keep->next->prev = keep;
    delete gone;
  };
  if (b->next != nullptr && b->next->state == Block::State::kFree) {
    free_.erase({b->next->size, b->next});
    absorb_next(b);
  }
  if (b->prev != nullptr && b->prev->state == Block::State::kFree) {
    b = b->prev;
    free_.erase({b->size, b});  // re-inserted below under its new size
    absorb_next(b);
  }
  free_.emplace(b->size, b);
}

size_t BestFitAllocator::NextColor(size_t size) {
  if (size <= options_.min_region_bytes) return 0;
  return (large_blocks_++ % 16) * 17 * options_.granularity;
}

BestFitAllocator::Block* BestFitAllocator::ColorFront(Block* b, size_t size) {
  const size_t color = NextColor(size);
  if (color == 0 || b->size < size + color) return b;
  // b (free, out of the index) becomes [gap: free][b], the gap indexed.
  Block* gap = new Block;
  gap->ptr = b->ptr;
  gap->size = color;
  gap->prev = b->prev;
  gap->next = b;
  if (b->prev != nullptr) {
    b->prev->next = gap;
  } else {
    for (auto& r : regions_) {
      if (r->first == b) r->first = gap;
    }
  }
  b->prev = gap;
  b->ptr += color;
  b->size -= color;
  // The block before the gap is not free (b was free and coalesced).
  free_.emplace(gap->size, gap);
  return b;
}

BestFitAllocator::Block* BestFitAllocator::NewRegion(size_t size) {
  // A large request starts `color` bytes into its own region, a different
  // offset for each region (0, 17, 34, ... granules, under 64 KiB). Regions
  // come back from mmap next to each other at 2 MiB multiples, so without it
  // arrays that are used together (params[i] and grads[i]) sit a power of
  // two apart and share cache sets: the donated update params - lr * grads
  // over 8 x 32 MiB ran at 25 ms instead of 15. The gap in front is a free
  // block like any other; the array's own accounting does not change.
  const bool large = size > options_.min_region_bytes;
  const size_t color = NextColor(size);
  const size_t region_bytes =
      !large ? options_.min_region_bytes
             : RoundUp(size + color,
                       std::max(kLargeRegionAlign, options_.granularity));
  // The provider is called under mu_: regions are rare and large, and keeping
  // the lock makes the limit check and the reservation one atomic step.
  void* base = provider_->AllocateRegion(region_bytes);
  if (base == nullptr) {
    TrimLocked();
    base = provider_->AllocateRegion(region_bytes);
  }
  if (base == nullptr) return nullptr;
  assert(reinterpret_cast<uintptr_t>(base) % 4096 == 0);

  auto region = std::make_unique<Region>();
  region->base = static_cast<char*>(base);
  region->size = region_bytes;
  Block* b = new Block;
  b->ptr = region->base + color;
  b->size = region_bytes - color;
  region->first = b;
  if (color > 0) {
    // The block spills `color` bytes into the region's last 2 MiB; huge pages
    // there would make all 2 MiB resident for a few KiB of array.
    if (region_bytes >= 2 * kLargeRegionAlign) {
      provider_->AdviseSmallPages(region->base + region_bytes - kLargeRegionAlign,
                                  kLargeRegionAlign);
    }
    Block* gap = new Block;
    gap->ptr = region->base;
    gap->size = color;
    gap->next = b;
    b->prev = gap;
    region->first = gap;
    free_.emplace(gap->size, gap);
  }
  regions_.push_back(std::move(region));
  stats_.bytes_reserved += static_cast<int64_t>(region_bytes);
  return b;
}

size_t BestFitAllocator::TrimLocked() {
  size_t released = 0;
  // Coalescing guarantees a fully free region is exactly one free block.
  std::erase_if(regions_, [&](const std::unique_ptr<Region>& r) {
    Block* only = r->first;
    if (only->state != Block::State::kFree || only->next != nullptr) {
      return false;
    }
    free_.erase({only->size, only});
    delete only;
    provider_->FreeRegion(r->base, r->size);
    released += r->size;
    return true;
  });
  stats_.bytes_reserved -= static_cast<int64_t>(released);
  return released;
}

void BestFitAllocator::CountAlloc(const Block* b) {
  ++stats_.num_allocs;
  stats_.largest_alloc_size =
      std::max(stats_.largest_alloc_size, static_cast<int64_t>(b->size));
  stats_.peak_bytes_in_use =
      std::max(stats_.peak_bytes_in_use, stats_.bytes_in_use);
}

}  // namespace baton
