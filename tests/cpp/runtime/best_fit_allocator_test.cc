// BestFitAllocator (runtime/best_fit_allocator.h): placement, splitting and
// coalescing, regions, limits, trimming and stats. Pending frees and
// concurrency: best_fit_allocator_pending_test.cc.
#include "baton/runtime/best_fit_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "baton/backend/host_region_provider.h"
#include "runtime/best_fit_allocator_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;

TEST_F(BestFitAllocatorTest, RoundsEveryRequestUpToTheGranularity) {
  BestFitAllocator a(&provider_);
  EXPECT_EQ(a.RoundedSize(0), 256u);
  EXPECT_EQ(a.RoundedSize(1), 256u);
  EXPECT_EQ(a.RoundedSize(256), 256u);
  EXPECT_EQ(a.RoundedSize(257), 512u);
  EXPECT_EQ(a.RoundedSize(1000), 1024u);
  for (size_t n : {1u, 255u, 256u, 257u, 4095u, 70000u}) {
    void* p = MustAllocate(a, n);
    EXPECT_EQ(a.BlockSize(p), a.RoundedSize(n)) << n;
    a.Free(p);
  }
  EXPECT_EQ(a.BlockSize(nullptr), 0u);
}

TEST_F(BestFitAllocatorTest, AlignsEveryBlockAndRegion) {
  BestFitAllocator a(&provider_);
  void* first = MustAllocate(a, 1);
  EXPECT_EQ(Addr(first) % 4096, 0u) << "the first block starts its region";
  std::mt19937 rng(7);
  std::vector<void*> ptrs{first};
  for (int i = 0; i < 500; ++i) {
    size_t n = std::uniform_int_distribution<size_t>(0, 300 * kKiB)(rng);
    if (i % 50 == 0) n = 3 * kMiB + 17;  // a region of its own
    void* p = MustAllocate(a, n);
    EXPECT_EQ(Addr(p) % 256, 0u) << n;
    ptrs.push_back(p);
  }
  for (uintptr_t base : provider_.bases()) EXPECT_EQ(base % 4096, 0u);
  for (void* p : ptrs) a.Free(p);
}

TEST_F(BestFitAllocatorTest, HostRegionProviderMapsPageAlignedMemory) {
  HostRegionProvider host;
  EXPECT_EQ(host.AllocateRegion(0), nullptr);
  for (size_t n : {size_t{64} * kKiB, size_t{8} * kMiB}) {  // 8 MiB: THP path
    void* p = host.AllocateRegion(n);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(Addr(p) % 4096, 0u);
    std::memset(p, 0xab, n);
    EXPECT_EQ(static_cast<unsigned char*>(p)[n - 1], 0xab);
    host.FreeRegion(p, n);
  }

  BestFitAllocator a(&host);
  void* small = MustAllocate(a, 100);
  void* big = MustAllocate(a, 9 * kMiB);
  std::memset(small, 1, 100);
  std::memset(big, 2, 9 * kMiB);
  EXPECT_EQ(Addr(small) % 4096, 0u);
  EXPECT_EQ(Addr(big) % 4096, 0u);
  EXPECT_EQ(a.stats().bytes_reserved, int64_t{2 + 10} * int64_t{kMiB});
  a.Free(small);
  a.Free(big);
  EXPECT_EQ(a.Trim(), 12 * kMiB);
  EXPECT_EQ(a.stats().bytes_reserved, 0);
}

TEST_F(BestFitAllocatorTest, TakesTheSmallestFreeBlockThatFits) {
  BestFitAllocator a(&provider_);
  // Holes of 1 KiB, 2 KiB and 512 B, kept apart by live guards, in front of
  // the region's large free tail.
  void* h1k = MustAllocate(a, 1 * kKiB);
  void* g1 = MustAllocate(a, 256);
  void* h2k = MustAllocate(a, 2 * kKiB);
  void* g2 = MustAllocate(a, 256);
  void* h512 = MustAllocate(a, 512);
  void* g3 = MustAllocate(a, 256);
  a.Free(h1k);
  a.Free(h2k);
  a.Free(h512);

  EXPECT_EQ(MustAllocate(a, 300), h512);
  EXPECT_EQ(MustAllocate(a, 1 * kKiB), h1k);
  EXPECT_EQ(MustAllocate(a, 1100), h2k);
  EXPECT_EQ(provider_.regions(), 1);
  for (void* p : {h512, h1k, h2k, g1, g2, g3}) a.Free(p);
}

