// Forward mode through control flow (control_flow_jvp.cc): while, scan and
// case against central finite differences and known derivatives, the
// tangent-carry fixpoint, and which carries get tangents.
#include <gtest/gtest.h>

#include "control_flow_transforms/cf_test_util.h"
#include "jvp/jvp_test_util.h"
#include "vjp/vjp_test_util.h"

namespace baton::compiler::cf_test {
namespace {

using jvp_test::Doubles;
using jvp_test::ExpectMatchesFiniteDifferences;
using jvp_test::JvpOf;
using jvp_test::RunJvp;
using jvp_test::Uniform;

// while i < 4: (i + 1, x * a + sin(x)), a invariant: (x, a) -> (x, i).
Program WhileWithInvariant() {
  WhileAttrs w;
  w.num_carries = 2;
  const Shape k{3};
  w.cond = Region({I32(), F64(k), F64(k)},
                  [](TraceContext&, const V& q) { return V{lt(q[0], 4)}; });
  w.body = Region({I32(), F64(k), F64(k)}, [](TraceContext&, const V& q) {
    return V{q[0] + 1, q[1] * q[2] + sin(q[1])};
  });
  return Build({F64(k), F64(k)}, [&](TraceContext& ctx, const V& q) {
    const V r =
        Emit(ctx, w, {constant(ctx, Literal::Scalar<int32_t>(0)), q[0], q[1]});
    return V{r[1], r[0]};
  });
}

TEST(ControlFlowJvpTest, WhileMatchesFiniteDifferences) {
  const Program p = WhileWithInvariant();
  const std::vector<Literal> args = {Uniform(Shape{3}, -1, 1, 1),
                                     Uniform(Shape{3}, -1, 1, 2)};
  ExpectMatchesFiniteDifferences(p, args, {true, true});
  ExpectMatchesFiniteDifferences(p, args, {true, false});
  // Only the invariant has a tangent: x's tangent carry starts at zero and
  // becomes nonzero in the body (the fixpoint).
  ExpectMatchesFiniteDifferences(p, args, {false, true});
}

TEST(ControlFlowJvpTest, WhileCarriesTangentsOnlyForFloats) {
  const Program jvp = JvpOf(WhileWithInvariant(), {true, true});
  const Instruction* w = FirstOf(jvp, OpKind::kWhile);
  ASSERT_NE(w, nullptr);
  // (i, x, x's tangent | a, a's tangent): the counter has no tangent carry.
  EXPECT_EQ(w->attrs_as<WhileAttrs>().num_carries, 3);
  EXPECT_EQ(w->operands.size(), 5u);
  // The condition still returns one bool of the primal counter.
  EXPECT_EQ(w->attrs_as<WhileAttrs>().cond->num_parameters(), 5);
}

TEST(ControlFlowJvpTest, ForiWhileKnownDerivative) {
  // x -> x * x + 0.5, n times: dx_n = prod 2 x_t dx_0.
  const Program p = ForiWhile(Shape{});
  const Program jvp = JvpOf(p, {true, false});
  const double x0 = 0.4;
  const jvp_test::JvpValues v =
      RunJvp(jvp, {Doubles(Shape{}, {x0}), Literal::Scalar<int32_t>(3)},
             {Doubles(Shape{}, {1.0})});
  ASSERT_EQ(v.tangents.size(), 1u);
  const double x1 = x0 * x0 + 0.5, x2 = x1 * x1 + 0.5;
  EXPECT_NEAR(v.tangents[0].GetAsDouble(0), 8 * x0 * x1 * x2, 1e-12);
  ExpectMatchesFiniteDifferences(
      p, {Doubles(Shape{}, {x0}), Literal::Scalar<int32_t>(5)}, {true, false});
}

TEST(ControlFlowJvpTest, ScanRunningProduct) {
  const Program p = RunningProduct(5);
  const std::vector<Literal> args = {Doubles(Shape{}, {1.2}),
                                     Uniform(Shape{5}, 0.5, 1.5, 3)};
  ExpectMatchesFiniteDifferences(p, args, {true, true});
  ExpectMatchesFiniteDifferences(p, args, {false, true});
  ExpectMatchesFiniteDifferences(p, args, {true, false});
  ExpectMatchesFiniteDifferences(RunningProduct(5, /*reverse=*/true), args,
                                 {true, true});
}

TEST(ControlFlowJvpTest, ScanTangentOfXsOnlyGivesStackedTangents) {
  // Tangent on the xs only: the carry still gets a tangent carry (the body
  // makes it depend on x), and the ys get stacked tangents.
  const Program jvp = JvpOf(RunningProduct(3), {false, true});
  const Instruction* s = FirstOf(jvp, OpKind::kScan);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->attrs_as<ScanAttrs>().num_carries, 2);
  EXPECT_EQ(s->attrs_as<ScanAttrs>().num_xs, 2);
  // d(prod)/dx_i * t_i summed: final product init * x0 x1 x2.
  const jvp_test::JvpValues v =
      RunJvp(jvp, {Doubles(Shape{}, {2.0}), Doubles(Shape{3}, {1.0, 3.0, 0.5})},
             {Doubles(Shape{3}, {1.0, 0.0, 0.0})});
  ASSERT_EQ(v.tangents.size(), 2u);
  EXPECT_NEAR(v.tangents[0].GetAsDouble(0), 2.0 * 3.0 * 0.5, 1e-12);
  // Running products 2 x0, 2 x0 x1, 2 x0 x1 x2: derivatives in x0.
  EXPECT_NEAR(v.tangents[1].GetAsDouble(0), 2.0, 1e-12);
  EXPECT_NEAR(v.tangents[1].GetAsDouble(1), 6.0, 1e-12);
  EXPECT_NEAR(v.tangents[1].GetAsDouble(2), 3.0, 1e-12);
}

TEST(ControlFlowJvpTest, ScanFixpointAcrossCarries) {
  // (a, b) -> (2a, b + a * x): with a tangent on a only, b's tangent carry
  // is zero at first and nonzero after one step.
  ScanAttrs s;
  s.num_carries = 2;
  s.num_xs = 1;
  s.length = 4;
  s.body = Region({F64(), F64(), F64()}, [](TraceContext&, const V& q) {
    return V{q[0] * 2, q[1] + q[0] * q[2]};
  });
  const Program p =
      Build({F64(), F64(), F64(Shape{4})}, [&](TraceContext& ctx, const V& q) {
        return Emit(ctx, s, {q[0], q[1], q[2]});
      });
  const std::vector<Literal> args = {Doubles(Shape{}, {0.7}),
                                     Doubles(Shape{}, {-0.3}),
                                     Uniform(Shape{4}, -1, 1, 4)};
  ExpectMatchesFiniteDifferences(p, args, {true, false, false});
  ExpectMatchesFiniteDifferences(p, args, {false, false, true});
  ExpectMatchesFiniteDifferences(p, args, {true, true, true});
}

TEST(ControlFlowJvpTest, ForiScanWithIntCounter) {
  const Program p = ForiScan(3, Shape{2});
  ExpectMatchesFiniteDifferences(
      p, {Uniform(Shape{2}, -1, 1, 5), Uniform(Shape{2}, -1, 1, 6)},
      {true, true});
}

TEST(ControlFlowJvpTest, CaseEveryIndex) {
  const Program p = TwoBranchCase(Shape{3});
  for (int32_t index : {0, 1, 9, -1}) {
    SCOPED_TRACE("index " + std::to_string(index));
    const std::vector<Literal> args = {Literal::Scalar<int32_t>(index),
                                       Uniform(Shape{3}, -1, 1, 7),
                                       Uniform(Shape{3}, -1, 1, 8)};
    ExpectMatchesFiniteDifferences(p, args, {false, true, true});
    ExpectMatchesFiniteDifferences(p, args, {false, false, true});
  }
}

TEST(ControlFlowJvpTest, CaseBranchesBecomeTheirJvps) {
  const Program jvp = JvpOf(TwoBranchCase(Shape{2}), {false, false, true});
  const Instruction* c = FirstOf(jvp, OpKind::kCase);
  ASSERT_NE(c, nullptr);
  // (index, x, y, y's tangent) -> (2 results, 2 tangents).
  EXPECT_EQ(c->operands.size(), 4u);
  EXPECT_EQ(ControlFlowNumResults(c->attrs), 4);
  // Branch 1 does not read y: its tangents are zero.
  const jvp_test::JvpValues v =
      RunJvp(jvp,
             {Literal::Scalar<int32_t>(1), Doubles(Shape{2}, {1.0, 2.0}),
              Doubles(Shape{2}, {3.0, 4.0})},
             {Doubles(Shape{2}, {1.0, 1.0})});
  ASSERT_EQ(v.tangents.size(), 2u);
  jvp_test::ExpectAllZero(v.tangents[0], "branch 1 tangent 0");
  jvp_test::ExpectAllZero(v.tangents[1], "branch 1 tangent 1");
}

TEST(ControlFlowJvpTest, UntangentedLoopIsCopied) {
  // No tangent reaches the loop: it is copied as it is.
  const Program p = ForiWhile(Shape{2});
  const Program jvp = JvpOf(p, {false, false});
  const Instruction* w = FirstOf(jvp, OpKind::kWhile);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->attrs_as<WhileAttrs>().num_carries, 2);
  EXPECT_EQ(w->attrs_as<WhileAttrs>().body,
            FirstOf(p, OpKind::kWhile)->attrs_as<WhileAttrs>().body);
}

TEST(ControlFlowJvpTest, ForwardOverReverseThroughTheBackwardScan) {
  // Hessian-vector products: the JVP of a scan's joint (forward + backward)
  // program, whose reverse scan recomputes the body.
  const Program p = RunningProduct(3);
  Result<transforms::VjpPrograms> v = transforms::Vjp(p, {true, true});
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  const Program joint = vjp_test::JointProgram(p, *v);
  ExpectMatchesFiniteDifferences(
      joint,
      {Doubles(Shape{}, {0.9}), Uniform(Shape{3}, 0.5, 1.5, 9),
       Doubles(Shape{}, {1.0}), Uniform(Shape{3}, -1, 1, 10)},
      {true, true, false, false}, 1e-5);
}

}  // namespace
}  // namespace baton::compiler::cf_test
