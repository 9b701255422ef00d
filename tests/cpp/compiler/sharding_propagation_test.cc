// Sharding propagation (compiler/sharding_propagation.h): each value's
// layout over the mesh and the communication it needs, for the programs
// JAX's "Distributed arrays and automatic parallelization" page partitions:
// sums, means, dots with either operand split, a data-parallel and a
// tensor-parallel (Megatron-style) MLP layer, reshapes.
#include "baton/compiler/sharding_propagation.h"

#include <gtest/gtest.h>

#include <memory>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/tracer.h"

namespace baton::compiler {
namespace {

ValueType F32(Shape shape) {
  return ValueType{std::move(shape), DType::kFloat32};
}

// Mesh ('i': 4) and ('a': 2, 'b': 2).
DeviceMesh Mesh1() { return DeviceMesh{{"i"}, {4}}; }
DeviceMesh Mesh2() { return DeviceMesh{{"a", "b"}, {2, 2}}; }

Sharding S(std::vector<std::vector<int>> dims) { return Sharding{std::move(dims)}; }
const std::vector<int> I = {0};  // the first mesh axis
const std::vector<int> R = {};   // whole

ValueId Dot(Program& p, ValueId l, ValueId r, std::vector<int64_t> lc,
            std::vector<int64_t> rc) {
  return p.Add(DotGeneralAttrs{{}, {}, std::move(lc), std::move(rc)}, {l, r})
      .value();
}

ShardingPlan Plan(const Program& p, const DeviceMesh& mesh,
                  std::vector<Sharding> params) {
  auto plan = PropagateShardings(p, mesh, params);
  EXPECT_TRUE(plan.ok()) << plan.status().to_string();
  return plan.value();
}

TEST(ShardingPropagationTest, SumOverTheSplitDimensionIsAPartialSumAllReduced) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 3})).value();
  const ValueId all = p.Add(ReduceAttrs{ReduceOp::kSum, {0, 1}}, {x}).value();
  const ValueId rows = p.Add(ReduceAttrs{ReduceOp::kMax, {1}}, {x}).value();
  const ValueId cols = p.Add(ReduceAttrs{ReduceOp::kSum, {0}}, {x}).value();
  ASSERT_TRUE(p.SetOutputs({all, rows, cols}).ok());
  const DeviceMesh mesh = Mesh1();
  const ShardingPlan plan = Plan(p, mesh, {S({I, R})});
  // sum(x): each device sums its rows, then an all-reduce: replicated.
  EXPECT_EQ(plan.sharding[all], S({}));
  EXPECT_EQ(plan.steps[all].all_reduce_axes, I);
  EXPECT_EQ(plan.steps[all].all_reduce_op, ReduceOp::kSum);
  // max over columns keeps the rows split, no communication.
  EXPECT_EQ(plan.sharding[rows].ToString(mesh), "P('i')");
  EXPECT_TRUE(plan.steps[rows].all_reduce_axes.empty());
  // sum over rows: partial per device, all-reduced.
  EXPECT_EQ(plan.sharding[cols], S({R}));
  EXPECT_EQ(plan.steps[cols].all_reduce_axes, I);
  EXPECT_EQ(plan.num_all_reduces(), 2);
  EXPECT_EQ(plan.num_all_gathers(), 0);
}

TEST(ShardingPropagationTest, DataParallelLayerNeedsNoCommunication) {
  // y = tanh(x @ w + b): x split by rows (the batch), w and b replicated.
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId w = p.AddParameter(F32({4, 6})).value();
  const ValueId b = p.AddParameter(F32({6})).value();
  const ValueId xw = Dot(p, x, w, {1}, {0});
  const ValueId bb = p.Add(BroadcastInDimAttrs{Shape({8, 6}), {1}}, {b}).value();
  const ValueId s = p.Add(BinaryAttrs{BinaryOp::kAdd}, {xw, bb}).value();
  const ValueId y = p.Add(UnaryAttrs{UnaryOp::kTanh}, {s}).value();
  ASSERT_TRUE(p.SetOutputs({y}).ok());
  const DeviceMesh mesh = Mesh1();
  const ShardingPlan plan = Plan(p, mesh, {S({I, R}), S({R, R}), S({R})});
  EXPECT_EQ(plan.sharding[xw].ToString(mesh), "P('i')");
  EXPECT_EQ(plan.sharding[y].ToString(mesh), "P('i')");
  // The bias is broadcast straight into the batch's layout (each device
  // its block of rows): the add reads it as it is, nothing is sliced.
  EXPECT_EQ(plan.sharding[bb].ToString(mesh), "P('i')");
  EXPECT_TRUE(plan.steps[s].reshards.empty());
  EXPECT_TRUE(plan.steps[bb].reshards.empty());
  EXPECT_EQ(plan.num_all_gathers(), 0);
  EXPECT_EQ(plan.num_all_reduces(), 0);
}

