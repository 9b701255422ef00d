#include "baton/runtime/memory_space.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "baton/runtime/allocation_faults.h"
#include "baton/runtime/fork_guard.h"
#include "baton/runtime/trace_recorder.h"

namespace baton {
namespace {

int64_t PhysicalMemoryBytes() {
  static const int64_t bytes =
      static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  return bytes;
}

std::atomic<uint64_t> next_allocation_id{1};

}  // namespace

std::string FormatBytes(int64_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%lld B", static_cast<long long>(bytes));
  } else if (bytes < (int64_t{1} << 20)) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", b / 1024.0);
  } else if (bytes < (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", b / (1024.0 * 1024.0));
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", b / (1024.0 * 1024.0 * 1024.0));
  }
  return buf;
}

MemorySpace::MemorySpace(std::string device_name, int device_id,
                         MemoryKind kind,
                         std::unique_ptr<RegionProvider> provider)
    : device_name_(std::move(device_name)),
      device_id_(device_id),
      kind_(kind),
      provider_(std::move(provider)),
      notify_frees_(provider_->WantsFreeNotices()),
      allocator_(provider_.get()) {}

Result<void*> MemorySpace::Allocate(size_t bytes, int queue_id,
                                    AllocationLabel label) {
  if (ForkGuard::InForkedChild()) return ForkGuard::ForkedChildError();
  // Work enqueued by a thread running a task runs at once, before the tasks
  // queued on its queue and the rest of the running task (work_queue.h), so
  // the memory released to that queue by them is not free for it: take no
  // pending block (kNoQueue reuses none).
  if (queue_id != kNoQueue && QueueTaskScope::RunningAny()) {
    queue_id = kNoQueue;
  }
  if (AllocationFaults::ShouldFailThisAllocation()) {
    return ResourceExhausted(OutOfMemoryMessage(bytes, label.text) +
                             " (failure injected by the AllocationFaults "
                             "test hook)");
  }
  Result<void*> r = allocator_.Allocate(bytes, queue_id, limit_.load());
  if (!r.ok()) {
    return ResourceExhausted(OutOfMemoryMessage(bytes, label.text) +
                             (r.status().message().empty()
                                  ? ""
                                  : " (" + r.status().message() + ")"));
  }
  LiveAllocation a;
  a.id = next_allocation_id.fetch_add(1, std::memory_order_relaxed);
  a.address = reinterpret_cast<uint64_t>(r.value());
  a.bytes = static_cast<int64_t>(allocator_.BlockSize(r.value()));
  a.kind = label.kind;
  a.label = std::move(label.text);
  a.api = label.api;
  a.stack_id = AllocationSite::CurrentStackId();
  const bool recording = TraceRecorder::Global().enabled();
  if (recording) {
    a.time_ns = TraceRecorder::NowNs();
    a.stack = AllocationSite::Current();
    RecordMemoryEvent(TraceRecord::Kind::kAlloc, a);
  }
  std::lock_guard<std::mutex> lock(mu_);
  live_[r.value()] = std::move(a);
  return r;
}

void MemorySpace::RecordMemoryEvent(TraceRecord::Kind kind,
                                    const LiveAllocation& a) const {
  TraceRecord t;
  t.kind = kind;
  t.begin_ns = t.end_ns = TraceRecorder::NowNs();
  t.device_id = device_id_;
  t.memory_kind = kind_;
  t.bytes = a.bytes;
  t.address = a.address;
  t.allocation_id = a.id;
  t.allocation_kind = a.kind;
  t.label = a.label;
  t.api = a.api;
  t.stack = a.stack;
  if (kind == TraceRecord::Kind::kAlloc || kind == TraceRecord::Kind::kFree ||
      kind == TraceRecord::Kind::kFreeRequested) {
    t.bytes_in_use = allocator_.stats().bytes_in_use;
  }
  TraceRecorder::Global().Record(std::move(t));
}

void MemorySpace::RecordUse(TraceRecord::Kind kind, const void* ptr,
                            const std::string& what) const {
  if (!TraceRecorder::Global().enabled()) return;
  LiveAllocation a;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(ptr);
    if (it != live_.end()) a = it->second;
  }
  a.address = reinterpret_cast<uint64_t>(ptr);
  if (a.bytes == 0) a.bytes = static_cast<int64_t>(allocator_.BlockSize(ptr));
  if (!what.empty()) a.label = a.label.empty() ? what : a.label + " -> " + what;
  RecordMemoryEvent(kind, a);
}

void MemorySpace::Free(void* ptr) {
  LiveAllocation a;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(ptr);
    if (it != live_.end()) {
      a = std::move(it->second);
      live_.erase(it);
    }
  }
  if (notify_frees_) provider_->OnBlockFreed(ptr, allocator_.BlockSize(ptr));
  allocator_.Free(ptr);
  if (TraceRecorder::Global().enabled()) {
    a.address = reinterpret_cast<uint64_t>(ptr);
    RecordMemoryEvent(TraceRecord::Kind::kFree, a);
  }
}

