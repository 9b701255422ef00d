#include "baton/compiler/literal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

namespace baton::compiler {
namespace {

TEST(LiteralTest, ZeroFilledWithShapeAndType) {
  Literal lit(Shape{2, 3}, DType::kInt16);
  EXPECT_EQ(lit.shape(), (Shape{2, 3}));
  EXPECT_EQ(lit.dtype(), DType::kInt16);
  EXPECT_EQ(lit.num_elements(), 6);
  EXPECT_EQ(lit.byte_size(), 12);
  for (int16_t v : lit.ToVector<int16_t>()) EXPECT_EQ(v, 0);
}

TEST(LiteralTest, DefaultIsFloat32ScalarZero) {
  Literal lit;
  EXPECT_EQ(lit.shape(), Shape{});
  EXPECT_EQ(lit.dtype(), DType::kFloat32);
  EXPECT_EQ(lit.Get<float>(0), 0.0f);
}

TEST(LiteralTest, FromVectorCopiesTheData) {
  std::vector<float> src = {1, 2, 3, 4};
  Literal lit = Literal::FromVector(src, Shape{2, 2});
  src[0] = 100;  // a snapshot: the literal keeps the old value
  EXPECT_EQ(lit.ToVector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(lit.Get<float>(3), 4.0f);
}

TEST(LiteralTest, BoolVectorAndScalars) {
  Literal b = Literal::FromVector<bool>({true, false, true});
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_EQ(b.ToVector<bool>(), (std::vector<bool>{true, false, true}));
  Literal s = Literal::Scalar<int64_t>(-7);
  EXPECT_EQ(s.shape().rank(), 0);
  EXPECT_EQ(s.GetAsInt64(0), -7);
  EXPECT_EQ(s.GetAsDouble(0), -7.0);
}

TEST(LiteralTest, FromDoublesConvertsToHalfTypes) {
  Literal h = Literal::FromDoubles(DType::kFloat16, Shape{3}, {1.0, 0.5, -2});
  EXPECT_EQ(h.Get<float16>(0).bits, 0x3c00);
  EXPECT_EQ(h.GetAsDouble(1), 0.5);
  Literal b = Literal::FromDoubles(DType::kBFloat16, Shape{1}, {1.0});
  EXPECT_EQ(b.Get<bfloat16>(0).bits, 0x3f80);
  Literal i = Literal::FromDoubles(DType::kUInt8, Shape{2}, {3.7, 300});
  EXPECT_EQ(i.ToVector<uint8_t>(), (std::vector<uint8_t>{3, 255}));
}

TEST(LiteralTest, FromBytesAndEmpty) {
  const int32_t data[] = {5, 6};
  Literal lit = Literal::FromBytes(Shape{2}, DType::kInt32, data);
  EXPECT_EQ(lit.ToVector<int32_t>(), (std::vector<int32_t>{5, 6}));
  Literal empty = Literal::FromBytes(Shape{0, 3}, DType::kFloat32, nullptr);
  EXPECT_EQ(empty.num_elements(), 0);
  EXPECT_EQ(empty.byte_size(), 0);
}

TEST(LiteralTest, EqualityIsBitwise) {
  Literal a = Literal::FromVector<float>({1, 2});
  EXPECT_EQ(a, Literal::FromVector<float>({1, 2}));
  EXPECT_FALSE(a == Literal::FromVector<float>({1, 3}));
  EXPECT_FALSE(a == Literal::FromVector<float>({1, 2}, Shape{2, 1}));
  EXPECT_FALSE(a == Literal::FromVector<int32_t>({1, 2}));
  EXPECT_FALSE(Literal::Scalar(0.0f) == Literal::Scalar(-0.0f));
  const float nan = std::nanf("");
  EXPECT_EQ(Literal::Scalar(nan), Literal::Scalar(nan));
}

TEST(LiteralTest, Text) {
  EXPECT_EQ(Literal::Scalar(2.5f).ToString(), "f32[] 2.5");
  EXPECT_EQ(Literal::FromVector<int32_t>({1, 2, 3, 4}, Shape{2, 2}).ToString(),
            "s32[2,2] {{1, 2}, {3, 4}}");
  EXPECT_EQ(Literal::FromVector<bool>({true, false}).ValuesToString(),
            "{true, false}");
  EXPECT_EQ(
      Literal::FromDoubles(DType::kBFloat16, Shape{1}, {0.1}).ValuesToString(),
      "{0.1}");
  EXPECT_EQ(Literal::FromDoubles(DType::kFloat16, Shape{3}, {1e5, -0.0, 3})
                .ValuesToString(),
            "{inf, -0, 3}");
  EXPECT_EQ(Literal::Scalar(0.1).ValuesToString(), "0.1");
  EXPECT_EQ(Literal(Shape{2, 0}, DType::kUInt8).ToString(), "u8[2,0] {}");
}

TEST(LiteralTest, SharedConstIsCheapToShare) {
  auto shared =
      std::make_shared<const Literal>(Literal::FromVector<int8_t>({1, 2, 3}));
  std::shared_ptr<const Literal> other = shared;
  EXPECT_EQ(other->data<int8_t>(), shared->data<int8_t>());
}

TEST(LiteralDeathTest, TypedAccessWithWrongTypeAborts) {
  Literal lit = Literal::FromVector<float>({1});
  EXPECT_DEATH(lit.Get<int32_t>(0), "typed access as int32");
}

}  // namespace
}  // namespace baton::compiler
