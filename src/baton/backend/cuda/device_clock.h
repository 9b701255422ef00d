// Device time on the trace's clock: the arithmetic by which the CUDA backend
// (cuda_backend.h) turns the timestamps of CUDA events into times on the
// steady clock of traces (TraceRecorder::NowNs()). No CUDA type here, so it
// is tested without a GPU (tests/cpp/cuda/device_clock_test.cc).
//
// A GPU measures time only between two of its events (cudaEventElapsedTime:
// float milliseconds, resolution about 0.5 us). A clock anchor pairs one
// event the device passed with the host's steady time read right after the
// host saw it pass (cudaEventSynchronize on an otherwise idle stream): the
// anchor's host time is late by the host's wake-up latency (microseconds),
// and so is every span converted against it. A span of stream work is
// bracketed by a begin event recorded before the work and an end event
// after it; its steady times are
//
//   begin = anchor_ns + ns(anchor -> begin event)
//   end   = begin     + ns(begin event -> end event)
//
// -- the duration from the short interval, not as the difference of two
// long ones (a float's precision is relative: 1 s is held to ~0.12 us).
// The span is then kept within what the host knows for certain: the work
// began no earlier than the host recorded its begin event (`not_before_ns`,
// read just before) and ended no later than the host saw its end event pass
// (`not_after_ns`, read just after). A span outside that window is moved
// into it, keeping its measured duration; only a duration longer than the
// window itself (a measurement that cannot be right) is cut to the window.
// An interval that is negative, NaN or infinite counts as 0.
//
// The device's timer and the host's steady clock drift apart (parts per
// million), and the float interval from the anchor loses precision as it
// grows: an anchor is used for kAnchorMaxAgeNs, then a new one is taken.
//
// Thread-safety: pure functions.
#pragma once

#include <cmath>
#include <cstdint>

namespace baton::cuda {

// How long (host time) a clock anchor converts new spans before a new one
// is taken: 1 s keeps the float interval's precision near 0.1 us and the
// clocks' drift below a microsecond.
inline constexpr int64_t kAnchorMaxAgeNs = 1'000'000'000;

// Whether an anchor taken at host time `anchor_ns` still converts spans
// begun at host time `now_ns`.
inline bool AnchorIsFresh(int64_t anchor_ns, int64_t now_ns) {
  return now_ns >= anchor_ns && now_ns - anchor_ns < kAnchorMaxAgeNs;
}

// `ms` (a cudaEventElapsedTime interval) in nanoseconds, rounded; 0 for a
// negative, NaN or infinite interval; at most about 1e6 s (no overflow).
inline int64_t DeviceMsToNs(float ms) {
  if (!std::isfinite(ms) || ms <= 0.0f) return 0;
  const double ns = static_cast<double>(ms) * 1e6;
  constexpr double kMaxNs = 1e15;
  return ns >= kMaxNs ? static_cast<int64_t>(kMaxNs) : std::llround(ns);
}

struct SteadySpan {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;  // >= begin_ns
};

// The steady-clock span of work bracketed by a begin and an end event (see
// the file comment): `anchor_ns` the anchor's host time,
// `anchor_to_begin_ms` the device's interval from the anchor event to the
// begin event, `begin_to_end_ms` from the begin event to the end event;
// the result lies in [not_before_ns, max(not_before_ns, not_after_ns)].
inline SteadySpan DeviceSpanToSteady(int64_t anchor_ns,
                                     float anchor_to_begin_ms,
                                     float begin_to_end_ms,
                                     int64_t not_before_ns,
                                     int64_t not_after_ns) {
  if (not_after_ns < not_before_ns) not_after_ns = not_before_ns;
  const int64_t window = not_after_ns - not_before_ns;
  int64_t duration = DeviceMsToNs(begin_to_end_ms);
  if (duration > window) duration = window;
  int64_t begin = anchor_ns + DeviceMsToNs(anchor_to_begin_ms);
  if (begin < not_before_ns) begin = not_before_ns;
  if (begin > not_after_ns - duration) begin = not_after_ns - duration;
  return SteadySpan{begin, begin + duration};
}

}  // namespace baton::cuda
