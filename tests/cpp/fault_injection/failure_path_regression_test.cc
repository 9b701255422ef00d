// Regressions for bugs the allocation-failure injection found (issue 14).
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "baton/jit/jit.h"
#include "baton/runtime/allocation_faults.h"
#include "baton/runtime/best_fit_allocator.h"
#include "baton/runtime/client.h"
#include "baton/backend/host_region_provider.h"
#include "runtime/runtime_test_util.h"

namespace baton {
namespace {

using testing::EnqueueRead;
using testing::GetFloats;
using testing::InUse;
using testing::PutFloats;

// Stream-ordered reuse hands a same-queue Allocate a block whose previous
// owner's work may still be queued. If the new owner gives the block up
// without enqueueing anything (a call failing on its next allocation), Free
// used to put it straight on the free list, where a host write or another
// queue could take it while the old work was still to write it.
TEST(StreamOrderedReuseTest, AbandonedReusedBlockWaitsForItsOldWork) {
  HostRegionProvider provider;
  BestFitAllocator a(&provider);
  constexpr int kQueue = 7;
  void* old_owner = a.Allocate(64 << 10, kQueue).value();
  const BestFitAllocator::PendingToken old_work =
      a.FreeWhenDone(old_owner, kQueue);

  void* reused = a.Allocate(16 << 10, kQueue).value();  // part of it
  ASSERT_EQ(reused, old_owner);
  a.Free(reused);  // abandoned before any work used it
  EXPECT_EQ(a.stats().bytes_pending, 64 << 10) << "still pending";
  EXPECT_EQ(a.stats().bytes_in_use, 64 << 10);
  void* host = a.Allocate(16 << 10, kNoQueue).value();
  void* other_queue = a.Allocate(16 << 10, kQueue + 1).value();
  EXPECT_NE(host, old_owner);
  EXPECT_NE(other_queue, old_owner);
  // The same queue may still take it: its work runs after the old work.
  void* same_queue = a.Allocate(16 << 10, kQueue).value();
  EXPECT_EQ(same_queue, old_owner);
  a.Free(same_queue);

  a.CompletePending(old_work);  // the old work is done: all of it is free
  EXPECT_EQ(a.stats().bytes_pending, 0);
  EXPECT_EQ(a.stats().bytes_in_use, 32 << 10);
  void* later = a.Allocate(64 << 10, kNoQueue).value();
  EXPECT_EQ(later, old_owner) << "the pieces coalesced back";
  for (void* p : {host, other_queue, later}) a.Free(p);
  EXPECT_EQ(a.stats().bytes_in_use, 0);
}

TEST(StreamOrderedReuseTest, ReusedBlockFreedAfterItsOldWorkIsFreeAtOnce) {
  HostRegionProvider provider;
  BestFitAllocator a(&provider);
  void* p = a.Allocate(8 << 10, 3).value();
  const BestFitAllocator::PendingToken t = a.FreeWhenDone(p, 3);
  void* q = a.Allocate(8 << 10, 3).value();
  ASSERT_EQ(q, p);
  a.CompletePending(t);
  a.Free(q);
  EXPECT_EQ(a.stats().bytes_in_use, 0);
  EXPECT_EQ(a.stats().bytes_pending, 0);
}

// End to end: call 1 is queued behind a gated reader and its output dropped
// (pending on the compute queue); call 2 takes that storage for its first
// output, then runs out of memory on its second -- injected, or a real
// memory limit. Arrays put afterwards must not share the storage call 1 is
// still going to write.
void ExpectFailedCallLeavesPendingStorageAlone(bool use_memory_limit) {
  ScopedAllocationFaults disarm_on_exit;
  Client client(1);
  Device* d = client.devices()[0];
  MemorySpace& space = d->memory_space(MemoryKind::kDevice);
  constexpr int64_t n = 256 << 10;  // 1 MiB of float32
  const std::vector<float> ones(n, 1.f), sevens(n, 7.f);
  {
    Jitted twice([](TraceScope&, const std::vector<Tracer>& a) {
      return std::vector<Tracer>{a[0] * 2};
    }, {.name = "twice", .donate_argnums = {}});
    Jitted pair([](TraceScope&, const std::vector<Tracer>& a) {
      return std::vector<Tracer>{a[0] + 1, a[0] + 2};
    }, {.name = "pair", .donate_argnums = {}});
    const std::vector<ArgSpec> spec{ArgSpec{Shape{n}}};
    ASSERT_TRUE(twice.Lower(spec, d).ok());
    ASSERT_TRUE(pair.Lower(spec, d).ok());

    Array x = PutFloats(d, ones);
    Event gate = Event::Create();
    EnqueueRead(x, QueueKind::kCompute, gate);
    ASSERT_TRUE(twice.Call({x}).ok());  // queued; its output dropped

    if (use_memory_limit) {
      space.SetLimit(space.stats().bytes_in_use);  // nothing new fits
    } else {
      AllocationFaults::FailNth(2);  // pair's second output
    }
    Result<std::vector<Array>> failed = pair.Call({x});
    AllocationFaults::Stop();
    space.SetLimit(std::nullopt);
    EXPECT_EQ(failed.status().code(), ErrorCode::kResourceExhausted)
        << failed.status().to_string();
    if (!use_memory_limit) {
      EXPECT_EQ(AllocationFaults::injected(), 1);
    }

    std::vector<Array> later;
    for (int i = 0; i < 3; ++i) later.push_back(PutFloats(d, sevens));
    gate.SetReady();  // call 1 runs now
    EXPECT_TRUE(d->Synchronize().ok());
    for (const Array& a : later) EXPECT_EQ(GetFloats(a), sevens);
    EXPECT_EQ(GetFloats(x), ones);
  }  // the programs (and their constants) go too
  EXPECT_TRUE(d->Synchronize().ok());
  for (int k = 0; k < kNumMemoryKinds; ++k) {
    EXPECT_EQ(InUse(d, static_cast<MemoryKind>(k)), 0);
  }
}

TEST(FailedCallRegressionTest, InjectedFailureLeavesPendingStorageAlone) {
  ExpectFailedCallLeavesPendingStorageAlone(/*use_memory_limit=*/false);
}

TEST(FailedCallRegressionTest, MemoryLimitFailureLeavesPendingStorageAlone) {
  ExpectFailedCallLeavesPendingStorageAlone(/*use_memory_limit=*/true);
}

}  // namespace
}  // namespace baton
