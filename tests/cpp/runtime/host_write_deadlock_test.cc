// A thread that holds a writable host view and then waits for work reading
// that array would wait for itself (issue 14): the wait fails at once with
// WouldDeadlock naming the view, instead of hanging. Waits that do not
// depend on the view, and waits from other threads, still block and finish.
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

class HostWriteDeadlockTest : public ::testing::Test {
 protected:
  Client client_{1};
  Device* dev_ = client_.devices()[0];
};

TEST_F(HostWriteDeadlockTest, WaitingOnTheViewsOwnThreadFailsNamingTheView) {
  Array a = PutFloats(dev_, {1, 2, 3, 4}, MemoryKind::kPinnedHost);
  Status waited;
  {
    HostView view = ValueOrThrowForTest(
        HostView::Acquire(a, /*writable=*/true, "checkpoint loader"));
    static_cast<float*>(view.data())[0] = 9.f;
    Event read = EnqueueRead(a, QueueKind::kCompute, Event());
    waited = read.Wait();  // would hang: the read waits for this view
    EXPECT_FALSE(read.IsReady());
    ASSERT_EQ(waited.code(), ErrorCode::kWouldDeadlock);
    EXPECT_NE(waited.message().find("checkpoint loader"), std::string::npos)
        << waited.message();
    EXPECT_NE(waited.message().find("Release the view"), std::string::npos);
    // Work enqueued behind the blocked read on the same in-order queue is
    // blocked too, and is seen as such.
    Event behind = dev_->queue(QueueKind::kCompute).Enqueue({}, [] {
      return OkStatus();
    });
    EXPECT_EQ(behind.Wait().code(), ErrorCode::kWouldDeadlock);
    // A join over blocked work is seen through as well.
    EXPECT_EQ(JoinEvents({read, Event::Create()}).Wait().code(),
              ErrorCode::kWouldDeadlock);
  }  // released: the read runs
  EXPECT_EQ(GetFloats(a)[0], 9.f);
}

TEST_F(HostWriteDeadlockTest, CopyToHostOfTheViewedArrayFailsInsteadOfHanging) {
  Array a = PutFloats(dev_, {1, 2, 3, 4}, MemoryKind::kPinnedHost);
  HostView view = ValueOrThrowForTest(HostView::Acquire(a, true, "loader"));
  std::vector<float> out(4);
  Status s = CopyToHost(a, out.data(), out.size() * sizeof(float));
  EXPECT_EQ(s.code(), ErrorCode::kWouldDeadlock) << s.to_string();
  view.Release();
  EXPECT_EQ(GetFloats(a), (std::vector<float>{1, 2, 3, 4}));
}

TEST_F(HostWriteDeadlockTest, IndependentWorkStillWaitsNormally) {
  Array a = PutFloats(dev_, {1, 2}, MemoryKind::kPinnedHost);
  Array b = PutFloats(dev_, {5, 6});
  HostView view = ValueOrThrowForTest(HostView::Acquire(a, true, "loader"));
  // b's read does not depend on the view (another queue, no dependency).
  Event read_b = EnqueueRead(b, QueueKind::kDeviceToHost, Event());
  EXPECT_TRUE(read_b.Wait().ok());
  EXPECT_EQ(GetFloats(b), (std::vector<float>{5, 6}));
}

TEST_F(HostWriteDeadlockTest, AnotherThreadsWaitBlocksUntilTheViewIsReleased) {
  Array a = PutFloats(dev_, {1, 2}, MemoryKind::kPinnedHost);
  HostView view = ValueOrThrowForTest(HostView::Acquire(a, true, "loader"));
  static_cast<float*>(view.data())[1] = 7.f;
  Event read = EnqueueRead(a, QueueKind::kCompute, Event());
  std::atomic<bool> finished{false};
  Status other;
  std::thread waiter([&] {
    other = read.Wait();  // not the holder: a real wait, ended by Release
    finished = true;
  });
  EXPECT_FALSE(finished.load());
  view.Release();
  waiter.join();
  EXPECT_TRUE(other.ok()) << other.to_string();
  EXPECT_EQ(GetFloats(a)[1], 7.f);
}

TEST_F(HostWriteDeadlockTest, NothingIsRecordedOnceNoViewIsLive) {
  Array a = PutFloats(dev_, {1, 2}, MemoryKind::kPinnedHost);
  {
    HostView view = ValueOrThrowForTest(HostView::Acquire(a, true, "loader"));
    EXPECT_TRUE(Event::HostWritesLive());
  }
  EXPECT_FALSE(Event::HostWritesLive());
  EXPECT_TRUE(EnqueueRead(a, QueueKind::kCompute, Event()).Wait().ok());
  a = Array();
  EXPECT_TRUE(dev_->Synchronize().ok());
  EXPECT_EQ(InUse(dev_, MemoryKind::kPinnedHost), 0);
}

}  // namespace
}  // namespace baton
