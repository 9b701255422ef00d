// RegionProvider: where an allocator gets its big chunks of memory from.
//
// The CPU backend's provider maps host memory (every memory kind is host RAM
// there: backend/cpu/host_region_provider.h); a CUDA backend supplies
// cudaMalloc / cudaHostAlloc providers. The
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
  // Notice: the block [ptr, ptr + bytes) of a region went back to the
  // allocator's free memory -- no work uses it any more. A checking
  // provider (the simulated device's slow mode) poisons it, so a reader
  // that should have waited reads garbage instead of the old value.
  // Called only when WantsFreeNotices() (read once, at construction of
  // the memory space), from any thread, possibly with allocator locks held:
  // it must not allocate or free.
  virtual void OnBlockFreed(void* /*ptr*/, size_t /*bytes*/) {}
  virtual bool WantsFreeNotices() const { return false; }
};

}  // namespace baton
