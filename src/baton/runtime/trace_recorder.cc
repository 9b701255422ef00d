#include "baton/runtime/trace_recorder.h"

#include <chrono>

namespace baton {

const char* trace_track_name(TraceTrack track) {
  switch (track) {
    case TraceTrack::kHost:
      return "host";
    case TraceTrack::kCompute:
      return "compute";
    case TraceTrack::kHostToDevice:
      return "host_to_device";
    case TraceTrack::kDeviceToHost:
      return "device_to_host";
  }
  return "host";
}

const char* trace_record_kind_name(TraceRecord::Kind kind) {
  switch (kind) {
    case TraceRecord::Kind::kAlloc:
      return "alloc";
    case TraceRecord::Kind::kFree:
      return "free";
    case TraceRecord::Kind::kDonate:
      return "donate";
    case TraceRecord::Kind::kOverwrite:
      return "overwrite";
    case TraceRecord::Kind::kFreeRequested:
      return "free_requested";
    case TraceRecord::Kind::kTransfer:
      return "transfer";
    case TraceRecord::Kind::kExecute:
      return "execute";
  }
  return "alloc";
}

TraceRecorder& TraceRecorder::Global() {
  static TraceRecorder* recorder = new TraceRecorder();  // used until exit
  return *recorder;
}

int64_t TraceRecorder::NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void TraceRecorder::UpdateActiveLocked() {
  active_.store(static_cast<int>(recordings_.size()) + (history_on_ ? 1 : 0),
                std::memory_order_relaxed);
}

void TraceRecorder::Record(TraceRecord record) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool memory = IsMemoryEvent(record.kind);
  for (auto& [token, r] : recordings_) {
    if (memory || r.filter == Filter::kAll) r.records.push_back(record);
  }
  if (history_on_ && memory && history_max_ > 0) {
    if (history_.size() == history_max_) history_.pop_front();
    history_.push_back(std::move(record));
  }
}

void TraceRecorder::RecordExecute(int64_t begin_ns, int device_id,
                                  std::string label) {
  RecordExecuteSpan(begin_ns, NowNs(), device_id, std::move(label));
}

void TraceRecorder::RecordTransfer(int64_t begin_ns, int device_id,
                                   TraceTrack track, MemoryKind kind,
                                   int64_t bytes, std::string label) {
  RecordTransferSpan(begin_ns, NowNs(), device_id, track, kind, bytes,
                     std::move(label));
}

void TraceRecorder::RecordExecuteSpan(int64_t begin_ns, int64_t end_ns,
                                      int device_id, std::string label) {
  TraceRecord t;
  t.kind = TraceRecord::Kind::kExecute;
  t.begin_ns = begin_ns;
  t.end_ns = end_ns;
  t.device_id = device_id;
  t.track = TraceTrack::kCompute;
  t.label = std::move(label);
  Record(std::move(t));
}

void TraceRecorder::RecordTransferSpan(int64_t begin_ns, int64_t end_ns,
                                       int device_id, TraceTrack track,
                                       MemoryKind kind, int64_t bytes,
                                       std::string label) {
  TraceRecord t;
  t.kind = TraceRecord::Kind::kTransfer;
  t.begin_ns = begin_ns;
  t.end_ns = end_ns;
  t.device_id = device_id;
  t.track = track;
  t.memory_kind = kind;
  t.bytes = bytes;
  t.label = std::move(label);
  Record(std::move(t));
}

uint64_t TraceRecorder::Start(Filter filter) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t token = next_token_++;
  recordings_[token] = Recording{filter, {}};
  UpdateActiveLocked();
  return token;
}

std::vector<TraceRecord> TraceRecorder::Stop(uint64_t token) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = recordings_.find(token);
  if (it == recordings_.end()) return {};
  std::vector<TraceRecord> out = std::move(it->second.records);
  recordings_.erase(it);
  UpdateActiveLocked();
  return out;
}

void TraceRecorder::SetHistory(bool enabled, size_t max_entries) {
  std::lock_guard<std::mutex> lock(mu_);
  if (enabled && !history_on_) history_.clear();  // a new history begins
  history_on_ = enabled;
  if (enabled) history_max_ = max_entries;
  while (history_.size() > history_max_) history_.pop_front();
  UpdateActiveLocked();
}

std::vector<TraceRecord> TraceRecorder::History() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::vector<TraceRecord>(history_.begin(), history_.end());
}

}  // namespace baton
