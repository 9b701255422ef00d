// BestFitAllocator (runtime/best_fit_allocator.h): pending frees
// (stream-ordered reuse) and many threads at once.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "baton/runtime/best_fit_allocator.h"
#include "runtime/best_fit_allocator_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;

TEST_F(BestFitAllocatorTest, PendingBytesCountUntilCompleted) {
  BestFitAllocator a(&provider_);
  void* p = MustAllocate(a, 4 * kKiB);
  BestFitAllocator::PendingToken t = a.FreeWhenDone(p, 3);
  EXPECT_NE(t, 0u);
  MemoryStats s = a.stats();
  EXPECT_EQ(s.bytes_in_use, 4096);
  EXPECT_EQ(s.bytes_pending, 4096);
  EXPECT_EQ(a.BlockSize(p), 0u) << "no longer live";
  a.CompletePending(t);
  s = a.stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.bytes_pending, 0);
  a.CompletePending(t);  // idempotent
  EXPECT_EQ(a.stats().bytes_in_use, 0);
}

TEST_F(BestFitAllocatorTest, SameQueueReusesAPendingBlockAtOnce) {
  BestFitAllocator a(&provider_);
  void* p = MustAllocate(a, 4 * kKiB, 1);
  BestFitAllocator::PendingToken t = a.FreeWhenDone(p, 1);
  const MemoryStats before = a.stats();

  void* q = MustAllocate(a, 4 * kKiB, 1);
  EXPECT_EQ(q, p);
  MemoryStats s = a.stats();
  EXPECT_EQ(s.bytes_in_use, before.bytes_in_use) << "x = f(x) peaks at 2x";
  EXPECT_EQ(s.bytes_pending, 0);
  EXPECT_EQ(s.num_allocs, before.num_allocs + 1);
  EXPECT_EQ(a.BlockSize(q), 4 * kKiB);

  a.CompletePending(t);  // the old work ends: the reused block stays live
  EXPECT_EQ(a.stats().bytes_in_use, 4096);
  EXPECT_EQ(a.BlockSize(q), 4 * kKiB);
  a.CompletePending(t);
  EXPECT_EQ(a.stats().bytes_in_use, 4096);
  a.Free(q);
  EXPECT_EQ(a.stats().bytes_in_use, 0);
}

TEST_F(BestFitAllocatorTest, PartialReuseSplitsAndCompleteFreesTheRest) {
  BestFitAllocator a(&provider_);
  void* p = MustAllocate(a, 4 * kKiB);
  void* guard = MustAllocate(a, 256);  // keeps p's tail off the region's tail
  BestFitAllocator::PendingToken t = a.FreeWhenDone(p, 2);

  void* head = MustAllocate(a, 1 * kKiB, 2);
  EXPECT_EQ(head, p);
  MemoryStats s = a.stats();
  EXPECT_EQ(s.bytes_in_use, 4096 + 256);
  EXPECT_EQ(s.bytes_pending, 3072);
  // A second same-queue request takes the pending remainder too.
  void* second = MustAllocate(a, 1 * kKiB, 2);
  EXPECT_EQ(Addr(second), Addr(p) + 1 * kKiB);
  EXPECT_EQ(a.stats().bytes_pending, 2048);

  a.CompletePending(t);
  s = a.stats();
  EXPECT_EQ(s.bytes_in_use, 1024 + 1024 + 256);
  EXPECT_EQ(s.bytes_pending, 0);
  // The remainder is an ordinary free block now, usable by anyone.
  EXPECT_EQ(Addr(MustAllocate(a, 2 * kKiB)), Addr(p) + 2 * kKiB);
  a.Free(reinterpret_cast<void*>(Addr(p) + 2 * kKiB));
  a.Free(second);
  a.Free(head);
  // Everything in front of the guard merged back: 4 KiB fits at p.
  EXPECT_EQ(MustAllocate(a, 4 * kKiB), p);
  a.Free(p);
  a.Free(guard);
  EXPECT_EQ(a.stats().bytes_in_use, 0);
}

TEST_F(BestFitAllocatorTest, OtherQueuesNeverTakeAPendingBlock) {
  BestFitAllocator a(&provider_);
  void* p = MustAllocate(a, 4 * kKiB);
  void* n = MustAllocate(a, 4 * kKiB);
  BestFitAllocator::PendingToken tp = a.FreeWhenDone(p, 1);
  BestFitAllocator::PendingToken tn = a.FreeWhenDone(n, kNoQueue);

  // n, freed with kNoQueue, is not reusable even by kNoQueue requests.
  std::vector<void*> got;
  for (int queue : {0, 2, kNoQueue}) {
    void* q = MustAllocate(a, 4 * kKiB, queue);
    EXPECT_NE(q, p) << queue;
    EXPECT_NE(q, n) << queue;
    got.push_back(q);
  }
  EXPECT_EQ(a.stats().bytes_in_use, 5 * 4096);
  EXPECT_EQ(a.stats().bytes_pending, 2 * 4096);
  void* q = MustAllocate(a, 4 * kKiB, 1);  // queue 1 does take its own block
  EXPECT_EQ(q, p);
  got.push_back(q);

  a.CompletePending(tp);
  a.CompletePending(tn);
  for (void* g : got) a.Free(g);
  EXPECT_EQ(a.stats().bytes_in_use, 0);
  EXPECT_EQ(a.stats().bytes_pending, 0);
}

