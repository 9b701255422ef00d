// TraceRecorder: the runtime's event log of allocations, frees, transfers and
// executions, for the profiler (Chrome trace / Perfetto JSON, pprof).
//
// Recording is off by default and costs one relaxed atomic load per site when
// off. Thread-safety: all methods are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "baton/core/memory_kind.h"

namespace baton {

struct TraceRecord {
  enum class Kind : uint8_t { kAlloc, kFree, kTransfer, kExecute };
  Kind kind;
  int64_t begin_ns;  // steady clock
  int64_t end_ns;    // == begin_ns for instant events (alloc, free)
  int device_id;
  MemoryKind memory_kind;
  int64_t bytes;
  uint64_t address;
  std::string label;  // e.g. "float32(1024,)" or "h2d copy"
};

class TraceRecorder {
 public:
  static TraceRecorder& Global();
  static int64_t NowNs();

  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  void SetEnabled(bool on);
  void Record(TraceRecord record);
  // Returns everything recorded since the last Take and clears the log.
  std::vector<TraceRecord> Take();

 private:
  std::atomic<bool> enabled_{false};
  std::mutex mu_;
  std::vector<TraceRecord> records_;  // guarded by mu_
};

}  // namespace baton
