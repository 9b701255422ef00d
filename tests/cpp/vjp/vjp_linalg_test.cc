// VJP of the linalg op's triangular solve against central differences of
// <ct, f(x)>: every variant, cotangents to a, to b and to both, batched,
// and chained after other ops; the decompositions have no reverse-mode
// rule here and say so.
#include <gtest/gtest.h>

#include "baton/compiler/linalg_ops.h"
#include "compiler/linalg_test_matrices.h"
#include "vjp/vjp_test_util.h"

namespace baton::compiler::vjp_test {
namespace {

TEST(VjpLinalgTest, TriangularSolveEveryVariant) {
  for (int v = 0; v < 16; ++v) {
    const bool left = v & 1, lower = v & 2, trans = v & 4, unit = v & 8;
    SCOPED_TRACE(std::to_string(v));
    const Shape as{2, 3, 3};
    const Shape bs = left ? Shape{2, 3, 2} : Shape{2, 2, 3};
    const Program p = Build(
        {F64(as), F64(bs)}, [&](TraceContext&, const std::vector<Tracer>& q) {
          return std::vector<Tracer>{triangular_solve(
              Conditioned(q[0]), q[1], left, lower, trans, unit)};
        });
    const std::vector<Literal> args = {Random(F64(as), 5 + v),
                                       Random(F64(bs), 50 + v)};
    ExpectGradients(p, {true, true}, args);
    ExpectGradients(p, {true, false}, args);
    ExpectGradients(p, {false, true}, args);
  }
}

TEST(VjpLinalgTest, ChainedSolves) {
  const Shape s{3, 3};
  const Program p =
      Build({F64(s), F64(s)}, [](TraceContext&, const std::vector<Tracer>& q) {
        const Tracer a = Conditioned(q[0]);
        const Tracer y =
            triangular_solve(a, sin(q[1]), true, true, false, false);
        return std::vector<Tracer>{
            triangular_solve(a, y * q[1], true, true, true, false)};
      });
  ExpectGradients(p, {true, true}, {Random(F64(s), 1), Random(F64(s), 2)});
}

TEST(VjpLinalgTest, DecompositionsHaveNoRule) {
  const Program p = Build({F64(Shape{3, 3})},
                          [](TraceContext&, const std::vector<Tracer>& q) {
                            return std::vector<Tracer>{eigh_packed(q[0], true)};
                          });
  Result<VjpPrograms> v = transforms::Vjp(p, {true});
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("eigh has no reverse-mode"),
            std::string::npos)
      << v.status().message();
}

}  // namespace
}  // namespace baton::compiler::vjp_test
