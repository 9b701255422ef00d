// DeviceBackend: what a platform (CPU, CUDA) supplies to each of its Devices.
//
// The runtime's contract (memory spaces, statistics, queues, events,
// deterministic release) is the same on every platform; what differs is
// where memory comes from, whether the host may touch it, and how bytes move
// in and out of it. A Device asks its backend for those three things and for
// nothing else, so the runtime never dereferences memory the host cannot
// address: every byte written to or read from such memory goes through
// Copy or Fill.
//
//  - MakeRegionProvider(kind): the allocator's source of big regions for one
//    memory kind (region_provider.h). The allocator only does arithmetic on
//    the addresses, so device addresses work unchanged.
//  - host_addressable(kind): whether host code may read and write that
//    memory directly (every kind on the CPU; pinned_host and unpinned_host
//    on a GPU). Host views (R7) are zero-copy exactly when this holds.
//  - Copy / Fill: synchronous byte movement, called from a task of the named
//    queue of this device (or from the caller for work that runs inline). A
//    GPU backend runs them on that queue's stream and returns once they are
//    done, so a WorkQueue task's event still means "the bytes are there" and
//    memory released after that event is really unused (R1).
//
// Ownership: shared by the Devices of one Client (shared_ptr).
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "baton/core/memory_kind.h"
#include "baton/core/status.h"
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
  // Copies `bytes` from `src` to `dst` (non-overlapping; either may be host
  // memory of any kind or memory of device `device_ordinal`). Returns when
  // the bytes are in place.
  virtual Status Copy(int device_ordinal, QueueKind queue, void* dst,
                      const void* src, size_t bytes) = 0;
  // Writes `count` copies of the `elem_bytes`-byte little-endian `pattern`
  // (1, 2, 4 or 8 bytes) at `dst`.
  virtual Status Fill(int device_ordinal, QueueKind queue, void* dst,
                      int64_t count, size_t elem_bytes, uint64_t pattern) = 0;
};

// The CPU platform: every kind is host memory from mmap (HostRegionProvider),
// copies are ParallelCopy. One process-wide instance.
std::shared_ptr<DeviceBackend> HostDeviceBackend();

// Fill on host memory (what the CPU backend's Fill does; GPU backends use it
// to build a pattern in pinned memory).
void FillHost(void* dst, int64_t count, size_t elem_bytes, uint64_t pattern);

}  // namespace baton
