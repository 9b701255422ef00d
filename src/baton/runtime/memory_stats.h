// MemoryStats: the counters of one allocator, as BestFitAllocator keeps them
// and MemorySpace reports them (bt.memory_stats() shows all but
// bytes_pending, under the same names). One struct for both, so a counter
// added to the allocator reaches the memory space by itself.
#pragma once

#include <cstdint>

namespace baton {

struct MemoryStats {
  // Live blocks and pending ones (freed, their work not finished), each
  // rounded up to the allocator's granularity.
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = 0;  // since creation or the last ResetPeak
  int64_t num_allocs = 0;         // cumulative
  int64_t largest_alloc_size = 0;
  // MemorySpace: the set limit, else the machine's memory. The allocator
  // has no limit of its own (each Allocate takes one) and leaves it 0.
  int64_t bytes_limit = 0;
  int64_t bytes_reserved = 0;  // held from the region provider, free or not
  int64_t bytes_pending = 0;   // part of bytes_in_use waiting for work to end
  bool operator==(const MemoryStats&) const = default;
};

}  // namespace baton
