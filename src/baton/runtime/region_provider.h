// RegionProvider: where an allocator gets its big chunks of memory from.
//
// The CPU backend's provider maps host memory (every memory kind is host RAM
// there); a CUDA backend supplies cudaMalloc / cudaHostAlloc providers. The
// allocator never calls the system directly, so it is testable with a fake.
//
// Thread-safety: implementations must be callable from any thread.
#pragma once

#include <cstddef>

namespace baton {

class RegionProvider {
 public:
  virtual ~RegionProvider() = default;
  // Returns `bytes` of memory aligned to at least 4096 bytes, or nullptr.
  virtual void* AllocateRegion(size_t bytes) = 0;
  // Gives back a region returned by AllocateRegion with the same `bytes`.
  virtual void FreeRegion(void* ptr, size_t bytes) = 0;
  // Advice: [ptr, ptr + bytes) (inside a region) is only partly used, so it
  // should not be backed by huge pages that would make all of it resident.
  virtual void AdviseSmallPages(void* /*ptr*/, size_t /*bytes*/) {}
};

// Host memory from mmap (page aligned, zero pages until touched); large
// regions are advised to use transparent huge pages.
class HostRegionProvider final : public RegionProvider {
 public:
  void* AllocateRegion(size_t bytes) override;
  void FreeRegion(void* ptr, size_t bytes) override;
  void AdviseSmallPages(void* ptr, size_t bytes) override;
};

}  // namespace baton