// A broadcast every user slices is made in their layout: where the split
// dimension comes from the operand (a column of x's own rows stretched over
// its columns), the operand is sliced instead, the smaller value.
TEST(ShardingPropagationTest, BroadcastsTakeTheirUsersLayoutSlicingTheirOperand) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId c = p.AddParameter(F32({8})).value();
  const ValueId cb = p.Add(BroadcastInDimAttrs{Shape({8, 4}), {0}}, {c}).value();
  const ValueId s = p.Add(BinaryAttrs{BinaryOp::kAdd}, {x, cb}).value();
  ASSERT_TRUE(p.SetOutputs({s}).ok());
  const DeviceMesh mesh = Mesh1();
  const ShardingPlan plan = Plan(p, mesh, {S({I, R}), S({R})});
  EXPECT_EQ(plan.sharding[cb].ToString(mesh), "P('i')");
  EXPECT_TRUE(plan.steps[s].reshards.empty());
  ASSERT_EQ(plan.steps[cb].reshards.size(), 1u);
  EXPECT_EQ(plan.steps[cb].reshards[0].kind, Reshard::Kind::kSlice);
  EXPECT_EQ(plan.steps[cb].reshards[0].to, S({I}));
}

// A chain of broadcasts (a scalar to a vector to a batch split by rows, the
// cotangent of a mean over a vmapped batch) is made in the batch's layout
// all the way: nothing of the batch's size is made whole or sliced.
TEST(ShardingPropagationTest, ChainsOfBroadcastsTakeTheirUsersLayout) {
  Program p;
  const ValueId x = p.AddParameter(F32({4, 8, 2})).value();
  const ValueId k = p.AddParameter(F32({})).value();
  const ValueId v4 = p.Add(BroadcastInDimAttrs{Shape({4}), {}}, {k}).value();
  const ValueId vb = p.Add(BroadcastInDimAttrs{Shape({4, 8, 2}), {0}}, {v4}).value();
  const ValueId s = p.Add(BinaryAttrs{BinaryOp::kMul}, {x, vb}).value();
  ASSERT_TRUE(p.SetOutputs({s}).ok());
  const DeviceMesh mesh = Mesh1();
  const ShardingPlan plan = Plan(p, mesh, {S({I, R, R}), S({})});
  EXPECT_EQ(plan.sharding[vb].ToString(mesh), "P('i')");
  EXPECT_EQ(plan.sharding[v4].ToString(mesh), "P('i')");
  EXPECT_TRUE(plan.steps[s].reshards.empty());
  EXPECT_TRUE(plan.steps[vb].reshards.empty());
  EXPECT_TRUE(plan.steps[v4].reshards.empty());
}

TEST(ShardingPropagationTest, MegatronMlpAllReducesOnceAfterTheSecondLayer) {
  // h = relu(x @ w1), w1 split by columns; y = h @ w2, w2 split by rows.
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId w1 = p.AddParameter(F32({4, 16})).value();
  const ValueId w2 = p.AddParameter(F32({16, 4})).value();
  const ValueId h = Dot(p, x, w1, {1}, {0});
  const ValueId zero = p.Add(ConstantAttrs{std::make_shared<const Literal>(
                                 Literal::Scalar(0.0f))},
                             {})
                           .value();
  const ValueId zb = p.Add(BroadcastInDimAttrs{Shape({8, 16}), {}}, {zero}).value();
  const ValueId relu = p.Add(BinaryAttrs{BinaryOp::kMax}, {h, zb}).value();
  const ValueId y = Dot(p, relu, w2, {1}, {0});
  ASSERT_TRUE(p.SetOutputs({y}).ok());
  const DeviceMesh mesh = Mesh1();
  const ShardingPlan plan =
      Plan(p, mesh, {S({R, R}), S({R, I}), S({I, R})});
  EXPECT_EQ(plan.sharding[h].ToString(mesh), "P(None, 'i')");
  EXPECT_EQ(plan.sharding[relu].ToString(mesh), "P(None, 'i')");
  EXPECT_TRUE(plan.steps[h].reshards.empty());
  EXPECT_TRUE(plan.steps[y].reshards.empty());
  EXPECT_EQ(plan.steps[y].all_reduce_axes, I);
  EXPECT_EQ(plan.sharding[y], S({R, R}));
  EXPECT_EQ(plan.num_all_reduces(), 1);
  EXPECT_EQ(plan.num_all_gathers(), 0);
}

