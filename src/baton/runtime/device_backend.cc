#include "baton/runtime/device_backend.h"

#include <cstring>

#include "baton/runtime/trace_recorder.h"

namespace baton {

void FillHost(void* dst, int64_t count, size_t elem_bytes, uint64_t pattern) {
  char* out = static_cast<char*>(dst);
  if (pattern == 0) {
    std::memset(out, 0, static_cast<size_t>(count) * elem_bytes);
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(out + i * static_cast<int64_t>(elem_bytes), &pattern,
                elem_bytes);
  }
}

bool DeviceBackend::WaitOnStream(int, QueueKind, const Event&) {
  return false;
}

bool DeviceBackend::DeviceSpan(const Event&, int64_t*, int64_t*) const {
  return false;
}

void DeviceBackend::TraceSpan(const Event& done, int64_t launched_ns,
                              int64_t* begin_ns, int64_t* end_ns) const {
  if (DeviceSpan(done, begin_ns, end_ns)) return;
  *begin_ns = launched_ns;
  *end_ns = TraceRecorder::NowNs();
}

Event DeviceBackend::EmulateAsync(int, QueueKind,
                                  std::function<Status(const HostAddressOf&)>) {
  return Event::Failed(Unimplemented(
      "the " + platform() +
      " backend runs kernels on its device, not emulated host code"));
}

Status DeviceBackend::Copy(int device_ordinal, QueueKind queue, void* dst,
                           const void* src, size_t bytes) {
  return CopyAsync(device_ordinal, queue, dst, src, bytes).Wait();
}

Status DeviceBackend::Fill(int device_ordinal, QueueKind queue, void* dst,
                           int64_t count, size_t elem_bytes,
                           uint64_t pattern) {
  return FillAsync(device_ordinal, queue, dst, count, elem_bytes, pattern)
      .Wait();
}

}  // namespace baton
