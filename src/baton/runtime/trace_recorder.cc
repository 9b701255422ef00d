#include "baton/runtime/trace_recorder.h"

#include <chrono>

namespace baton {

TraceRecorder& TraceRecorder::Global() {
  static TraceRecorder* recorder = new TraceRecorder();  // used until exit
  return *recorder;
}

int64_t TraceRecorder::NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void TraceRecorder::SetEnabled(bool on) {
  enabled_.store(on, std::memory_order_relaxed);
}

void TraceRecorder::Record(TraceRecord record) {
  std::lock_guard<std::mutex> lock(mu_);
  records_.push_back(std::move(record));
}

std::vector<TraceRecord> TraceRecorder::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TraceRecord> out;
  out.swap(records_);
  return out;
}

}  // namespace baton
