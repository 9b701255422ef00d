// Reference interpreter: reduce and dot_general.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "interpreter_test_util.h"

namespace baton::compiler {
namespace {

using test_util::D;
using test_util::Iota;
using test_util::kAllDTypes;
using test_util::L;
using test_util::RunOp;

Literal Reduce(ReduceOp op, std::vector<int64_t> axes, const Literal& x) {
  return RunOp(ReduceAttrs{op, std::move(axes)}, {x});
}
Literal Dot(DotGeneralAttrs dims, const Literal& a, const Literal& b) {
  return RunOp(dims, {a, b});
}
// Plain matrix product dimensions.
const DotGeneralAttrs kMatmul{{}, {}, {1}, {0}};

TEST(InterpreterReduceTest, SeveralAxes) {
  // sum over i, k of x[i, j, k] = 12 i + 4 j + k is 60 + 32 j.
  EXPECT_EQ(Reduce(ReduceOp::kSum, {0, 2}, Iota(DType::kFloat32, {2, 3, 4})),
            L<float>({60, 92, 124}));
  EXPECT_EQ(Reduce(ReduceOp::kSum, {2, 0}, Iota(DType::kInt64, {2, 3, 4})),
            L<int64_t>({60, 92, 124}));
  const Literal x = L<int32_t>({1, 5, 2, -1, -3, -2}, Shape{2, 3});
  EXPECT_EQ(Reduce(ReduceOp::kMax, {1}, x), L<int32_t>({5, -1}));
  EXPECT_EQ(Reduce(ReduceOp::kMin, {1}, x), L<int32_t>({1, -3}));
  EXPECT_EQ(Reduce(ReduceOp::kMin, {0}, x), L<int32_t>({-1, -3, -2}));
  EXPECT_EQ(Reduce(ReduceOp::kProd, {0, 1}, x), Literal::Scalar<int32_t>(-60));
  EXPECT_EQ(Reduce(ReduceOp::kSum, {}, x), x);
  EXPECT_EQ(Reduce(ReduceOp::kSum, {}, Literal::Scalar(2.5)),
            Literal::Scalar(2.5));
}

TEST(InterpreterReduceTest, EmptyReductionsGiveTheIdentity) {
  const Literal f = Literal(Shape{0, 3}, DType::kFloat32);
  EXPECT_EQ(Reduce(ReduceOp::kSum, {0}, f), L<float>({0, 0, 0}));
  EXPECT_EQ(Reduce(ReduceOp::kProd, {0}, f), L<float>({1, 1, 1}));
  EXPECT_EQ(Reduce(ReduceOp::kMax, {0, 1}, f), Literal::Scalar(-INFINITY));
  EXPECT_EQ(Reduce(ReduceOp::kMin, {0}, Literal(Shape{0}, DType::kInt32)),
            Literal::Scalar<int32_t>(INT32_MAX));
  EXPECT_EQ(Reduce(ReduceOp::kMax, {0}, Literal(Shape{0}, DType::kUInt8)),
            Literal::Scalar<uint8_t>(0));
  EXPECT_EQ(Reduce(ReduceOp::kSum, {1}, f), Literal(Shape{0}, DType::kFloat32));
}

TEST(InterpreterReduceTest, AccumulatesInTheComputeType) {
  // float16 accumulates in float: 2048 + 1 + 1 = 2050, which float16 holds.
  // (Rounding after each add would give 2048.)
  EXPECT_EQ(Reduce(ReduceOp::kSum, {0}, D(DType::kFloat16, {3}, {2048, 1, 1})),
            D(DType::kFloat16, {}, {2050}));
  EXPECT_EQ(Reduce(ReduceOp::kSum, {0}, D(DType::kBFloat16, {3}, {256, 1, 1})),
            D(DType::kBFloat16, {}, {258}));
  // Integers accumulate in their own type and wrap.
  EXPECT_EQ(Reduce(ReduceOp::kSum, {0}, L<int8_t>({100, 100})),
            Literal::Scalar<int8_t>(-56));
  EXPECT_EQ(Reduce(ReduceOp::kProd, {0}, L<uint8_t>({16, 16, 3})),
            Literal::Scalar<uint8_t>(0));
  // bool: sum is "any", prod and min are "all".
  const Literal b = L<bool>({true, false, false, false}, Shape{2, 2});
  EXPECT_EQ(Reduce(ReduceOp::kSum, {1}, b), L<bool>({true, false}));
  EXPECT_EQ(Reduce(ReduceOp::kMin, {0}, b), L<bool>({false, false}));
  EXPECT_EQ(Reduce(ReduceOp::kMax, {0}, b), L<bool>({true, false}));
  // NaN propagates through max.
  EXPECT_TRUE(std::isnan(
      Reduce(ReduceOp::kMax, {0}, L<float>({1, NAN, 2})).Get<float>(0)));
  EXPECT_EQ(Reduce(ReduceOp::kSum, {0}, L<double>({0.1, 0.2, 0.3})),
            Literal::Scalar(0.1 + 0.2 + 0.3));  // in order, left to right
}

TEST(InterpreterReduceTest, EveryDType) {
  for (DType dt : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dt));
    const Literal x = D(dt, {2, 2}, {1, 0, 1, 1});
    EXPECT_EQ(Reduce(ReduceOp::kMax, {1}, x), D(dt, {2}, {1, 1}));
    EXPECT_EQ(Reduce(ReduceOp::kMin, {1}, x), D(dt, {2}, {0, 1}));
    EXPECT_EQ(Reduce(ReduceOp::kProd, {0}, x), D(dt, {2}, {1, 0}));
    if (dt != DType::kBool) {
      EXPECT_EQ(Reduce(ReduceOp::kSum, {0, 1}, x), D(dt, {}, {3}));
    }
  }
}

