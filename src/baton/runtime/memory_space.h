// MemorySpace: one memory kind of one device -- its allocator, statistics,
// limit and the record of what is live in it (DESIGN R8, R9).
//
// Every buffer baton allocates goes through a MemorySpace. Allocate checks the
// limit and, on a breach, fails with a ResourceExhausted status that lists the
// largest live allocations by label, changing nothing. Tests can make any
// chosen Allocate fail the same way (allocation_faults.h). FreeAfter releases a
// buffer once the work using it is done; when all that work is on one in-order
// queue, the bytes can be reused at once by later work on that queue
// (stream-ordered reuse, see BestFitAllocator).
//
// Ownership: owned by its Device; owns its allocator and region provider.
// Must outlive every buffer allocated from it and every pending free.
// Thread-safety: all methods are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/core/memory_kind.h"
#include "baton/core/status.h"
#include "baton/runtime/allocation_site.h"
#include "baton/runtime/best_fit_allocator.h"
#include "baton/runtime/event.h"
#include "baton/runtime/memory_stats.h"
#include "baton/runtime/trace_recorder.h"

namespace baton {

// One live allocation, as the profiler sees it.
struct LiveAllocation {
  uint64_t id = 0;  // unique per allocation, in allocation order
  uint64_t address = 0;
  int64_t bytes = 0;  // the block's rounded size (what bytes_in_use counts)
  AllocationKind kind = AllocationKind::kArray;
  std::string label;
  const char* api = "";
  int64_t time_ns = 0;  // TraceRecorder::NowNs(); 0 if not recording then
  std::shared_ptr<const CallStack> stack;  // null unless recording then
  StackId stack_id = 0;  // the AllocationSite's, recording or not; 0: none
};

// One region of a memory space and its blocks, for memory snapshots.
struct SegmentInfo {
  struct Block {
    int64_t offset = 0;
    int64_t size = 0;
    enum class State { kFree, kLive, kPending } state = State::kFree;
    uint64_t allocation_id = 0;  // kLive: the LiveAllocation's id, else 0
  };
  uint64_t address = 0;
  int64_t size = 0;
  std::vector<Block> blocks;  // in address order
};

class MemorySpace {
 public:
  // `device_name` ("cpu:0") appears in error messages; `device_id` in traces.
  MemorySpace(std::string device_name, int device_id, MemoryKind kind,
              std::unique_ptr<RegionProvider> provider);
  MemorySpace(const MemorySpace&) = delete;
  MemorySpace& operator=(const MemorySpace&) = delete;

  MemoryKind kind() const { return kind_; }
  const std::string& device_name() const { return device_name_; }

  // Allocates `bytes` for work that will first touch it on queue `queue_id`
  // (kNoQueue: the host writes it directly). `label` ("float32(8, 1024)")
  // names the allocation in out-of-memory messages, traces and profiles;
  // it keeps the thread's AllocationSite (its stack only while a recording
  // is active).
  // Called from inside a running task (for work that runs at once there,
  // work_queue.h), no pending block is reused.
  Result<void*> Allocate(size_t bytes, int queue_id, AllocationLabel label);
  // Frees now; the memory must not be in use.
  void Free(void* ptr);
  // Frees once every event in `pending` is ready (see class comment).
  void FreeAfter(void* ptr, const std::vector<Event>& pending);

  // Records a donation or overwrite of the live block at `ptr` (a no-op
  // unless a recording is active); `what` names the new owner.
  void RecordUse(TraceRecord::Kind kind, const void* ptr,
                 const std::string& what) const;

  int device_id() const { return device_id_; }
  // Every live allocation (pending frees are not: their owner is gone).
  std::vector<LiveAllocation> LiveAllocations() const;
  std::vector<SegmentInfo> Segments() const;

  MemoryStats stats() const;
  void ResetPeak();
  // nullopt: no limit. A limit below bytes_in_use is allowed; it only makes
  // further allocations fail until enough is freed.
  void SetLimit(std::optional<int64_t> bytes);
  // Returns cached free regions to the system.
  size_t Trim();

 private:
  std::string OutOfMemoryMessage(size_t bytes, const std::string& label) const;
  void RecordMemoryEvent(TraceRecord::Kind kind, const LiveAllocation& a) const;

  const std::string device_name_;
  const int device_id_;
  const MemoryKind kind_;
  std::unique_ptr<RegionProvider> provider_;
  const bool notify_frees_;  // provider_->WantsFreeNotices()
  BestFitAllocator allocator_;
  std::atomic<int64_t> limit_{BestFitAllocator::kNoLimit};
  mutable std::mutex mu_;
  std::unordered_map<const void*, LiveAllocation> live_;  // guarded by mu_
};

// Human-readable byte count: "32.0 MiB".
std::string FormatBytes(int64_t bytes);

}  // namespace baton
