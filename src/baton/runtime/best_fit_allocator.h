// BestFitAllocator: a caching allocator with best-fit placement, block
// splitting and coalescing, and stream-ordered reuse of pending frees.
//
// Memory comes from a RegionProvider in regions (at least `min_region_bytes`;
// a request larger than that gets a region of its own, rounded up to 2 MiB).
// Every block is a multiple of `granularity` bytes (256), so every pointer is
// 256-byte aligned. Free blocks are kept in an index ordered by (size,
// address); a request takes the smallest block that fits and splits off the
// rest; a freed block merges with free neighbours in its region.
//
// Pending frees (stream-ordered reuse): FreeWhenDone(ptr, queue_id) marks a
// block as released by its owner while work enqueued on queue `queue_id` may
// still use it. A pending block still counts in bytes_in_use. A later
// Allocate(..., queue_id) for the SAME queue may take it (or part of it) at
// once -- that work runs after the old work in queue order -- and the bytes
// move from pending to live without bytes_in_use growing. CompletePending(
// token) is called when the old work has finished: whatever of the block is
// still pending becomes free. Pending blocks with queue_id == kNoQueue are
// never reused before completion. A block taken over that way and then freed
// with Free before its token completes (its new owner gave up before
// enqueueing any work, e.g. a call that failed to allocate its next output)
// goes back to that pending free rather than to the free list: the old work
// may still be using its bytes, so no other queue, and no host write, may get
// it before CompletePending.
//
// Statistics: bytes_in_use = live + pending block bytes (sizes rounded to the
// granularity); peak_bytes_in_use; num_allocs (successful Allocate calls,
// cumulative); largest_alloc_size (largest single block handed out);
// bytes_reserved (bytes held from the provider, free or not).
//
// Limits: Allocate fails with a ResourceExhausted status (and changes
// nothing) when the bytes it would add to bytes_in_use exceed
// `limit - bytes_in_use`; the caller (MemorySpace) turns that into a message
// naming the largest arrays. If the provider fails, fully free regions are
// returned to it and the request is retried once.
//
// Ownership: owns its regions and returns them to the provider on
// destruction (outstanding blocks are a caller bug, reported in debug builds).
// The provider must outlive the allocator.
// Thread-safety: all methods are thread-safe (one mutex).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "baton/core/status.h"
#include "baton/runtime/event.h"  // kNoQueue
#include "baton/runtime/memory_stats.h"
#include "baton/runtime/region_provider.h"

namespace baton {

class BestFitAllocator {
 public:
  struct Options {
    size_t granularity = 256;
    size_t min_region_bytes = size_t{2} << 20;
  };
  using PendingToken = uint64_t;
  static constexpr int64_t kNoLimit = INT64_MAX;

  BestFitAllocator(RegionProvider* provider, Options options);
  explicit BestFitAllocator(RegionProvider* provider)
      : BestFitAllocator(provider, Options()) {}
  ~BestFitAllocator();
  BestFitAllocator(const BestFitAllocator&) = delete;
  BestFitAllocator& operator=(const BestFitAllocator&) = delete;

  // Returns a block of at least `bytes` (0 is allowed: a 1-granule block).
  // `queue_id` names the queue whose work will first use the block (kNoQueue
  // when the host touches it directly); pending blocks of that queue are
  // preferred. `limit` caps bytes_in_use (see class comment).
  Result<void*> Allocate(size_t bytes, int queue_id, int64_t limit = kNoLimit);

  // Frees a live block now (for a block taken over from a pending free that
  // has not completed yet: returns it to that pending free; class comment).
  void Free(void* ptr);

  // Marks a live block pending (see class comment); returns the token to pass
  // to CompletePending when the work using it has finished.
  PendingToken FreeWhenDone(void* ptr, int queue_id);
  // Frees whatever of the token's blocks is still pending. Idempotent.
  // `on_freed(ptr, size)`, if given, is called (with the allocator's lock
  // held: it must not call back into it) for each block that becomes free.
  void CompletePending(
      PendingToken token,
      const std::function<void(void*, size_t)>& on_freed = nullptr);

  // The rounded size of the live block at `ptr` (what bytes_in_use counts).
  size_t BlockSize(const void* ptr) const;
  // Bytes that Allocate(bytes) adds to bytes_in_use when no pending block is
  // reused (the request rounded up to the granularity).
  size_t RoundedSize(size_t bytes) const;

  // The regions and their blocks in address order, for memory snapshots.
  struct RegionView {
    const char* base = nullptr;
    size_t size = 0;
    struct Block {
      const char* ptr;
      size_t size;
      enum class State { kFree, kLive, kPending } state;
    };
    std::vector<Block> blocks;
  };
  std::vector<RegionView> Regions() const;

  MemoryStats stats() const;  // bytes_limit stays 0 (MemorySpace sets it)
  void ResetPeak();  // peak := current bytes_in_use
  // Returns fully free regions to the provider; returns the bytes released.
  size_t Trim();

 private:
  // A block is owned by its region's address-ordered list and is in exactly
  // one of: free_ (kFree), live_ (kLive), pending_tokens_ (kPending; also in
  // pending_by_queue_ unless queue_id == kNoQueue). No two kFree blocks are
  // ever adjacent.
  struct Block {
    enum class State { kFree, kLive, kPending };
    char* ptr = nullptr;
    size_t size = 0;
    State state = State::kFree;
    int queue_id = kNoQueue;  // kPending only
    PendingToken token = 0;   // kPending only
    // kLive only: the pending free (token, queue) this block was taken from
    // by stream-ordered reuse, 0 if it came from the free list.
    PendingToken reused_from = 0;
    int reused_queue = kNoQueue;
    Block* prev = nullptr;    // address-ordered neighbours in the region
    Block* next = nullptr;
  };
  struct Region {
    char* base = nullptr;  // from provider_; back via Trim or ~
    size_t size = 0;
    Block* first = nullptr;  // owns the block list
  };
  using SizeIndex = std::set<std::pair<size_t, Block*>>;

  // Every helper below requires mu_ to be held.
  static Block* BestFit(const SizeIndex& index, size_t size);
  Block* SplitLive(Block* b, size_t size);  // b unindexed; returns it live
  void IndexPending(Block* b);
  void UnindexPending(Block* b);
  void MakeFree(Block* b);        // b unindexed: free + coalesce + index
  Block* NewRegion(size_t size);  // an unindexed free block, or nullptr
  // Cache coloring of large blocks (see NewRegion): the front offset for the
  // next large block, and the split of a free block `b` (out of the index)
  // that leaves such a gap in front of the returned block.
  size_t NextColor(size_t size);
  Block* ColorFront(Block* b, size_t size);
  size_t TrimLocked();
  void CountAlloc(const Block* b);

  RegionProvider* const provider_;  // not owned
  const Options options_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Region>> regions_;
  SizeIndex free_;
  std::map<int, SizeIndex> pending_by_queue_;  // no empty entries
  std::unordered_map<PendingToken, std::set<Block*>> pending_tokens_;  // ditto
  // Tokens issued by FreeWhenDone and not completed yet (even when all their
  // blocks were reused).
  std::unordered_set<PendingToken> outstanding_tokens_;
  std::unordered_map<const void*, Block*> live_;
  uint64_t large_blocks_ = 0;  // guarded by mu_: counts colored blocks
  PendingToken next_token_ = 1;  // 0 is never issued
  MemoryStats stats_;
};

}  // namespace baton
