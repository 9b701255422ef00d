// DESIGN R1: deterministic release, delete() with work in flight, and
// stream-ordered reuse.
#include <gtest/gtest.h>

#include "baton/core/error.h"
#include "runtime/runtime_test_util.h"

namespace baton {
namespace {

using testing::EnqueueRead;
using testing::InUse;
using testing::PutFloats;

class ArrayLifetimeTest : public ::testing::Test {
 protected:
  Client client_{1};
  Device* dev_ = client_.devices()[0];
};

// Acceptance 1: dropping the last handle while a computation still runs keeps
// the bytes; when the work ends, bytes_in_use is back to exactly its value.
TEST_F(ArrayLifetimeTest, ReleaseWaitsForInFlightWorkThenIsExact) {
  const int64_t before = InUse(dev_);
  Event gate = Event::Create();
  Event done;
  {
    Array a = PutFloats(dev_, std::vector<float>(1 << 20, 1.f));  // 4 MiB
    EXPECT_EQ(InUse(dev_) - before, 4 << 20);
    done = EnqueueRead(a, QueueKind::kCompute, gate);
  }  // last handle dropped while the read waits on the gate
  EXPECT_EQ(InUse(dev_) - before, 4 << 20);
  gate.SetReady();
  // Frees run before the event reads as ready, so no extra synchronization.
  ASSERT_TRUE(done.Wait().ok());
  EXPECT_EQ(InUse(dev_), before);
}

// Acceptance 2: delete() with work in flight: unusable at once, storage freed
// after the work ends, and the error says "deleted".
TEST_F(ArrayLifetimeTest, DeleteWithWorkInFlight) {
  const int64_t before = InUse(dev_);
  Array a = PutFloats(dev_, std::vector<float>(1024, 2.f));
  Array alias = a;  // another reference sees the deletion too
  Event gate = Event::Create();
  float seen = 0;
  Event done = EnqueueRead(a, QueueKind::kCompute, gate, [&](const void* p) {
    seen = static_cast<const float*>(p)[1023];
  });
  a.Delete();
  EXPECT_TRUE(a.IsDeleted());
  EXPECT_TRUE(alias.IsDeleted());
  a.Delete();  // idempotent
  // Metadata stays readable.
  EXPECT_EQ(alias.shape(), Shape{1024});
  EXPECT_EQ(alias.nbytes(), 4096);
  try {
    alias.BlockUntilReady();
    FAIL() << "expected DeletedArrayError";
  } catch (const DeletedArrayError& e) {
    EXPECT_NE(std::string(e.what()).find("deleted"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("float32(1024,)"), std::string::npos);
  }
  EXPECT_THROW(alias.IsReady(), DeletedArrayError);
  EXPECT_GT(InUse(dev_), before);  // storage kept for the in-flight read
  gate.SetReady();
  ASSERT_TRUE(done.Wait().ok());
  EXPECT_EQ(seen, 2.f);  // the read saw intact data
  EXPECT_EQ(InUse(dev_), before);
}

TEST_F(ArrayLifetimeTest, DonatedErrorNamesTheFunction) {
  Array a = PutFloats(dev_, {1, 2, 3});
  auto taken = a.impl()->TakeExclusive(
      {ConsumedReason::Kind::kDonated, "train_step"});
  ASSERT_TRUE(taken.ok());
  EXPECT_TRUE(a.IsDeleted());
  Status s = a.impl()->DeletedError();
  EXPECT_EQ(s.code(), ErrorCode::kDeletedArray);
  EXPECT_NE(s.message().find("donated to train_step"), std::string::npos);
  // Taking a consumed array again is a deleted-array error, not a donation one.
  auto again = a.impl()->TakeExclusive(
      {ConsumedReason::Kind::kDonated, "train_step"});
  EXPECT_EQ(again.status().code(), ErrorCode::kDeletedArray);
}

// R1: an undonated loop x = f(x) peaks at twice the state however far
// dispatch runs ahead, because memory freed by work on a queue is reused by
// later work on the same queue without waiting.
TEST_F(ArrayLifetimeTest, StreamOrderedReuseKeepsLoopAtTwiceTheState) {
  const size_t n = 1 << 20;  // 4 MiB state
  WorkQueue& compute = dev_->queue(QueueKind::kCompute);
  MemorySpace& space = dev_->memory_space(MemoryKind::kDevice);
  Array x = PutFloats(dev_, std::vector<float>(n, 0.f));
  x.BlockUntilReady();
  space.ResetPeak();
  const int64_t base = InUse(dev_) - static_cast<int64_t>(n * 4);
  Event gate = Event::Create();  // holds all work back: dispatch runs ahead
  for (int step = 0; step < 20; ++step) {
    UsageHold in = testing::ValueOrThrowForTest(x.impl()->AcquireRead());
    auto out = testing::ValueOrThrowForTest(TrackedBuffer::Allocate(
        &space, n * 4, compute.id(), "float32(1048576,)"));
    std::vector<Event> deps = in.dependencies();
    deps.push_back(gate);
    const float* src = static_cast<const float*>(in.data());
    float* dst = static_cast<float*>(out->data());
    Event done = compute.Enqueue(deps, [src, dst, n] {
      for (size_t i = 0; i < n; ++i) dst[i] = src[i] + 1.f;
      return OkStatus();
    });
    in.Finish(done);
    out->SetDefinitionEvent(done);
    x = Array(ArrayImpl::Create(dev_, MemoryKind::kDevice, Shape{int64_t(n)},
                                DType::kFloat32, std::move(out)));
  }
  gate.SetReady();
  x.BlockUntilReady();
  EXPECT_LE(space.stats().peak_bytes_in_use - base, int64_t(2 * n * 4));
  EXPECT_EQ(testing::GetFloats(x)[n - 1], 20.f);
}

TEST_F(ArrayLifetimeTest, LiveArraysListsUndeletedArraysOfEveryKind) {
  Array a = PutFloats(dev_, {1});
  Array b = PutFloats(dev_, {2}, MemoryKind::kPinnedHost);
  Array c = PutFloats(dev_, {3});
  c.Delete();
  std::vector<Array> live = dev_->LiveArrays();
  ASSERT_EQ(live.size(), 2u);
  EXPECT_TRUE(live[0].Is(a));
  EXPECT_TRUE(live[1].Is(b));
}

}  // namespace
}  // namespace baton
