// Python call stacks for allocations (DESIGN 5.5: provenance).
//
// A binding that may allocate opens an AllocationStackScope (with the GIL
// held) before calling the runtime. While a profiler recording is active it
// captures the calling Python stack once and opens a baton::AllocationSite,
// so every allocation made until the scope closes -- on this thread, GIL
// released or not -- names that stack. With no recording active it does
// nothing but one relaxed atomic load.
//
// Frames inside the baton package are left out (the user's code is what the
// stack is for); a stack of only baton frames keeps its innermost one.
#pragma once

#include <optional>

#include "baton/runtime/allocation_site.h"

namespace baton::python {

class AllocationStackScope {
 public:
  AllocationStackScope();
  AllocationStackScope(const AllocationStackScope&) = delete;
  AllocationStackScope& operator=(const AllocationStackScope&) = delete;

 private:
  std::optional<AllocationSite> site_;
};

}  // namespace baton::python
