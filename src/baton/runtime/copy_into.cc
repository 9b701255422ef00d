#include "baton/runtime/copy_into.h"

#include "baton/runtime/device.h"
#include "baton/runtime/trace_recorder.h"
#include "baton/runtime/transfer.h"

namespace baton {

Result<Array> CopyArrayInto(const Array& src, const Array& into) {
  if (!src.valid() || !into.valid()) {
    return InvalidArgument("device_put(into=...): null array");
  }
  if (src.shape() != into.shape() || src.dtype() != into.dtype()) {
    return InvalidArgument(
        "device_put(into=...): the new value is " + src.impl()->Describe() +
        " but `into` is " + into.impl()->Describe() +
        "; an in-place overwrite needs the same shape and dtype. Nothing was "
        "consumed.");
  }
  const ConsumedReason reason{ConsumedReason::Kind::kOverwritten,
                              "device_put(into=...)"};
  ArrayImpl* old = into.impl();
  if (src.Is(into)) {
    BATON_ASSIGN_OR_RETURN(ArrayImpl::Taken taken, old->TakeExclusive(reason));
    taken.buffer->ResetForNewOwner(JoinEvents(taken.wait_for));
    return Array(ArrayImpl::Create(old->device(), old->memory_kind(),
                                   old->shape(), old->dtype(),
                                   std::move(taken.buffer)));
  }
  Device* device = old->device();
  const MemoryKind kind = old->memory_kind();
  BATON_ASSIGN_OR_RETURN(CopyRoute route, RouteCopy(src, device, kind));
  // Read hold first: a deleted source fails before `into` is consumed.
  BATON_ASSIGN_OR_RETURN(UsageHold hold, src.impl()->AcquireRead());
  BATON_ASSIGN_OR_RETURN(ArrayImpl::Taken taken, old->TakeExclusive(reason));
  WorkQueue& q = *route.queue;
  const size_t n = static_cast<size_t>(src.nbytes());
  void* to = taken.buffer->data();
  const void* from = hold.data();
  const int device_id = device->id();
  const TraceTrack track = route.track;
  const DeviceBackend* timer = route.copier;
  taken.buffer->memory_space()->RecordUse(TraceRecord::Kind::kOverwrite, to,
                                          "device_put(into=)");
  Event done = q.EnqueueLaunch(
      hold.dependencies(),
      [copy = std::move(route.copy), to, from, n,
       wait = std::move(taken.wait_for), device_id, track, kind, timer]() {
        // Order after the old value's users; their errors do not matter,
        // the old value is being replaced.
        (void)WaitAll(wait);
        const int64_t launched = TraceRecorder::NowNs();
        Event copied = copy(to, from, n);
        if (TraceRecorder::Global().enabled()) {
          // The device's span of the copy where it timed it, else the
          // host's (DeviceBackend::TraceSpan).
          copied.OnReady([copied, launched, timer, device_id, track, kind,
                          n](const Status&) {
            int64_t begin = 0, end = 0;
            timer->TraceSpan(copied, launched, &begin, &end);
            TraceRecorder::Global().RecordTransferSpan(
                begin, end, device_id, track, kind, static_cast<int64_t>(n),
                "device_put(into=)");
          });
        }
        return copied;
      });
  hold.Finish(done);
  taken.buffer->ResetForNewOwner(done);
  return Array(ArrayImpl::Create(device, kind, old->shape(), old->dtype(),
                                 std::move(taken.buffer)));
}

}  // namespace baton