TEST_F(BestFitAllocatorTest, SplitsABlockAndHandsOutTheRest) {
  BestFitAllocator a(&provider_, SmallRegions());
  void* head = MustAllocate(a, 1 * kKiB);
  void* next = MustAllocate(a, 256);
  EXPECT_EQ(Addr(next), Addr(head) + 1 * kKiB);
  void* rest = MustAllocate(a, 4 * kKiB - 1 * kKiB - 256);  // exactly the tail
  EXPECT_EQ(Addr(rest), Addr(next) + 256);
  EXPECT_EQ(provider_.regions(), 1);
  a.Free(next);
  // The 256-byte hole is the only free space left; it must be split-exact.
  EXPECT_EQ(MustAllocate(a, 1), next);
  EXPECT_EQ(provider_.regions(), 1);
  for (void* p : {head, next, rest}) a.Free(p);
}

// Frees the three middle-to-outer blocks of a full region in `order` and
// checks the space came back as one block.
void CheckCoalescing(FakeRegionProvider& provider, std::vector<int> order) {
  BestFitAllocator a(&provider, SmallRegions());
  void* blk[4];
  for (void*& p : blk) p = MustAllocate(a, 1 * kKiB);  // fills the region
  ASSERT_EQ(provider.regions(), 1);
  const int64_t reserved = a.stats().bytes_reserved;
  for (int i : order) a.Free(blk[i]);
  EXPECT_EQ(a.stats().bytes_reserved, reserved);
  // 3 KiB fits only if blocks 0-2 merged; otherwise a new region is needed.
  void* merged = MustAllocate(a, 3 * kKiB);
  EXPECT_EQ(merged, blk[0]);
  EXPECT_EQ(provider.regions(), 1);
  EXPECT_EQ(a.stats().bytes_reserved, reserved);
  a.Free(merged);
  a.Free(blk[3]);
  // And the whole region is one free block again.
  EXPECT_EQ(a.Trim(), 4 * kKiB);
}

TEST_F(BestFitAllocatorTest, CoalescesWithBothNeighbours) {
  CheckCoalescing(provider_, {0, 2, 1});  // middle joins both sides
  CheckCoalescing(provider_, {1, 0, 2});  // left then right of a free block
  CheckCoalescing(provider_, {2, 1, 0});
}

TEST_F(BestFitAllocatorTest, LargeRequestGetsARegionOfItsOwnRoundedTo2MiB) {
  BestFitAllocator a(&provider_);
  void* small = MustAllocate(a, 256);
  EXPECT_EQ(provider_.regions(), 1);
  EXPECT_EQ(provider_.bytes(), 2 * kMiB);
  void* large = MustAllocate(a, 5 * kMiB + 1);
  EXPECT_EQ(provider_.regions(), 2);
  EXPECT_EQ(provider_.bytes(), 2 * kMiB + 6 * kMiB);
  EXPECT_EQ(a.stats().bytes_reserved, int64_t{8 * kMiB});
  EXPECT_EQ(Addr(large) % 4096, 0u);
  a.Free(large);
  // Cached, not a new region: the same region, at a (colored) offset of
  // less than 64 KiB from where the first block started.
  void* again = MustAllocate(a, 5 * kMiB);
  EXPECT_EQ(provider_.regions(), 2);
  EXPECT_GE(Addr(again), Addr(large));
  EXPECT_LT(Addr(again), Addr(large) + 64 * kKiB);
  a.Free(again);
  a.Free(small);
}

TEST_F(BestFitAllocatorTest, TracksUsePeakCountAndLargest) {
  BestFitAllocator a(&provider_);
  void* p = MustAllocate(a, 1000);  // 1024
  void* q = MustAllocate(a, 3000);  // 3072
  MemoryStats s = a.stats();
  EXPECT_EQ(s.bytes_in_use, 4096);
  EXPECT_EQ(s.peak_bytes_in_use, 4096);
  EXPECT_EQ(s.num_allocs, 2);
  EXPECT_EQ(s.largest_alloc_size, 3072);
  EXPECT_EQ(s.bytes_reserved, int64_t{2 * kMiB});
  EXPECT_EQ(s.bytes_pending, 0);

  a.Free(q);
  s = a.stats();
  EXPECT_EQ(s.bytes_in_use, 1024);
  EXPECT_EQ(s.peak_bytes_in_use, 4096);
  EXPECT_EQ(s.largest_alloc_size, 3072);
  EXPECT_EQ(s.bytes_reserved, int64_t{2 * kMiB}) << "freed memory is cached";

  a.ResetPeak();
  EXPECT_EQ(a.stats().peak_bytes_in_use, 1024);
  void* r = MustAllocate(a, 512);
  s = a.stats();
  EXPECT_EQ(s.peak_bytes_in_use, 1536);
  EXPECT_EQ(s.num_allocs, 3);
  a.Free(p);
  a.Free(r);
  s = a.stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.num_allocs, 3) << "cumulative";
}

