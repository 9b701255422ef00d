// Reference interpreter: gather (clamped indices) and scatter (dropped
// out-of-range indices, duplicates combined in row-major order).
#include <gtest/gtest.h>

#include <cmath>

#include "interpreter_test_util.h"

namespace baton::compiler {
namespace {

using test_util::D;
using test_util::Iota;
using test_util::kAllDTypes;
using test_util::L;
using test_util::RunOp;

Literal Gather(int64_t axis, const Literal& x, const Literal& indices) {
  return RunOp(GatherAttrs{axis}, {x, indices});
}
Literal Scatter(ScatterMode mode, int64_t axis, const Literal& x,
                const Literal& indices, const Literal& updates) {
  return RunOp(ScatterAttrs{axis, mode}, {x, indices, updates});
}

TEST(InterpreterGatherTest, ClampsOutOfRangeIndices) {
  Literal x = L<int32_t>({10, 20, 30, 40});
  EXPECT_EQ(Gather(0, x, L<int32_t>({3, -1, 7, 0})),
            L<int32_t>({40, 10, 40, 10}));
  EXPECT_EQ(Gather(0, x, Literal::Scalar<int32_t>(1)),
            Literal::Scalar<int32_t>(20));
  EXPECT_EQ(Gather(0, x, L<int32_t>({}, Shape{0})), L<int32_t>({}, Shape{0}));
}

TEST(InterpreterGatherTest, IndexDTypes) {
  Literal x = L<float>({1, 2, 3});
  EXPECT_EQ(Gather(0, x, L<uint8_t>({2, 255})), L<float>({3, 3}));
  EXPECT_EQ(Gather(0, x, L<int64_t>({INT64_MIN, 1})), L<float>({1, 2}));
  EXPECT_EQ(Gather(0, x, L<uint32_t>({4294967295u, 0})), L<float>({3, 1}));
  EXPECT_EQ(Gather(0, x, L<int8_t>({-128, 2})), L<float>({1, 3}));
  EXPECT_EQ(Gather(0, x, L<int16_t>({1, 1})), L<float>({2, 2}));
}

TEST(InterpreterGatherTest, MultiDimensionalIndicesAndAxes) {
  // x = [[0, 1], [2, 3], [4, 5]]; rows [[2, 0], [1, 1]].
  EXPECT_EQ(Gather(0, Iota(DType::kInt32, {3, 2}),
                   L<int32_t>({2, 0, 1, 1}, Shape{2, 2})),
            L<int32_t>({4, 5, 0, 1, 2, 3, 2, 3}, Shape{2, 2, 2}));
  // x = [[0, 1, 2], [3, 4, 5]]; columns [2, 0].
  EXPECT_EQ(Gather(1, Iota(DType::kInt32, {2, 3}), L<int32_t>({2, 0})),
            L<int32_t>({2, 0, 5, 3}, Shape{2, 2}));
  // Middle axis of a (2, 3, 2) iota, scalar index: x[:, 1, :].
  EXPECT_EQ(
      Gather(1, Iota(DType::kInt32, {2, 3, 2}), Literal::Scalar<int32_t>(1)),
      L<int32_t>({2, 3, 8, 9}, Shape{2, 2}));
}

TEST(InterpreterGatherTest, EveryOperandDType) {
  for (DType dt : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dt));
    EXPECT_EQ(Gather(0, D(dt, {3}, {0, 1, 5}), L<int32_t>({2, 0, 9})),
              D(dt, {3}, {5, 0, 5}));
  }
}

TEST(InterpreterScatterTest, SetLastDuplicateWins) {
  EXPECT_EQ(Scatter(ScatterMode::kSet, 0, L<int32_t>({0, 0, 0, 0}),
                    L<int32_t>({1, 3, 1}), L<int32_t>({5, 6, 7})),
            L<int32_t>({0, 7, 0, 6}));
}

TEST(InterpreterScatterTest, AddAccumulatesDuplicatesAndDropsOutOfRange) {
  EXPECT_EQ(Scatter(ScatterMode::kAdd, 0, L<float>({1, 1, 1, 1}),
                    L<int32_t>({0, 0, 2, 9, -1}), L<float>({1, 2, 3, 4, 5})),
            L<float>({4, 1, 4, 1}));
  EXPECT_EQ(Scatter(ScatterMode::kSet, 0, L<float>({1, 1}), L<int64_t>({-1, 2}),
                    L<float>({5, 5})),
            L<float>({1, 1}));
}