TEST(ShardingPropagationTest, ADotWithOneSideSplitOnTheContractionSlicesTheOther) {
  // x (replicated) @ w, w split by rows: x is sliced by columns, partial sums.
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId w = p.AddParameter(F32({4, 2})).value();
  const ValueId y = Dot(p, x, w, {1}, {0});
  ASSERT_TRUE(p.SetOutputs({y}).ok());
  const DeviceMesh mesh = Mesh1();
  const ShardingPlan plan = Plan(p, mesh, {S({R, R}), S({I, R})});
  ASSERT_EQ(plan.steps[y].reshards.size(), 1u);
  EXPECT_EQ(plan.steps[y].reshards[0].operand, 0);
  EXPECT_EQ(plan.steps[y].reshards[0].to.ToString(mesh), "P(None, 'i')");
  EXPECT_EQ(plan.steps[y].reshards[0].kind, Reshard::Kind::kSlice);
  EXPECT_EQ(plan.steps[y].all_reduce_axes, I);
}

TEST(ShardingPropagationTest, AnAxisTheResultWouldUseTwiceIsGathered) {
  // x @ x.T with x split by rows: both free dimensions would be split over
  // 'i'; the right-hand side is gathered.
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId xt = p.Add(TransposeAttrs{{1, 0}}, {x}).value();
  const ValueId y = Dot(p, x, xt, {1}, {0});
  ASSERT_TRUE(p.SetOutputs({y}).ok());
  const DeviceMesh mesh = Mesh1();
  const ShardingPlan plan = Plan(p, mesh, {S({I, R})});
  EXPECT_EQ(plan.sharding[xt].ToString(mesh), "P(None, 'i')");
  EXPECT_EQ(plan.sharding[y].ToString(mesh), "P('i')");
  ASSERT_EQ(plan.steps[y].reshards.size(), 1u);
  EXPECT_EQ(plan.steps[y].reshards[0].operand, 1);
  EXPECT_EQ(plan.steps[y].reshards[0].kind, Reshard::Kind::kAllGather);
  EXPECT_TRUE(plan.steps[y].all_reduce_axes.empty());
  EXPECT_NE(plan.ToText(p, mesh).find("all-gather of operand 1"),
            std::string::npos)
      << plan.ToText(p, mesh);
}

TEST(ShardingPropagationTest, TwoDimensionalMeshSplitsBothOperands) {
  // x split ('a', None), w split (None, 'b'): y = x @ w is ('a', 'b').
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId w = p.AddParameter(F32({4, 6})).value();
  const ValueId y = Dot(p, x, w, {1}, {0});
  const ValueId m = p.Add(ReduceAttrs{ReduceOp::kSum, {1}}, {y}).value();
  ASSERT_TRUE(p.SetOutputs({y, m}).ok());
  const DeviceMesh mesh = Mesh2();
  const ShardingPlan plan = Plan(p, mesh, {S({{0}, R}), S({R, {1}})});
  EXPECT_EQ(plan.sharding[y].ToString(mesh), "P('a', 'b')");
  EXPECT_EQ(plan.num_all_gathers(), 0);
  // The row sums are partial over 'b' and stay split over 'a'.
  EXPECT_EQ(plan.sharding[m].ToString(mesh), "P('a')");
  EXPECT_EQ(plan.steps[m].all_reduce_axes, std::vector<int>{1});
}

TEST(ShardingPropagationTest, ReshapesKeepAMajorSplitAndGatherOtherwise) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 6})).value();
  const ValueId flat = p.Add(ReshapeAttrs{Shape({48})}, {x}).value();
  const ValueId back = p.Add(ReshapeAttrs{Shape({4, 2, 6})}, {flat}).value();
  const ValueId cols = p.AddParameter(F32({8, 8})).value();
  const ValueId cflat = p.Add(ReshapeAttrs{Shape({64})}, {cols}).value();
  ASSERT_TRUE(p.SetOutputs({back, cflat}).ok());
  const DeviceMesh mesh = Mesh1();
  const ShardingPlan plan = Plan(p, mesh, {S({I, R}), S({R, I})});
  // (8, 6) split by rows -> (48,): contiguous blocks of 12, still split.
  EXPECT_EQ(plan.sharding[flat].ToString(mesh), "P('i')");
  EXPECT_TRUE(plan.steps[flat].reshards.empty());
  // (48,) -> (4, 2, 6): the major dimension (4) takes the split.
  EXPECT_EQ(plan.sharding[back].ToString(mesh), "P('i')");
  // Split by columns, flattening would interleave the blocks: gathered.
  EXPECT_EQ(plan.sharding[cflat], S({R}));
  ASSERT_EQ(plan.steps[cflat].reshards.size(), 1u);
  EXPECT_EQ(plan.steps[cflat].reshards[0].kind, Reshard::Kind::kAllGather);
}

