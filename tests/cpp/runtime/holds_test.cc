// Holds: donation against host views and in-flight usage (acceptance 3), and
// writable host views that make computations wait (R7).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "baton/runtime/host_view.h"
#include "runtime/runtime_test_util.h"

namespace baton {
namespace {

using testing::EnqueueRead;
using testing::GetFloats;
using testing::InUse;
using testing::PutFloats;
using testing::ValueOrThrowForTest;

class HoldsTest : public ::testing::Test {
 protected:
  Client client_{1};
  Device* dev_ = client_.devices()[0];
};

ConsumedReason DonateTo(const char* fn) {
  return {ConsumedReason::Kind::kDonated, fn};
}

TEST_F(HoldsTest, DonationFailsAtOnceWithLiveViewThenSucceedsAfter) {
  Array a = PutFloats(dev_, {1, 2, 3, 4});
  {
    HostView view =
        ValueOrThrowForTest(HostView::Acquire(a, false, "np.asarray view"));
    EXPECT_EQ(static_cast<const float*>(view.data())[3], 4.f);
    auto refused = a.impl()->TakeExclusive(DonateTo("f"));
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), ErrorCode::kDonation);
    EXPECT_NE(refused.status().message().find("np.asarray view"),
              std::string::npos);
    EXPECT_NE(refused.status().message().find("Nothing was consumed"),
              std::string::npos);
    EXPECT_FALSE(a.IsDeleted());  // nothing consumed
    EXPECT_EQ(GetFloats(a)[0], 1.f);
  }  // the view dies: its hold goes with it (nothing cached on the array)
  auto taken = a.impl()->TakeExclusive(DonateTo("f"));
  ASSERT_TRUE(taken.ok());
  EXPECT_TRUE(a.IsDeleted());
}

TEST_F(HoldsTest, DonationWaitsForInFlightUsage) {
  Array a = PutFloats(dev_, std::vector<float>(256, 7.f));
  Event gate = Event::Create();
  std::atomic<float> seen{0};
  // A slow reader on another queue.
  Event read = EnqueueRead(a, QueueKind::kDeviceToHost, gate,
                           [&](const void* p) {
                             seen = static_cast<const float*>(p)[255];
                           });
  auto taken = ValueOrThrowForTest(a.impl()->TakeExclusive(DonateTo("g")));
  // The new owner must wait for the read: it is among the events returned.
  bool waits_for_read = false;
  for (const Event& e : taken.wait_for) waits_for_read |= (e == read);
  EXPECT_TRUE(waits_for_read);
  // A writer that honours them runs only after the reader saw the old data.
  float* data = static_cast<float*>(taken.buffer->data());
  Event write = dev_->queue(QueueKind::kCompute).Enqueue(taken.wait_for, [=] {
    for (int i = 0; i < 256; ++i) data[i] = -1.f;
    return OkStatus();
  });
  EXPECT_FALSE(write.IsReady());
  gate.SetReady();
  ASSERT_TRUE(write.Wait().ok());
  EXPECT_EQ(seen.load(), 7.f);
}

// Two enqueuers racing on one queue may finish their holds in either order;
// the buffer must remember the event that is last in queue order.
TEST_F(HoldsTest, UsageKeepsTheLaterEventOfAQueueWhateverTheFinishOrder) {
  Array a = PutFloats(dev_, {1, 2});
  WorkQueue& q = dev_->queue(QueueKind::kCompute);
  Event gate = Event::Create();
  UsageHold first = ValueOrThrowForTest(a.impl()->AcquireRead());
  UsageHold second = ValueOrThrowForTest(a.impl()->AcquireRead());
  Event e1 = q.Enqueue({}, [] { return OkStatus(); });
  Event e2 = q.Enqueue({gate}, [] { return OkStatus(); });
  second.Finish(e2);
  first.Finish(e1);  // finishes last, but its work is earlier in the queue
  auto taken = ValueOrThrowForTest(a.impl()->TakeExclusive(DonateTo("f")));
  bool has_e2 = false;
  for (const Event& e : taken.wait_for) has_e2 |= (e == e2);
  EXPECT_TRUE(has_e2);
  gate.SetReady();
}

TEST_F(HoldsTest, DeleteWithLiveViewKeepsStorageUntilViewDies) {
  const int64_t before = InUse(dev_);
  Array a = PutFloats(dev_, std::vector<float>(1024, 3.f));
  HostView view = ValueOrThrowForTest(HostView::Acquire(a, false));
  a.Delete();
  EXPECT_TRUE(a.IsDeleted());
  EXPECT_EQ(InUse(dev_) - before, 4096);
  EXPECT_EQ(static_cast<const float*>(view.data())[1023], 3.f);
  view.Release();
  EXPECT_EQ(InUse(dev_), before);
}

TEST_F(HoldsTest, WritableViewOnlyForHostKindsAndExclusive) {
  Array dev = PutFloats(dev_, {1});
  auto refused = HostView::Acquire(dev, true);
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("pinned_host"), std::string::npos);

  Array pinned = PutFloats(dev_, {1, 2}, MemoryKind::kPinnedHost);
  HostView reader = ValueOrThrowForTest(HostView::Acquire(pinned, false));
  EXPECT_FALSE(HostView::Acquire(pinned, true).ok());  // a reader is live
  reader.Release();
  HostView writer = ValueOrThrowForTest(HostView::Acquire(pinned, true));
  EXPECT_FALSE(HostView::Acquire(pinned, false).ok());  // writer is exclusive
  EXPECT_EQ(pinned.impl()->TakeExclusive(DonateTo("h")).status().code(),
            ErrorCode::kDonation);
}

TEST_F(HoldsTest, ComputationsWaitForWritableViewRelease) {
  Array pinned = PutFloats(dev_, std::vector<float>(64, 0.f),
                           MemoryKind::kPinnedHost);
  HostView writer = ValueOrThrowForTest(HostView::Acquire(pinned, true));
  float* w = static_cast<float*>(writer.data());
  std::atomic<float> seen{-1};
  Event read = EnqueueRead(pinned, QueueKind::kCompute, Event(),
                           [&](const void* p) {
                             seen = static_cast<const float*>(p)[63];
                           });
  for (int i = 0; i < 64; ++i) w[i] = 42.f;  // e.g. loading a checkpoint
  EXPECT_FALSE(read.IsReady());
  writer.Release();
  ASSERT_TRUE(read.Wait().ok());
  EXPECT_EQ(seen.load(), 42.f);
}

}  // namespace
}  // namespace baton
