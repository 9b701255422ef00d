#include "baton/compiler/ir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

namespace baton::compiler {
namespace {

using ::testing::HasSubstr;

ValueType F32(Shape shape, MemoryKind kind = MemoryKind::kDevice) {
  return ValueType{std::move(shape), DType::kFloat32, kind};
}

TEST(OperandListTest, InlineAndHeap) {
  OperandList ops;
  for (ValueId i = 0; i < 10; ++i) {
    ops.push_back(i);
    ASSERT_EQ(ops.size(), i + 1);
    for (ValueId j = 0; j <= i; ++j) EXPECT_EQ(ops[j], j);
  }
  OperandList copy = ops;
  EXPECT_EQ(copy, ops);
  copy[7] = 42;
  EXPECT_EQ(copy[7], 42);
  EXPECT_EQ(ops[7], 7);
  EXPECT_FALSE(copy == ops);
  EXPECT_EQ((OperandList{1, 2}).ToVector(), (std::vector<ValueId>{1, 2}));

  // A move leaves the source empty and usable, inline or on the heap.
  OperandList moved = std::move(copy);
  EXPECT_EQ(moved.size(), 10);
  EXPECT_EQ(moved[7], 42);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move)
  copy.push_back(3);
  EXPECT_EQ(copy.ToVector(), (std::vector<ValueId>{3}));
  OperandList small{1, 2};
  OperandList small_moved;
  small_moved = std::move(small);
  EXPECT_EQ(small_moved, (OperandList{1, 2}));
}

TEST(ValueTypeTest, TextAndSizes) {
  ValueType t{Shape{2, 3}, DType::kBFloat16, MemoryKind::kPinnedHost};
  EXPECT_EQ(t.ToString(), "bf16[2,3]{pinned_host}");
  EXPECT_EQ(t.byte_size(), 12);
  EXPECT_EQ((ValueType{Shape{}, DType::kBool}).ToString(), "pred[]");
  EXPECT_EQ(TypeForMessage(t), "bfloat16[2,3]");
}

TEST(ProgramTest, BuildAndWalk) {
  Program p;
  const ValueId x = p.AddParameter(F32({4}, MemoryKind::kPinnedHost)).value();
  const ValueId y = p.AddParameter(F32({4})).value();
  auto lit = std::make_shared<const Literal>(Literal::Scalar(2.0f));
  const ValueId c = p.Add(ConstantAttrs{lit}, {}).value();
  const ValueId b = p.Add(BroadcastInDimAttrs{Shape{4}, {}}, {c}).value();
  const ValueId m = p.Add(BinaryAttrs{BinaryOp::kMul}, {y, b}).value();
  const ValueId s = p.Add(BinaryAttrs{BinaryOp::kAdd}, {x, m}).value();
  ASSERT_TRUE(p.SetOutputs({s, x, s}).ok());

  EXPECT_EQ(p.num_values(), 6);
  EXPECT_EQ(p.num_parameters(), 2);
  EXPECT_EQ(p.parameter(0), x);
  EXPECT_EQ(p.parameter(1), y);
  EXPECT_EQ(p.parameter_type(0), F32({4}, MemoryKind::kPinnedHost));
  EXPECT_EQ(p.instruction(c).kind(), OpKind::kConstant);
  EXPECT_EQ(p.instruction(c).attrs_as<ConstantAttrs>().literal, lit);
  EXPECT_EQ(p.instruction(x).attrs_as<ParameterAttrs>().index, 0);
  EXPECT_EQ(p.instruction(m).operands, (OperandList{y, b}));
  EXPECT_EQ(p.instruction(m).attrs_if<UnaryAttrs>(), nullptr);
  EXPECT_EQ(p.type(s), F32({4}));  // computed on the device
  EXPECT_EQ(p.outputs(), (std::vector<ValueId>{s, x, s}));
  EXPECT_EQ(p.output_types()[1], F32({4}, MemoryKind::kPinnedHost));
  EXPECT_TRUE(p.Verify().ok());

  // Every operand is defined before its user.
  for (ValueId id = 0; id < p.num_values(); ++id) {
    for (ValueId operand : p.instruction(id).operands) EXPECT_LT(operand, id);
  }

  // A finished program is a value: copies are independent and equal.
  const Program copy = p;
  EXPECT_EQ(copy.num_values(), p.num_values());
  EXPECT_TRUE(copy.Verify().ok());
}

TEST(ProgramTest, RejectsBadInstructionsAndLeavesProgramUnchanged) {
  Program p;
  const ValueId x = p.AddParameter(F32({2, 3})).value();
  const ValueId y = p.AddParameter(F32({3})).value();
  Result<ValueId> r = p.Add(BinaryAttrs{BinaryOp::kAdd}, {x, y});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "add: operand shapes (2, 3) and (3,) differ; broadcast one of them "
            "first");
  EXPECT_EQ(p.num_values(), 2);

  r = p.Add(UnaryAttrs{UnaryOp::kExp}, {5});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("exponential: operand 0 is %5, which is not defined "
                        "before this instruction"));
  r = p.Add(ParameterAttrs{5, F32({})}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("the next one is 2"));
  EXPECT_EQ(p.num_values(), 2);

  Status st = p.SetOutputs({x, 9});
  EXPECT_THAT(st.message(), HasSubstr("output 1 is %9"));
}

TEST(ProgramTest, ParametersMayFollowOtherInstructions) {
  Program p;
  const ValueId c = p.Add(IotaAttrs{Shape{3}, DType::kInt32, 0}, {}).value();
  const ValueId x = p.AddParameter(ValueType{Shape{3}, DType::kInt32}).value();
  EXPECT_EQ(p.parameter(0), x);
  EXPECT_EQ(p.Add(BinaryAttrs{BinaryOp::kAdd}, {c, x}).value(), 2);
  EXPECT_TRUE(p.Verify().ok());
}

}  // namespace
}  // namespace baton::compiler