void MemorySpace::FreeAfter(void* ptr, const std::vector<Event>& pending) {
  std::vector<Event> live;
  for (const Event& e : pending) {
    if (e.valid() && !e.IsReady()) live.push_back(e);
  }
  if (live.empty()) {
    Free(ptr);
    return;
  }
  int queue = live.front().queue_id();
  for (const Event& e : live) {
    if (e.queue_id() != queue) queue = kNoQueue;
  }
  // The block stops being live now: its owner is gone, even though its bytes
  // stay counted until the work ends (or a same-queue allocation takes them
  // over). It is recorded as free_requested now, and as freed when they stop
  // being counted.
  LiveAllocation a;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(ptr);
    if (it != live_.end()) {
      a = std::move(it->second);
      live_.erase(it);
    }
  }
  a.address = reinterpret_cast<uint64_t>(ptr);
  const BestFitAllocator::PendingToken token =
      allocator_.FreeWhenDone(ptr, queue);
  if (TraceRecorder::Global().enabled()) {
    RecordMemoryEvent(TraceRecord::Kind::kFreeRequested, a);
  }
  JoinEvents(live).OnReady([this, token, a = std::move(a)](const Status&) {
    if (notify_frees_) {
      allocator_.CompletePending(token, [this](void* p, size_t bytes) {
        provider_->OnBlockFreed(p, bytes);
      });
    } else {
      allocator_.CompletePending(token);
    }
    if (TraceRecorder::Global().enabled()) {
      RecordMemoryEvent(TraceRecord::Kind::kFree, a);
    }
  });
}

std::vector<LiveAllocation> MemorySpace::LiveAllocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LiveAllocation> out;
  out.reserve(live_.size());
  for (const auto& [ptr, a] : live_) out.push_back(a);
  std::sort(out.begin(), out.end(),
            [](const LiveAllocation& x, const LiveAllocation& y) {
              return x.id < y.id;
            });
  return out;
}

std::vector<SegmentInfo> MemorySpace::Segments() const {
  const std::vector<BestFitAllocator::RegionView> regions = allocator_.Regions();
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SegmentInfo> out;
  out.reserve(regions.size());
  for (const auto& r : regions) {
    SegmentInfo seg;
    seg.address = reinterpret_cast<uint64_t>(r.base);
    seg.size = static_cast<int64_t>(r.size);
    for (const auto& b : r.blocks) {
      SegmentInfo::Block blk;
      blk.offset = b.ptr - r.base;
      blk.size = static_cast<int64_t>(b.size);
      using S = BestFitAllocator::RegionView::Block::State;
      blk.state = b.state == S::kFree   ? SegmentInfo::Block::State::kFree
                  : b.state == S::kLive ? SegmentInfo::Block::State::kLive
                                        : SegmentInfo::Block::State::kPending;
      if (blk.state == SegmentInfo::Block::State::kLive) {
        auto it = live_.find(b.ptr);
        if (it != live_.end()) blk.allocation_id = it->second.id;
      }
      seg.blocks.push_back(blk);
    }
    out.push_back(std::move(seg));
  }
  return out;
}

MemoryStats MemorySpace::stats() const {
  MemoryStats s = allocator_.stats();
  const int64_t limit = limit_.load();
  s.bytes_limit =
      limit == BestFitAllocator::kNoLimit ? PhysicalMemoryBytes() : limit;
  return s;
}

void MemorySpace::ResetPeak() { allocator_.ResetPeak(); }

void MemorySpace::SetLimit(std::optional<int64_t> bytes) {
  limit_.store(bytes.has_value() ? *bytes : BestFitAllocator::kNoLimit);
}

size_t MemorySpace::Trim() { return allocator_.Trim(); }

std::string MemorySpace::OutOfMemoryMessage(size_t bytes,
                                            const std::string& label) const {
  const MemoryStats s = stats();
  std::string msg = "Out of memory in " + device_name_ + " " +
                    std::string(memory_kind_name(kind_)) + " memory: " +
                    "allocating " + FormatBytes(static_cast<int64_t>(bytes)) +
                    " for " + (label.empty() ? "a buffer" : label) +
                    " with " + FormatBytes(s.bytes_in_use) + " in use and a " +
                    "limit of " + FormatBytes(s.bytes_limit) + ".";
  std::vector<std::pair<int64_t, std::string>> live;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [ptr, a] : live_) live.emplace_back(a.bytes, a.label);
  }
  std::sort(live.begin(), live.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  if (!live.empty()) {
    msg += " Largest live arrays:";
    for (size_t i = 0; i < live.size() && i < 5; ++i) {
      msg += " " + std::to_string(i + 1) + ") " + live[i].second + " " +
             FormatBytes(live[i].first) + ";";
    }
  }
  msg += " Free arrays you no longer need (Array.delete(), or donate them to "
         "the function that replaces them) or raise the limit "
         "(set_memory_limit).";
  return msg;
}

}  // namespace baton
