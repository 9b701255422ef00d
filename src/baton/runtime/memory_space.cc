#include "baton/runtime/memory_space.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "baton/runtime/allocation_faults.h"
#include "baton/runtime/trace_recorder.h"

namespace baton {
namespace {

int64_t PhysicalMemoryBytes() {
  static const int64_t bytes =
      static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  return bytes;
}

void RecordTrace(TraceRecord::Kind kind, int device_id, MemoryKind mk,
                 int64_t bytes, const void* ptr, std::string label) {
  auto& rec = TraceRecorder::Global();
  if (!rec.enabled()) return;
  const int64_t now = TraceRecorder::NowNs();
  rec.Record(TraceRecord{kind, now, now, device_id, mk, bytes,
                         reinterpret_cast<uint64_t>(ptr), std::move(label)});
}

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
      allocator_(provider_.get()) {}

Result<void*> MemorySpace::Allocate(size_t bytes, int queue_id,
                                    std::string label) {
  if (AllocationFaults::ShouldFailThisAllocation()) {
    return ResourceExhausted(OutOfMemoryMessage(bytes, label) +
                             " (failure injected by the AllocationFaults "
                             "test hook)");
  }
  Result<void*> r = allocator_.Allocate(bytes, queue_id, limit_.load());
  if (!r.ok()) {
    return ResourceExhausted(OutOfMemoryMessage(bytes, label) +
                             (r.status().message().empty()
                                  ? ""
                                  : " (" + r.status().message() + ")"));
  }
  const int64_t size = static_cast<int64_t>(allocator_.BlockSize(r.value()));
  RecordTrace(TraceRecord::Kind::kAlloc, device_id_, kind_, size, r.value(),
              label);
  std::lock_guard<std::mutex> lock(mu_);
  labels_[r.value()] = std::move(label);
  return r;
}

void MemorySpace::Free(void* ptr) {
  std::string label;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = labels_.find(ptr);
    if (it != labels_.end()) {
      label = std::move(it->second);
      labels_.erase(it);
    }
  }
  const int64_t size = static_cast<int64_t>(allocator_.BlockSize(ptr));
  allocator_.Free(ptr);
  RecordTrace(TraceRecord::Kind::kFree, device_id_, kind_, size, ptr,
              std::move(label));
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
  // The label goes now: the block is no longer a live array, even though its
  // bytes stay counted until the work ends (or a same-queue allocation takes
  // them over).
  {
    std::lock_guard<std::mutex> lock(mu_);
    labels_.erase(ptr);
  }
  const int64_t size = static_cast<int64_t>(allocator_.BlockSize(ptr));
  const BestFitAllocator::PendingToken token =
      allocator_.FreeWhenDone(ptr, queue);
  JoinEvents(live).OnReady([this, token, size, ptr](const Status&) {
    allocator_.CompletePending(token);
    RecordTrace(TraceRecord::Kind::kFree, device_id_, kind_, size, ptr, "");
  });
}

MemoryStats MemorySpace::stats() const {
  const AllocatorStats a = allocator_.stats();
  MemoryStats s;
  s.bytes_in_use = a.bytes_in_use;
  s.peak_bytes_in_use = a.peak_bytes_in_use;
  s.num_allocs = a.num_allocs;
  s.largest_alloc_size = a.largest_alloc_size;
  s.bytes_reserved = a.bytes_reserved;
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
    for (const auto& [ptr, l] : labels_) {
      live.emplace_back(static_cast<int64_t>(allocator_.BlockSize(ptr)), l);
    }
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
