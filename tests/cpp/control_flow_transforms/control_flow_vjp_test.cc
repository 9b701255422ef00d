// Reverse mode through control flow (control_flow_vjp.cc): scan (a running
// product, fori_loop with static bounds lowered to a scan, invariants, xs,
// reverse scans, nested case, zero length, second order) and case, checked
// against central finite differences and closed forms; while is refused.
#include <gtest/gtest.h>

#include <cmath>

#include "control_flow_transforms/cf_test_util.h"
#include "vjp/vjp_test_util.h"

namespace baton::compiler::cf_test {
namespace {

using transforms::VjpPrograms;
using vjp_test::ExpectGradients;
using vjp_test::JointProgram;
using vjp_test::MustVjp;
using vjp_test::Random;
using vjp_test::RunVjp;
using vjp_test::Values;

Literal F64Scalar(double v) { return Literal::Scalar<double>(v); }
Literal I32Scalar(int32_t v) { return Literal::Scalar<int32_t>(v); }

TEST(ControlFlowVjpTest, RunningProductScanMatchesFiniteDifferences) {
  const Program p = RunningProduct(5);
  const std::vector<Literal> args = {F64Scalar(1.3),
                                     Random(F64(Shape{5}), 3, 0.5, 1.5)};
  ExpectGradients(p, {true, true}, args);
  ExpectGradients(p, {false, true}, args);
  ExpectGradients(p, {true, false}, args);
}

TEST(ControlFlowVjpTest, RunningProductClosedFormAndStructure) {
  const Program p = RunningProduct(4);
  const VjpPrograms v = MustVjp(p, {true, true});
  ASSERT_FALSE(::testing::Test::HasFailure());
  // Forward: one scan whose body also stacks its input carry.
  const Instruction* fwd = FirstOf(v.forward, OpKind::kScan);
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(ControlFlowNumResults(fwd->attrs), 3);
  // Backward: one scan, in the other direction.
  const Instruction* bwd = FirstOf(v.backward, OpKind::kScan);
  ASSERT_NE(bwd, nullptr);
  EXPECT_TRUE(bwd->attrs_as<ScanAttrs>().reverse);

  const double init = 1.5;
  const std::vector<double> xs = {0.5, 2.0, -1.5, 3.0};
  const double prod = init * 0.5 * 2.0 * -1.5 * 3.0;
  // Cotangent 1 on the final product only.
  const std::vector<Literal> g =
      RunVjp(p, v, {F64Scalar(init), Values(DType::kFloat64, Shape{4}, xs)},
             {F64Scalar(1.0), Literal(Shape{4}, DType::kFloat64)});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_NEAR(g[0].GetAsDouble(0), prod / init, 1e-12);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(g[1].GetAsDouble(i), prod / xs[i], 1e-12) << i;
  }
}

TEST(ControlFlowVjpTest, ReverseScanMatchesFiniteDifferences) {
  const Program p = RunningProduct(4, /*reverse=*/true);
  ExpectGradients(p, {true, true},
                  {F64Scalar(0.7), Random(F64(Shape{4}), 4, 0.5, 1.5)});
}

TEST(ControlFlowVjpTest, ForiLoopAsScanClosedForm) {
  // x -> x * x + 0.5 three times (c = 0): dx3/dx0 = 8 x0 x1 x2.
  const Program p = ForiScan(3, Shape{});
  const VjpPrograms v = MustVjp(p, {true, true});
  ASSERT_FALSE(::testing::Test::HasFailure());
  // The int32 counter gets no cotangent: the backward scan carries the
  // cotangent of x and the accumulated cotangent of c only.
  const Instruction* bwd = FirstOf(v.backward, OpKind::kScan);
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(bwd->attrs_as<ScanAttrs>().num_carries, 2);
  const double x0 = 0.3, x1 = x0 * x0 + 0.5, x2 = x1 * x1 + 0.5;
  const std::vector<Literal> g = RunVjp(p, v, {F64Scalar(x0), F64Scalar(0.0)},
                                        {F64Scalar(1.0), I32Scalar(0)});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_NEAR(g[0].GetAsDouble(0), 8 * x0 * x1 * x2, 1e-12);
  // x2 = x1^2 + 0.5 + c and x3 = x2^2 + 0.5 + 2c: dx3/dc = 2 x2 + 2.
  EXPECT_NEAR(g[1].GetAsDouble(0), 2 * x2 + 2, 1e-12);
}

TEST(ControlFlowVjpTest, ForiLoopAsScanMatchesFiniteDifferences) {
  const Program p = ForiScan(3, Shape{3});
  const std::vector<Literal> args = {Random(F64(Shape{3}), 5),
                                     Random(F64(Shape{3}), 6)};
  ExpectGradients(p, {true, true}, args);
  ExpectGradients(p, {false, true}, args);
}

TEST(ControlFlowVjpTest, WhileLoopIsRefused) {
  const Program p = ForiWhile(Shape{2});
  Result<VjpPrograms> r = transforms::Vjp(p, {true, false});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find(
                "Reverse-mode differentiation does not work for "
                "lax.while_loop or lax.fori_loop with dynamic start/stop "
                "values. Try using lax.scan, or using fori_loop with static "
                "start/stop."),
            std::string::npos)
      << r.status().message();
}

