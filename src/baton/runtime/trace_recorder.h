// TraceRecorder: the runtime's event log of allocations, frees, donations,
// overwrites, transfers and executions, for the profiler (DESIGN 5.5: the
// Chrome trace, the memory history, memory scopes).
//
// Nothing is recorded unless a recording is active. Recordings are
// independent and may overlap (a trace, nested memory scopes, the history):
//  - Start(filter) opens a recording that keeps every event (kAll) or only
//    the memory events (kMemory: alloc, free, donate, overwrite,
//    free_requested) from now on;
//    Stop(token) closes it and returns its events in the order recorded.
//  - SetHistory(true, n) keeps the last n memory events in a ring until
//    SetHistory(false, ...), which stops it and keeps what it holds;
//    History() copies them. Turning it on again starts a new history.
// enabled() is true while any recording is active; it costs one relaxed
// atomic load, which is all a recording site pays when nothing records.
//
// Thread-safety: all methods are thread-safe. Events are appended under one
// mutex, so every recording sees them in the same order.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "baton/core/memory_kind.h"
#include "baton/runtime/allocation_site.h"

namespace baton {

// Which track of its device an event belongs to: the calling thread or one of
// the device's queues.
enum class TraceTrack : uint8_t { kHost, kCompute, kHostToDevice, kDeviceToHost };
// "host", "compute", "host_to_device", "device_to_host".
const char* trace_track_name(TraceTrack track);

struct TraceRecord {
  enum class Kind : uint8_t {
    // Memory events. kFreeRequested: the owner released a block that
    // enqueued work still uses; its bytes stay counted until the kFree (or
    // until later work on the same queue takes them over).
    kAlloc, kFree, kDonate, kOverwrite, kFreeRequested,
    kTransfer, kExecute,
  };
  Kind kind = Kind::kAlloc;
  int64_t begin_ns = 0;  // steady clock
  int64_t end_ns = 0;    // == begin_ns for instant events
  int device_id = 0;
  TraceTrack track = TraceTrack::kHost;
  MemoryKind memory_kind = MemoryKind::kDevice;
  int64_t bytes = 0;
  uint64_t address = 0;
  uint64_t allocation_id = 0;  // memory events: 0 if the block is unknown
  AllocationKind allocation_kind = AllocationKind::kArray;
  // Allocations: "float32(1024,)"; executions: the function's name;
  // transfers: "device_put", ...; donations: the function donated to.
  std::string label;
  const char* api = "";           // the C++ API function that allocated
  int64_t bytes_in_use = -1;  // alloc/free/free_requested: the space's, after
  std::shared_ptr<const CallStack> stack;  // the allocation's, may be null
};

const char* trace_record_kind_name(TraceRecord::Kind kind);
inline bool IsMemoryEvent(TraceRecord::Kind kind) {
  return kind <= TraceRecord::Kind::kFreeRequested;
}

class TraceRecorder {
 public:
  enum class Filter { kAll, kMemory };

  static TraceRecorder& Global();
  static int64_t NowNs();

  bool enabled() const { return active_.load(std::memory_order_relaxed) > 0; }
  void Record(TraceRecord record);
  // Records an executable's run on the compute track, from `begin_ns` until
  // now.
  void RecordExecute(int64_t begin_ns, int device_id, std::string label);
  // Records a transfer of `bytes` that ran from `begin_ns` until now.
  void RecordTransfer(int64_t begin_ns, int device_id, TraceTrack track,
                      MemoryKind kind, int64_t bytes, std::string label);
  // The same over [begin_ns, end_ns], times measured elsewhere (a device's
  // own timestamps, DeviceBackend::DeviceSpan).
  void RecordExecuteSpan(int64_t begin_ns, int64_t end_ns, int device_id,
                         std::string label);
  void RecordTransferSpan(int64_t begin_ns, int64_t end_ns, int device_id,
                          TraceTrack track, MemoryKind kind, int64_t bytes,
                          std::string label);

  uint64_t Start(Filter filter);
  // The events of recording `token`, which ends; empty for an unknown token.
  std::vector<TraceRecord> Stop(uint64_t token);

  void SetHistory(bool enabled, size_t max_entries);
  std::vector<TraceRecord> History() const;

 private:
  struct Recording {
    Filter filter;
    std::vector<TraceRecord> records;
  };
  void UpdateActiveLocked();

  std::atomic<int> active_{0};
  mutable std::mutex mu_;
  uint64_t next_token_ = 1;                   // guarded by mu_
  std::map<uint64_t, Recording> recordings_;  // guarded by mu_
  bool history_on_ = false;                   // guarded by mu_
  size_t history_max_ = 0;                    // guarded by mu_
  std::deque<TraceRecord> history_;           // guarded by mu_
};

}  // namespace baton
