// Region providers of CUDA devices: where each memory kind's allocator
// (BestFitAllocator, through MemorySpace) gets its regions.
//
//  - device: cudaMalloc on the device. cudaMalloc promises only 256-byte
//    alignment and RegionProvider promises 4096, so a misaligned block is
//    replaced by an over-allocated one whose start is aligned up; the raw
//    pointer is remembered per region for FreeRegion. (Large cudaMalloc
//    blocks are 2 MiB aligned in practice, so the exact size is tried
//    first and over-allocation, which would cost a whole extra 2 MiB page,
//    is the rare case.) FreeRegion calls cudaFree, which synchronizes the
//    device: only MemorySpace::Trim, the allocator's retry after a failed
//    region allocation and teardown reach it, never the hot path -- freed
//    arrays go back to the allocator's cache, stream-ordered (R1).
//  - pinned_host: page-locked host memory from
//    cudaHostAlloc(cudaHostAllocPortable) (usable by every device's streams),
//    returned with cudaFreeHost; aligned up the same way if ever needed.
//  - unpinned_host: baton's HostRegionProvider (mmap).
//
// AllocateRegion returns nullptr on any failure (no GPU, out of memory); the
// allocator turns that into a ResourceExhausted status that names the space.
// Each call makes the provider's device current on the calling thread first.
//
// Ownership: owned by a MemorySpace; remembers (does not own) the regions it
// handed out until they are given back.
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "baton/core/memory_kind.h"
#include "baton/runtime/region_provider.h"

namespace baton::cuda {

// Alignment every region is returned with.
inline constexpr size_t kRegionAlignment = 4096;

// The regions of one CUDA memory kind of device `device_ordinal`: GPU memory
// (kDevice, not host addressable) or page-locked host memory registered with
// every CUDA device (kPinnedHost).
class CudaRegionProvider final : public RegionProvider {
 public:
  // `kind` is kDevice or kPinnedHost.
  CudaRegionProvider(int device_ordinal, MemoryKind kind)
      : ordinal_(device_ordinal), kind_(kind) {}
  void* AllocateRegion(size_t bytes) override;
  void FreeRegion(void* ptr, size_t bytes) override;

 private:
  const int ordinal_;
  const MemoryKind kind_;
  std::mutex mu_;
  // aligned -> what cudaMalloc/cudaHostAlloc returned; guarded by mu_
  std::unordered_map<void*, void*> raw_;
};

// The provider of memory kind `kind` of CUDA device `device_ordinal`.
std::unique_ptr<RegionProvider> MakeCudaRegionProvider(int device_ordinal,
                                                       MemoryKind kind);

}  // namespace baton::cuda