TEST(ControlFlowVjpTest, UndifferentiatedWhileLoopIsFine) {
  // The loop runs on a constant: it is not on the differentiated path.
  WhileAttrs w;
  w.num_carries = 2;
  w.cond = Region({I32(), F64()},
                  [](TraceContext&, const V& q) { return V{lt(q[0], 3)}; });
  w.body = Region({I32(), F64()}, [](TraceContext&, const V& q) {
    return V{q[0] + 1, q[1] * 2};
  });
  const Program p = Build({F64(Shape{2})}, [&](TraceContext& ctx, const V& q) {
    const V r = Emit(ctx, w,
                     {constant(ctx, Literal::Scalar<int32_t>(0)),
                      constant(ctx, Literal::Scalar<double>(1.0))});
    return V{sin(q[0]) * broadcast_to(r[1], q[0].shape()), r[1]};
  });
  ExpectGradients(p, {true}, {Random(F64(Shape{2}), 9)});
}

TEST(ControlFlowVjpTest, CaseMatchesFiniteDifferencesForEveryIndex) {
  const Program p = TwoBranchCase(Shape{3});
  for (int32_t index : {0, 1, 7, -2}) {  // out of range clamps
    SCOPED_TRACE("index " + std::to_string(index));
    ExpectGradients(p, {false, true, true},
                    {I32Scalar(index), Random(F64(Shape{3}), 10),
                     Random(F64(Shape{3}), 11)});
    ExpectGradients(p, {false, false, true},
                    {I32Scalar(index), Random(F64(Shape{3}), 12),
                     Random(F64(Shape{3}), 13)});
  }
}

TEST(ControlFlowVjpTest, CaseBranchThatIgnoresAnOperandGivesZeros) {
  const Program p = TwoBranchCase(Shape{2});
  const VjpPrograms v = MustVjp(p, {false, true, true});
  ASSERT_FALSE(::testing::Test::HasFailure());
  EXPECT_EQ(CountKind(v.backward, OpKind::kCase), 2);  // x's and y's
  const Literal x = Values(DType::kFloat64, Shape{2}, {0.5, -2.0});
  const Literal y = Values(DType::kFloat64, Shape{2}, {1.5, 4.0});
  const Literal ct0 = Values(DType::kFloat64, Shape{2}, {1.0, 2.0});
  const Literal ct1 = Values(DType::kFloat64, Shape{2}, {-1.0, 0.5});
  const std::vector<Literal> g = RunVjp(p, v, {I32Scalar(1), x, y}, {ct0, ct1});
  ASSERT_EQ(g.size(), 2u);
  for (int e = 0; e < 2; ++e) {
    // Branch 1: (3 x^2, x): dx = 6 x ct0 + ct1, dy = 0.
    const double xe = x.GetAsDouble(e);
    EXPECT_NEAR(g[0].GetAsDouble(e),
                6 * xe * ct0.GetAsDouble(e) + ct1.GetAsDouble(e), 1e-12);
    EXPECT_EQ(g[1].GetAsDouble(e), 0.0);
  }
}

