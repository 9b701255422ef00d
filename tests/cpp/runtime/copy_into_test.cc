// CopyArrayInto: device_put(array, into=old) -- an array source written into
// old's storage after old's in-flight readers (R2 with an array source).
#include "baton/runtime/copy_into.h"

#include <gtest/gtest.h>

#include "baton/runtime/host_view.h"
#include "runtime/runtime_test_util.h"

namespace baton {
namespace {

using testing::EnqueueRead;
using testing::GetFloats;
using testing::InUse;
using testing::PutFloats;
using testing::ValueOrThrowForTest;

class CopyIntoTest : public ::testing::Test {
 protected:
  Client client_{1};
  Device* dev_ = client_.devices()[0];
};

TEST_F(CopyIntoTest, WritesIntoTheSameStorageAcrossKinds) {
  Array src = PutFloats(dev_, {1, 2, 3, 4});
  Array dst = PutFloats(dev_, {0, 0, 0, 0}, MemoryKind::kPinnedHost);
  void* storage = ValueOrThrowForTest(dst.impl()->buffer())->data();
  const int64_t pinned = InUse(dev_, MemoryKind::kPinnedHost);
  Array out = ValueOrThrowForTest(CopyArrayInto(src, dst));
  EXPECT_TRUE(dst.IsDeleted());
  EXPECT_FALSE(src.IsDeleted());
  EXPECT_EQ(out.memory_kind(), MemoryKind::kPinnedHost);
  EXPECT_EQ(ValueOrThrowForTest(out.impl()->buffer())->data(), storage);
  EXPECT_EQ(InUse(dev_, MemoryKind::kPinnedHost), pinned);
  EXPECT_EQ(GetFloats(out), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(dst.impl()->consumed_reason().kind,
            ConsumedReason::Kind::kOverwritten);
}

TEST_F(CopyIntoTest, OrdersAfterReadersOfTheOldValue) {
  Array src = PutFloats(dev_, {9, 9});
  Array dst = PutFloats(dev_, {1, 1});
  Event gate = Event::Create();
  float seen = 0;
  Event read = EnqueueRead(
      dst, QueueKind::kDeviceToHost, gate,
      [&](const void* p) { seen = static_cast<const float*>(p)[0]; });
  Array out = ValueOrThrowForTest(CopyArrayInto(src, dst));
  gate.SetReady();
  out.BlockUntilReady();
  ASSERT_TRUE(read.Wait().ok());
  EXPECT_EQ(seen, 1.f);  // the reader saw the old value
  EXPECT_EQ(GetFloats(out), (std::vector<float>{9, 9}));
}

TEST_F(CopyIntoTest, RefusalsConsumeNothing) {
  Array src = PutFloats(dev_, {1, 2, 3});
  Array wrong = PutFloats(dev_, {1, 2});
  auto r = CopyArrayInto(src, wrong);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(wrong.IsDeleted());

  Array dst = PutFloats(dev_, {0, 0, 0});
  {
    HostView view = ValueOrThrowForTest(HostView::Acquire(dst, false, "view"));
    auto refused = CopyArrayInto(src, dst);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), ErrorCode::kDonation);
    EXPECT_FALSE(dst.IsDeleted());
  }
  src.Delete();
  auto deleted = CopyArrayInto(src, dst);
  ASSERT_FALSE(deleted.ok());
  EXPECT_EQ(deleted.status().code(), ErrorCode::kDeletedArray);
  EXPECT_FALSE(dst.IsDeleted());  // a deleted source consumes nothing
}

TEST_F(CopyIntoTest, IntoItselfRebindsTheStorage) {
  Array a = PutFloats(dev_, {5, 6});
  void* storage = ValueOrThrowForTest(a.impl()->buffer())->data();
  Array b = ValueOrThrowForTest(CopyArrayInto(a, a));
  EXPECT_TRUE(a.IsDeleted());
  EXPECT_EQ(ValueOrThrowForTest(b.impl()->buffer())->data(), storage);
  EXPECT_EQ(GetFloats(b), (std::vector<float>{5, 6}));
}

}  // namespace
}  // namespace baton
