// The CPU platform's DeviceBackend: every memory kind is host memory from
// mmap (HostRegionProvider), copies are ParallelCopy, fills FillHost. Its
// device work runs on the calling thread -- the thread of the CPU device's
// queue -- so CopyAsync and FillAsync return ready events, and no stream
// wait is ever needed.
//
// Ownership: HostDeviceBackend() is one process-wide instance, shared.
// Thread-safety: stateless; any thread.
#pragma once

#include <memory>

#include "baton/runtime/device_backend.h"

namespace baton {

std::shared_ptr<DeviceBackend> HostDeviceBackend();

}  // namespace baton
