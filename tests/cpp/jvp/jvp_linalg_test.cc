// JVP of the linalg op's triangular solve against central differences:
// every variant (side, triangle, transpose, unit diagonal), tangents of a,
// of b and of both, batched; the decompositions have no forward-mode rule
// here (their derivatives are custom_jvp functions in Python) and say so.
#include <gtest/gtest.h>

#include "baton/compiler/linalg_ops.h"
#include "compiler/linalg_test_matrices.h"
#include "jvp/jvp_test_util.h"

namespace baton::compiler::jvp_test {
namespace {

TEST(JvpLinalgTest, TriangularSolveMatchesFiniteDifferences) {
  for (int v = 0; v < 16; ++v) {
    const bool left = v & 1, lower = v & 2, trans = v & 4, unit = v & 8;
    SCOPED_TRACE(std::to_string(v));
    const Shape as{2, 4, 4};
    const Shape bs = left ? Shape{2, 4, 3} : Shape{2, 3, 4};
    const Program p =
        Trace({F64(as), F64(bs)}, [&](TraceContext&, const auto& x) {
          return std::vector<Tracer>{triangular_solve(
              Conditioned(x[0]), x[1], left, lower, trans, unit)};
        });
    const std::vector<Literal> args = {Uniform(as, -1, 1, 3 + v),
                                       Uniform(bs, -1, 1, 40 + v)};
    ExpectMatchesFiniteDifferences(p, args, {true, true}, 1e-6);
    ExpectMatchesFiniteDifferences(p, args, {true, false}, 1e-6);
    ExpectMatchesFiniteDifferences(p, args, {false, true}, 1e-6);
  }
}

TEST(JvpLinalgTest, DecompositionsHaveNoRule) {
  const Program p = Trace({F64(Shape{3, 3})}, [](TraceContext&, const auto& x) {
    return std::vector<Tracer>{cholesky(x[0])};
  });
  Result<Program> jvp = transforms::Jvp(p, {true});
  ASSERT_FALSE(jvp.ok());
  EXPECT_NE(jvp.status().message().find("'cholesky' has no forward-mode"),
            std::string::npos)
      << jvp.status().message();
}

}  // namespace
}  // namespace baton::compiler::jvp_test
