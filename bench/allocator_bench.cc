// BestFitAllocator throughput on the paths a dispatch loop hits: a cached
// block of one size allocated and freed, and a mix of sizes that exercises
// splitting, coalescing and the best-fit index.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <random>
#include <vector>

#include "baton/runtime/best_fit_allocator.h"
#include "baton/backend/host_region_provider.h"

namespace baton {
namespace {

void BM_AllocateFree(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  HostRegionProvider provider;
  BestFitAllocator allocator(&provider);
  // Warm the cache so that the loop measures reuse, not mmap.
  allocator.Free(allocator.Allocate(bytes, kNoQueue).value());
  for (auto _ : state) {
    void* p = allocator.Allocate(bytes, kNoQueue).value();
    benchmark::DoNotOptimize(p);
    allocator.Free(p);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AllocateFree)->Arg(256)->Arg(64 << 10)->Arg(16 << 20);

// Up to 64 blocks alive at once, sizes from 256 B to 1 MiB, freed in random
// order, like the temporaries of a compiled step.
void BM_MixedSizes(benchmark::State& state) {
  HostRegionProvider provider;
  BestFitAllocator allocator(&provider);
  std::mt19937 rng(42);
  std::vector<size_t> sizes(4096);
  for (size_t& s : sizes) {
    s = size_t{256} << std::uniform_int_distribution<int>(0, 12)(rng);
  }
  std::vector<size_t> victims(4096);
  for (size_t& v : victims)
    v = std::uniform_int_distribution<size_t>(0, 63)(rng);
  std::vector<void*> live(64, nullptr);
  size_t i = 0;
  for (auto _ : state) {
    void*& slot = live[victims[i % victims.size()]];
    if (slot != nullptr) allocator.Free(slot);
    slot = allocator.Allocate(sizes[i % sizes.size()], kNoQueue).value();
    ++i;
  }
  for (void* p : live) {
    if (p != nullptr) allocator.Free(p);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MixedSizes);

// Stream-ordered reuse: free-when-done then allocate on the same queue, the
// pattern of an undonated `x = f(x)` loop.
void BM_PendingReuse(benchmark::State& state) {
  HostRegionProvider provider;
  BestFitAllocator allocator(&provider);
  void* p = allocator.Allocate(1 << 20, 0).value();
  for (auto _ : state) {
    BestFitAllocator::PendingToken t = allocator.FreeWhenDone(p, 0);
    p = allocator.Allocate(1 << 20, 0).value();
    allocator.CompletePending(t);
  }
  allocator.Free(p);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PendingReuse);

}  // namespace
}  // namespace baton

BENCHMARK_MAIN();
