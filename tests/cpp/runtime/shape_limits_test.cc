// Shape arithmetic is checked once (Shape::Check) wherever a shape enters
// baton, so no element count, byte size or stride can overflow (issue 14:
// (2**62, 4) used to give an array of size 0 that crashed its first use).
#include <gtest/gtest.h>

#include <limits>

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

// Shape inference computes sizes from operands and attributes that each
// pass their own checks; the arithmetic joining them is checked too, so a
// hostile op is refused by name instead of wrapping (cases libFuzzer found:
// tests/fuzz/corpus/fuzz_program_builder/crash-*).
class ShapeArithmeticTest : public ::testing::Test {
 protected:
  compiler::ValueId Param(Shape shape) {
    auto v = p.AddParameter(
        compiler::ValueType{std::move(shape), DType::kFloat32,
                            MemoryKind::kDevice});
    EXPECT_TRUE(v.ok());
    return *v;
  }
  compiler::Program p;
};

TEST_F(ShapeArithmeticTest, ConcatenatedSizesBeyondInt64AreRefused) {
  std::vector<compiler::ValueId> parts;
  for (int i = 0; i < 17; ++i) parts.push_back(Param(Shape{kMaxElements}));
  const int before = p.num_values();
  auto c = p.Add(compiler::ConcatenateAttrs{0}, compiler::OperandList(parts));
  ASSERT_EQ(c.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("more than 64 bits"));
  EXPECT_EQ(p.num_values(), before);
}

TEST_F(ShapeArithmeticTest, PaddingBeyondTheLargestArrayIsRefused) {
  compiler::ValueId x = Param(Shape{3});
  compiler::ValueId zero = Param(Shape{});
  for (compiler::PadAttrs attrs :
       {compiler::PadAttrs{{0}, {0}, {kMaxElements + 1}},
        compiler::PadAttrs{{std::numeric_limits<int64_t>::min()}, {0}, {0}},
        compiler::PadAttrs{{0}, {std::numeric_limits<int64_t>::max()}, {0}}}) {
    auto r = p.Add(attrs, {x, zero});
    ASSERT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("the largest size"));
  }
}

TEST_F(ShapeArithmeticTest, SliceStridesNearInt64MaxTakeOneElement) {
  compiler::ValueId x = Param(Shape{4});
  auto s = p.Add(compiler::SliceAttrs{{1}, {4},
                                      {std::numeric_limits<int64_t>::max()}},
                 {x});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(p.type(*s).shape, Shape{1});
}

TEST_F(ShapeArithmeticTest, GatherResultIsCheckedBeforeItsElementsAreCounted) {
  // Each shape is valid; the result (2^40, 2^40) has 2^80 elements.
  compiler::ValueId x = Param(Shape{0, int64_t{1} << 40});
  auto idx = p.AddParameter(compiler::ValueType{
      Shape{int64_t{1} << 40}, DType::kInt32, MemoryKind::kDevice});
  ASSERT_TRUE(idx.ok());
  auto g = p.Add(compiler::GatherAttrs{0}, {x, *idx});
  ASSERT_EQ(g.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("too large"));
}

}  // namespace
}  // namespace baton