TEST_F(BestFitAllocatorTest, PendingReuseIsAllowedAtTheLimit) {
  BestFitAllocator a(&provider_);
  void* p = MustAllocate(a, 4 * kKiB, 1);
  BestFitAllocator::PendingToken t = a.FreeWhenDone(p, 1);
  const int64_t limit = a.stats().bytes_in_use;
  EXPECT_FALSE(a.Allocate(4 * kKiB, 2, limit).ok()) << "would add bytes";
  Result<void*> r = a.Allocate(4 * kKiB, 1, limit);
  ASSERT_TRUE(r.ok()) << "adds nothing to bytes_in_use";
  EXPECT_EQ(r.value(), p);
  a.CompletePending(t);
  a.Free(p);
}

TEST_F(BestFitAllocatorTest, ConcurrentMixedOperationsStayConsistent) {
  constexpr int kThreads = 4;
  constexpr int kOpsPerThread = 20000;
  BestFitAllocator a(&provider_, SmallRegions());
  std::mutex tokens_mu;
  std::vector<BestFitAllocator::PendingToken> tokens;
  std::atomic<int64_t> allocs{0};
  std::atomic<int> corrupted{0};

  struct Owned {
    void* ptr;
    size_t size;
    uint64_t tag;
  };
  auto check = [&](const Owned& o) {
    uint64_t head, tail;
    std::memcpy(&head, o.ptr, 8);
    std::memcpy(&tail, static_cast<char*>(o.ptr) + o.size - 8, 8);
    if (head != o.tag || tail != o.tag) ++corrupted;
  };

  auto worker = [&](int id) {
    std::mt19937_64 rng(1000 + id);
    std::vector<Owned> owned;
    auto pick = [&](size_t n) {
      return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
    };
    auto take_owned = [&] {
      size_t i = pick(owned.size());
      Owned o = owned[i];
      owned[i] = owned.back();
      owned.pop_back();
      check(o);
      return o;
    };
    for (int op = 0; op < kOpsPerThread; ++op) {
      const int kind = static_cast<int>(pick(100));
      if (kind < 40 && owned.size() < 64) {
        const int band = static_cast<int>(pick(100));
        size_t n = band < 70   ? pick(4 * kKiB)
                   : band < 97 ? pick(64 * kKiB)
                               : 3 * kMiB + pick(kMiB);   // own region
        const int queue = static_cast<int>(pick(4)) - 1;  // kNoQueue, 0..2
        Result<void*> r = a.Allocate(n, queue);
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        ++allocs;
        Owned o{r.value(), a.BlockSize(r.value()),
                (uint64_t{static_cast<unsigned>(id)} << 32) | unsigned(op)};
        if (o.size < a.RoundedSize(n) || Addr(o.ptr) % 256 != 0) ++corrupted;
        std::memcpy(o.ptr, &o.tag, 8);
        std::memcpy(static_cast<char*>(o.ptr) + o.size - 8, &o.tag, 8);
        owned.push_back(o);
      } else if (kind < 65 && !owned.empty()) {
        a.Free(take_owned().ptr);
      } else if (kind < 85 && !owned.empty()) {
        const int queue = static_cast<int>(pick(4)) - 1;
        BestFitAllocator::PendingToken t =
            a.FreeWhenDone(take_owned().ptr, queue);
        std::lock_guard<std::mutex> lock(tokens_mu);
        tokens.push_back(t);
      } else if (kind < 99) {
        BestFitAllocator::PendingToken t = 0;
        {
          std::lock_guard<std::mutex> lock(tokens_mu);
          if (!tokens.empty()) {
            size_t i = pick(tokens.size());
            t = tokens[i];
            tokens[i] = tokens.back();
            tokens.pop_back();
          }
        }
        a.CompletePending(t);
        if (kind == 98) a.CompletePending(t);  // idempotent
      } else {
        (void)a.Trim();
        const MemoryStats s = a.stats();
        if (s.bytes_pending > s.bytes_in_use ||
            s.bytes_in_use > s.bytes_reserved) {
          ++corrupted;
        }
      }
    }
    for (const Owned& o : owned) {
      check(o);
      a.Free(o.ptr);
    }
  };

  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(worker, i);
  for (std::thread& t : threads) t.join();
  for (BestFitAllocator::PendingToken t : tokens) a.CompletePending(t);

  EXPECT_EQ(corrupted.load(), 0);
  const MemoryStats s = a.stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.bytes_pending, 0);
  EXPECT_EQ(s.num_allocs, allocs.load());
  EXPECT_GT(s.peak_bytes_in_use, 0);
  EXPECT_EQ(s.bytes_reserved, static_cast<int64_t>(provider_.bytes()));
  // Everything coalesced: each region is one free block, so all of it trims.
  EXPECT_EQ(a.Trim(), static_cast<size_t>(s.bytes_reserved));
  EXPECT_EQ(a.stats().bytes_reserved, 0);
  EXPECT_EQ(provider_.regions(), 0);
}

}  // namespace
}  // namespace baton
