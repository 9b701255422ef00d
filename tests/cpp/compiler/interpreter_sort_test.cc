// Reference interpreter and shape inference of sort (SortAttrs): values and
// stable permutations in jax.numpy's order (NaNs last, -0.0 == +0.0),
// descending, every dtype, empty and one-element dimensions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "baton/compiler/program_printer.h"
#include "baton/compiler/shape_inference.h"
#include "interpreter_test_util.h"

namespace baton::compiler {
namespace {

using test_util::D;
using test_util::kAllDTypes;
using test_util::L;
using test_util::RunOp;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Literal Sort(const Literal& x, int64_t dim = 0, bool descending = false) {
  return RunOp(SortAttrs{dim, descending, false}, {x});
}
Literal ArgSort(const Literal& x, int64_t dim = 0, bool descending = false) {
  return RunOp(SortAttrs{dim, descending, true}, {x});
}

TEST(InterpreterSortTest, FloatTotalOrderAndStability) {
  // Indices:          0    1     2    3   4    5     6     7   8   9
  const Literal x =
      L<float>({1, NAN, -0.0f, 0.0f, 1, -INFINITY, -NAN, 2, 0, -0.0f});
  // As jnp.argsort(x, stable=True): ties (the zeros of either sign, the
  // NaNs of either sign) in index order.
  EXPECT_EQ(ArgSort(x), L<int32_t>({5, 2, 3, 8, 9, 0, 4, 7, 1, 6}));
  // Descending (stable): NaNs first, ties still in index order.
  EXPECT_EQ(ArgSort(x, 0, true), L<int32_t>({1, 6, 7, 0, 4, 2, 3, 8, 9, 5}));
  // Values: the elements in the ascending permutation's order, bit for bit.
  const Literal asc = Sort(x);
  const float* a = asc.data<float>();
  const int want_idx[] = {5, 2, 3, 8, 9, 0, 4, 7, 1, 6};
  for (int k = 0; k < 10; ++k) {
    const float w = x.data<float>()[want_idx[k]];
    EXPECT_EQ(std::signbit(a[k]), std::signbit(w)) << k;
    if (!std::isnan(w))
      EXPECT_EQ(a[k], w) << k;
    else
      EXPECT_TRUE(std::isnan(a[k])) << k;
  }
  // Descending values: the ascending values reversed (jnp.sort).
  const Literal desc = Sort(x, 0, true);
  for (int k = 0; k < 10; ++k) {
    const float w = a[9 - k], g = desc.data<float>()[k];
    EXPECT_EQ(std::signbit(g), std::signbit(w)) << k;
    if (!std::isnan(w)) EXPECT_EQ(g, w) << k;
  }
}

TEST(InterpreterSortTest, AlongEachDimension) {
  const Literal x = L<int32_t>({3, 1, 2, 0, 5, 4}, Shape{2, 3});
  EXPECT_EQ(Sort(x, 1), L<int32_t>({1, 2, 3, 0, 4, 5}, Shape{2, 3}));
  EXPECT_EQ(ArgSort(x, 1), L<int32_t>({1, 2, 0, 0, 2, 1}, Shape{2, 3}));
  EXPECT_EQ(Sort(x, 0), L<int32_t>({0, 1, 2, 3, 5, 4}, Shape{2, 3}));
  EXPECT_EQ(ArgSort(x, 0), L<int32_t>({1, 0, 0, 0, 1, 1}, Shape{2, 3}));
  EXPECT_EQ(Sort(x, 1, true), L<int32_t>({3, 2, 1, 5, 4, 0}, Shape{2, 3}));
  EXPECT_EQ(ArgSort(x, 0, true), L<int32_t>({0, 1, 1, 1, 0, 0}, Shape{2, 3}));
}

TEST(InterpreterSortTest, EveryDType) {
  for (DType dt : kAllDTypes) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const bool b = dt == DType::kBool;
    const Literal x =
        b ? D(dt, Shape{5}, {1, 0, 1, 0, 0}) : D(dt, Shape{5}, {3, 1, 4, 1, 2});
    EXPECT_EQ(Sort(x), b ? D(dt, Shape{5}, {0, 0, 0, 1, 1})
                         : D(dt, Shape{5}, {1, 1, 2, 3, 4}));
    EXPECT_EQ(ArgSort(x),
              b ? L<int32_t>({1, 3, 4, 0, 2}) : L<int32_t>({1, 3, 4, 0, 2}));
    EXPECT_EQ(ArgSort(x, 0, true),
              b ? L<int32_t>({0, 2, 1, 3, 4}) : L<int32_t>({2, 0, 4, 1, 3}));
    EXPECT_EQ(Sort(x, 0, true), b ? D(dt, Shape{5}, {1, 1, 0, 0, 0})
                                  : D(dt, Shape{5}, {4, 3, 2, 1, 1}));
  }
}

TEST(InterpreterSortTest, ExtremeIntegers) {
  const Literal x = L<int64_t>({INT64_MAX, INT64_MIN, INT64_MAX - 1, 0});
  EXPECT_EQ(Sort(x), L<int64_t>({INT64_MIN, 0, INT64_MAX - 1, INT64_MAX}));
  const Literal u = L<uint32_t>({4294967295u, 0, 7});
  EXPECT_EQ(ArgSort(u), L<int32_t>({1, 2, 0}));
}

TEST(InterpreterSortTest, EmptyAndSingleElement) {
  EXPECT_EQ(Sort(L<float>({}, Shape{0})), L<float>({}, Shape{0}));
  EXPECT_EQ(ArgSort(L<float>({}, Shape{2, 0}), 1), L<int32_t>({}, Shape{2, 0}));
  EXPECT_EQ(ArgSort(L<float>({}, Shape{0, 3}), 1), L<int32_t>({}, Shape{0, 3}));
  EXPECT_EQ(Sort(L<double>({kNaN}, Shape{1})).ToString(),
            L<double>({kNaN}, Shape{1}).ToString());
  EXPECT_EQ(ArgSort(L<float>({5, 4}, Shape{1, 2}), 0),
            L<int32_t>({0, 0}, Shape{1, 2}));
  EXPECT_EQ(Sort(L<double>({kInf, -kInf}), 0, true), L<double>({kInf, -kInf}));
}

TEST(SortShapeInferenceTest, TypesAndErrors) {
  const ValueType f{Shape{4, 5}, DType::kFloat16};
  Result<ValueType> v = InferType(SortAttrs{1, false, false}, {&f, 1});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, f);
  Result<ValueType> i = InferType(SortAttrs{0, true, true}, {&f, 1});
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(*i, (ValueType{Shape{4, 5}, DType::kInt32}));
  EXPECT_FALSE(InferType(SortAttrs{2, false, false}, {&f, 1}).ok());
  EXPECT_FALSE(InferType(SortAttrs{-1, false, false}, {&f, 1}).ok());
  const ValueType s{Shape{}, DType::kFloat32};
  Result<ValueType> scalar = InferType(SortAttrs{0, false, false}, {&s, 1});
  ASSERT_FALSE(scalar.ok());
  EXPECT_NE(scalar.status().message().find("sort"), std::string::npos);
  EXPECT_FALSE(InferType(SortAttrs{0, false, false}, {}).ok());
}

TEST(SortShapeInferenceTest, PrintedAndDistinguished) {
  EXPECT_EQ(op_kind_name(OpKind::kSort), "sort");
  EXPECT_FALSE((SortAttrs{0, false, true}) == (SortAttrs{0, false, false}));
  EXPECT_FALSE((SortAttrs{0, true, false}) == (SortAttrs{0, false, false}));
  Program p;
  const ValueId x =
      p.AddParameter(ValueType{Shape{3}, DType::kFloat32}).value();
  const ValueId y = p.Add(SortAttrs{0, true, true}, {x}).value();
  ASSERT_TRUE(p.SetOutputs({y}).ok());
  const std::string text = ProgramToText(p);
  EXPECT_NE(text.find("sort"), std::string::npos) << text;
  EXPECT_NE(text.find("dimension=0, descending, indices"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace baton::compiler
