// DESIGN R9 / acceptance 7: a limit breach raises a resource error listing the
// largest live arrays, and changes nothing.
#include <gtest/gtest.h>

#include "runtime/runtime_test_util.h"

namespace baton {
namespace {

using testing::GetFloats;
using testing::InUse;
using testing::PutFloats;

TEST(MemoryLimitTest, BreachListsLargestArraysAndChangesNothing) {
  Client client(1);
  Device* dev = client.devices()[0];
  MemorySpace& space = dev->memory_space(MemoryKind::kDevice);
  Array big = PutFloats(dev, std::vector<float>(1 << 20, 1.f));   // 4 MiB
  Array small = PutFloats(dev, std::vector<float>(1024, 2.f));    // 4 KiB
  space.SetLimit(6 << 20);
  const MemoryStats before = space.stats();
  EXPECT_EQ(before.bytes_limit, 6 << 20);

  std::vector<float> host(1 << 20, 3.f);
  auto r = DevicePut(HostBuffer{host.data(), Shape{1 << 20}, DType::kFloat32},
                     dev, MemoryKind::kDevice);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResourceExhausted);
  const std::string& msg = r.status().message();
  EXPECT_NE(msg.find("cpu:0 device memory"), std::string::npos) << msg;
  EXPECT_NE(msg.find("1) float32(1048576,) 4.0 MiB"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2) float32(1024,) 4.0 KiB"), std::string::npos) << msg;

  const MemoryStats after = space.stats();
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.peak_bytes_in_use, before.peak_bytes_in_use);
  EXPECT_EQ(after.num_allocs, before.num_allocs);
  EXPECT_EQ(after.largest_alloc_size, before.largest_alloc_size);
  EXPECT_EQ(GetFloats(small)[0], 2.f);
  EXPECT_EQ(dev->LiveArrays().size(), 2u);

  // Other kinds have their own (unlimited) space.
  auto pinned = DevicePut(
      HostBuffer{host.data(), Shape{1 << 20}, DType::kFloat32}, dev,
      MemoryKind::kPinnedHost);
  EXPECT_TRUE(pinned.ok());

  // Freeing makes room; removing the limit restores the default.
  big.Delete();
  EXPECT_TRUE(DevicePut(HostBuffer{host.data(), Shape{1 << 20},
                                   DType::kFloat32},
                        dev, MemoryKind::kDevice)
                  .ok());
  space.SetLimit(std::nullopt);
  EXPECT_GT(space.stats().bytes_limit, int64_t{6} << 20);
}

TEST(MemoryLimitTest, StatsTrackPeakAndLargest) {
  Client client(1);
  Device* dev = client.devices()[0];
  MemorySpace& space = dev->memory_space(MemoryKind::kUnpinnedHost);
  {
    Array a = PutFloats(dev, std::vector<float>(1000, 1.f),
                        MemoryKind::kUnpinnedHost);
    Array b = PutFloats(dev, std::vector<float>(3000, 1.f),
                        MemoryKind::kUnpinnedHost);
    const MemoryStats s = space.stats();
    // Sizes round up to the 256-byte granularity (<= 4 KiB per buffer).
    EXPECT_EQ(s.bytes_in_use, 4096 + 12032);
    EXPECT_EQ(s.num_allocs, 2);
    EXPECT_EQ(s.largest_alloc_size, 12032);
    EXPECT_GE(s.bytes_reserved, s.bytes_in_use);
  }
  const MemoryStats s = space.stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.peak_bytes_in_use, 4096 + 12032);
  space.ResetPeak();
  EXPECT_EQ(space.stats().peak_bytes_in_use, 0);
}

}  // namespace
}  // namespace baton
