#include "baton/backend/cuda/cuda_region_provider.h"

#include <cuda_runtime_api.h>

#include <cstdint>

#include "baton/backend/host_region_provider.h"

namespace baton::cuda {
namespace {

bool IsAligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % kRegionAlignment == 0;
}

void* AlignUp(void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return reinterpret_cast<void*>((a + kRegionAlignment - 1) &
                                 ~uintptr_t{kRegionAlignment - 1});
}

cudaError_t Allocate(MemoryKind kind, void** p, size_t n) {
  // Portable pinned memory belongs to no device, but is allocated in the
  // current device's context.
  return kind == MemoryKind::kDevice
             ? cudaMalloc(p, n)
             : cudaHostAlloc(p, n, cudaHostAllocPortable);
}

cudaError_t Release(MemoryKind kind, void* p) {
  return kind == MemoryKind::kDevice ? cudaFree(p) : cudaFreeHost(p);
}

}  // namespace

// The exact size first; if that block is misaligned, `bytes +
// kRegionAlignment` with its start aligned up. CUDA's last error is cleared
// on failure (the allocator reports a failed region, not a later CUDA call).
void* CudaRegionProvider::AllocateRegion(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* raw = nullptr;
  void* aligned = nullptr;
  if (cudaSetDevice(ordinal_) == cudaSuccess &&
      Allocate(kind_, &raw, bytes) == cudaSuccess) {
    if (IsAligned(raw)) {
      aligned = raw;
    } else {
      (void)Release(kind_, raw);
      raw = nullptr;
      if (bytes <= SIZE_MAX - kRegionAlignment &&
          Allocate(kind_, &raw, bytes + kRegionAlignment) == cudaSuccess) {
        aligned = AlignUp(raw);
      }
    }
  }
  if (aligned == nullptr) {
    (void)cudaGetLastError();
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu_);
  raw_.emplace(aligned, raw);
  return aligned;
}

void CudaRegionProvider::FreeRegion(void* ptr, size_t /*bytes*/) {
  if (ptr == nullptr) return;
  void* raw = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = raw_.find(ptr);
    if (it == raw_.end()) return;  // not ours: never hand it to CUDA
    raw = it->second;
    raw_.erase(it);
  }
  // Off the hot path (see the header): cudaFree synchronizes the device.
  if (cudaSetDevice(ordinal_) != cudaSuccess ||
      Release(kind_, raw) != cudaSuccess) {
    (void)cudaGetLastError();
  }
}

std::unique_ptr<RegionProvider> MakeCudaRegionProvider(int device_ordinal,
                                                       MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kDevice:
    case MemoryKind::kPinnedHost:
      return std::make_unique<CudaRegionProvider>(device_ordinal, kind);
    case MemoryKind::kUnpinnedHost:
      return std::make_unique<HostRegionProvider>();
  }
  return std::make_unique<HostRegionProvider>();
}

}  // namespace baton::cuda