TEST_F(BestFitAllocatorTest, LimitRefusalChangesNothing) {
  BestFitAllocator a(&provider_);
  void* p = MustAllocate(a, 3 * kKiB);
  // A pending block too, so that every statistic is nonzero.
  BestFitAllocator::PendingToken t = a.FreeWhenDone(MustAllocate(a, 256), 5);
  const MemoryStats before = a.stats();
  const int calls = provider_.allocate_calls();

  Result<void*> r = a.Allocate(1 * kKiB, kNoQueue, 4 * kKiB);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("limit"), std::string::npos);
  // A request needing a new region is refused before the provider is asked.
  Result<void*> big = a.Allocate(64 * kMiB, kNoQueue, 8 * kMiB);
  EXPECT_EQ(big.status().code(), ErrorCode::kResourceExhausted);
  // A limit already below what is in use refuses every growth.
  EXPECT_FALSE(a.Allocate(0, kNoQueue, 0).ok());
  EXPECT_TRUE(a.stats() == before);
  EXPECT_EQ(provider_.allocate_calls(), calls);

  // Reaching the limit exactly is allowed.
  const int64_t limit = before.bytes_in_use + 512;
  Result<void*> exact = a.Allocate(512, kNoQueue, limit);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(a.stats().bytes_in_use, limit);
  a.Free(exact.value());
  a.CompletePending(t);
  a.Free(p);
}

TEST_F(BestFitAllocatorTest, AbsurdRequestIsResourceExhausted) {
  BestFitAllocator a(&provider_);
  const MemoryStats before = a.stats();
  Result<void*> r = a.Allocate(SIZE_MAX, kNoQueue);
  EXPECT_EQ(r.status().code(), ErrorCode::kResourceExhausted);
  EXPECT_TRUE(a.stats() == before);
  EXPECT_GE(a.RoundedSize(SIZE_MAX), size_t{1} << 48) << "no wrap-around";
}

TEST_F(BestFitAllocatorTest, ProviderFailureTrimsCachedRegionsAndRetries) {
  BestFitAllocator a(&provider_);
  a.Free(MustAllocate(a, 1 * kMiB));       // leaves a fully free, cached region
  void* held = MustAllocate(a, 3 * kMiB);  // a region in use: kept
  ASSERT_EQ(provider_.regions(), 2);
  const int freed_before = provider_.free_calls();

  provider_.FailNext(1);
  void* p = MustAllocate(a, 10 * kMiB);  // fits in no cached block
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(provider_.free_calls(), freed_before + 1) << "the free region";
  EXPECT_EQ(provider_.regions(), 2);
  // The second large region starts its block 17 granules in (coloring), so
  // 10 MiB takes a 12 MiB region.
  EXPECT_EQ(a.stats().bytes_reserved, int64_t{(4 + 12) * kMiB});
  a.Free(p);
  a.Free(held);
}

// Large blocks start at a different offset in each new region, so arrays
// allocated one after another are not a power of two apart (cache sets);
// the gap is free memory, and freeing the block gives the region back whole.
TEST_F(BestFitAllocatorTest, LargeRegionsAreColored) {
  BestFitAllocator a(&provider_);
  std::vector<void*> blocks;
  std::set<uintptr_t> offsets;
  for (int i = 0; i < 4; ++i) {
    blocks.push_back(MustAllocate(a, 8 * kMiB));
    offsets.insert(reinterpret_cast<uintptr_t>(blocks.back()) % (64 * kKiB));
  }
  EXPECT_EQ(offsets.size(), 4u);
  EXPECT_EQ(a.stats().bytes_in_use,
            int64_t{4 * 8 * kMiB});  // no padding counted
  // Each colored block spills into its region's last 2 MiB, which is advised
  // to stay off huge pages (so the spill costs KiB of RSS, not 2 MiB).
  const auto advice = provider_.small_page_advice();
  ASSERT_EQ(advice.size(), 3u);  // the first block is not colored
  for (size_t i = 0; i < advice.size(); ++i) {
    const uintptr_t end = Addr(blocks[i + 1]) + 8 * kMiB;
    EXPECT_EQ(advice[i].second, 2 * kMiB);
    EXPECT_LT(advice[i].first, end);
    EXPECT_GE(advice[i].first + advice[i].second, end);
  }
  // A small allocation fits in a gap without a new region.
  const int regions = provider_.regions();
  void* small = MustAllocate(a, 1 * kKiB);
  EXPECT_EQ(provider_.regions(), regions);
  a.Free(small);
  for (void* b : blocks) a.Free(b);
  EXPECT_EQ(a.stats().bytes_in_use, 0);
  a.Trim();
  EXPECT_EQ(a.stats().bytes_reserved, 0);
  EXPECT_EQ(provider_.regions(), 0);
}

