// Transfers: snapshot semantics (R6, acceptance 4), memory kinds (R8,
// acceptance 6), zero-copy borrowing, async host copies.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "baton/runtime/host_view.h"
#include "runtime/runtime_test_util.h"

namespace baton {
namespace {

using testing::GetFloats;
using testing::InUse;
using testing::PutFloats;
using testing::ValueOrThrowForTest;

class TransferTest : public ::testing::Test {
 protected:
  Client client_{2};
  Device* dev_ = client_.devices()[0];
};

// Acceptance 4: mutating the host array right after device_put returns never
// changes the device array, also for a large array.
TEST_F(TransferTest, SnapshotIgnoresLaterHostMutation) {
  std::vector<float> host(16 << 20, 1.f);  // 64 MiB
  Array a = PutFloats(dev_, host);
  std::fill(host.begin(), host.end(), 2.f);  // right after return
  host[0] = 3.f;
  std::vector<float> back = GetFloats(a);
  EXPECT_EQ(back.front(), 1.f);
  EXPECT_EQ(back.back(), 1.f);
  EXPECT_EQ(std::count(back.begin(), back.end(), 1.f),
            static_cast<long>(back.size()));
}

TEST_F(TransferTest, AsyncTransferCallsOnDoneAndDefinesArray) {
  std::vector<float> host(1 << 20, 5.f);
  std::atomic<bool> done{false};
  Array a = ValueOrThrowForTest(
      DevicePut(HostBuffer{host.data(), Shape{1 << 20}, DType::kFloat32}, dev_,
                MemoryKind::kDevice,
                HostBufferSemantics::kImmutableUntilTransferCompletes,
                [&] { done = true; }));
  a.BlockUntilReady();
  EXPECT_TRUE(done.load());
  EXPECT_EQ(GetFloats(a)[12345], 5.f);
}

TEST_F(TransferTest, ZeroCopyBorrowsAndIsNotCounted) {
  alignas(64) static float host[256];
  std::fill(std::begin(host), std::end(host), 9.f);
  const int64_t before = InUse(dev_);
  std::atomic<int> released{0};
  {
    Array a = ValueOrThrowForTest(
        DevicePut(HostBuffer{host, Shape{256}, DType::kFloat32}, dev_,
                  MemoryKind::kDevice, HostBufferSemantics::kZeroCopy,
                  [&] { released++; }));
    EXPECT_EQ(InUse(dev_), before);
    HostView v = ValueOrThrowForTest(HostView::Acquire(a, false));
    EXPECT_EQ(v.data(), static_cast<void*>(host));  // same memory
    EXPECT_EQ(released.load(), 0);
  }
  EXPECT_EQ(released.load(), 1);
}

// Acceptance 6: memory kinds are counted separately and moving between them
// (and between devices) preserves values.
TEST_F(TransferTest, MemoryKindsAreSeparatelyCountedAndMovesPreserveValues) {
  std::vector<float> v(4096);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.5f;
  const int64_t dev0 = InUse(dev_, MemoryKind::kDevice);
  const int64_t pin0 = InUse(dev_, MemoryKind::kPinnedHost);
  const int64_t unp0 = InUse(dev_, MemoryKind::kUnpinnedHost);
  Array d = PutFloats(dev_, v);
  EXPECT_EQ(InUse(dev_, MemoryKind::kDevice) - dev0, 16384);
  EXPECT_EQ(InUse(dev_, MemoryKind::kPinnedHost), pin0);
  Array p = ValueOrThrowForTest(CopyArray(d, dev_, MemoryKind::kPinnedHost));
  Array u = ValueOrThrowForTest(CopyArray(p, dev_, MemoryKind::kUnpinnedHost));
  Array back = ValueOrThrowForTest(CopyArray(u, dev_, MemoryKind::kDevice));
  Device* dev1 = client_.devices()[1];
  Array other = ValueOrThrowForTest(CopyArray(back, dev1, MemoryKind::kDevice));
  EXPECT_EQ(p.memory_kind(), MemoryKind::kPinnedHost);
  EXPECT_EQ(other.device(), dev1);
  EXPECT_EQ(GetFloats(p), v);
  EXPECT_EQ(GetFloats(u), v);
  EXPECT_EQ(GetFloats(back), v);
  EXPECT_EQ(GetFloats(other), v);
  EXPECT_EQ(InUse(dev_, MemoryKind::kPinnedHost) - pin0, 16384);
  EXPECT_EQ(InUse(dev_, MemoryKind::kUnpinnedHost) - unp0, 16384);
  EXPECT_EQ(InUse(dev_, MemoryKind::kDevice) - dev0, 2 * 16384);
  EXPECT_EQ(InUse(dev1, MemoryKind::kDevice), 16384);
  p.Delete();
  EXPECT_EQ(InUse(dev_, MemoryKind::kPinnedHost), pin0);
}

TEST_F(TransferTest, FullAndEmpty) {
  const float seven = 7.f;
  Array f = ValueOrThrowForTest(
      Full(Shape{3, 5}, DType::kFloat32, &seven, dev_, MemoryKind::kDevice));
  EXPECT_EQ(GetFloats(f), std::vector<float>(15, 7.f));
  Array e = ValueOrThrowForTest(
      Empty(Shape{0, 4}, DType::kFloat32, dev_, MemoryKind::kDevice));
  EXPECT_EQ(e.nbytes(), 0);
  EXPECT_TRUE(e.IsReady());
}

TEST_F(TransferTest, BadArgumentsChangeNothing) {
  const int64_t before = InUse(dev_);
  auto r = DevicePut(HostBuffer{nullptr, Shape{-1}, DType::kFloat32}, dev_,
                     MemoryKind::kDevice);
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  Array a = PutFloats(dev_, {1, 2});
  std::vector<float> small(1);
  EXPECT_EQ(CopyToHost(a, small.data(), 4).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(client_.device(5).status().code(), ErrorCode::kInvalidArgument);
  a.Delete();
  EXPECT_EQ(InUse(dev_), before);
}

}  // namespace
}  // namespace baton