TEST(InterpreterDotGeneralTest, Matmul) {
  EXPECT_EQ(Dot(kMatmul, L<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3}),
                L<float>({7, 8, 9, 10, 11, 12}, Shape{3, 2})),
            L<float>({58, 64, 139, 154}, Shape{2, 2}));
}

TEST(InterpreterDotGeneralTest, Batched) {
  const Literal a = L<float>({1, 2, 3, 4, 1, 0, 0, 1}, Shape{2, 2, 2});
  const Literal b = L<float>({5, 6, 7, 8, 2, 3, 4, 5}, Shape{2, 2, 2});
  EXPECT_EQ(Dot(DotGeneralAttrs{{0}, {0}, {2}, {1}}, a, b),
            L<float>({19, 22, 43, 50, 2, 3, 4, 5}, Shape{2, 2, 2}));
  // Batch dimension in the middle of lhs and first in rhs:
  // out[b] = sum_k lhs[k, b] * rhs[b, k].
  EXPECT_EQ(Dot(DotGeneralAttrs{{1}, {0}, {0}, {1}},
                L<int32_t>({1, 2, 3, 4, 5, 6}, Shape{3, 2}),
                L<int32_t>({1, 1, 1, 2, 2, 2}, Shape{2, 3})),
            L<int32_t>({9, 24}));
  // Free dimensions come out as batch, lhs free, rhs free:
  // lhs (b=2, m=1, k=2), rhs (k=2, b=2, n=1) -> (2, 1, 1).
  EXPECT_EQ(Dot(DotGeneralAttrs{{0}, {1}, {2}, {0}},
                L<int32_t>({1, 2, 3, 4}, Shape{2, 1, 2}),
                L<int32_t>({1, 10, 2, 20}, Shape{2, 2, 1})),
            L<int32_t>({5, 110}, Shape{2, 1, 1}));
}

TEST(InterpreterDotGeneralTest, OuterProductVectorDotAndEmpty) {
  EXPECT_EQ(Dot(DotGeneralAttrs{}, L<int32_t>({1, 2}), L<int32_t>({3, 4, 5})),
            L<int32_t>({3, 4, 5, 6, 8, 10}, Shape{2, 3}));
  EXPECT_EQ(Dot(DotGeneralAttrs{{}, {}, {0}, {0}}, L<double>({1, 2, 3}),
                L<double>({4, 5, 6})),
            Literal::Scalar(32.0));
  // Contracting over nothing gives zeros.
  EXPECT_EQ(Dot(kMatmul, Literal(Shape{2, 0}, DType::kFloat32),
                Literal(Shape{0, 3}, DType::kFloat32)),
            Literal(Shape{2, 3}, DType::kFloat32));
  EXPECT_EQ(Dot(kMatmul, Literal(Shape{0, 2}, DType::kFloat32),
                Literal(Shape{2, 3}, DType::kFloat32)),
            Literal(Shape{0, 3}, DType::kFloat32));
}

TEST(InterpreterDotGeneralTest, AccumulationType) {
  const DotGeneralAttrs vdot{{}, {}, {0}, {0}};
  // Half types accumulate in float and round once.
  EXPECT_EQ(Dot(vdot, D(DType::kFloat16, {3}, {2048, 1, 1}),
                D(DType::kFloat16, {3}, {1, 1, 1})),
            D(DType::kFloat16, {}, {2050}));
  EXPECT_EQ(Dot(vdot, D(DType::kBFloat16, {3}, {256, 1, 1}),
                D(DType::kBFloat16, {3}, {1, 1, 1})),
            D(DType::kBFloat16, {}, {258}));
  // Integers accumulate in their own type and wrap: 300 -> 44 in int8.
  EXPECT_EQ(Dot(vdot, L<int8_t>({100, 100}), L<int8_t>({2, 1})),
            Literal::Scalar<int8_t>(44));
  EXPECT_EQ(Dot(vdot, L<uint8_t>({200, 100}), L<uint8_t>({1, 1})),
            Literal::Scalar<uint8_t>(44));
}

TEST(InterpreterDotGeneralTest, EveryNumericDType) {
  for (DType dt : kAllDTypes) {
    if (dt == DType::kBool) continue;
    SCOPED_TRACE(dtype_name(dt));
    EXPECT_EQ(
        Dot(kMatmul, D(dt, {2, 2}, {1, 2, 3, 4}), D(dt, {2, 2}, {5, 6, 7, 8})),
        D(dt, {2, 2}, {19, 22, 43, 50}));
  }
}

}  // namespace
}  // namespace baton::compiler
