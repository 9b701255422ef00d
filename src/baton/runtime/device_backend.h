// DeviceBackend: what a platform (CPU, CUDA, the simulated device) supplies
// to each of its Devices.
//
// The runtime's contract (memory spaces, statistics, queues, events,
// deterministic release) is the same on every platform; what differs is
// where memory comes from, whether the host may touch it, and how bytes move
// in and out of it. A Device asks its backend for those things and for
// nothing else, so the runtime never dereferences memory the host cannot
// address: every byte written to or read from such memory goes through
// CopyAsync or FillAsync. (Compiled programs are the backend layer's
// Executable, backend/executable.h: the runtime does not know programs.)
//
//  - MakeRegionProvider(kind): the allocator's source of big regions for one
//    memory kind (region_provider.h). The allocator only does arithmetic on
//    the addresses, so device addresses work unchanged.
//  - host_addressable(kind): whether host code may read and write that
//    memory directly (every kind on the CPU; pinned_host and unpinned_host
//    on a GPU). Host views (R7) are zero-copy exactly when this holds.
//  - programs_read_host_memory(): whether this platform's compiled programs
//    are host code, so they may read any host-addressable memory where it
//    lies, another device's included (the CPU; not a GPU, whose kernels
//    read device memory). A partitioned program then reads another local
//    device's block in place instead of copying it (jit/spmd_executable).
//  - Streams: each (device ordinal, QueueKind) is an in-order stream of
//    device work (a CUDA stream). CopyAsync / FillAsync enqueue on it and
//    return at once with the work's event, which completes when the bytes
//    are in place -- completed by a thread of the backend, in stream order,
//    never by a thread of the device's driver. A WorkQueue launches its
//    device work through them (WorkQueue::EnqueueLaunch), so the host runs
//    ahead and memory released after the event is really unused (R1). On
//    the CPU the work is done on the calling thread and the event is ready
//    on return.
//  - WaitOnStream(e): later work on a stream starts after `e` without the
//    host waiting (cudaStreamWaitEvent), for events the backend marked
//    (Event::SetDeviceMarker).
//  - DeviceSpan(e): for traces (DESIGN 5.5), when the device ran the work
//    of `e` by its own clock, where a backend measures it (CUDA: timing
//    events, only while a trace recording is enabled); the runtime's trace
//    sites record that span instead of their host-side timing (TraceSpan).
//
// Ownership: shared by the Devices of one Client (shared_ptr).
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "baton/core/memory_kind.h"
#include "baton/core/status.h"
#include "baton/runtime/event.h"
#include "baton/runtime/region_provider.h"

namespace baton {

// The in-order queues of a device. A GPU backend maps each to a stream.
enum class QueueKind { kCompute, kHostToDevice, kDeviceToHost };
inline constexpr int kNumQueueKinds = 3;

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  // "cpu", "cuda".
  virtual const std::string& platform() const = 0;
  // The provider for memory kind `kind` of device `device_ordinal`.
  virtual std::unique_ptr<RegionProvider> MakeRegionProvider(
      int device_ordinal, MemoryKind kind) = 0;
  virtual bool host_addressable(MemoryKind kind) const = 0;
  virtual bool programs_read_host_memory() const { return false; }
  // Enqueues a copy of `bytes` from `src` to `dst` (non-overlapping; either
  // may be host memory of any kind or memory of device `device_ordinal`) on
  // the stream of (`device_ordinal`, `queue`). Returns the event that
  // completes when the bytes are in place (failed for a bad argument or a
  // device error). Both sides must stay valid until then.
  virtual Event CopyAsync(int device_ordinal, QueueKind queue, void* dst,
                          const void* src, size_t bytes) = 0;
  // Enqueues writing `count` copies of the `elem_bytes`-byte little-endian
  // `pattern` (1, 2, 4 or 8 bytes) at `dst`; returns its event.
  virtual Event FillAsync(int device_ordinal, QueueKind queue, void* dst,
                          int64_t count, size_t elem_bytes,
                          uint64_t pattern) = 0;
  // Makes work enqueued later on (`device_ordinal`, `queue`) start after
  // `event` is complete, without blocking the caller, and returns true; or
  // returns false (nothing enqueued) when this backend cannot wait for it on
  // the device -- the caller then waits on the host. The default: false.
  virtual bool WaitOnStream(int device_ordinal, QueueKind queue,
                            const Event& event);

  // Emulated device work, for a device whose kernels are host code (the
  // simulated device runs the CUDA backend's generated kernels compiled for
  // the host): enqueues `work` on the stream of (`device_ordinal`, `queue`)
  // to run in stream order on a thread of the backend, and returns its
  // event, completed with work's Status. `work` reaches memory through its
  // argument, which maps [ptr, ptr + bytes) of any memory this backend
  // hands out (device or host) to an address host code may read and write
  // (InvalidArgument for a range that runs past a region); a real device's
  // memory has no such address. The default: a failed event
  // (Unimplemented) -- real devices run kernels, not host code.
  using HostAddressOf =
      std::function<Result<void*>(const void* ptr, size_t bytes)>;
  virtual Event EmulateAsync(
      int device_ordinal, QueueKind queue,
      std::function<Status(const HostAddressOf&)> work);
  // --- device time in traces (DESIGN 5.5) ----------------------------------
  // The span, on the steady clock of traces (TraceRecorder::NowNs()), in
  // which the device ran the work of `done` -- an event this backend
  // returned from CopyAsync, FillAsync or a launch of its own, or a queue's
  // event that adopted its device marker -- once `done` is ready: true, with
  // *begin_ns <= *end_ns, when this backend timed that work on the device;
  // false otherwise (nothing is written then). A backend times only work it
  // enqueued while a trace recording was enabled (TraceRecorder::enabled()),
  // so untraced work pays nothing. The default: false -- the CPU runs its
  // work on the calling thread and the simulated device on threads of the
  // host, whose clock the caller's host timing already reads.
  virtual bool DeviceSpan(const Event& done, int64_t* begin_ns,
                          int64_t* end_ns) const;
  // What a trace records for the work of `done` (ready) that the host
  // launched at `launched_ns`: DeviceSpan's times when there are some, else
  // [launched_ns, now] as seen by the host.
  void TraceSpan(const Event& done, int64_t launched_ns, int64_t* begin_ns,
                 int64_t* end_ns) const;

  // Synchronous forms: enqueue, then wait for the event.
  Status Copy(int device_ordinal, QueueKind queue, void* dst, const void* src,
              size_t bytes);
  Status Fill(int device_ordinal, QueueKind queue, void* dst, int64_t count,
              size_t elem_bytes, uint64_t pattern);
};

// Fill on host memory (what the CPU backend's Fill does; GPU backends use it
// to build a pattern in pinned memory).
void FillHost(void* dst, int64_t count, size_t elem_bytes, uint64_t pattern);

}  // namespace baton
