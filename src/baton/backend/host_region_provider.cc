#include "baton/backend/host_region_provider.h"

#include <sys/mman.h>

namespace baton {

namespace {
// Below this a region cannot fill even a couple of 2 MiB huge pages, so the
// advice would only cost a syscall.
constexpr size_t kHugePageAdviceBytes = size_t{4} << 20;
}  // namespace

void* HostRegionProvider::AllocateRegion(size_t bytes) {
  if (bytes == 0) return nullptr;
  // mmap rather than malloc: page-aligned, untouched pages cost no RAM, and
  // munmap gives the memory back to the system at once (no heap retention).
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
#ifdef MADV_HUGEPAGE
  // Advisory only: large array buffers are scanned linearly, and THP cuts TLB
  // misses; a kernel without THP refuses and nothing is lost.
  if (bytes >= kHugePageAdviceBytes) (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

void HostRegionProvider::AdviseSmallPages(void* ptr, size_t bytes) {
#ifdef MADV_NOHUGEPAGE
  (void)madvise(ptr, bytes, MADV_NOHUGEPAGE);
#endif
}

void HostRegionProvider::FreeRegion(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  (void)munmap(ptr, bytes);
}

}  // namespace baton