TEST_F(BestFitAllocatorTest, ProviderFailingTwiceIsResourceExhausted) {
  BestFitAllocator a(&provider_);
  void* held = MustAllocate(a, 1 * kKiB);
  provider_.FailNext(2);
  Result<void*> r = a.Allocate(10 * kMiB, kNoQueue);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResourceExhausted);
  const MemoryStats s = a.stats();
  EXPECT_EQ(s.bytes_in_use, 1024);
  EXPECT_EQ(s.num_allocs, 1);
  EXPECT_EQ(s.bytes_reserved, int64_t{2 * kMiB}) << "in-use region kept";
  void* recovered = MustAllocate(a, 10 * kMiB);
  EXPECT_NE(recovered, nullptr);
  a.Free(recovered);
  a.Free(held);
}

TEST_F(BestFitAllocatorTest, TrimReturnsOnlyFullyFreeRegions) {
  BestFitAllocator a(&provider_, SmallRegions());
  void* r1[4];
  for (void*& p : r1) p = MustAllocate(a, 1 * kKiB);  // region 1, full
  void* r2 = MustAllocate(a, 2 * kKiB);               // region 2
  void* r3 = MustAllocate(a, 256);                    // region 2
  ASSERT_EQ(provider_.regions(), 2);
  for (void* p : r1) a.Free(p);
  a.Free(r2);  // region 2 still has r3 live

  EXPECT_EQ(a.Trim(), 4 * kKiB);
  EXPECT_EQ(provider_.regions(), 1);
  EXPECT_EQ(a.stats().bytes_reserved, int64_t{4 * kKiB});
  EXPECT_EQ(a.Trim(), 0u);
  std::memset(r3, 7, 256);                  // still usable
  void* again = MustAllocate(a, 2 * kKiB);  // fits region 2's free space
  EXPECT_EQ(provider_.regions(), 1);

  void* pending = MustAllocate(a, 256);
  a.Free(again);
  a.Free(r3);
  BestFitAllocator::PendingToken t = a.FreeWhenDone(pending, 0);
  EXPECT_EQ(a.Trim(), 0u) << "a pending block pins its region";
  a.CompletePending(t);
  EXPECT_EQ(a.Trim(), 4 * kKiB);
  EXPECT_EQ(provider_.regions(), 0);
}

TEST_F(BestFitAllocatorTest, UnknownTokenAndNullAreIgnored) {
  BestFitAllocator a(&provider_);
  a.CompletePending(0);
  a.CompletePending(12345);
  a.Free(nullptr);
  EXPECT_EQ(a.FreeWhenDone(nullptr, 0), 0u);
  EXPECT_TRUE(a.stats() == MemoryStats{});
}

TEST_F(BestFitAllocatorTest, ZeroByteRequestGetsOneGranule) {
  BestFitAllocator a(&provider_);
  void* p = MustAllocate(a, 0);
  void* q = MustAllocate(a, 0);
  ASSERT_NE(p, nullptr);
  EXPECT_NE(p, q);
  EXPECT_EQ(a.BlockSize(p), 256u);
  EXPECT_EQ(a.stats().bytes_in_use, 512);
  a.Free(p);
  a.Free(q);
}

TEST_F(BestFitAllocatorTest, DestructorReturnsEveryRegion) {
  {
    BestFitAllocator a(&provider_);
    for (int i = 0; i < 3; ++i) (void)MustAllocate(a, 5 * kMiB);
    EXPECT_EQ(provider_.regions(), 3);
    // Outstanding blocks are a caller bug, but must not leak regions.
  }
  EXPECT_EQ(provider_.regions(), 0);
  EXPECT_EQ(provider_.bytes(), 0u);
}

// Threads allocate, free, free-when-done on shared queues and complete each
// other's tokens. Each block carries its owner's tag at both ends; a tag
// changed before its owner frees it means two owners got the same bytes.

}  // namespace
}  // namespace baton
