#include "baton/runtime/transfer.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "baton/runtime/parallel_copy.h"
#include "baton/runtime/trace_recorder.h"

namespace baton {
namespace {

// Copies up to this size run on the caller when their queue is idle and the
// source is ready: a thread hand-off costs more than the copy.
constexpr size_t kInlineCopyBytes = size_t{64} << 10;

WorkQueue::Dispatch DispatchForCopy(size_t bytes) {
  return bytes <= kInlineCopyBytes ? WorkQueue::Dispatch::kInlineWhenIdle
                                   : WorkQueue::Dispatch::kAsync;
}

std::string Label(const Shape& shape, DType dtype) {
  return std::string(dtype_name(dtype)) + shape.to_string();
}

// Device work `launch` (one copy of `timer`, the backend whose CopyAsync it
// calls) recorded in traces as a transfer on `track` when a recording is
// active: over the span the device reports for it (a GPU's own
// timestamps), else from its launch to its completion as the host sees
// them (DeviceBackend::TraceSpan).
std::function<Event()> Traced(std::function<Event()> launch,
                              const DeviceBackend* timer, int device_id,
                              TraceTrack track, MemoryKind kind, int64_t bytes,
                              std::string label) {
  return [launch = std::move(launch), timer, device_id, track, kind, bytes,
          label = std::move(label)]() {
    auto& rec = TraceRecorder::Global();
    if (!rec.enabled()) return launch();
    const int64_t launched = TraceRecorder::NowNs();
    Event done = launch();
    // `done` in its own callback: the handle goes with the callback, once
    // it has run.
    done.OnReady([done, launched, timer, device_id, track, kind, bytes,
                  label](const Status&) {
      int64_t begin = 0, end = 0;
      timer->TraceSpan(done, launched, &begin, &end);
      TraceRecorder::Global().RecordTransferSpan(begin, end, device_id, track,
                                                 kind, bytes, label);
    });
    return done;
  };
}

// Zero-copy arrays alias the caller's host memory, which only memory the
// host can address may do.
Status CheckZeroCopy(const Device* device, MemoryKind kind) {
  if (device->host_addressable(kind)) return OkStatus();
  return InvalidArgument(
      "device_put: a zero-copy array aliases host memory, but " +
      device->ToString() + "'s " + std::string(memory_kind_name(kind)) +
      " memory is not host memory. Copy instead (the default), or put it in "
      "pinned_host memory.");
}

Status CheckHostBuffer(const HostBuffer& host) {
  BATON_RETURN_IF_ERROR(host.shape.Check());
  if (host.data == nullptr && host.nbytes() > 0) {
    return InvalidArgument("device_put: host data pointer is null");
  }
  return OkStatus();
}

bool AllReady(const std::vector<Event>& events) {
  for (const Event& e : events) {
    if (e.valid() && !e.IsReady()) return false;
  }
  return true;
}

// A snapshot of `n` host bytes (pageable, any address) into memory of
// `device` the host cannot address: each chunk of at most
// StagingPool::kChunkBytes is copied on this thread into a chunk of the
// device's pinned staging pool, then copied to `dst` on the host-to-device
// stream; the staging chunk goes back when that copy is done. The pool's
// bound (Reserve blocks) keeps at most its capacity in flight, and the
// host's memcpy of one chunk overlaps the device's copies of the previous
// ones. Returns once every byte is snapshotted, with the event of the last
// copy (the stream runs them in order); a failed copy fails it. The copies
// are launched by the host-to-device queue, so its Synchronize (and the
// Device's teardown) waits for them.
Result<Event> StagedPut(Device* device, MemoryKind kind, char* dst,
                        const char* src, size_t n) {
  StagingPool& staging = device->staging();
  const int64_t begin = TraceRecorder::NowNs();
  std::vector<Event> copies;
  bool all_staged = true;  // every byte went through `copies`
  for (size_t done = 0; done < n;) {
    const size_t c = std::min(StagingPool::kChunkBytes, n - done);
    Result<void*> slot = staging.Reserve(c);
    if (!slot.ok()) {
      // No pinned memory for staging: the rest through the backend's own
      // (synchronous) path.
      (void)WaitAll(copies);
      Status s = device->Copy(QueueKind::kHostToDevice, dst + done, src + done,
                              n - done);
      if (!s.ok()) return s;
      all_staged = false;
      break;
    }
    void* chunk = slot.value();
    ParallelCopy(chunk, src + done, c);
    copies.push_back(device->queue(QueueKind::kHostToDevice)
                         .EnqueueLaunch({}, [device, &staging, chunk, c,
                                             to = dst + done] {
                           Event copied = device->CopyAsync(
                               QueueKind::kHostToDevice, to, chunk, c);
                           copied.OnReady([&staging, chunk, c](const Status&) {
                             staging.Release(chunk, c);
                           });
                           return copied;
                         }));
    done += c;
  }
  Event defined = JoinEvents(copies);
  if (TraceRecorder::Global().enabled()) {
    // One span for the put: from the device's start of the first chunk's
    // copy to its end of the last one when the device timed every chunk,
    // else from the snapshot's start until the last copy is done (host
    // time).
    const int id = device->id();
    const DeviceBackend* timer = &device->backend();
    if (!all_staged) copies.clear();
    defined.OnReady(
        [begin, id, kind, n, timer, copies = std::move(copies)](const Status&) {
          int64_t first = 0, last = 0;
          bool timed = !copies.empty();
          for (size_t i = 0; timed && i < copies.size(); ++i) {
            int64_t b = 0, e = 0;
            timed = timer->DeviceSpan(copies[i], &b, &e);
            first = i == 0 ? b : std::min(first, b);
            last = i == 0 ? e : std::max(last, e);
          }
          if (!timed) {
            first = begin;
            last = TraceRecorder::NowNs();
          }
          TraceRecorder::Global().RecordTransferSpan(
              first, last, id, TraceTrack::kHostToDevice, kind,
              static_cast<int64_t>(n), "device_put");
        });
  }
  return defined;
}

}  // namespace

Result<Array> DevicePut(const HostBuffer& host, Device* device,
                        MemoryKind kind, HostBufferSemantics semantics,
                        std::function<void()> on_done) {
  BATON_RETURN_IF_ERROR(CheckHostBuffer(host));
  const size_t n = host.nbytes();
  MemorySpace* space = &device->memory_space(kind);
  if (semantics == HostBufferSemantics::kZeroCopy) {
    BATON_RETURN_IF_ERROR(CheckZeroCopy(device, kind));
    auto buffer = TrackedBuffer::Borrow(space, const_cast<void*>(host.data), n,
                                        std::move(on_done));
    return Array(ArrayImpl::Create(device, kind, host.shape, host.dtype,
                                   std::move(buffer)));
  }
  if (semantics == HostBufferSemantics::kSnapshot) {
    BATON_ASSIGN_OR_RETURN(
        auto buffer, TrackedBuffer::Allocate(
                                 space, n, kNoQueue,
                                 AllocationLabel(Label(host.shape, host.dtype),
                                                 AllocationKind::kArray,
                                                 "baton::DevicePut")));
    if (!device->host_addressable(kind)) {
      // Through pinned staging: returns once the caller's bytes are
      // snapshotted, with the device copies still running.
      BATON_ASSIGN_OR_RETURN(
          Event defined,
          StagedPut(device, kind, static_cast<char*>(buffer->data()),
                    static_cast<const char*>(host.data), n));
      if (on_done) on_done();
      buffer->SetDefinitionEvent(std::move(defined));
      return Array(ArrayImpl::Create(device, kind, host.shape, host.dtype,
                                     std::move(buffer)));
    }
    const int64_t begin = TraceRecorder::NowNs();
    BATON_RETURN_IF_ERROR(
        device->Copy(QueueKind::kHostToDevice, buffer->data(), host.data, n));
    if (TraceRecorder::Global().enabled()) {
      TraceRecorder::Global().RecordTransfer(begin, device->id(),
                                             TraceTrack::kHost, kind,
                                             static_cast<int64_t>(n),
                                             "device_put");
    }
    if (on_done) on_done();
    return Array(ArrayImpl::Create(device, kind, host.shape, host.dtype,
                                   std::move(buffer)));
  }
  // kImmutableUntilTransferCompletes: copy on the host-to-device queue.
  WorkQueue& q = device->queue(QueueKind::kHostToDevice);
  BATON_ASSIGN_OR_RETURN(
      auto buffer,
      TrackedBuffer::Allocate(space, n, q.id(),
                              AllocationLabel(Label(host.shape, host.dtype),
                                              AllocationKind::kArray,
                                              "baton::DevicePut")));
  void* dst = buffer->data();
  const void* src = host.data;
  Event done = q.EnqueueLaunch(
      {}, Traced(
              [device, dst, src, n, on_done = std::move(on_done)]() {
                Event copied =
                    device->CopyAsync(QueueKind::kHostToDevice, dst, src, n);
                // The caller's bytes are free to change once they are read.
                if (on_done) copied.OnReady([on_done](const Status&) {
                  on_done();
                });
                return copied;
              },
              &device->backend(), device->id(), TraceTrack::kHostToDevice,
              kind, static_cast<int64_t>(n), "device_put"));
  buffer->SetDefinitionEvent(done);
  return Array(ArrayImpl::Create(device, kind, host.shape, host.dtype,
                                 std::move(buffer)));
}

Result<Array> DevicePutInto(const HostBuffer& host, const Array& into) {
  BATON_RETURN_IF_ERROR(CheckHostBuffer(host));
  if (!into.valid()) return InvalidArgument("device_put: `into` is null");
  if (host.shape != into.shape() || host.dtype != into.dtype()) {
    return InvalidArgument(
        "device_put(into=...): the new value is " +
        Label(host.shape, host.dtype) + " but `into` is " +
        Label(into.shape(), into.dtype()) +
        "; an in-place overwrite needs the same shape and dtype. Nothing was "
        "consumed.");
  }
  ArrayImpl* old = into.impl();
  BATON_ASSIGN_OR_RETURN(
      ArrayImpl::Taken taken,
      old->TakeExclusive({ConsumedReason::Kind::kOverwritten,
                          "device_put(into=...)"}));
  Device* device = old->device();
  taken.buffer->memory_space()->RecordUse(TraceRecord::Kind::kOverwrite,
                                          taken.buffer->data(),
                                          "device_put(into=)");
  const size_t n = host.nbytes();
  char* dst = static_cast<char*>(taken.buffer->data());
  const char* src = static_cast<const char*>(host.data);
  Event defined = Event::Ready();
  size_t copied = 0;
  if (!AllReady(taken.wait_for)) {
    // The old value is still in use: snapshot through bounded staging and let
    // the host-to-device queue write each chunk once that work is done.
    StagingPool& staging = device->staging();
    WorkQueue& q = device->queue(QueueKind::kHostToDevice);
    while (copied < n) {
      const size_t c = std::min(StagingPool::kChunkBytes, n - copied);
      Result<void*> slot = staging.Reserve(c);
      if (!slot.ok()) break;  // no staging memory: finish synchronously below
      std::memcpy(slot.value(), src + copied, c);
      defined = q.EnqueueLaunch(
          {}, Traced(
                  [device, wait = taken.wait_for, &staging,
                   chunk = slot.value(), to = dst + copied, c]() {
                    // Order after the old value's readers; their errors do
                    // not matter, the old value is being replaced.
                    (void)WaitAll(wait);
                    Event e = device->CopyAsync(QueueKind::kHostToDevice, to,
                                                chunk, c);
                    e.OnReady([&staging, chunk, c](const Status&) {
                      staging.Release(chunk, c);
                    });
                    return e;
                  },
                  &device->backend(), device->id(), TraceTrack::kHostToDevice,
                  old->memory_kind(), static_cast<int64_t>(c),
                  "device_put(into=)"));
      copied += c;
    }
  }
  if (copied < n) {
    (void)WaitAll(taken.wait_for);
    if (copied > 0) (void)defined.Wait();  // keep chunk order simple
    Status s = device->Copy(QueueKind::kHostToDevice, dst + copied,
                            src + copied, n - copied);
    // The old value is gone either way; a failed write leaves the new
    // owner with an error instead of half-written bytes.
    if (!s.ok()) defined = Event::Failed(s);
  }
  taken.buffer->ResetForNewOwner(defined);
  return Array(ArrayImpl::Create(device, old->memory_kind(), old->shape(),
                                 old->dtype(), std::move(taken.buffer)));
}

Result<Array> CopyArray(const Array& src, Device* device, MemoryKind kind) {
  BATON_ASSIGN_OR_RETURN(CopyRoute route, RouteCopy(src, device, kind));
  BATON_ASSIGN_OR_RETURN(UsageHold hold, src.impl()->AcquireRead());
  WorkQueue& q = *route.queue;
  const size_t n = static_cast<size_t>(src.nbytes());
  BATON_ASSIGN_OR_RETURN(
      auto buffer,
      TrackedBuffer::Allocate(&device->memory_space(kind), n, q.id(),
                              AllocationLabel(Label(src.shape(), src.dtype()),
                                              AllocationKind::kArray,
                                              "baton::CopyArray")));
  void* to = buffer->data();
  const void* from = hold.data();
  Event done = q.EnqueueLaunch(
      hold.dependencies(),
      Traced([copy = std::move(route.copy), to, from,
              n]() { return copy(to, from, n); },
             route.copier, device->id(), route.track, kind,
             static_cast<int64_t>(n), "copy"),
      DispatchForCopy(n));
  hold.Finish(done);
  buffer->SetDefinitionEvent(done);
  return Array(ArrayImpl::Create(device, kind, src.shape(), src.dtype(),
                                 std::move(buffer)));
}

Result<CopyRoute> RouteCopy(const Array& src, Device* device,
                            MemoryKind kind) {
  Device* from = src.device();
  const MemoryKind from_kind = src.memory_kind();
  const bool dst_host = device->host_addressable(kind);
  const bool src_host = from->host_addressable(from_kind);
  if (!dst_host && !src_host && &device->backend() != &from->backend()) {
    return Unimplemented(
        "copy from " + from->ToString() + "'s " +
        std::string(memory_kind_name(from_kind)) + " memory to " +
        device->ToString() + "'s " + std::string(memory_kind_name(kind)) +
        " memory: the two platforms cannot copy between each other's "
        "memory; copy to pinned_host memory first");
  }
  QueueKind queue_kind;
  TraceTrack track;
  Device* queue_device;
  if (device == from && kind == from_kind) {
    queue_kind = QueueKind::kCompute;
    track = TraceTrack::kCompute;
    queue_device = device;
  } else if (kind == MemoryKind::kDevice) {
    queue_kind = QueueKind::kHostToDevice;
    track = TraceTrack::kHostToDevice;
    queue_device = device;
  } else {
    queue_kind = QueueKind::kDeviceToHost;
    track = TraceTrack::kDeviceToHost;
    queue_device = from;
  }
  // The copier is a device whose backend can address both sides.
  Device* copier = !dst_host ? device : from;
  if (queue_device != copier && !copier->host_addressable(MemoryKind::kDevice)) {
    // An accelerator's copies run on its streams, asynchronously: launch
    // them from the copier's own queue, whose work is that stream's. (From
    // another device's queue, that queue's order would no longer be the
    // order its work runs in, and its stream-ordered memory reuse would
    // hand out memory the copy still reads.) Here: an accelerator's memory
    // read into a CPU device's.
    queue_device = copier;
    queue_kind = QueueKind::kDeviceToHost;
    track = TraceTrack::kDeviceToHost;
  }
  return CopyRoute{
      &queue_device->queue(queue_kind), track,
      [copier, queue_kind](void* dst, const void* src_bytes, size_t bytes) {
        return copier->CopyAsync(queue_kind, dst, src_bytes, bytes);
      },
      &copier->backend()};
}

Result<Event> CopyToHostAsync(const Array& src, void* dst, size_t dst_bytes) {
  const size_t n = static_cast<size_t>(src.nbytes());
  if (dst_bytes != n) {
    return InvalidArgument("copy to host: destination has " +
                           std::to_string(dst_bytes) + " bytes but array " +
                           Label(src.shape(), src.dtype()) + " has " +
                           std::to_string(n));
  }
  BATON_ASSIGN_OR_RETURN(UsageHold hold, src.impl()->AcquireRead());
  Device* device = src.device();
  WorkQueue& q = device->queue(QueueKind::kDeviceToHost);
  const void* from = hold.data();
  Event done = q.EnqueueLaunch(
      hold.dependencies(),
      Traced(
          [device, dst, from, n]() {
            return device->CopyAsync(QueueKind::kDeviceToHost, dst, from, n);
          },
          &device->backend(), device->id(), TraceTrack::kDeviceToHost,
          src.memory_kind(), static_cast<int64_t>(n), "device_get"),
      DispatchForCopy(n));
  hold.Finish(done);
  return done;
}

Status CopyToHost(const Array& src, void* dst, size_t dst_bytes) {
  BATON_ASSIGN_OR_RETURN(Event e, CopyToHostAsync(src, dst, dst_bytes));
  return e.Wait();
}

Result<Array> Empty(const Shape& shape, DType dtype, Device* device,
                    MemoryKind kind) {
  BATON_RETURN_IF_ERROR(CheckHostBuffer(HostBuffer{"", shape, dtype}));
  const size_t n = static_cast<size_t>(shape.num_elements()) * dtype_size(dtype);
  BATON_ASSIGN_OR_RETURN(auto buffer,
                         TrackedBuffer::Allocate(&device->memory_space(kind),
                                                 n, kNoQueue,
                                                 AllocationLabel(
                                                     Label(shape, dtype),
                                                     AllocationKind::kArray,
                                                     "baton::Empty")));
  return Array(ArrayImpl::Create(device, kind, shape, dtype, std::move(buffer)));
}

Result<Array> Full(const Shape& shape, DType dtype, const void* value,
                   Device* device, MemoryKind kind) {
  BATON_RETURN_IF_ERROR(CheckHostBuffer(HostBuffer{"", shape, dtype}));
  const size_t elem = dtype_size(dtype);
  const int64_t count = shape.num_elements();
  if (elem > sizeof(uint64_t)) {
    // complex128: wider than a fill pattern. Its two halves fill as twice
    // as many 8-byte elements when they are equal (zeros, ones' bits do
    // not), else the values are written on the host and put (a snapshot).
    if (std::memcmp(value, static_cast<const char*>(value) + 8, 8) != 0) {
      std::vector<char> host(static_cast<size_t>(count) * elem);
      for (int64_t i = 0; i < count; ++i) {
        std::memcpy(host.data() + i * elem, value, elem);
      }
      return DevicePut(HostBuffer{host.data(), shape, dtype}, device, kind);
    }
  }
  WorkQueue& q = device->queue(QueueKind::kCompute);
  BATON_ASSIGN_OR_RETURN(
      auto buffer,
      TrackedBuffer::Allocate(&device->memory_space(kind),
                              static_cast<size_t>(count) * elem, q.id(),
                              AllocationLabel(Label(shape, dtype),
                                              AllocationKind::kArray,
                                              "baton::Full")));
  // The fill pattern: the element itself, or (complex128 with equal
  // halves) one half, written twice as often.
  const size_t fill_elem = std::min(elem, sizeof(uint64_t));
  const int64_t fill_count = count * static_cast<int64_t>(elem / fill_elem);
  uint64_t pattern = 0;
  std::memcpy(&pattern, value, fill_elem);
  void* dst = buffer->data();
  Event done = q.EnqueueLaunch({}, [device, dst, fill_count, fill_elem, pattern]() {
    return device->FillAsync(QueueKind::kCompute, dst, fill_count, fill_elem,
                             pattern);
  });
  buffer->SetDefinitionEvent(done);
  return Array(ArrayImpl::Create(device, kind, shape, dtype, std::move(buffer)));
}

}  // namespace baton
