// Reference interpreter: broadcast_in_dim, reshape, transpose, slice,
// dynamic_slice, dynamic_update_slice, concatenate and pad, for every dtype
// (data movement is type-blind, so each dtype must come out identical).
#include <gtest/gtest.h>

#include "interpreter_test_util.h"

namespace baton::compiler {
namespace {

using test_util::D;
using test_util::Iota;
using test_util::kAllDTypes;
using test_util::L;
using test_util::RunOp;

class DataMovementTest : public ::testing::TestWithParam<DType> {
 protected:
  DType dt() const { return GetParam(); }
  // Expected values, converted to the dtype under test.
  Literal E(Shape shape, const std::vector<double>& values) const {
    return D(dt(), std::move(shape), values);
  }
};

TEST_P(DataMovementTest, BroadcastInDim) {
  EXPECT_EQ(RunOp(BroadcastInDimAttrs{Shape{2, 3}, {1}}, {Iota(dt(), {3})}),
            E({2, 3}, {0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(
      RunOp(BroadcastInDimAttrs{Shape{2, 3}, {0, 1}}, {Iota(dt(), {2, 1})}),
      E({2, 3}, {0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(RunOp(BroadcastInDimAttrs{Shape{2, 2}, {}}, {E({}, {7})}),
            E({2, 2}, {7, 7, 7, 7}));
  // Mapping dimensions out of order transposes: out[i, j] = x[j, i].
  EXPECT_EQ(
      RunOp(BroadcastInDimAttrs{Shape{3, 2}, {1, 0}}, {Iota(dt(), {2, 3})}),
      E({3, 2}, {0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(RunOp(BroadcastInDimAttrs{Shape{0, 3}, {1}}, {Iota(dt(), {3})}),
            E({0, 3}, {}));
  EXPECT_EQ(
      RunOp(BroadcastInDimAttrs{Shape{2, 0}, {0, 1}}, {Iota(dt(), {1, 0})}),
      E({2, 0}, {}));
}

TEST_P(DataMovementTest, Reshape) {
  EXPECT_EQ(RunOp(ReshapeAttrs{Shape{3, 2}}, {Iota(dt(), {2, 3})}),
            Iota(dt(), {3, 2}));
  EXPECT_EQ(RunOp(ReshapeAttrs{Shape{}}, {E({1, 1}, {5})}), E({}, {5}));
  EXPECT_EQ(RunOp(ReshapeAttrs{Shape{0, 5}}, {Iota(dt(), {5, 0})}),
            E({0, 5}, {}));
}

TEST_P(DataMovementTest, Transpose) {
  EXPECT_EQ(RunOp(TransposeAttrs{{1, 0}}, {Iota(dt(), {2, 3})}),
            E({3, 2}, {0, 3, 1, 4, 2, 5}));
  // out[i, j, k] = x[j, k, i] = 12 j + 4 k + i for x of shape (2, 3, 4).
  std::vector<double> expected;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) expected.push_back(12 * j + 4 * k + i);
  EXPECT_EQ(RunOp(TransposeAttrs{{2, 0, 1}}, {Iota(dt(), {2, 3, 4})}),
            E({4, 2, 3}, expected));
  EXPECT_EQ(RunOp(TransposeAttrs{{}}, {E({}, {3})}), E({}, {3}));
  EXPECT_EQ(RunOp(TransposeAttrs{{1, 0}}, {Iota(dt(), {0, 2})}), E({2, 0}, {}));
}

TEST_P(DataMovementTest, StridedSlice) {
  // Rows 1 and 3, columns 0, 2 and 4 of a 4x5 iota.
  EXPECT_EQ(RunOp(SliceAttrs{{1, 0}, {4, 5}, {2, 2}}, {Iota(dt(), {4, 5})}),
            E({2, 3}, {5, 7, 9, 15, 17, 19}));
  EXPECT_EQ(RunOp(SliceAttrs{{0}, {7}, {3}}, {Iota(dt(), {7})}),
            E({3}, {0, 3, 6}));
  EXPECT_EQ(RunOp(SliceAttrs{{2, 0}, {2, 5}, {1, 1}}, {Iota(dt(), {4, 5})}),
            E({0, 5}, {}));
  EXPECT_EQ(RunOp(SliceAttrs{{}, {}, {}}, {E({}, {4})}), E({}, {4}));
}

TEST_P(DataMovementTest, DynamicSliceClampsStarts) {
  const Literal x = Iota(dt(), {4, 5});
  // Column start 4 is clamped to 5 - 2 = 3.
  EXPECT_EQ(RunOp(DynamicSliceAttrs{{2, 2}}, {x, Literal::Scalar<int32_t>(2),
                                              Literal::Scalar<int32_t>(4)}),
            E({2, 2}, {13, 14, 18, 19}));
  // Negative starts clamp to 0; start index types may differ.
  EXPECT_EQ(RunOp(DynamicSliceAttrs{{2, 2}}, {x, Literal::Scalar<int64_t>(-5),
                                              Literal::Scalar<uint8_t>(1)}),
            E({2, 2}, {1, 2, 6, 7}));
  EXPECT_EQ(RunOp(DynamicSliceAttrs{{4, 0}},
                  {x, Literal::Scalar<int16_t>(9), Literal::Scalar<int8_t>(9)}),
            E({4, 0}, {}));
  EXPECT_EQ(RunOp(DynamicSliceAttrs{{}}, {E({}, {6})}), E({}, {6}));
  // A huge unsigned start still clamps (it is read as a value, not wrapped).
  EXPECT_EQ(RunOp(DynamicSliceAttrs{{1}},
                  {Iota(dt(), {3}), Literal::Scalar<uint32_t>(4294967295u)}),
            E({1}, {2}));
}

TEST_P(DataMovementTest, DynamicUpdateSliceClampsStarts) {
  const Literal x = Iota(dt(), {3, 3});
  const Literal update = E({2, 2}, {100, 101, 102, 103});
  // Row start 2 clamps to 1, column start -1 clamps to 0.
  EXPECT_EQ(
      RunOp(DynamicUpdateSliceAttrs{}, {x, update, Literal::Scalar<int32_t>(2),
                                        Literal::Scalar<int32_t>(-1)}),
      E({3, 3}, {0, 1, 2, 100, 101, 5, 102, 103, 8}));
  EXPECT_EQ(RunOp(DynamicUpdateSliceAttrs{},
                  {x, E({0, 3}, {}), Literal::Scalar<int32_t>(1),
                   Literal::Scalar<int32_t>(0)}),
            x);
  EXPECT_EQ(RunOp(DynamicUpdateSliceAttrs{}, {E({}, {1}), E({}, {9})}),
            E({}, {9}));
}

TEST_P(DataMovementTest, Concatenate) {
  EXPECT_EQ(RunOp(ConcatenateAttrs{1},
                  {E({2, 1}, {0, 1}), E({2, 2}, {10, 11, 12, 13})}),
            E({2, 3}, {0, 10, 11, 1, 12, 13}));
  EXPECT_EQ(RunOp(ConcatenateAttrs{0},
                  {E({1, 2}, {1, 2}), E({0, 2}, {}), E({2, 2}, {3, 4, 5, 6})}),
            E({3, 2}, {1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(RunOp(ConcatenateAttrs{0}, {E({0}, {}), E({0}, {})}), E({0}, {}));
}

TEST_P(DataMovementTest, Pad) {
  const Literal x = E({3}, {1, 2, 3});
  const Literal zero = E({}, {0});
  EXPECT_EQ(RunOp(PadAttrs{{1}, {2}, {1}}, {x, zero}),
            E({8}, {0, 1, 0, 2, 0, 3, 0, 0}));
  // Negative low/high crop.
  EXPECT_EQ(RunOp(PadAttrs{{-1}, {-1}, {0}}, {x, zero}), E({1}, {2}));
  EXPECT_EQ(RunOp(PadAttrs{{-2}, {0}, {1}}, {x, zero}), E({3}, {2, 0, 3}));
  EXPECT_EQ(RunOp(PadAttrs{{-3}, {0}, {0}}, {x, zero}), E({0}, {}));
  EXPECT_EQ(RunOp(PadAttrs{{1, 0}, {0, 1}, {0, 0}},
                  {E({2, 2}, {1, 2, 3, 4}), E({}, {9})}),
            E({3, 3}, {9, 9, 9, 1, 2, 9, 3, 4, 9}));
  EXPECT_EQ(RunOp(PadAttrs{{1}, {1}, {5}}, {E({0}, {}), E({}, {7})}),
            E({2}, {7, 7}));
  EXPECT_EQ(RunOp(PadAttrs{{}, {}, {}}, {E({}, {3}), E({}, {7})}), E({}, {3}));
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, DataMovementTest,
                         ::testing::ValuesIn(kAllDTypes),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(dtype_name(info.param));
                         });

}  // namespace
}  // namespace baton::compiler