TEST(ControlFlowVjpTest, ScanWithXsAndInvariantsBothDirections) {
  for (bool reverse : {false, true}) {
    SCOPED_TRACE(reverse ? "reverse" : "forward");
    ScanAttrs s;
    s.num_carries = 1;
    s.num_xs = 1;
    s.length = 4;
    s.reverse = reverse;
    const Shape k{2};
    s.body = Region({F64(k), F64(k), F64(k)}, [](TraceContext&, const V& q) {
      return V{tanh(q[0] * q[2] + q[1]), q[0] * q[1] * q[2]};
    });
    const Program p = Build({F64(k), F64(Shape{4, 2}), F64(k)},
                            [&](TraceContext& ctx, const V& q) {
                              return Emit(ctx, s, {q[0], q[1], q[2]});
                            });
    const std::vector<Literal> args = {
        Random(F64(k), 20), Random(F64(Shape{4, 2}), 21), Random(F64(k), 22)};
    ExpectGradients(p, {true, true, true}, args);
    ExpectGradients(p, {false, false, true}, args);
    ExpectGradients(p, {false, true, false}, args);
  }
}

TEST(ControlFlowVjpTest, CaseInsideScan) {
  // Odd steps square the carry, even steps take its sine.
  CaseAttrs c;
  c.branches.push_back(Region(
      {F64(Shape{2})}, [](TraceContext&, const V& q) { return V{sin(q[0])}; }));
  c.branches.push_back(Region({F64(Shape{2})}, [](TraceContext&, const V& q) {
    return V{q[0] * q[0]};
  }));
  ScanAttrs s;
  s.num_carries = 2;
  s.length = 5;
  s.body = Region({I32(), F64(Shape{2}), F64(Shape{2})},
                  [&](TraceContext& ctx, const V& q) {
                    const Tracer idx = ctx.Emit(
                        BinaryAttrs{BinaryOp::kRem},
                        {q[0], constant(ctx, Literal::Scalar<int32_t>(2))});
                    const Tracer y = Emit(ctx, c, {idx, q[1]})[0];
                    return V{q[0] + 1, y + q[2], y};
                  });
  const Program p =
      Build({F64(Shape{2}), F64(Shape{2})}, [&](TraceContext& ctx, const V& q) {
        const V r = Emit(
            ctx, s, {constant(ctx, Literal::Scalar<int32_t>(0)), q[0], q[1]});
        return V{r[1], r[2]};
      });
  ExpectGradients(p, {true, true},
                  {Random(F64(Shape{2}), 30), Random(F64(Shape{2}), 31)});
}

TEST(ControlFlowVjpTest, ZeroLengthScan) {
  const Program p = RunningProduct(0);
  const VjpPrograms v = MustVjp(p, {true, true});
  ASSERT_FALSE(::testing::Test::HasFailure());
  const std::vector<Literal> g =
      RunVjp(p, v, {F64Scalar(2.0), Literal(Shape{0}, DType::kFloat64)},
             {F64Scalar(3.0), Literal(Shape{0}, DType::kFloat64)});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].GetAsDouble(0), 3.0);  // the final carry is the initial one
  EXPECT_EQ(g[1].num_elements(), 0);
}

TEST(ControlFlowVjpTest, ScanInsideACheckpoint) {
  // A checkpointed body holding a scan: the scan's results are saved (it
  // cannot be re-emitted a result at a time), everything else follows the
  // policy; the gradients are the same.
  CallAttrs call;
  call.kind = CallKind::kCheckpoint;
  call.body = std::make_shared<const Program>(RunningProduct(3));
  const Program p =
      Build({F64(), F64(Shape{3})}, [&](TraceContext& ctx, const V& q) {
        const V r = vjp_test::EmitCall(ctx, call, {sin(q[0]), q[1]});
        return V{r[0] * 2, r[1]};
      });
  ExpectGradients(p, {true, true},
                  {F64Scalar(0.6), Random(F64(Shape{3}), 50, 0.5, 1.5)});
}

TEST(ControlFlowVjpTest, SecondOrderThroughTheBackwardScan) {
  // The joint (forward + backward) program of a scan, differentiated again:
  // its reverse scan and recomputing body go through the rule themselves.
  const Program p = RunningProduct(3);
  const VjpPrograms v = MustVjp(p, {true, true});
  ASSERT_FALSE(::testing::Test::HasFailure());
  const Program joint = JointProgram(p, v);
  ExpectGradients(joint, {true, true, true, true},
                  {F64Scalar(0.8), Random(F64(Shape{3}), 40, 0.5, 1.5),
                   F64Scalar(1.0), Random(F64(Shape{3}), 41)},
                  1e-5);
}

}  // namespace
}  // namespace baton::compiler::cf_test
