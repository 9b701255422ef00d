// VJP of sort: the cotangent is scattered back through the sorting
// permutation; payloads sorted by argsort get theirs through the gather.
#include <gtest/gtest.h>

#include "baton/compiler/sort_ops.h"
#include "vjp/vjp_test_util.h"

namespace baton::compiler::vjp_test {
namespace {

TEST(VjpSortTest, Values) {
  const Shape s{3, 4};
  const Program p =
      Build({F64(s)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{sort(q[0], 1), sin(sort(q[0], 0, true)),
                                   sort(q[0], -1, true) * q[0]};
      });
  ExpectGradients(p, {true}, {Random(F64(s), 21)});
}

TEST(VjpSortTest, PayloadThroughArgsort) {
  const Shape s{2, 5};
  const Program p =
      Build({F64(s), F64(s)}, [](TraceContext&, const std::vector<Tracer>& q) {
        const Tracer perm = argsort(q[0], 1, true);
        return std::vector<Tracer>{take_along_axis_same_shape(q[1], perm, 1) *
                                   q[0]};
      });
  ExpectGradients(p, {true, true}, {Random(F64(s), 22), Random(F64(s), 23)});
}

TEST(VjpSortTest, TiesGetTheirOwnCotangent) {
  // sort(x) . c with x = [1, 0, 1, 0]: element i receives the cotangent of
  // the position the stable sort moves it to.
  const Program p = Build({F64(Shape{4})}, [](TraceContext& ctx,
                                              const std::vector<Tracer>& q) {
    const Tracer c = constant(ctx, std::vector<double>{1, 2, 3, 4}, Shape{4});
    return std::vector<Tracer>{sum(sort(q[0]) * c),
                               sum(sort(q[0], 0, true) * c)};
  });
  const VjpPrograms v = MustVjp(p, {true});
  const Literal x = Values(DType::kFloat64, Shape{4}, {1, 0, 1, 0});
  const Literal one = Values(DType::kFloat64, Shape{}, {1});
  const Literal zero = Values(DType::kFloat64, Shape{}, {0});
  // Ascending permutation 1, 3, 0, 2 -> x[1] gets c[0], x[3] c[1], ...
  EXPECT_EQ(RunVjp(p, v, {x}, {one, zero})[0],
            Values(DType::kFloat64, Shape{4}, {3, 1, 4, 2}));
  // Descending values: positions reversed: 2, 0, 3, 1.
  EXPECT_EQ(RunVjp(p, v, {x}, {zero, one})[0],
            Values(DType::kFloat64, Shape{4}, {2, 4, 1, 3}));
}

}  // namespace
}  // namespace baton::compiler::vjp_test
