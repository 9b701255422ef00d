#include "baton/compiler/program_printer.h"

#include <gtest/gtest.h>

#include <memory>

namespace baton::compiler {
namespace {

ValueType T(DType dtype, Shape shape, MemoryKind kind = MemoryKind::kDevice) {
  return ValueType{std::move(shape), dtype, kind};
}

std::shared_ptr<const Literal> Share(Literal lit) {
  return std::make_shared<const Literal>(std::move(lit));
}

TEST(ProgramPrinterTest, ElementwiseProgram) {
  Program p;
  const ValueId x =
      p.AddParameter(T(DType::kFloat32, {8}, MemoryKind::kPinnedHost)).value();
  const ValueId y = p.AddParameter(T(DType::kFloat32, {8})).value();
  const ValueId c =
      p.Add(ConstantAttrs{Share(Literal::Scalar(2.0f))}, {}).value();
  const ValueId b = p.Add(BroadcastInDimAttrs{Shape{8}, {}}, {c}).value();
  const ValueId m = p.Add(BinaryAttrs{BinaryOp::kMul}, {y, b}).value();
  const ValueId s = p.Add(BinaryAttrs{BinaryOp::kAdd}, {x, m}).value();
  const ValueId e = p.Add(UnaryAttrs{UnaryOp::kExp}, {s}).value();
  const ValueId t = p.Add(TransferAttrs{MemoryKind::kPinnedHost}, {e}).value();
  ASSERT_TRUE(p.SetOutputs({t, x}).ok());
  EXPECT_EQ(ProgramToText(p),
            "func(%0: f32[8]{pinned_host}, %1: f32[8]) -> (%7, %0) {\n"
            "  %2 = constant(2) : f32[]\n"
            "  %3 = broadcast_in_dim(%2), dims=[] : f32[8]\n"
            "  %4 = multiply(%1, %3) : f32[8]\n"
            "  %5 = add(%0, %4) : f32[8]\n"
            "  %6 = exponential(%5) : f32[8]\n"
            "  %7 = transfer(%6), memory_kind=pinned_host : "
            "f32[8]{pinned_host}\n"
            "}\n");
  EXPECT_EQ(InstructionToText(p, x), "%0 = parameter(0) : f32[8]{pinned_host}");
}

TEST(ProgramPrinterTest, ConstantsSmallAndLarge) {
  Program p;
  p.Add(ConstantAttrs{Share(
            Literal::FromVector<int32_t>({1, 2, 3, 4}, Shape{2, 2}))},
        {})
      .value();
  p.Add(ConstantAttrs{Share(Literal(Shape{4096}, DType::kFloat32))}, {})
      .value();
  p.Add(ConstantAttrs{Share(Literal::FromVector<bool>({true}))}, {}).value();
  EXPECT_EQ(ProgramToText(p),
            "func() -> () {\n"
            "  %0 = constant({{1, 2}, {3, 4}}) : s32[2,2]\n"
            "  %1 = constant(<f32[4096] 16384 bytes>) : f32[4096]\n"
            "  %2 = constant({true}) : pred[1]\n"
            "}\n");
}

TEST(ProgramPrinterTest, EveryOpHasReadableAttributes) {
  Program p;
  const ValueId x = p.AddParameter(T(DType::kFloat32, {2, 3})).value();
  const ValueId i = p.AddParameter(T(DType::kInt32, {})).value();
  const ValueId idx = p.AddParameter(T(DType::kInt32, {2})).value();
  auto add = [&](OpAttrs attrs, OperandList ops) {
    const ValueId id = p.Add(std::move(attrs), std::move(ops)).value();
    return InstructionToText(p, id);
  };
  EXPECT_EQ(add(IotaAttrs{Shape{4}, DType::kInt32, 0}, {}),
            "%3 = iota(), dimension=0 : s32[4]");
  EXPECT_EQ(add(ConvertAttrs{DType::kBFloat16}, {x}),
            "%4 = convert(%0) : bf16[2,3]");
  EXPECT_EQ(add(CompareAttrs{CompareOp::kLt}, {x, x}),
            "%5 = compare(%0, %0), direction=LT : pred[2,3]");
  EXPECT_EQ(add(SelectAttrs{}, {5, x, x}),
            "%6 = select(%5, %0, %0) : f32[2,3]");
  EXPECT_EQ(add(ReshapeAttrs{Shape{3, 2}}, {x}), "%7 = reshape(%0) : f32[3,2]");
  EXPECT_EQ(add(TransposeAttrs{{1, 0}}, {x}),
            "%8 = transpose(%0), permutation=[1,0] : f32[3,2]");
  EXPECT_EQ(
      add(SliceAttrs{{0, 1}, {2, 3}, {1, 2}}, {x}),
      "%9 = slice(%0), start=[0,1], limit=[2,3], stride=[1,2] : f32[2,1]");
  EXPECT_EQ(add(DynamicSliceAttrs{{1, 2}}, {x, i, i}),
            "%10 = dynamic_slice(%0, %1, %1), sizes=[1,2] : f32[1,2]");
  EXPECT_EQ(add(DynamicUpdateSliceAttrs{}, {x, 10, i, i}),
            "%11 = dynamic_update_slice(%0, %10, %1, %1) : f32[2,3]");
  EXPECT_EQ(add(ConcatenateAttrs{0}, {x, x, x, x, x}),
            "%12 = concatenate(%0, %0, %0, %0, %0), dimension=0 : f32[10,3]");
  const ValueId zero =
      p.Add(ConstantAttrs{Share(Literal::Scalar(0.0f))}, {}).value();
  EXPECT_EQ(add(PadAttrs{{1, 0}, {-1, 0}, {0, 1}}, {x, zero}),
            "%14 = pad(%0, %13), low=[1,0], high=[-1,0], interior=[0,1] : "
            "f32[2,5]");
  EXPECT_EQ(add(GatherAttrs{1}, {x, idx}),
            "%15 = gather(%0, %2), axis=1 : f32[2,2]");
  EXPECT_EQ(add(ScatterAttrs{1, ScatterMode::kAdd}, {x, idx, 15}),
            "%16 = scatter(%0, %2, %15), axis=1, mode=add : f32[2,3]");
  EXPECT_EQ(add(ReduceAttrs{ReduceOp::kMax, {0, 1}}, {x}),
            "%17 = reduce(%0), op=max, axes=[0,1] : f32[]");
  EXPECT_EQ(add(DotGeneralAttrs{{}, {}, {1}, {1}}, {x, x}),
            "%18 = dot_general(%0, %0), batching_dims=[]x[], "
            "contracting_dims=[1]x[1] : f32[2,2]");
  EXPECT_EQ(add(UnaryAttrs{UnaryOp::kNeg}, {x}), "%19 = negate(%0) : f32[2,3]");
}

}  // namespace
}  // namespace baton::compiler
