// Shape arithmetic is checked once (Shape::Check) wherever a shape enters
// baton, so no element count, byte size or stride can overflow (issue 14:
// (2**62, 4) used to give an array of size 0 that crashed its first use).
#include <gtest/gtest.h>

#include <gmock/gmock.h>

#include "baton/compiler/ir.h"
#include "runtime/runtime_test_util.h"

namespace baton {
namespace {

using ::testing::HasSubstr;

constexpr int64_t k62 = int64_t{1} << 62;

TEST(ShapeCheckTest, AcceptsEverySizeUpToTheLimit) {
  EXPECT_TRUE(Shape{}.Check().ok());
  EXPECT_TRUE((Shape{0}).Check().ok());
  EXPECT_TRUE((Shape{kMaxElements}).Check().ok());
  EXPECT_TRUE((Shape{kMaxElements, 1, 0}).Check().ok());
  EXPECT_TRUE((Shape{1 << 20, 1 << 20, 1 << 18}).Check().ok());  // 2^58
  EXPECT_FALSE((Shape{1 << 20, 1 << 20, 1 << 19}).Check().ok());  // 2^59
}

TEST(ShapeCheckTest, RefusesNegativeDimensionsNamingThePosition) {
  Status s = Shape{3, -1}.Check();
  ASSERT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("(3, -1) has a negative dimension (-1 at position 1)"));
}

TEST(ShapeCheckTest, RefusesProductsPastTheLimitWithoutOverflowing) {
  for (const Shape& s : {Shape{k62, 4}, Shape{3, k62}, Shape{kMaxElements + 1},
                         Shape{INT64_MAX}, Shape{k62, k62, k62},
                         // A zero does not hide the other dimensions: their
                         // strides would still overflow.
                         Shape{0, k62, k62}}) {
    Status st = s.Check();
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << s.to_string();
    EXPECT_THAT(st.message(), HasSubstr("is too large"));
  }
}

TEST(ShapeCheckTest, ArrayCreationRefusesOversizedShapesAndAllocatesNothing) {
  Client client(1);
  Device* dev = client.devices()[0];
  const float one = 1.f;
  for (const Shape& s : {Shape{k62, 4}, Shape{3, k62}, Shape{INT64_MAX}}) {
    Result<Array> e = Empty(s, DType::kFloat32, dev, MemoryKind::kDevice);
    EXPECT_EQ(e.status().code(), ErrorCode::kInvalidArgument) << s.to_string();
    Result<Array> f = Full(s, DType::kFloat32, &one, dev, MemoryKind::kPinnedHost);
    EXPECT_EQ(f.status().code(), ErrorCode::kInvalidArgument) << s.to_string();
    Result<Array> p = DevicePut(HostBuffer{&one, s, DType::kFloat32}, dev,
                                MemoryKind::kDevice);
    EXPECT_EQ(p.status().code(), ErrorCode::kInvalidArgument) << s.to_string();
  }
  EXPECT_EQ(testing::InUse(dev), 0);
  EXPECT_EQ(testing::InUse(dev, MemoryKind::kPinnedHost), 0);
  // Large but valid: a typed out-of-memory error with the true byte count.
  Result<Array> big = Empty(Shape{int64_t{1} << 45}, DType::kFloat32, dev,
                            MemoryKind::kDevice);
  ASSERT_EQ(big.status().code(), ErrorCode::kResourceExhausted);
  EXPECT_THAT(big.status().message(), HasSubstr("131072.00 GiB"));
}

TEST(ShapeCheckTest, EveryInstructionsResultShapeIsChecked) {
  compiler::Program p;
  auto x = p.AddParameter(compiler::ValueType{Shape{4}, DType::kFloat32,
                                              MemoryKind::kDevice});
  ASSERT_TRUE(x.ok());
  // broadcast_in_dim's own rule accepts (4,) -> (2^62, 4); the size check
  // refuses it.
  auto b = p.Add(compiler::BroadcastInDimAttrs{Shape{k62, 4}, {1}}, {*x});
  ASSERT_EQ(b.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(), HasSubstr("is too large"));
  EXPECT_EQ(p.num_values(), 1);  // nothing added
}

}  // namespace
}  // namespace baton