// On mesh ('a': 2, 'b': 2): dimensions split into blocks of one merge into
// one split over both axes (a shard_map's (2, 2, c) view of a parameter
// split P(('a', 'b')) going back to it), and such a split deals out to the
// dimensions a reshape makes; what would interleave blocks is gathered.
TEST(ShardingPropagationTest, ReshapesMergeAndDealSplitsOverSeveralAxes) {
  Program p;
  const ValueId x = p.AddParameter(F32({2, 2, 3})).value();
  const ValueId merged = p.Add(ReshapeAttrs{Shape({12})}, {x}).value();
  const ValueId y = p.AddParameter(F32({12})).value();
  const ValueId dealt = p.Add(ReshapeAttrs{Shape({2, 2, 3})}, {y}).value();
  const ValueId two = p.Add(ReshapeAttrs{Shape({4, 3})}, {y}).value();
  const ValueId z = p.AddParameter(F32({2, 6})).value();  // 'a' blocks of 3
  const ValueId zs = p.Add(ReshapeAttrs{Shape({12})}, {z}).value();
  ASSERT_TRUE(p.SetOutputs({merged, dealt, two, zs}).ok());
  const DeviceMesh mesh = Mesh2();
  const std::vector<int> A = {0}, B = {1}, AB = {0, 1};
  const ShardingPlan plan =
      Plan(p, mesh, {S({A, B, R}), S({AB}), S({R, B})});
  EXPECT_EQ(plan.sharding[merged].ToString(mesh), "P(('a', 'b'))");
  EXPECT_TRUE(plan.steps[merged].reshards.empty());
  EXPECT_EQ(plan.sharding[dealt].ToString(mesh), "P('a', 'b')");
  EXPECT_TRUE(plan.steps[dealt].reshards.empty());
  EXPECT_EQ(plan.sharding[two].ToString(mesh), "P(('a', 'b'))");
  EXPECT_TRUE(plan.steps[two].reshards.empty());
  // A whole dimension before a split one: merging would interleave.
  EXPECT_EQ(plan.sharding[zs], S({R}));
  ASSERT_EQ(plan.steps[zs].reshards.size(), 1u);
  EXPECT_EQ(plan.steps[zs].reshards[0].kind, Reshard::Kind::kAllGather);
}

// A slice along the split dimension reads its operand whole (gathered) and
// is computed whole; its result keeps the split where its length still
// divides by it -- each device slices its block after (JAX's layouts:
// x[1:5] of 8 over 4 devices is split, x[1:4] whole).
TEST(ShardingPropagationTest, ASliceAlongTheSplitKeepsItWhereItsLengthDivides) {
  Program p;
  const ValueId x = p.AddParameter(F32({8})).value();
  const ValueId s = p.Add(SliceAttrs{{1}, {5}, {1}}, {x}).value();
  const ValueId t = p.Add(SliceAttrs{{1}, {4}, {1}}, {x}).value();
  ASSERT_TRUE(p.SetOutputs({s, t}).ok());
  const ShardingPlan plan = Plan(p, Mesh1(), {S({I})});
  EXPECT_EQ(plan.sharding[s], S({I}));
  ASSERT_TRUE(plan.steps[s].computed.has_value());
  EXPECT_EQ(*plan.steps[s].computed, S({R}));
  ASSERT_EQ(plan.steps[s].reshards.size(), 1u);
  EXPECT_EQ(plan.steps[s].reshards[0].kind, Reshard::Kind::kAllGather);
  EXPECT_EQ(plan.sharding[t], S({R}));
  EXPECT_FALSE(plan.steps[t].computed.has_value());
  ASSERT_EQ(plan.steps[t].reshards.size(), 1u);
  EXPECT_EQ(plan.steps[t].reshards[0].kind, Reshard::Kind::kAllGather);
}

