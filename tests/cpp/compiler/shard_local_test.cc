// Which programs run shard by shard on sharded arguments (shard_local.h).
#include "baton/compiler/shard_local.h"

#include <gtest/gtest.h>

#include <memory>

namespace baton::compiler {
namespace {

ValueType F32(Shape shape) {
  return ValueType{std::move(shape), DType::kFloat32};
}

std::shared_ptr<const Literal> Lit(const Literal& l) {
  return std::make_shared<const Literal>(l);
}

TEST(ShardLocalTest, ElementwiseOpsWithBroadcastScalarsAreShardLocal) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId s = p.AddParameter(F32({})).value();
  const ValueId c = p.Add(ConstantAttrs{Lit(Literal::Scalar(2.0f))}, {}).value();
  const ValueId cs = p.Add(BinaryAttrs{BinaryOp::kMul}, {c, s}).value();
  const ValueId b =
      p.Add(BroadcastInDimAttrs{Shape({8, 4}), {}}, {cs}).value();
  const ValueId y = p.Add(BinaryAttrs{BinaryOp::kAdd}, {x, b}).value();
  const ValueId t = p.Add(UnaryAttrs{UnaryOp::kTanh}, {y}).value();
  ASSERT_TRUE(p.SetOutputs({t, x}).ok());
  EXPECT_EQ(WhyNotShardLocal(p), std::nullopt);
}

TEST(ShardLocalTest, AReductionIsNamed) {
  Program p;
  const ValueId x = p.AddParameter(F32({8})).value();
  const ValueId e = p.Add(UnaryAttrs{UnaryOp::kExp}, {x}).value();
  const ValueId r = p.Add(ReduceAttrs{ReduceOp::kSum, {0}}, {e}).value();
  ASSERT_TRUE(p.SetOutputs({r}).ok());
  const auto why = WhyNotShardLocal(p);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("%2 = reduce"), std::string::npos) << *why;
}

TEST(ShardLocalTest, AValueOfAnotherShapeIsNamed) {
  Program p;
  const ValueId x = p.AddParameter(F32({8})).value();
  const ValueId r = p.Add(ReshapeAttrs{Shape({2, 4})}, {x}).value();
  ASSERT_TRUE(p.SetOutputs({r}).ok());
  const auto why = WhyNotShardLocal(p);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("another shape"), std::string::npos) << *why;
}

TEST(ShardLocalTest, ABroadcastOfARowIsNotShardLocal) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId row = p.AddParameter(F32({4})).value();
  const ValueId b =
      p.Add(BroadcastInDimAttrs{Shape({8, 4}), {1}}, {row}).value();
  const ValueId y = p.Add(BinaryAttrs{BinaryOp::kAdd}, {x, b}).value();
  ASSERT_TRUE(p.SetOutputs({y}).ok());
  EXPECT_TRUE(WhyNotShardLocal(p).has_value());
}

}  // namespace
}  // namespace baton::compiler
