// CudaBackend: the DeviceBackend of CUDA devices (DESIGN 5.7).
//
// Memory kinds: `device` is GPU memory (cudaMalloc regions, which the host
// cannot address), `pinned_host` page-locked host memory (cudaHostAlloc),
// `unpinned_host` ordinary host memory (cuda_region_provider.h).
//
// Queues are CUDA streams: one non-blocking stream per (device ordinal,
// QueueKind), created on first use after cudaSetDevice(ordinal). CopyAsync
// and FillAsync enqueue on the named queue's stream, record a CUDA event
// behind the work and return at once; the returned Event carries that CUDA
// event as its device marker and is completed by the device's completion
// thread, which waits for the CUDA events of its device in the order they
// were recorded (so per stream, in stream order) -- no baton or user
// callback ever runs on a thread of the CUDA driver. WaitOnStream turns a
// dependency on such an event into cudaStreamWaitEvent: one stream waits for
// another on the device, the host does not. A sticky CUDA error (the device
// is unusable until the process exits) fails the work that saw it, every
// pending event of that device and every later call on it, with a message
// saying so. Each call first makes `ordinal` the calling thread's current
// CUDA device, so any thread may call any method. Copies and fills between
// two host pointers run on the CPU, without touching a stream or the
// current device.
//
// Errors: a failed CUDA call becomes a Status naming the operation, the byte
// count, the device and CUDA's description (cuda_error.h); an ordinal outside
// 0..device_count()-1 is InvalidArgument.
//
// Device time in traces (DESIGN 5.5): while a trace recording is enabled
// (TraceRecorder::enabled(), read once per call), CopyAsync, FillAsync and
// LaunchAsync bracket the work they enqueue with timing CUDA events -- one
// recorded before it, and the event recorded behind it (Complete's) created
// with timing -- and when the completion thread sees the device pass the
// end, it converts both to the steady clock of traces against the device's
// clock anchor (device_clock.h) before it completes the Event; DeviceSpan
// reads that span back. The anchor is a timing event recorded on a stream
// of its own and waited for, paired with TraceRecorder::NowNs() read right
// after the wait; it is taken by the first timed call on a device and
// again by the first one kAnchorMaxAgeNs after it (the calling thread waits
// those few microseconds for the otherwise idle stream). Untraced work is
// unchanged: events without timing, no anchor, nothing converted.
//
// Ownership: shared (shared_ptr) by the Devices of a Client; owns its
// streams and destroys them with itself. Constructing one makes no CUDA call.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "baton/runtime/device_backend.h"

struct CUstream_st;  // cudaStream_t is CUstream_st*; keeps CUDA headers out

namespace baton::cuda {

struct CudaSpanTiming;  // cuda_backend.cc: the timing of one piece of work

class CudaBackend final : public DeviceBackend {
 public:
  // The backend of CUDA devices 0..device_count-1 (as the CUDA runtime
  // numbers them after CUDA_VISIBLE_DEVICES).
  explicit CudaBackend(int device_count);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  int device_count() const { return static_cast<int>(streams_.size()); }

  const std::string& platform() const override { return platform_; }
  std::unique_ptr<RegionProvider> MakeRegionProvider(int device_ordinal,
                                                     MemoryKind kind) override;
  bool host_addressable(MemoryKind kind) const override {
    return kind != MemoryKind::kDevice;
  }
  Event CopyAsync(int device_ordinal, QueueKind queue, void* dst,
                  const void* src, size_t bytes) override;
  Event FillAsync(int device_ordinal, QueueKind queue, void* dst,
                  int64_t count, size_t elem_bytes, uint64_t pattern) override;
  bool WaitOnStream(int device_ordinal, QueueKind queue,
                    const Event& event) override;
  // The device's span of work this backend timed (class comment); false
  // for work enqueued while no trace recording was enabled, work that
  // failed, and events not (yet) ready.
  bool DeviceSpan(const Event& done, int64_t* begin_ns,
                  int64_t* end_ns) const override;

  // Device work of any kind (kernel launches, library calls, copies, as a
  // GPU executable's command list enqueues them): makes `device_ordinal`
  // current on this thread, calls `enqueue` with the stream of
  // (`device_ordinal`, `queue`), then records a CUDA event behind whatever
  // it enqueued and returns the Event the completion thread completes when
  // the device passes it -- as CopyAsync does. `enqueue` runs on the
  // calling thread and may block (a while loop's condition read back to the
  // host); its error fails the Event, once the device is past the part of
  // the work that was enqueued. `what` ("running f") names the work in
  // errors. A failed Event without calling `enqueue` when the ordinal is
  // out of range or the device unusable.
  // `keep_alive` (what the work uses: the executable, its kernels) is
  // released once the device is past the work.
  Event LaunchAsync(int device_ordinal, QueueKind queue,
                    const std::string& what,
                    const std::function<Status(CUstream_st*)>& enqueue,
                    std::shared_ptr<void> keep_alive = nullptr);

  // Fill builds at most this many bytes of a general pattern on the host,
  // copies them over, then doubles the filled prefix on the device.
  static constexpr size_t kFillSeedBytes = size_t{1} << 20;

 private:
  // InvalidArgument unless 0 <= ordinal < device_count().
  Status CheckOrdinal(int ordinal) const;
  // Makes `ordinal` current on this thread and returns its stream of
  // `queue`, creating it on first use; fails once the device is unusable.
  Status StreamFor(int ordinal, QueueKind queue, CUstream_st** stream);
  // The timing of work about to be enqueued on `stream` of `ordinal` (the
  // current device, StreamFor's): while a trace recording is enabled, a
  // timing event recorded on `stream` now, against the device's clock
  // anchor (taken or renewed first); null otherwise, or if CUDA refused
  // (the work then goes untimed).
  std::unique_ptr<CudaSpanTiming> BeginTiming(int ordinal, CUstream_st* stream);
  // Records a CUDA event on `stream` behind the work just enqueued and
  // returns the Event the completion thread of `ordinal` completes when the
  // device passes it; `keep_alive` (host memory the work reads) is dropped
  // then. `enqueued` is the status of enqueueing the work itself. With
  // `timing` (BeginTiming's, before the work) the event is a timing one and
  // the completion thread measures the span before completing the Event.
  Event Complete(int ordinal, CUstream_st* stream, Status enqueued,
                 const std::string& doing,
                 std::shared_ptr<void> keep_alive = nullptr,
                 std::unique_ptr<CudaSpanTiming> timing = nullptr);

  class Completions;  // cuda_backend.cc: one per device
  const std::string platform_ = "cuda";
  std::mutex mu_;
  // [ordinal][queue]; nullptr until created. The vector's size is fixed.
  std::vector<std::array<CUstream_st*, kNumQueueKinds>>
      streams_;  // guarded by mu_
  // [ordinal]: the completion thread, started on first use; guarded by mu_.
  std::vector<std::unique_ptr<Completions>> completions_;
};

}  // namespace baton::cuda
