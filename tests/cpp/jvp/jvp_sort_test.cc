// JVP of sort: the tangent is gathered by the sorting permutation (values),
// the indices variant has none; ties take the stable permutation's order
// (descending values: the ascending order reversed, as jnp.sort).
#include <gtest/gtest.h>

#include "baton/compiler/sort_ops.h"
#include "jvp/jvp_test_util.h"

namespace baton::compiler::jvp_test {
namespace {

TEST(JvpSortTest, MatchesFiniteDifferences) {
  const Program p = Trace({F64(Shape{3, 4})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{sort(x[0], 1), sort(x[0], 0, true),
                               sin(sort(x[0], -1)) * x[0],
                               argsort(x[0], 1, true)};
  });
  ExpectMatchesFiniteDifferences(p, {Uniform(Shape{3, 4}, -2, 2, 3)}, {true});
}

TEST(JvpSortTest, PayloadThroughArgsort) {
  const Program p =
      Trace({F64(Shape{2, 5}), F64(Shape{2, 5})}, [](TraceContext&, auto& x) {
        return std::vector<Tracer>{
            take_along_axis_same_shape(x[1], argsort(x[0], 1), 1)};
      });
  ExpectMatchesFiniteDifferences(
      p, {Uniform(Shape{2, 5}, -2, 2, 4), Uniform(Shape{2, 5}, -2, 2, 5)},
      {true, true});
}

TEST(JvpSortTest, TiesFollowTheStablePermutation) {
  const Program p = Trace({F64(Shape{4})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{sort(x[0]), sort(x[0], 0, true)};
  });
  const Program jvp = JvpOf(p, {true});
  const Literal x = Doubles(Shape{4}, {1, 0, 1, 0});
  const Literal t = Doubles(Shape{4}, {10, 20, 30, 40});
  const JvpValues got = RunJvp(jvp, {x}, {t});
  ASSERT_EQ(got.tangents.size(), 2u);
  // Stable ascending permutation: 1, 3, 0, 2.
  ExpectBitwiseEqual(got.tangents[0], Doubles(Shape{4}, {20, 40, 10, 30}),
                     "ascending");
  ExpectBitwiseEqual(got.tangents[1], Doubles(Shape{4}, {30, 10, 40, 20}),
                     "descending");
}

TEST(JvpSortTest, EmptyAndSingleElement) {
  const Program p =
      Trace({F64(Shape{0, 3}), F64(Shape{2, 1})}, [](TraceContext&, auto& x) {
        return std::vector<Tracer>{sort(x[0], 1), sort(x[1], 1, true)};
      });
  ExpectMatchesFiniteDifferences(
      p, {Doubles(Shape{0, 3}, {}), Doubles(Shape{2, 1}, {1.5, -2})},
      {true, true});
}

}  // namespace
}  // namespace baton::compiler::jvp_test
