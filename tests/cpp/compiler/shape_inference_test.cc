#include "baton/compiler/shape_inference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace baton::compiler {
namespace {

using ::testing::HasSubstr;

ValueType T(DType dtype, Shape shape, MemoryKind kind = MemoryKind::kDevice) {
  return ValueType{std::move(shape), dtype, kind};
}
ValueType F32(Shape shape) { return T(DType::kFloat32, std::move(shape)); }
ValueType I32(Shape shape) { return T(DType::kInt32, std::move(shape)); }

Result<ValueType> Infer(const OpAttrs& attrs, std::vector<ValueType> ops) {
  return InferType(attrs, ops);
}

// The inferred type, failing the test on an error.
ValueType Ok(const OpAttrs& attrs, std::vector<ValueType> ops) {
  Result<ValueType> r = Infer(attrs, std::move(ops));
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? r.value() : ValueType{};
}

// The error message, failing the test if inference succeeded.
std::string Err(const OpAttrs& attrs, std::vector<ValueType> ops) {
  Result<ValueType> r = Infer(attrs, std::move(ops));
  EXPECT_FALSE(r.ok()) << "inferred " << r.value().ToString();
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  return r.status().message();
}

TEST(ShapeInferenceTest, Parameter) {
  ValueType t = T(DType::kBFloat16, {8}, MemoryKind::kPinnedHost);
  EXPECT_EQ(Ok(ParameterAttrs{0, t}, {}), t);  // keeps its own memory kind
  EXPECT_THAT(Err(ParameterAttrs{0, F32({2, -1})}, {}),
              HasSubstr("parameter: shape (2, -1) has a negative dimension"));
  EXPECT_THAT(Err(ParameterAttrs{0, t}, {F32({})}),
              HasSubstr("parameter: expects 0 operands, got 1"));
}

TEST(ShapeInferenceTest, Constant) {
  auto lit = std::make_shared<const Literal>(
      Literal::FromVector<int8_t>({1, 2, 3, 4, 5, 6}, Shape{2, 3}));
  EXPECT_EQ(Ok(ConstantAttrs{lit}, {}), T(DType::kInt8, {2, 3}));
  EXPECT_THAT(Err(ConstantAttrs{nullptr}, {}),
              HasSubstr("constant: has no literal"));
}

TEST(ShapeInferenceTest, Iota) {
  EXPECT_EQ(Ok(IotaAttrs{Shape{2, 3}, DType::kFloat16, 1}, {}),
            T(DType::kFloat16, {2, 3}));
  EXPECT_THAT(Err(IotaAttrs{Shape{2, 3}, DType::kInt32, 2}, {}),
              HasSubstr("iota: dimension 2 is out of range for shape (2, 3)"));
  EXPECT_THAT(Err(IotaAttrs{Shape{}, DType::kInt32, 0}, {}),
              HasSubstr("iota: dimension 0 is out of range for shape ()"));
  EXPECT_THAT(Err(IotaAttrs{Shape{3}, DType::kBool, 0}, {}),
              HasSubstr("iota: dtype bool is not supported"));
}

TEST(ShapeInferenceTest, ConvertAndTransfer) {
  EXPECT_EQ(Ok(ConvertAttrs{DType::kUInt8},
               {T(DType::kFloat32, {4}, MemoryKind::kPinnedHost)}),
            T(DType::kUInt8, {4}));  // computed values are on the device
  EXPECT_THAT(Err(ConvertAttrs{DType::kUInt8}, {}),
              HasSubstr("convert: expects 1 operand, got 0"));
  EXPECT_EQ(Ok(TransferAttrs{MemoryKind::kUnpinnedHost}, {I32({2})}),
            T(DType::kInt32, {2}, MemoryKind::kUnpinnedHost));
  EXPECT_EQ(Ok(TransferAttrs{MemoryKind::kDevice},
               {T(DType::kInt32, {2}, MemoryKind::kPinnedHost)}),
            I32({2}));
  EXPECT_THAT(Err(TransferAttrs{MemoryKind::kDevice}, {I32({}), I32({})}),
              HasSubstr("transfer: expects 1 operand, got 2"));
}

TEST(ShapeInferenceTest, Unary) {
  EXPECT_EQ(Ok(UnaryAttrs{UnaryOp::kExp}, {T(DType::kBFloat16, {3})}),
            T(DType::kBFloat16, {3}));
  EXPECT_EQ(Ok(UnaryAttrs{UnaryOp::kNeg}, {I32({3})}), I32({3}));
  EXPECT_EQ(Ok(UnaryAttrs{UnaryOp::kNot}, {T(DType::kBool, {})}),
            T(DType::kBool, {}));
  EXPECT_EQ(Ok(UnaryAttrs{UnaryOp::kNot}, {T(DType::kUInt8, {2})}),
            T(DType::kUInt8, {2}));
  EXPECT_THAT(Err(UnaryAttrs{UnaryOp::kExp}, {I32({4})}),
              HasSubstr("exponential: needs a floating-point operand, got "
                        "int32[4]; convert it first"));
  EXPECT_THAT(Err(UnaryAttrs{UnaryOp::kSqrt}, {T(DType::kBool, {4})}),
              HasSubstr("sqrt: needs a floating-point operand"));
  EXPECT_THAT(
      Err(UnaryAttrs{UnaryOp::kNot}, {F32({4})}),
      HasSubstr("not: needs a bool or integer operand, got float32[4]"));
  EXPECT_THAT(Err(UnaryAttrs{UnaryOp::kNeg}, {T(DType::kBool, {4})}),
              HasSubstr("negate: is not defined for bool operands"));
}

TEST(ShapeInferenceTest, Binary) {
  EXPECT_EQ(Ok(BinaryAttrs{BinaryOp::kAdd}, {F32({2, 3}), F32({2, 3})}),
            F32({2, 3}));
  EXPECT_EQ(Ok(BinaryAttrs{BinaryOp::kAnd},
               {T(DType::kBool, {}), T(DType::kBool, {})}),
            T(DType::kBool, {}));
  EXPECT_EQ(Ok(BinaryAttrs{BinaryOp::kMax},
               {T(DType::kBool, {0}), T(DType::kBool, {0})}),
            T(DType::kBool, {0}));
  EXPECT_EQ(Err(BinaryAttrs{BinaryOp::kAdd}, {F32({2, 3}), F32({3})}),
            "add: operand shapes (2, 3) and (3,) differ; broadcast one of "
            "them first");
  EXPECT_EQ(Err(BinaryAttrs{BinaryOp::kMul}, {F32({3}), I32({3})}),
            "multiply: operand dtypes float32 and int32 differ; convert one "
            "of them first");
  EXPECT_THAT(Err(BinaryAttrs{BinaryOp::kOr}, {F32({3}), F32({3})}),
              HasSubstr("or: needs bool or integer operands"));
  EXPECT_THAT(Err(BinaryAttrs{BinaryOp::kSub},
                  {T(DType::kBool, {3}), T(DType::kBool, {3})}),
              HasSubstr("subtract: is not defined for bool operands"));
  EXPECT_THAT(Err(BinaryAttrs{BinaryOp::kPow},
                  {T(DType::kBool, {3}), T(DType::kBool, {3})}),
              HasSubstr("power: is not defined for bool"));
  EXPECT_THAT(Err(BinaryAttrs{BinaryOp::kAdd}, {F32({3})}),
              HasSubstr("add: expects 2 operands, got 1"));
}

TEST(ShapeInferenceTest, NewElementwiseOpsCheckTheirDTypes) {
  for (UnaryOp op : {UnaryOp::kLog1p, UnaryOp::kExpm1, UnaryOp::kTan,
                     UnaryOp::kAtan}) {
    SCOPED_TRACE(std::string(op_name(op)));
    EXPECT_EQ(Ok(UnaryAttrs{op}, {T(DType::kFloat16, {2})}),
              T(DType::kFloat16, {2}));
    EXPECT_THAT(Err(UnaryAttrs{op}, {I32({2})}),
                HasSubstr("needs a floating-point operand"));
    EXPECT_THAT(Err(UnaryAttrs{op}, {T(DType::kBool, {2})}),
                HasSubstr("needs a floating-point operand"));
  }
  EXPECT_EQ(Ok(BinaryAttrs{BinaryOp::kAtan2}, {F32({2}), F32({2})}),
            F32({2}));
  EXPECT_THAT(Err(BinaryAttrs{BinaryOp::kAtan2}, {I32({2}), I32({2})}),
              HasSubstr("atan2: needs floating-point operands"));
  EXPECT_EQ(Ok(BinaryAttrs{BinaryOp::kXor},
               {T(DType::kBool, {2}), T(DType::kBool, {2})}),
            T(DType::kBool, {2}));
  EXPECT_EQ(Ok(BinaryAttrs{BinaryOp::kXor}, {I32({2}), I32({2})}), I32({2}));
  EXPECT_THAT(Err(BinaryAttrs{BinaryOp::kXor}, {F32({2}), F32({2})}),
              HasSubstr("xor: needs bool or integer operands"));
  for (BinaryOp op : {BinaryOp::kShiftLeft, BinaryOp::kShiftRightArithmetic,
                      BinaryOp::kShiftRightLogical}) {
    SCOPED_TRACE(std::string(op_name(op)));
    const ValueType u8 = T(DType::kUInt8, {2});
    EXPECT_EQ(Ok(BinaryAttrs{op}, {u8, u8}), u8);
    EXPECT_THAT(Err(BinaryAttrs{op}, {F32({2}), F32({2})}),
                HasSubstr("needs integer operands, got float32[2]"));
    EXPECT_THAT(
        Err(BinaryAttrs{op}, {T(DType::kBool, {2}), T(DType::kBool, {2})}),
        HasSubstr("needs integer operands, got bool[2]"));
  }
}

TEST(ShapeInferenceTest, Compare) {
  EXPECT_EQ(Ok(CompareAttrs{CompareOp::kLt}, {F32({4}), F32({4})}),
            T(DType::kBool, {4}));
  EXPECT_THAT(Err(CompareAttrs{CompareOp::kLt}, {F32({4}), F32({5})}),
              HasSubstr("compare LT: operand shapes (4,) and (5,) differ"));
  EXPECT_THAT(Err(CompareAttrs{CompareOp::kEq}, {F32({4}), I32({4})}),
              HasSubstr("compare EQ: operand dtypes float32 and int32 differ"));
}

TEST(ShapeInferenceTest, Select) {
  const ValueType pred = T(DType::kBool, {2});
  EXPECT_EQ(Ok(SelectAttrs{}, {pred, I32({2}), I32({2})}), I32({2}));
  EXPECT_THAT(Err(SelectAttrs{}, {F32({2}), I32({2}), I32({2})}),
              HasSubstr("select: the predicate must be bool, got float32[2]"));
  EXPECT_THAT(Err(SelectAttrs{}, {pred, I32({2}), I32({3})}),
              HasSubstr("select: predicate, on_true and on_false shapes (2,), "
                        "(2,) and (3,) differ; broadcast them first"));
  EXPECT_THAT(
      Err(SelectAttrs{}, {pred, I32({2}), F32({2})}),
      HasSubstr("on_true and on_false dtypes int32 and float32 differ"));
}

TEST(ShapeInferenceTest, BroadcastInDim) {
  EXPECT_EQ(Ok(BroadcastInDimAttrs{Shape{4, 3}, {1}}, {F32({3})}), F32({4, 3}));
  EXPECT_EQ(Ok(BroadcastInDimAttrs{Shape{4, 3}, {0, 1}}, {F32({1, 3})}),
            F32({4, 3}));
  EXPECT_EQ(Ok(BroadcastInDimAttrs{Shape{2, 0}, {}}, {F32({})}), F32({2, 0}));
  // Dimensions may be permuted, as in StableHLO.
  EXPECT_EQ(Ok(BroadcastInDimAttrs{Shape{3, 2}, {1, 0}}, {F32({2, 3})}),
            F32({3, 2}));
  EXPECT_THAT(Err(BroadcastInDimAttrs{Shape{4, 3}, {0}}, {F32({3})}),
              HasSubstr("broadcast_in_dim: operand float32[3] dimension 0 has "
                        "size 3, which is neither 1 nor the size 4 of result "
                        "dimension 0"));
  EXPECT_THAT(Err(BroadcastInDimAttrs{Shape{4, 3}, {}}, {F32({3})}),
              HasSubstr("broadcast_dimensions [] has 0 entries but the "
                        "operand float32[3] has rank 1"));
  EXPECT_THAT(Err(BroadcastInDimAttrs{Shape{4, 3}, {2}}, {F32({3})}),
              HasSubstr("2 is out of range for result shape (4, 3)"));
  EXPECT_THAT(Err(BroadcastInDimAttrs{Shape{3, 3}, {1, 1}}, {F32({3, 3})}),
              HasSubstr("repeats dimension 1"));
}

TEST(ShapeInferenceTest, Reshape) {
  EXPECT_EQ(Ok(ReshapeAttrs{Shape{3, 2}}, {F32({2, 3})}), F32({3, 2}));
  EXPECT_EQ(Ok(ReshapeAttrs{Shape{}}, {F32({1, 1})}), F32({}));
  EXPECT_EQ(Err(ReshapeAttrs{Shape{4}}, {F32({2, 3})}),
            "reshape: cannot reshape float32[2,3] (6 elements) to (4,) (4 "
            "elements)");
}

TEST(ShapeInferenceTest, Transpose) {
  EXPECT_EQ(Ok(TransposeAttrs{{1, 2, 0}}, {F32({2, 3, 4})}), F32({3, 4, 2}));
  EXPECT_THAT(Err(TransposeAttrs{{0, 0}}, {F32({2, 3})}),
              HasSubstr("transpose: permutation [0, 0] repeats dimension 0"));
  EXPECT_THAT(Err(TransposeAttrs{{0}}, {F32({2, 3})}),
              HasSubstr("permutation [0] has 1 entries but the operand "
                        "float32[2,3] has rank 2"));
}

TEST(ShapeInferenceTest, Slice) {
  EXPECT_EQ(Ok(SliceAttrs{{1, 0}, {5, 3}, {2, 1}}, {F32({6, 3})}), F32({2, 3}));
  EXPECT_EQ(Ok(SliceAttrs{{0}, {7}, {3}}, {F32({7})}), F32({3}));
  EXPECT_EQ(Ok(SliceAttrs{{2}, {2}, {1}}, {F32({7})}), F32({0}));
  EXPECT_THAT(Err(SliceAttrs{{1}, {5}, {1}}, {F32({3})}),
              HasSubstr("slice: dimension 0 of float32[3]: start 1, limit 5, "
                        "stride 1 do not fit"));
  EXPECT_THAT(Err(SliceAttrs{{0}, {3}, {0}}, {F32({3})}),
              HasSubstr("stride >= 1"));
  EXPECT_THAT(Err(SliceAttrs{{0}, {3}, {1, 1}}, {F32({3})}),
              HasSubstr("stride [1, 1] has 2 entries"));
}

TEST(ShapeInferenceTest, DynamicSlice) {
  EXPECT_EQ(Ok(DynamicSliceAttrs{{2, 1}},
               {F32({4, 3}), I32({}), T(DType::kUInt8, {})}),
            F32({2, 1}));
  EXPECT_THAT(Err(DynamicSliceAttrs{{2, 1}}, {F32({4, 3}), I32({})}),
              HasSubstr("dynamic_slice: expects the operand and 2 start "
                        "indices (one per dimension of float32[4,3]), got 2 "
                        "operands"));
  EXPECT_THAT(Err(DynamicSliceAttrs{{2, 1}}, {F32({4, 3}), I32({}), F32({})}),
              HasSubstr("start index 1 (operand 2) must be an integer scalar, "
                        "got float32[]"));
  EXPECT_THAT(Err(DynamicSliceAttrs{{2, 1}}, {F32({4, 3}), I32({}), I32({1})}),
              HasSubstr("must be an integer scalar, got int32[1]"));
  EXPECT_THAT(Err(DynamicSliceAttrs{{2, 4}}, {F32({4, 3}), I32({}), I32({})}),
              HasSubstr("size 4 does not fit dimension 1 of float32[4,3]"));
}

TEST(ShapeInferenceTest, DynamicUpdateSlice) {
  EXPECT_EQ(Ok(DynamicUpdateSliceAttrs{},
               {F32({4, 3}), F32({2, 3}), I32({}), I32({})}),
            F32({4, 3}));
  EXPECT_THAT(Err(DynamicUpdateSliceAttrs{},
                  {F32({4, 3}), F32({5, 3}), I32({}), I32({})}),
              HasSubstr("dynamic_update_slice: update float32[5,3] does not "
                        "fit operand float32[4,3]"));
  EXPECT_THAT(Err(DynamicUpdateSliceAttrs{},
                  {F32({4, 3}), I32({2, 3}), I32({}), I32({})}),
              HasSubstr("update dtype int32 differs from operand dtype "
                        "float32"));
  EXPECT_THAT(
      Err(DynamicUpdateSliceAttrs{}, {F32({4, 3}), F32({2}), I32({}), I32({})}),
      HasSubstr("differ in rank"));
  EXPECT_THAT(Err(DynamicUpdateSliceAttrs{}, {F32({4, 3}), F32({2, 3})}),
              HasSubstr("expects the operand, the update and 2 start indices"));
}

TEST(ShapeInferenceTest, Concatenate) {
  EXPECT_EQ(Ok(ConcatenateAttrs{1}, {F32({2, 3}), F32({2, 0}), F32({2, 1})}),
            F32({2, 4}));
  EXPECT_THAT(Err(ConcatenateAttrs{0}, {}),
              HasSubstr("concatenate: needs at least one operand"));
  EXPECT_THAT(Err(ConcatenateAttrs{0}, {F32({2, 3}), F32({2, 4})}),
              HasSubstr("operand 1 float32[2,4] and operand 0 float32[2,3] "
                        "must have equal shapes except in dimension 0"));
  EXPECT_THAT(Err(ConcatenateAttrs{0}, {F32({2}), I32({2})}),
              HasSubstr("differ in dtype"));
  EXPECT_THAT(Err(ConcatenateAttrs{1}, {F32({2})}),
              HasSubstr("dimension 1 is out of range"));
  EXPECT_THAT(Err(ConcatenateAttrs{0}, {F32({})}),
              HasSubstr("cannot concatenate scalars"));
}

TEST(ShapeInferenceTest, Pad) {
  EXPECT_EQ(Ok(PadAttrs{{1, -1}, {2, 0}, {0, 1}}, {F32({2, 3}), F32({})}),
            F32({5, 4}));
  EXPECT_EQ(Ok(PadAttrs{{0}, {0}, {3}}, {F32({0}), F32({})}), F32({0}));
  EXPECT_THAT(Err(PadAttrs{{-3}, {-1}, {0}}, {F32({3}), F32({})}),
              HasSubstr("pad: dimension 0 of float32[3] would have negative "
                        "size -1 (low -3, high -1, interior 0)"));
  EXPECT_THAT(Err(PadAttrs{{0}, {0}, {-1}}, {F32({3}), F32({})}),
              HasSubstr("interior [-1] has a negative entry"));
  EXPECT_THAT(Err(PadAttrs{{0}, {0}, {0}}, {F32({3}), I32({})}),
              HasSubstr("the padding value must be a scalar of the operand's "
                        "dtype float32, got int32[]"));
  EXPECT_THAT(Err(PadAttrs{{0}, {0}, {0}}, {F32({3}), F32({1})}),
              HasSubstr("got float32[1]"));
}

TEST(ShapeInferenceTest, Gather) {
  EXPECT_EQ(Ok(GatherAttrs{1}, {F32({4, 5, 6}), I32({2, 3})}),
            F32({4, 2, 3, 6}));
  EXPECT_EQ(Ok(GatherAttrs{0}, {F32({4}), I32({})}), F32({}));
  EXPECT_EQ(Ok(GatherAttrs{0}, {F32({0, 2}), I32({0})}), F32({0, 2}));
  EXPECT_THAT(Err(GatherAttrs{0}, {F32({4}), F32({2})}),
              HasSubstr("gather: indices must be integers, got float32[2]"));
  EXPECT_THAT(Err(GatherAttrs{1}, {F32({4}), I32({2})}),
              HasSubstr("gather: axis 1 is out of range for operand "
                        "float32[4]"));
  EXPECT_THAT(Err(GatherAttrs{0}, {F32({}), I32({2})}),
              HasSubstr("cannot index into the scalar operand"));
  EXPECT_THAT(Err(GatherAttrs{0}, {F32({0, 2}), I32({1})}),
              HasSubstr("cannot take from axis 0 of float32[0,2], which is "
                        "empty"));
}

TEST(ShapeInferenceTest, Scatter) {
  EXPECT_EQ(Ok(ScatterAttrs{0, ScatterMode::kAdd},
               {F32({4, 3}), I32({2}), F32({2, 3})}),
            F32({4, 3}));
  EXPECT_EQ(Err(ScatterAttrs{0, ScatterMode::kAdd},
                {F32({4, 3}), I32({2}), F32({3})}),
            "scatter add: updates shape (3,) must be (2, 3), the shape gather "
            "gives for operand float32[4,3], indices int32[2] and axis 0");
  EXPECT_THAT(Err(ScatterAttrs{0, ScatterMode::kSet},
                  {F32({4, 3}), I32({2}), I32({2, 3})}),
              HasSubstr("scatter set: updates dtype int32 differs from "
                        "operand dtype float32"));
  EXPECT_THAT(Err(ScatterAttrs{0, ScatterMode::kMax},
                  {F32({4, 3}), F32({2}), F32({2, 3})}),
              HasSubstr("scatter max: indices must be integers"));
  EXPECT_THAT(Err(ScatterAttrs{0, ScatterMode::kMax}, {F32({4, 3}), I32({2})}),
              HasSubstr("expects 3 operands, got 2"));
}

TEST(ShapeInferenceTest, Reduce) {
  EXPECT_EQ(Ok(ReduceAttrs{ReduceOp::kSum, {0, 2}}, {F32({2, 3, 4})}),
            F32({3}));
  EXPECT_EQ(Ok(ReduceAttrs{ReduceOp::kMax, {}}, {I32({2})}), I32({2}));
  EXPECT_EQ(Ok(ReduceAttrs{ReduceOp::kProd, {0}}, {I32({0})}), I32({}));
  EXPECT_THAT(Err(ReduceAttrs{ReduceOp::kSum, {2}}, {F32({2, 3})}),
              HasSubstr("reduce sum: axes [2]: 2 is out of range for operand "
                        "float32[2,3] of rank 2"));
  EXPECT_THAT(Err(ReduceAttrs{ReduceOp::kMin, {1, 1}}, {F32({2, 3})}),
              HasSubstr("reduce min: axes [1, 1] repeats dimension 1"));
}

TEST(ShapeInferenceTest, DotGeneral) {
  // Plain matmul.
  EXPECT_EQ(Ok(DotGeneralAttrs{{}, {}, {1}, {0}}, {F32({2, 3}), F32({3, 5})}),
            F32({2, 5}));
  // Batched: batch..., lhs free..., rhs free...
  EXPECT_EQ(
      Ok(DotGeneralAttrs{{0}, {0}, {2}, {1}}, {F32({7, 2, 3}), F32({7, 3, 5})}),
      F32({7, 2, 5}));
  // Outer product and a full contraction.
  EXPECT_EQ(Ok(DotGeneralAttrs{{}, {}, {}, {}}, {I32({2}), I32({3})}),
            I32({2, 3}));
  EXPECT_EQ(Ok(DotGeneralAttrs{{}, {}, {0}, {0}}, {I32({3}), I32({3})}),
            I32({}));
  EXPECT_THAT(
      Err(DotGeneralAttrs{{}, {}, {1}, {0}}, {F32({2, 3}), F32({4, 5})}),
      HasSubstr("dot_general: contracting dimension 1 of lhs has size "
                "3 but contracting dimension 0 of rhs has size 4 (lhs "
                "float32[2,3], rhs float32[4,5])"));
  EXPECT_THAT(Err(DotGeneralAttrs{{0}, {0}, {2}, {1}},
                  {F32({7, 2, 3}), F32({6, 3, 5})}),
              HasSubstr("batch dimension 0 of lhs has size 7"));
  EXPECT_THAT(
      Err(DotGeneralAttrs{{}, {}, {1}, {0}}, {F32({2, 3}), I32({3, 5})}),
      HasSubstr("operand dtypes differ"));
  EXPECT_THAT(Err(DotGeneralAttrs{{}, {}, {1}, {0}},
                  {T(DType::kBool, {2, 3}), T(DType::kBool, {3, 5})}),
              HasSubstr("needs numeric operands, got bool"));
  EXPECT_THAT(Err(DotGeneralAttrs{{}, {}, {1}, {}}, {F32({2, 3}), F32({3, 5})}),
              HasSubstr("as many batch dimensions"));
  EXPECT_THAT(
      Err(DotGeneralAttrs{{}, {}, {2}, {0}}, {F32({2, 3}), F32({3, 5})}),
      HasSubstr("2 is out of range for lhs float32[2,3] of rank 2"));
  EXPECT_THAT(
      Err(DotGeneralAttrs{{1}, {0}, {1}, {1}}, {F32({2, 3}), F32({3, 3})}),
      HasSubstr("lhs batch + contracting dimensions [1, 1] repeats"));
}

}  // namespace
}  // namespace baton::compiler
