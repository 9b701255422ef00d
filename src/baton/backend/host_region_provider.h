// HostRegionProvider: host memory from mmap (page aligned, zero pages until
// touched); large regions are advised to use transparent huge pages. Every
// memory kind of the CPU platform comes from it, and so do the host kinds
// (pinned_host excepted on CUDA) of the accelerator platforms, which is why
// it lives beside the backends rather than in backend/cpu.
//
// Thread-safety: stateless; any thread.
#pragma once

#include <cstddef>

#include "baton/runtime/region_provider.h"

namespace baton {

class HostRegionProvider final : public RegionProvider {
 public:
  void* AllocateRegion(size_t bytes) override;
  void FreeRegion(void* ptr, size_t bytes) override;
  void AdviseSmallPages(void* ptr, size_t bytes) override;
};

}  // namespace baton