// A scan whose body needs communication is run whole: its ys are laid out
// whole with their leading, stacked dimension (a layout of the body's y
// rank once made a reader of the ys reshard it through a too-short layout,
// and jit of a grad through such a scan crashed).
TEST(ShardingPropagationTest, AScanRunWholeLaysOutItsYsWithTheirLeadingDimension) {
  TraceContext body_ctx;
  const Tracer c = body_ctx.AddParameter(F32({4, 8}));
  const Tracer w = body_ctx.AddParameter(F32({8, 8}));
  const Tracer next = tanh(body_ctx.Emit(DotGeneralAttrs{{}, {}, {1}, {0}}, {c, w}));
  ScanAttrs scan;
  scan.num_carries = 1;
  scan.num_xs = 1;
  scan.length = 2;
  scan.body = std::make_shared<const Program>(body_ctx.Finish({next, c}));
  Program p;
  const ValueId x = p.AddParameter(F32({4, 8})).value();
  const ValueId ws = p.AddParameter(F32({2, 8, 8})).value();
  const std::vector<ValueId> outs = AddRegionGroup(p, scan, {x, ws}).value();
  const ValueId doubled = p.Add(BinaryAttrs{BinaryOp::kAdd}, {outs[1], outs[1]}).value();
  ASSERT_TRUE(p.SetOutputs({outs[0], doubled}).ok());
  const ShardingPlan plan = Plan(p, Mesh1(), {S({R, R}), S({R, R, I})});
  EXPECT_TRUE(plan.steps[outs[0]].regions.empty());  // run whole
  EXPECT_EQ(plan.sharding[outs[0]], S({R, R}));
  EXPECT_EQ(plan.sharding[outs[1]], S({R, R, R}));
  EXPECT_EQ(plan.sharding[doubled], S({R, R, R}));
  EXPECT_TRUE(plan.steps[doubled].reshards.empty());
}

TEST(ShardingPropagationTest, ElementwiseOperandsSplitDifferentlyFollowTheMostSplit) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId y = p.AddParameter(F32({8, 4})).value();
  const ValueId z = p.Add(BinaryAttrs{BinaryOp::kMul}, {x, y}).value();
  ASSERT_TRUE(p.SetOutputs({z}).ok());
  const DeviceMesh mesh = Mesh2();
  // x over ('a', 'b') by rows (4 ways), y over 'a' by columns (2 ways).
  const ShardingPlan plan = Plan(p, mesh, {S({{0, 1}, R}), S({R, {0}})});
  EXPECT_EQ(plan.sharding[z].ToString(mesh), "P(('a', 'b'))");
  ASSERT_EQ(plan.steps[z].reshards.size(), 1u);
  EXPECT_EQ(plan.steps[z].reshards[0].operand, 1);
  EXPECT_EQ(plan.steps[z].reshards[0].kind, Reshard::Kind::kAllGather);
}

// JAX's merge: x split by rows over 'a', y by columns over 'b': the sum is
// split both ways, each operand only sliced.
TEST(ShardingPropagationTest, ElementwiseOperandsSplitAlongDifferentDimensionsMerge) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId y = p.AddParameter(F32({8, 4})).value();
  const ValueId z = p.Add(BinaryAttrs{BinaryOp::kAdd}, {x, y}).value();
  ASSERT_TRUE(p.SetOutputs({z}).ok());
  const DeviceMesh mesh = Mesh2();
  const ShardingPlan plan = Plan(p, mesh, {S({{0}, R}), S({R, {1}})});
  EXPECT_EQ(plan.sharding[z].ToString(mesh), "P('a', 'b')");
  ASSERT_EQ(plan.steps[z].reshards.size(), 2u);
  for (const Reshard& r : plan.steps[z].reshards) {
    EXPECT_EQ(r.kind, Reshard::Kind::kSlice);
  }
  EXPECT_EQ(plan.num_all_gathers(), 0);
}

TEST(ShardingPropagationTest, BadParameterShardingsAreRefusedByName) {
  Program p;
  const ValueId x = p.AddParameter(F32({6, 4})).value();
  ASSERT_TRUE(p.SetOutputs({x}).ok());
  const DeviceMesh mesh = Mesh1();
  auto wrong_rank = PropagateShardings(p, mesh, {S({I})});
  ASSERT_FALSE(wrong_rank.ok());
  EXPECT_NE(wrong_rank.status().message().find("parameter 0"), std::string::npos);
  auto uneven = PropagateShardings(p, mesh, {S({I, R})});
  ASSERT_FALSE(uneven.ok());
  EXPECT_NE(uneven.status().message().find("does not divide"), std::string::npos)
      << uneven.status().message();
  auto twice = PropagateShardings(p, Mesh2(), {S({{0}, {0}})});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("'a' splits two dimensions"),
            std::string::npos)
      << twice.status().message();
  auto unknown = PropagateShardings(p, mesh, {S({R, {3}})});
  EXPECT_FALSE(unknown.ok());
  EXPECT_FALSE(PropagateShardings(p, mesh, {}).ok());
}

}  // namespace
}  // namespace baton::compiler
