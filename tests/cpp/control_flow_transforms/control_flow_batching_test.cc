// Vmap through control flow (control_flow_batching.cc): every lane of the
// batched program must give exactly (bitwise) what the per-example program
// gives on that lane. While loops whose trip count depends on the lane,
// scans with batched carries, xs and invariants, the carry fixpoint, case
// with a batched and an unbatched index, and vmap of transformed loops.
#include <gtest/gtest.h>

#include "batching/batching_test_util.h"
#include "baton/compiler/transforms/jvp.h"
#include "baton/compiler/transforms/vjp.h"
#include "control_flow_transforms/cf_test_util.h"

namespace baton::compiler::cf_test {
namespace {

using batching_test::DependsOnBatched;
using batching_test::InsertDim;
using batching_test::Param;
using batching_test::RandomLiteral;
using batching_test::TakeExample;
using transforms::BatchedProgram;

// Like batching_test::ExpectVmapMatches, but a result may stay unbatched
// although the group it comes from has a batched operand (an unbatched
// carry of a loop), so output_batched only has to imply dependence.
BatchedProgram ExpectPerLane(const Program& f, const std::vector<Param>& params,
                             const std::vector<int>& in_dims,
                             int64_t batch_size, uint64_t seed = 1) {
  std::string dims_text;
  for (int d : in_dims) dims_text += std::to_string(d) + " ";
  SCOPED_TRACE("in_dims " + dims_text + "batch " + std::to_string(batch_size));
  Result<BatchedProgram> r = transforms::Vmap(f, in_dims, batch_size);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (!r.ok()) return {};
  const BatchedProgram& bp = r.value();
  EXPECT_TRUE(bp.program.Verify().ok()) << bp.program.Verify().to_string();
  const std::vector<bool> dep = DependsOnBatched(f, in_dims);
  for (size_t o = 0; o < dep.size(); ++o) {
    EXPECT_TRUE(dep[o] || !bp.output_batched[o]) << "output " << o;
  }
  std::vector<Literal> args;
  uint64_t state = seed;
  for (size_t i = 0; i < params.size(); ++i) {
    const Shape shape = in_dims[i] == -1 ? params[i].type.shape
                                         : InsertDim(params[i].type.shape,
                                                     in_dims[i], batch_size);
    args.push_back(RandomLiteral(params[i], shape, state));
  }
  Result<std::vector<Literal>> out = Interpret(bp.program, args);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  if (!out.ok()) return bp;
  for (int64_t b = 0; b < batch_size; ++b) {
    std::vector<Literal> example;
    for (size_t i = 0; i < params.size(); ++i) {
      example.push_back(in_dims[i] == -1 ? args[i]
                                         : TakeExample(args[i], in_dims[i], b));
    }
    Result<std::vector<Literal>> want = Interpret(f, example);
    EXPECT_TRUE(want.ok()) << want.status().to_string();
    if (!want.ok()) return bp;
    for (size_t o = 0; o < want.value().size(); ++o) {
      const Literal got = bp.output_batched[o]
                              ? TakeExample(out.value()[o], 0, b)
                              : out.value()[o];
      EXPECT_EQ(got, want.value()[o]) << "output " << o << ", example " << b;
    }
  }
  return bp;
}

// Every combination of unbatched / batched at each position, batch 1 and 3.
void ExpectPerLaneEverywhere(const Program& f,
                             const std::vector<Param>& params) {
  std::vector<std::vector<int>> choices;
  int64_t total = 1;
  for (const Param& p : params) {
    std::vector<int> c{-1};
    for (int d = 0; d <= p.type.shape.rank(); ++d) c.push_back(d);
    choices.push_back(c);
    total *= static_cast<int64_t>(c.size());
  }
  uint64_t seed = 1;
  for (int64_t code = 0; code < total; ++code) {
    int64_t rest = code;
    std::vector<int> in_dims;
    bool any = false;
    for (const std::vector<int>& c : choices) {
      in_dims.push_back(c[rest % static_cast<int64_t>(c.size())]);
      rest /= static_cast<int64_t>(c.size());
      any = any || in_dims.back() != -1;
    }
    if (!any) continue;
    for (int64_t batch : {1, 3}) {
      ExpectPerLane(f, params, in_dims, batch, seed++);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

const Instruction& Only(const Program& p, OpKind kind) {
  EXPECT_EQ(CountKind(p, kind), ControlFlowNumResults(FirstOf(p, kind)->attrs));
  return *FirstOf(p, kind);
}

TEST(ControlFlowBatchingTest, WhileTripCountDependsOnTheLane) {
  const Program p = ForiWhile(Shape{2});
  const std::vector<Param> params = {{F64(Shape{2}), -1, 1}, {I32(), 0, 5}};
  ExpectPerLaneEverywhere(p, params);
  // n batched: the predicate is batched, so the loop runs until every lane
  // is done and finished lanes keep their carries.
  const BatchedProgram bp = ExpectPerLane(p, params, {-1, 0}, 4, 11);
  const WhileAttrs& w = Only(bp.program, OpKind::kWhile).attrs_as<WhileAttrs>();
  EXPECT_EQ(CountKind(*w.cond, OpKind::kReduce), 1);
  EXPECT_GE(CountKind(*w.body, OpKind::kSelect), 2);
  EXPECT_TRUE(bp.output_batched[0]);
}

TEST(ControlFlowBatchingTest, WhileWithUnbatchedPredicateKeepsItsShape) {
  // Only x is batched: the counter and the predicate stay unbatched.
  const Program p = ForiWhile(Shape{2});
  const BatchedProgram bp =
      ExpectPerLane(p, {{F64(Shape{2}), -1, 1}, {I32(), 0, 5}}, {1, -1}, 3, 12);
  const Instruction& inst = Only(bp.program, OpKind::kWhile);
  const WhileAttrs& w = inst.attrs_as<WhileAttrs>();
  EXPECT_EQ(CountKind(*w.cond, OpKind::kReduce), 0);
  EXPECT_EQ(CountKind(*w.body, OpKind::kSelect), 0);
  EXPECT_EQ(w.body->parameter_type(0).shape, Shape{});        // the counter
  EXPECT_EQ(w.body->parameter_type(1).shape, (Shape{3, 2}));  // x, lane first
}

TEST(ControlFlowBatchingTest, WhileConditionOnAFloatCarry) {
  // while x < limit: x = x * 1.5 + 0.25; the trip count depends on both.
  WhileAttrs w;
  w.num_carries = 2;
  w.cond = Region({F64(), I32(), F64()}, [](TraceContext&, const V& q) {
    return V{lt(q[0], q[2]) & lt(q[1], 50)};
  });
  w.body = Region({F64(), I32(), F64()}, [](TraceContext&, const V& q) {
    return V{q[0] * 1.5 + 0.25, q[1] + 1};
  });
  const Program p = Build({F64(), F64()}, [&](TraceContext& ctx, const V& q) {
    return Emit(ctx, w,
                {q[0], constant(ctx, Literal::Scalar<int32_t>(0)), q[1]});
  });
  ExpectPerLaneEverywhere(p, {{F64(), 0, 2}, {F64(), 0, 6}});
}

TEST(ControlFlowBatchingTest, ScanRunningProduct) {
  ExpectPerLaneEverywhere(RunningProduct(4),
                          {{F64(), -2, 2}, {F64(Shape{4}), -2, 2}});
  ExpectPerLaneEverywhere(RunningProduct(3, /*reverse=*/true),
                          {{F64(), -2, 2}, {F64(Shape{3}), -2, 2}});
}

TEST(ControlFlowBatchingTest, ScanCarryBatchedByTheFixpoint) {
  // The carry's init is unbatched but the body adds a batched x: the carry
  // is batched (broadcast first); the ys are batched at dimension 1.
  const Program p = RunningProduct(4);
  const BatchedProgram bp = ExpectPerLane(
      p, {{F64(), -2, 2}, {F64(Shape{4}), -2, 2}}, {-1, 0}, 3, 13);
  const ScanAttrs& s = Only(bp.program, OpKind::kScan).attrs_as<ScanAttrs>();
  EXPECT_EQ(s.body->parameter_type(0).shape, Shape{3});
  EXPECT_EQ(s.length, 4);
  EXPECT_EQ(bp.output_batched, (std::vector<bool>{true, true}));
}

TEST(ControlFlowBatchingTest, ScanWithXsInvariantsAndUnbatchedCarry) {
  // Carries (c, k): c mixes in xs and an invariant; k only counts, so it
  // stays unbatched; a y that reads only k stays unbatched too.
  ScanAttrs s;
  s.num_carries = 2;
  s.num_xs = 1;
  s.length = 3;
  const Shape k{2};
  s.body =
      Region({F64(k), I32(), F64(k), F64(k)}, [](TraceContext&, const V& q) {
        return V{q[0] * q[3] + q[2], q[1] + 1, q[0] - q[2], q[1] * 2};
      });
  const Program p = Build(
      {F64(k), F64(Shape{3, 2}), F64(k)}, [&](TraceContext& ctx, const V& q) {
        return Emit(
            ctx, s,
            {q[0], constant(ctx, Literal::Scalar<int32_t>(1)), q[1], q[2]});
      });
  const std::vector<Param> params = {
      {F64(k), -2, 2}, {F64(Shape{3, 2}), -2, 2}, {F64(k), -2, 2}};
  ExpectPerLaneEverywhere(p, params);
  const BatchedProgram bp = ExpectPerLane(p, params, {-1, 2, -1}, 3, 14);
  EXPECT_EQ(bp.output_batched, (std::vector<bool>{true, false, true, false}));
}

TEST(ControlFlowBatchingTest, ScanBodyThatResetsABatchedCarry) {
  // The body returns a constant for carry 0: batched on entry, so the body
  // broadcasts its constant to keep the carry's batched type.
  ScanAttrs s;
  s.num_carries = 2;
  s.length = 2;
  s.body = Region({F64(), F64()}, [](TraceContext& ctx, const V& q) {
    return V{constant(ctx, Literal::Scalar<double>(1.0)), q[1] + q[0]};
  });
  const Program p = Build({F64(), F64()}, [&](TraceContext& ctx, const V& q) {
    return Emit(ctx, s, {q[0], q[1]});
  });
  ExpectPerLaneEverywhere(p, {{F64(), -2, 2}, {F64(), -2, 2}});
}

TEST(ControlFlowBatchingTest, CaseWithBatchedIndexSelectsPerLane) {
  const Program p = TwoBranchCase(Shape{2});
  const std::vector<Param> params = {
      {I32(), -1, 3}, {F64(Shape{2}), -2, 2}, {F64(Shape{2}), -2, 2}};
  ExpectPerLaneEverywhere(p, params);
  const BatchedProgram bp = ExpectPerLane(p, params, {0, -1, -1}, 5, 15);
  EXPECT_EQ(CountKind(bp.program, OpKind::kCase), 0);  // every branch runs
  EXPECT_EQ(bp.output_batched, (std::vector<bool>{true, true}));
}

TEST(ControlFlowBatchingTest, CaseWithUnbatchedIndexBatchesTheBranches) {
  const Program p = TwoBranchCase(Shape{2});
  const std::vector<Param> params = {
      {I32(), -1, 3}, {F64(Shape{2}), -2, 2}, {F64(Shape{2}), -2, 2}};
  // Only y batched: branch 1's second result (x) is unbatched there, but
  // branch 0's is batched, so the case's result is batched in both.
  const BatchedProgram bp = ExpectPerLane(p, params, {-1, -1, 1}, 3, 16);
  EXPECT_EQ(CountKind(bp.program, OpKind::kCase), 2);
  EXPECT_EQ(bp.output_batched, (std::vector<bool>{true, true}));
}

TEST(ControlFlowBatchingTest, NestedScanInsideWhile) {
  // while i < n: x = running_product(x, xs)[0] * 0.5 (a scan in the body).
  const Program inner = RunningProduct(3);
  ScanAttrs s = FirstOf(inner, OpKind::kScan)->attrs_as<ScanAttrs>();
  WhileAttrs w;
  w.num_carries = 2;
  w.cond = Region({I32(), F64(), F64(Shape{3}), I32()},
                  [](TraceContext&, const V& q) { return V{lt(q[0], q[3])}; });
  w.body = Region({I32(), F64(), F64(Shape{3}), I32()},
                  [&](TraceContext& ctx, const V& q) {
                    return V{q[0] + 1, Emit(ctx, s, {q[1], q[2]})[0] * 0.5};
                  });
  const Program p = Build({F64(), F64(Shape{3}), I32()}, [&](TraceContext& ctx,
                                                             const V& q) {
    return Emit(ctx, w,
                {constant(ctx, Literal::Scalar<int32_t>(0)), q[0], q[1], q[2]});
  });
  ExpectPerLaneEverywhere(
      p, {{F64(), -2, 2}, {F64(Shape{3}), -2, 2}, {I32(), 0, 3}});
}

TEST(ControlFlowBatchingTest, VmapOfTheGradientOfAScan) {
  // The backward program of a scan's VJP (a reverse scan) batches too.
  const Program p = RunningProduct(3);
  Result<transforms::VjpPrograms> v = transforms::Vjp(p, {true, true});
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  std::vector<Param> fwd_params = {{F64(), -2, 2}, {F64(Shape{3}), -2, 2}};
  ExpectPerLane(v->forward, fwd_params, {0, 0}, 3, 17);
  std::vector<Param> bwd_params;
  for (const ValueType& t : v->backward.parameter_types()) {
    bwd_params.push_back({t, -2, 2});
  }
  ExpectPerLaneEverywhere(v->backward, bwd_params);
}

TEST(ControlFlowBatchingTest, VmapOfTheJvpOfAWhile) {
  const Program p = ForiWhile(Shape{2});
  Result<Program> jvp = transforms::Jvp(p, {true, false});
  ASSERT_TRUE(jvp.ok()) << jvp.status().to_string();
  ExpectPerLaneEverywhere(
      *jvp, {{F64(Shape{2}), -1, 1}, {I32(), 0, 4}, {F64(Shape{2}), -1, 1}});
}

}  // namespace
}  // namespace baton::compiler::cf_test
