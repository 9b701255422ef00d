// Transfers: host -> device (device_put), in-place overwrite (into=), copies
// between memory kinds and devices, device -> caller-owned host memory.
//
// Host buffer contracts (after PJRT's HostBufferSemantics), named so a caller
// states what it promises about its memory:
//  - kSnapshot: the bytes are copied before the call returns; the caller may
//    mutate or free its memory right after (the default; DESIGN R6).
//  - kImmutableUntilTransferCompletes: the copy runs asynchronously on the
//    device's host-to-device queue; the caller keeps the memory unchanged and
//    alive until `on_done` runs.
//  - kZeroCopy: the array borrows the caller's memory (host-resident kinds
//    only); the caller promises not to mutate it and keeps it alive until
//    `on_done` runs, which happens once the array and all work on it are
//    gone. Borrowed bytes are not counted in memory statistics.
//
// All functions validate their arguments first and change nothing on error;
// a DevicePut that fails (e.g. out of memory) never calls `on_done`, so the
// caller still owns its memory and releases it itself.
// Thread-safety: all functions may be called from any thread.
#pragma once

#include <functional>

#include "baton/core/dtype.h"
#include "baton/core/memory_kind.h"
#include "baton/core/shape.h"
#include "baton/core/status.h"
#include "baton/runtime/array.h"
#include "baton/runtime/device.h"

namespace baton {

enum class HostBufferSemantics {
  kSnapshot,
  kImmutableUntilTransferCompletes,
  kZeroCopy,
};

// A dense row-major host array the caller owns.
struct HostBuffer {
  const void* data;
  Shape shape;
  DType dtype;
  size_t nbytes() const {
    return static_cast<size_t>(shape.num_elements()) * dtype_size(dtype);
  }
};

// Creates an array on `device` in `kind` memory holding `host`'s values.
Result<Array> DevicePut(const HostBuffer& host, Device* device,
                        MemoryKind kind,
                        HostBufferSemantics semantics =
                            HostBufferSemantics::kSnapshot,
                        std::function<void()> on_done = nullptr);

// Writes `host`'s values into `into`'s storage after all work already enqueued
// on `into`, consumes `into` and returns the array that now owns the storage
// (DESIGN R2). The host bytes are snapshotted before return; when `into` is
// still in use they go through the device's bounded StagingPool, so a caller
// overwriting more than its capacity blocks until earlier work drains.
// Errors (nothing consumed): shape/dtype mismatch (InvalidArgument), deleted
// `into` (DeletedArray), live host views of `into` (Donation).
Result<Array> DevicePutInto(const HostBuffer& host, const Array& into);

// An independent copy of `src` on `device` in `kind` memory (asynchronous).
Result<Array> CopyArray(const Array& src, Device* device, MemoryKind kind);

// The queue a device-to-device copy of `src` into `device`'s `kind` memory
// runs on, and its track in traces: the destination's compute queue within
// one memory space, its host-to-device queue into device memory, else the
// source's device-to-host queue -- and always the copying accelerator's own
// queue when an accelerator copies (an accelerator's memory into a CPU
// device's: the source's device-to-host queue). (CopyArray and
// CopyArrayInto.)
// `copy` launches the byte movement (returning its device event, see
// WorkQueue::EnqueueLaunch) through the backend that can address both sides
// (the destination's when only it cannot be touched by the host, else the
// source's); routing fails for memory of two different accelerator
// platforms. `copier` is that backend, which times the copy for traces
// (DeviceBackend::TraceSpan).
struct CopyRoute {
  WorkQueue* queue;
  TraceTrack track;
  std::function<Event(void* dst, const void* src, size_t bytes)> copy;
  const DeviceBackend* copier = nullptr;
};
Result<CopyRoute> RouteCopy(const Array& src, Device* device, MemoryKind kind);

// Copies `src`'s values into caller-owned `dst` (exactly src.nbytes() bytes)
// asynchronously; `dst` must stay valid until the returned event is ready.
Result<Event> CopyToHostAsync(const Array& src, void* dst, size_t dst_bytes);
// Synchronous form of CopyToHostAsync.
Status CopyToHost(const Array& src, void* dst, size_t dst_bytes);

// An array whose contents are unspecified (ready at once).
Result<Array> Empty(const Shape& shape, DType dtype, Device* device,
                    MemoryKind kind);
// An array with every element equal to the element at `value`
// (dtype_size(dtype) bytes), filled on the device's compute queue.
Result<Array> Full(const Shape& shape, DType dtype, const void* value,
                   Device* device, MemoryKind kind);

}  // namespace baton