TEST(InterpreterScatterTest, MulMinMax) {
  const Literal x = L<int32_t>({2, 2, 2});
  const Literal idx = L<int32_t>({0, 0, 1});
  const Literal upd = L<int32_t>({3, 4, -5});
  EXPECT_EQ(Scatter(ScatterMode::kMul, 0, x, idx, upd),
            L<int32_t>({24, -10, 2}));
  EXPECT_EQ(Scatter(ScatterMode::kMin, 0, x, idx, upd), L<int32_t>({2, -5, 2}));
  EXPECT_EQ(Scatter(ScatterMode::kMax, 0, x, idx, upd), L<int32_t>({4, 2, 2}));
}

TEST(InterpreterScatterTest, AlongAnInnerAxis) {
  // Columns 2, 2, 0 of each row receive updates [[1, 2, 3], [4, 5, 6]].
  EXPECT_EQ(Scatter(ScatterMode::kAdd, 1, Literal(Shape{2, 3}, DType::kInt32),
                    L<int32_t>({2, 2, 0}),
                    L<int32_t>({1, 2, 3, 4, 5, 6}, Shape{2, 3})),
            L<int32_t>({3, 0, 3, 6, 0, 9}, Shape{2, 3}));
  // Whole rows, with a 2-D index array: rows [[1, 1]] += [[[1, 2]], [[3, 4]]].
  EXPECT_EQ(Scatter(ScatterMode::kAdd, 0, Literal(Shape{2, 2}, DType::kInt32),
                    L<int32_t>({1, 1}, Shape{1, 2}),
                    L<int32_t>({1, 2, 3, 4}, Shape{1, 2, 2})),
            L<int32_t>({0, 0, 4, 6}, Shape{2, 2}));
}

TEST(InterpreterScatterTest, CombinesInTheStorageType) {
  // Each update is applied and rounded in turn, as an in-place kernel does:
  // in float16, 2048 + 1 is a tie that rounds back to 2048, twice.
  EXPECT_EQ(Scatter(ScatterMode::kAdd, 0, D(DType::kFloat16, {1}, {2048}),
                    L<int32_t>({0, 0}), D(DType::kFloat16, {2}, {1, 1})),
            D(DType::kFloat16, {1}, {2048}));
  EXPECT_EQ(Scatter(ScatterMode::kAdd, 0, L<int8_t>({127}), L<int32_t>({0}),
                    L<int8_t>({1})),
            L<int8_t>({-128}));
  EXPECT_EQ(Scatter(ScatterMode::kAdd, 0, L<bool>({false, false}),
                    L<int32_t>({1, 1}), L<bool>({true, false})),
            L<bool>({false, true}));
  Literal nan = Scatter(ScatterMode::kMax, 0, L<float>({1}), L<int32_t>({0}),
                        L<float>({NAN}));
  EXPECT_TRUE(std::isnan(nan.Get<float>(0)));
}

TEST(InterpreterScatterTest, EveryOperandDType) {
  for (DType dt : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dt));
    const Literal x = D(dt, {3}, {0, 0, 1});
    const Literal idx = L<int32_t>({0, 5, 0});
    EXPECT_EQ(Scatter(ScatterMode::kSet, 0, x, idx, D(dt, {3}, {1, 1, 0})),
              D(dt, {3}, {0, 0, 1}));
    EXPECT_EQ(Scatter(ScatterMode::kMax, 0, x, idx, D(dt, {3}, {1, 1, 0})),
              D(dt, {3}, {1, 0, 1}));
  }
}

TEST(InterpreterScatterTest, EmptyUpdatesLeaveTheOperand) {
  const Literal x = L<float>({1, 2});
  EXPECT_EQ(Scatter(ScatterMode::kAdd, 0, x, L<int32_t>({}, Shape{0}),
                    L<float>({}, Shape{0})),
            x);
}

}  // namespace
}  // namespace baton::compiler
