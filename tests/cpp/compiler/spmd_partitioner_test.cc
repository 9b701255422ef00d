// SPMD partitioning (compiler/spmd_partitioner.h): each program of JAX's
// "Distributed arrays and automatic parallelization" cases -- sums, means,
// dots with either operand split, data-parallel and tensor-parallel
// (Megatron-style) MLP layers, reshapes, 2-D meshes -- partitioned into
// per-device stages, run by the reference SPMD interpreter
// (compiler/spmd_interpreter.h) on every device's blocks, and compared with
// the whole program run on one device. Values are small integers held in
// float32, so every sum is exact whatever the order. Each test also checks
// the communication (how many all-reduces and all-gathers) and the blocks'
// sizes: 1/N of the whole where the value is split.
#include "baton/compiler/spmd_partitioner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "baton/compiler/control_flow.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/spmd_interpreter.h"
#include "baton/compiler/tracer.h"

namespace baton::compiler {
namespace {

ValueType F32(Shape shape) { return ValueType{std::move(shape), DType::kFloat32}; }

DeviceMesh Mesh1() { return DeviceMesh{{"i"}, {4}}; }
DeviceMesh Mesh2() { return DeviceMesh{{"a", "b"}, {2, 2}}; }

Sharding S(std::vector<std::vector<int>> dims) { return Sharding{std::move(dims)}; }
const std::vector<int> I = {0};
const std::vector<int> B = {1};
const std::vector<int> R = {};

// Integer values in [-3, 3], different per argument and element.
Literal Arg(const Shape& shape, int seed) {
  std::vector<float> v(shape.num_elements());
  for (size_t k = 0; k < v.size(); ++k) {
    v[k] = static_cast<float>(static_cast<int>((k * 37 + seed * 11) % 7) - 3);
  }
  return Literal::FromVector(v, shape);
}

int Count(const SpmdProgram& sp, SpmdStage::Kind kind) {
  int n = 0;
  for (const SpmdStage& s : sp.stages) n += s.kind == kind;
  return n;
}

// Partitions `p`, runs it on the mesh and on one device, expects equal
// outputs; returns the partitioned program for further checks.
SpmdProgram CheckAgainstOneDevice(const Program& p, const DeviceMesh& mesh,
                                  const std::vector<Sharding>& params) {
  Result<SpmdProgram> sp = PartitionForMesh(p, mesh, params);
  EXPECT_TRUE(sp.ok()) << sp.status().to_string();
  if (!sp.ok()) return {};
  std::vector<Literal> args;
  for (int i = 0; i < p.num_parameters(); ++i) {
    args.push_back(Arg(p.parameter_type(i).shape, i + 1));
  }
  Result<std::vector<Literal>> want = Interpret(p, args);
  Result<std::vector<Literal>> got = InterpretSpmd(sp.value(), args);
  EXPECT_TRUE(want.ok()) << want.status().to_string();
  EXPECT_TRUE(got.ok()) << got.status().to_string() << "\n"
                        << sp.value().ToText();
  if (!want.ok() || !got.ok()) return sp.value();
  EXPECT_EQ(got.value().size(), want.value().size());
  for (size_t k = 0; k < want.value().size(); ++k) {
    const Literal& w = want.value()[k];
    const Literal& g = got.value()[k];
    EXPECT_EQ(g.shape(), w.shape()) << "output " << k;
    EXPECT_EQ(std::memcmp(g.untyped_data(), w.untyped_data(),
                          static_cast<size_t>(w.byte_size())),
              0)
        << "output " << k << " differs\n"
        << sp.value().ToText();
  }
  return sp.value();
}

// A scalar constant of `p`.
template <typename T>
ValueId Scalar(Program& p, T value) {
  return p.Add(ConstantAttrs{std::make_shared<Literal>(Literal::Scalar<T>(value))}, {})
      .value();
}

ValueId Dot(Program& p, ValueId l, ValueId r, std::vector<int64_t> lc,
            std::vector<int64_t> rc) {
  return p.Add(DotGeneralAttrs{{}, {}, std::move(lc), std::move(rc)}, {l, r})
      .value();
}

TEST(SpmdPartitionerTest, SumsAndMeansAllReducePartialResults) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 6})).value();
  const ValueId all = p.Add(ReduceAttrs{ReduceOp::kSum, {0, 1}}, {x}).value();
  const ValueId rows = p.Add(ReduceAttrs{ReduceOp::kMax, {1}}, {x}).value();
  const ValueId cols = p.Add(ReduceAttrs{ReduceOp::kSum, {0}}, {x}).value();
  const ValueId n = Scalar<float>(p, 8.0f);
  const ValueId nb = p.Add(BroadcastInDimAttrs{Shape{6}, {}}, {n}).value();
  const ValueId mean = p.Add(BinaryAttrs{BinaryOp::kDiv}, {cols, nb}).value();
  ASSERT_TRUE(p.SetOutputs({all, rows, mean}).ok());
  const SpmdProgram sp = CheckAgainstOneDevice(p, Mesh1(), {S({I, R})});
  // The total and the column sums: one packed all-reduce of 1 + 6 values.
  EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllReduce), 1);
  EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllGather), 0);
  // Each device holds a quarter of x; the row maxima stay split.
  EXPECT_EQ(sp.slots[sp.parameter_slots[0]].block, Shape({2, 6}));
  EXPECT_EQ(sp.slots[sp.output_slots[1]].block, Shape({2}));
  EXPECT_EQ(sp.slots[sp.output_slots[1]].sharding, S({I}));
  EXPECT_TRUE(sp.slots[sp.output_slots[0]].sharding.IsReplicated());
}

TEST(SpmdPartitionerTest, DotWithEitherOperandSplit) {
  // x: rows split (data parallel) @ w replicated: rows of the result split,
  // no communication.
  {
    Program p;
    const ValueId x = p.AddParameter(F32({8, 4})).value();
    const ValueId w = p.AddParameter(F32({4, 3})).value();
    ASSERT_TRUE(p.SetOutputs({Dot(p, x, w, {1}, {0})}).ok());
    const SpmdProgram sp = CheckAgainstOneDevice(p, Mesh1(), {S({I, R}), S({R, R})});
    EXPECT_EQ(sp.num_communication_stages(), 0);
    EXPECT_EQ(sp.slots[sp.output_slots[0]].sharding, S({I, R}));
  }
  // Contracting dimension split on both sides: partial sums, all-reduced.
  {
    Program p;
    const ValueId x = p.AddParameter(F32({8, 4})).value();
    const ValueId w = p.AddParameter(F32({4, 3})).value();
    ASSERT_TRUE(p.SetOutputs({Dot(p, x, w, {1}, {0})}).ok());
    const SpmdProgram sp = CheckAgainstOneDevice(p, Mesh1(), {S({R, I}), S({I, R})});
    EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllReduce), 1);
    EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllGather), 0);
  }
  // Only the right-hand side split on its contracting dimension: the left
  // is sliced to match (no gather), then the partial sums are all-reduced.
  {
    Program p;
    const ValueId x = p.AddParameter(F32({8, 4})).value();
    const ValueId w = p.AddParameter(F32({4, 3})).value();
    ASSERT_TRUE(p.SetOutputs({Dot(p, x, w, {1}, {0})}).ok());
    const SpmdProgram sp = CheckAgainstOneDevice(p, Mesh1(), {S({R, R}), S({I, R})});
    EXPECT_EQ(Count(sp, SpmdStage::Kind::kSlice), 1);
    EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllReduce), 1);
    EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllGather), 0);
  }
  // x @ x.T with rows split: the right-hand side is gathered (an axis may
  // split one result dimension only).
  {
    Program p;
    const ValueId x = p.AddParameter(F32({8, 4})).value();
    ASSERT_TRUE(p.SetOutputs({Dot(p, x, x, {1}, {1})}).ok());
    const SpmdProgram sp = CheckAgainstOneDevice(p, Mesh1(), {S({I, R})});
    EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllGather), 1);
    EXPECT_EQ(sp.slots[sp.output_slots[0]].sharding, S({I, R}));
  }
}

// A Megatron-style MLP layer: w1 split by columns, w2 by rows. The hidden
// activations stay split; one all-reduce at the end.
// A scan of `length` steps over one carry of `shape`: the body returns the
// carry times 2 and, with `with_y`, the carry as its y.
ScanAttrs DoublingScan(const Shape& shape, int64_t length, bool with_y) {
  TraceContext body_ctx;
  const Tracer c = body_ctx.AddParameter(F32(shape));
  std::vector<Tracer> outs{c * 2.0};
  if (with_y) outs.push_back(c);
  ScanAttrs scan;
  scan.num_carries = 1;
  scan.length = length;
  scan.body = std::make_shared<const Program>(body_ctx.Finish(outs));
  return scan;
}

TEST(SpmdPartitionerTest, TensorParallelMlpHasOneAllReduce) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 16})).value();
  const ValueId w1 = p.AddParameter(F32({16, 32})).value();
  const ValueId b1 = p.AddParameter(F32({32})).value();
  const ValueId w2 = p.AddParameter(F32({32, 4})).value();
  const ValueId h = Dot(p, x, w1, {1}, {0});
  const ValueId bb = p.Add(BroadcastInDimAttrs{Shape{8, 32}, {1}}, {b1}).value();
  const ValueId hb = p.Add(BinaryAttrs{BinaryOp::kAdd}, {h, bb}).value();
  const ValueId zero = Scalar<float>(p, 0.0f);
  const ValueId zb = p.Add(BroadcastInDimAttrs{Shape{8, 32}, {}}, {zero}).value();
  const ValueId relu = p.Add(BinaryAttrs{BinaryOp::kMax}, {hb, zb}).value();
  const ValueId y = Dot(p, relu, w2, {1}, {0});
  ASSERT_TRUE(p.SetOutputs({y}).ok());
  const SpmdProgram sp = CheckAgainstOneDevice(
      p, Mesh1(), {S({R, R}), S({R, I}), S({I}), S({I, R})});
  EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllReduce), 1);
  EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllGather), 0);
  // The parameters are a quarter per device; so is the hidden layer
  // (zeros are sliced from a replicated broadcast: the planner's choice).
  EXPECT_EQ(sp.slots[sp.parameter_slots[1]].block, Shape({16, 8}));
  EXPECT_EQ(sp.slots[sp.parameter_slots[3]].block, Shape({8, 4}));
}

// Data parallel on a 2-D mesh: the batch split over both axes, the weights
// replicated; the loss (a mean) is all-reduced over both axes.
TEST(SpmdPartitionerTest, DataParallelLossOnATwoDimensionalMesh) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId w = p.AddParameter(F32({4, 2})).value();
  const ValueId y = Dot(p, x, w, {1}, {0});
  const ValueId t = p.Add(UnaryAttrs{UnaryOp::kAbs}, {y}).value();
  const ValueId loss = p.Add(ReduceAttrs{ReduceOp::kSum, {0, 1}}, {t}).value();
  ASSERT_TRUE(p.SetOutputs({loss, y}).ok());
  const SpmdProgram sp =
      CheckAgainstOneDevice(p, Mesh2(), {S({{0, 1}, R}), S({R, R})});
  ASSERT_EQ(Count(sp, SpmdStage::Kind::kAllReduce), 1);
  for (const SpmdStage& st : sp.stages) {
    if (st.kind == SpmdStage::Kind::kAllReduce) {
      EXPECT_EQ(st.axes, (std::vector<int>{0, 1}));
    }
  }
  EXPECT_EQ(sp.slots[sp.output_slots[1]].block, Shape({2, 2}));
}

// Model and data parallel at once: rows over 'a', columns over 'b'.
TEST(SpmdPartitionerTest, TwoDimensionalShardingOfBothOperands) {
  Program p;
  const ValueId x = p.AddParameter(F32({4, 8})).value();
  const ValueId w = p.AddParameter(F32({8, 6})).value();
  const ValueId y = Dot(p, x, w, {1}, {0});
  const ValueId s = p.Add(ReduceAttrs{ReduceOp::kSum, {1}}, {y}).value();
  ASSERT_TRUE(p.SetOutputs({y, s}).ok());
  const SpmdProgram sp = CheckAgainstOneDevice(p, Mesh2(), {S({I, R}), S({R, B})});
  EXPECT_EQ(sp.num_communication_stages(), 1);  // the row sums over 'b'
  EXPECT_EQ(sp.slots[sp.output_slots[0]].sharding, S({I, B}));
  EXPECT_EQ(sp.slots[sp.output_slots[0]].block, Shape({2, 3}));
}

TEST(SpmdPartitionerTest, ReshapesKeepOrGatherTheirSplit) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 6})).value();
  // (8, 6) -> (8, 2, 3): the split rows survive.
  const ValueId a = p.Add(ReshapeAttrs{Shape{8, 2, 3}}, {x}).value();
  // (8, 6) -> (48,): the major dimension of the merged group.
  const ValueId b = p.Add(ReshapeAttrs{Shape{48}}, {x}).value();
  // (8, 6) -> (6, 8): no dimension lines up: gathered.
  const ValueId c = p.Add(ReshapeAttrs{Shape{6, 8}}, {x}).value();
  ASSERT_TRUE(p.SetOutputs({a, b, c}).ok());
  const SpmdProgram sp = CheckAgainstOneDevice(p, Mesh1(), {S({I, R})});
  EXPECT_EQ(sp.slots[sp.output_slots[0]].block, Shape({2, 2, 3}));
  EXPECT_EQ(sp.slots[sp.output_slots[1]].block, Shape({12}));
  EXPECT_TRUE(sp.slots[sp.output_slots[2]].sharding.IsReplicated());
  EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllGather), 1);
}

// Dimensions of one added or dropped (a scan step's row of stacked
// weights, unroll_scans.h) carry no split: the split dimension keeps it.
TEST(SpmdPartitionerTest, ReshapesAddingOrDroppingDimensionsOfOneKeepTheSplit) {
  Program p;
  const ValueId x = p.AddParameter(F32({1, 8, 8})).value();
  const ValueId dropped = p.Add(ReshapeAttrs{Shape{8, 8}}, {x}).value();
  const ValueId added = p.Add(ReshapeAttrs{Shape{8, 1, 8}}, {dropped}).value();
  ASSERT_TRUE(p.SetOutputs({dropped, added}).ok());
  const SpmdProgram sp = CheckAgainstOneDevice(p, Mesh1(), {S({R, R, I})});
  EXPECT_EQ(sp.slots[sp.output_slots[0]].block, Shape({8, 2}));
  EXPECT_EQ(sp.slots[sp.output_slots[1]].block, Shape({8, 1, 2}));
  EXPECT_EQ(sp.num_communication_stages(), 0);
}

// A scan over layers whose stacked weights are split Megatron-style (the
// first matrix by columns, the second by rows) needs an all-reduce in every
// step: unrolled, each layer's all-reduce sits between stages and the
// weights stay a quarter per device, where a scan run whole would gather
// every layer's weights on every device first.
TEST(SpmdPartitionerTest, ScansOverSplitLayersAreUnrolledAndStaySplit) {
  const int64_t layers = 2;
  TraceContext body_ctx;
  const Tracer c = body_ctx.AddParameter(F32({4, 8}));
  const Tracer a = body_ctx.AddParameter(F32({8, 8}));
  const Tracer b = body_ctx.AddParameter(F32({8, 8}));
  const Tracer h = maximum(
      body_ctx.Emit(DotGeneralAttrs{{}, {}, {1}, {0}}, {c, a}), 0.0);
  const Tracer next = c + body_ctx.Emit(DotGeneralAttrs{{}, {}, {1}, {0}}, {h, b});
  auto body = std::make_shared<const Program>(body_ctx.Finish({next, next}));
  Program p;
  const ValueId x = p.AddParameter(F32({4, 8})).value();
  const ValueId w1 = p.AddParameter(F32({layers, 8, 8})).value();
  const ValueId w2 = p.AddParameter(F32({layers, 8, 8})).value();
  ScanAttrs scan;
  scan.num_carries = 1;
  scan.num_xs = 2;
  scan.length = layers;
  scan.body = body;
  const std::vector<ValueId> outs = AddRegionGroup(p, scan, {x, w1, w2}).value();
  ASSERT_TRUE(p.SetOutputs(outs).ok());
  const SpmdProgram sp =
      CheckAgainstOneDevice(p, Mesh1(), {S({R, R}), S({R, R, I}), S({R, I, R})});
  EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllReduce), layers);
  EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllGather), 0);
  EXPECT_EQ(sp.slots[sp.parameter_slots[1]].block, Shape({layers, 8, 2}));
  EXPECT_EQ(sp.slots[sp.parameter_slots[2]].block, Shape({layers, 2, 8}));
  // No stage reads a whole layer of either weight.
  for (const SpmdStage& st : sp.stages) {
    if (st.kind != SpmdStage::Kind::kCompute) continue;
    for (int in : st.inputs) {
      EXPECT_NE(sp.slots[in].block, Shape({8, 8})) << sp.ToText();
    }
  }
}

// A loop's results stay one group in one stage when only some are read
// after an all-reduce: the partitioner once scheduled the member read late
// into a later stage than the member that is an output, and the stage's
// program was refused (a control-flow group's results must be adjacent).
TEST(SpmdPartitionerTest, ALoopsResultsStayTogetherWhenReadAtDifferentTimes) {
  const ScanAttrs scan = DoublingScan(Shape{8, 4}, 2, /*with_y=*/true);
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId total = p.Add(ReduceAttrs{ReduceOp::kSum, {0, 1}}, {x}).value();
  const std::vector<ValueId> outs = AddRegionGroup(p, scan, {x}).value();
  const ValueId spread =
      p.Add(BroadcastInDimAttrs{Shape{2, 8, 4}, {}}, {total}).value();
  const ValueId late = p.Add(BinaryAttrs{BinaryOp::kAdd}, {outs[1], spread}).value();
  const ValueId early = p.Add(UnaryAttrs{UnaryOp::kNeg}, {x}).value();
  ASSERT_TRUE(p.SetOutputs({outs[0], late, early}).ok());
  const SpmdProgram sp = CheckAgainstOneDevice(p, Mesh1(), {S({I, R})});
  EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllReduce), 1);
}

// Two loops with the same body (as an unrolled scan's inner loops are, one
// per step) whose operands are split differently each get a block program
// of their own (the partitioner once reused the first one's).
TEST(SpmdPartitionerTest, LoopsSharingABodyGetBlockProgramsOfTheirOwnLayout) {
  const ScanAttrs scan = DoublingScan(Shape{8, 8}, 2, /*with_y=*/false);
  Program p;
  const ValueId rows = p.AddParameter(F32({8, 8})).value();
  const ValueId cols = p.AddParameter(F32({8, 8})).value();
  const ValueId a = AddRegionGroup(p, scan, {rows}).value()[0];
  const ValueId b = AddRegionGroup(p, scan, {cols}).value()[0];
  ASSERT_TRUE(p.SetOutputs({a, b}).ok());
  const SpmdProgram sp = CheckAgainstOneDevice(p, Mesh1(), {S({I, R}), S({R, I})});
  EXPECT_EQ(sp.num_communication_stages(), 0);
  EXPECT_EQ(sp.slots[sp.output_slots[0]].block, Shape({2, 8}));
  EXPECT_EQ(sp.slots[sp.output_slots[1]].block, Shape({8, 2}));
}

// A while loop whose body needs communication -- a tensor-parallel layer
// applied until a counter runs out, its weights split by columns and rows
// -- runs as a loop stage: the weights stay split (nothing is gathered),
// and each iteration all-reduces the layer's partial result inside the
// loop's own body program, as JAX keeps it.
TEST(SpmdPartitionerTest, AWhileLoopNeedingCommunicationKeepsItsOperandsSplit) {
  const Shape xs{8, 16};
  TraceContext body_ctx;
  const Tracer x = body_ctx.AddParameter(F32(xs));
  const Tracer n = body_ctx.AddParameter(F32(Shape{}));
  const Tracer w1 = body_ctx.AddParameter(F32({16, 32}));
  const Tracer w2 = body_ctx.AddParameter(F32({32, 16}));
  // Clipped to [-3, 3]: small integers, so every sum is exact.
  const Tracer y = minimum(maximum(matmul(matmul(x, w1), w2), -3.0), 3.0);
  WhileAttrs loop;
  loop.num_carries = 2;
  loop.body = std::make_shared<const Program>(body_ctx.Finish({y, n + 1.0}));
  TraceContext cond_ctx;
  cond_ctx.AddParameter(F32(xs));
  const Tracer c = cond_ctx.AddParameter(F32(Shape{}));
  cond_ctx.AddParameter(F32({16, 32}));
  cond_ctx.AddParameter(F32({32, 16}));
  loop.cond = std::make_shared<const Program>(cond_ctx.Finish({lt(c, 3.0)}));

  Program p;
  const ValueId px = p.AddParameter(F32(xs)).value();
  const ValueId pn = p.AddParameter(F32(Shape{})).value();
  const ValueId pw1 = p.AddParameter(F32({16, 32})).value();
  const ValueId pw2 = p.AddParameter(F32({32, 16})).value();
  const std::vector<ValueId> outs = AddRegionGroup(p, loop, {px, pn, pw1, pw2}).value();
  ASSERT_TRUE(p.SetOutputs({outs[0], outs[1]}).ok());
  const SpmdProgram sp = CheckAgainstOneDevice(
      p, Mesh1(), {S({R, R}), S({}), S({R, I}), S({I, R})});
  ASSERT_EQ(Count(sp, SpmdStage::Kind::kLoop), 1);
  EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllGather), 0);
  EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllReduce), 0);
  for (const SpmdStage& st : sp.stages) {
    if (st.kind != SpmdStage::Kind::kLoop) continue;
    EXPECT_EQ(sp.slots[st.inputs[2]].block, Shape({16, 8}));
    EXPECT_EQ(sp.slots[st.inputs[3]].block, Shape({8, 16}));
    const SpmdProgram& body = st.loop->body;
    EXPECT_EQ(Count(body, SpmdStage::Kind::kAllReduce), 1) << body.ToText();
    EXPECT_EQ(Count(body, SpmdStage::Kind::kAllGather), 0) << body.ToText();
    EXPECT_EQ(st.loop->cond.num_communication_stages(), 0);
  }
  EXPECT_NE(sp.ToText().find("while %"), std::string::npos) << sp.ToText();
}

// A scan too long to unroll (steps x body past the budget of 2^16 added
// instructions) whose body needs communication -- a long fori_loop of a
// tensor-parallel layer -- runs as a while loop stage: the weights stay
// split, each step's all-reduce inside the loop.
TEST(SpmdPartitionerTest, AScanTooLongToUnrollRunsAsALoopStage) {
  TraceContext body_ctx;
  const Tracer x = body_ctx.AddParameter(F32({4, 8}));
  const Tracer w1 = body_ctx.AddParameter(F32({8, 16}));
  const Tracer w2 = body_ctx.AddParameter(F32({16, 8}));
  const Tracer y = minimum(maximum(matmul(matmul(x, w1), w2), -3.0), 3.0);
  const Program body = body_ctx.Finish({y});
  ScanAttrs scan;
  scan.num_carries = 1;
  scan.length = (int64_t{1} << 16) / body.num_values() + 1;
  scan.body = std::make_shared<const Program>(body);
  Program p;
  const ValueId px = p.AddParameter(F32({4, 8})).value();
  const ValueId pw1 = p.AddParameter(F32({8, 16})).value();
  const ValueId pw2 = p.AddParameter(F32({16, 8})).value();
  const ValueId out = AddRegionGroup(p, scan, {px, pw1, pw2}).value()[0];
  ASSERT_TRUE(p.SetOutputs({out}).ok());
  const SpmdProgram sp =
      CheckAgainstOneDevice(p, Mesh1(), {S({R, R}), S({R, I}), S({I, R})});
  ASSERT_EQ(Count(sp, SpmdStage::Kind::kLoop), 1) << sp.ToText();
  EXPECT_EQ(sp.num_communication_stages(), 0) << sp.ToText();
  for (const SpmdStage& st : sp.stages) {
    if (st.kind != SpmdStage::Kind::kLoop) continue;
    EXPECT_EQ(Count(st.loop->body, SpmdStage::Kind::kAllReduce), 1);
    EXPECT_EQ(Count(st.loop->body, SpmdStage::Kind::kAllGather), 0);
  }
}

// A loop whose condition sums a split carry: the sum's all-reduce is in the
// condition's program, the carry stays split through the loop.
TEST(SpmdPartitionerTest, AWhileConditionNeedingCommunicationKeepsTheCarrySplit) {
  const Shape vs{16};
  TraceContext body_ctx;
  const Tracer v = body_ctx.AddParameter(F32(vs));
  WhileAttrs loop;
  loop.num_carries = 1;
  loop.body = std::make_shared<const Program>(body_ctx.Finish({v + 1.0}));
  TraceContext cond_ctx;
  const Tracer c = cond_ctx.AddParameter(F32(vs));
  loop.cond = std::make_shared<const Program>(cond_ctx.Finish({lt(sum(c), 100.0)}));
  Program p;
  const ValueId pv = p.AddParameter(F32(vs)).value();
  const ValueId out = AddRegionGroup(p, loop, {pv}).value()[0];
  ASSERT_TRUE(p.SetOutputs({out}).ok());
  const SpmdProgram sp = CheckAgainstOneDevice(p, Mesh1(), {S({I})});
  ASSERT_EQ(Count(sp, SpmdStage::Kind::kLoop), 1);
  EXPECT_EQ(sp.num_communication_stages(), 0);
  EXPECT_EQ(sp.slots[sp.output_slots[0]].block, Shape({4}));
  for (const SpmdStage& st : sp.stages) {
    if (st.kind != SpmdStage::Kind::kLoop) continue;
    EXPECT_EQ(Count(st.loop->cond, SpmdStage::Kind::kAllReduce), 1);
    EXPECT_EQ(st.loop->body.num_communication_stages(), 0);
  }
}

// A conditional whose branch needs communication -- a tensor-parallel
// layer on one side, an elementwise op on the other, the weights split by
// columns and rows -- runs as a case stage: the weights stay split (nothing
// is gathered), the layer's all-reduce is inside its branch's own program,
// and a result both branches lay out split stays split. Each branch is
// taken, and an index out of range clamps to the last, as `case` does.
TEST(SpmdPartitionerTest, AConditionalNeedingCommunicationKeepsItsOperandsSplit) {
  auto branch = [](bool layer) {
    TraceContext ctx;
    const Tracer x = ctx.AddParameter(F32({8, 16}));
    const Tracer w1 = ctx.AddParameter(F32({16, 32}));
    const Tracer w2 = ctx.AddParameter(F32({32, 16}));
    const Tracer h = matmul(x, w1);  // split by columns, as w1
    // Clipped to [-3, 3]: small integers, so every sum is exact.
    if (layer) return ctx.Finish({minimum(maximum(matmul(h, w2), -3.0), 3.0), h});
    return ctx.Finish({x * 2.0, h + 1.0});
  };
  CaseAttrs c;
  c.branches = {std::make_shared<const Program>(branch(true)),
                std::make_shared<const Program>(branch(false))};
  for (const int index : {0, 1, 7, -2}) {
    SCOPED_TRACE("index " + std::to_string(index));
    Program p;
    const ValueId px = p.AddParameter(F32({8, 16})).value();
    const ValueId pw1 = p.AddParameter(F32({16, 32})).value();
    const ValueId pw2 = p.AddParameter(F32({32, 16})).value();
    const ValueId i = Scalar<int32_t>(p, index);
    const std::vector<ValueId> outs = AddRegionGroup(p, c, {i, px, pw1, pw2}).value();
    ASSERT_TRUE(p.SetOutputs({outs[0], outs[1]}).ok());
    const SpmdProgram sp =
        CheckAgainstOneDevice(p, Mesh1(), {S({R, R}), S({R, I}), S({I, R})});
    ASSERT_EQ(Count(sp, SpmdStage::Kind::kCase), 1) << sp.ToText();
    EXPECT_EQ(sp.num_communication_stages(), 0) << sp.ToText();
    EXPECT_EQ(sp.slots[sp.output_slots[0]].block, Shape({8, 16}));
    EXPECT_EQ(sp.slots[sp.output_slots[1]].block, Shape({8, 8}));  // 1/4
    for (const SpmdStage& st : sp.stages) {
      if (st.kind != SpmdStage::Kind::kCase) continue;
      EXPECT_EQ(sp.slots[st.inputs[2]].block, Shape({16, 8}));
      EXPECT_EQ(sp.slots[st.inputs[3]].block, Shape({8, 16}));
      ASSERT_EQ(st.branches->branches.size(), 2u);
      const SpmdProgram& layer = st.branches->branches[0];
      EXPECT_EQ(Count(layer, SpmdStage::Kind::kAllReduce), 1) << layer.ToText();
      EXPECT_EQ(Count(layer, SpmdStage::Kind::kAllGather), 0) << layer.ToText();
      EXPECT_EQ(st.branches->branches[1].num_communication_stages(), 0);
    }
    EXPECT_NE(sp.ToText().find("case %"), std::string::npos) << sp.ToText();
  }
}

// Ops without a rule read their operands whole: a gather of split rows
// after an elementwise op, then elementwise again on the replicated result
// with a split operand (sliced, no communication).
// Slices, pads, sorts, dynamic slices and updates, concatenation, gathers
// and scatters keep the split of every dimension they take whole, element
// for element (JAX keeps x[:, 1:5] of a row-split x row-split): nothing is
// gathered, each device works on its rows.
TEST(SpmdPartitionerTest, OpsKeepTheSplitOfDimensionsTheyDoNotTouch) {
  Program p;
  const ValueType i32{Shape{}, DType::kInt32};
  const ValueId x = p.AddParameter(F32({8, 6})).value();
  const ValueId table = p.AddParameter(F32({5, 6})).value();
  const ValueId ids = p.AddParameter(ValueType{Shape{8}, DType::kInt32}).value();
  const ValueId k = p.AddParameter(i32).value();
  const ValueId cols = p.AddParameter(ValueType{Shape{2}, DType::kInt32}).value();
  const ValueId zero = Scalar<float>(p, 0.0f);
  const ValueId row0 = Scalar<int32_t>(p, 3);
  const ValueId sl = p.Add(SliceAttrs{{0, 1}, {8, 5}, {1, 1}}, {x}).value();
  const ValueId pd = p.Add(PadAttrs{{0, 1}, {0, 2}, {0, 1}}, {x, zero}).value();
  const ValueId srt = p.Add(SortAttrs{1, false, false}, {x}).value();
  const ValueId ds = p.Add(DynamicSliceAttrs{{8, 2}}, {x, row0, k}).value();
  const ValueId upd = p.Add(SliceAttrs{{0, 0}, {8, 2}, {1, 1}}, {srt}).value();
  const ValueId dus = p.Add(DynamicUpdateSliceAttrs{}, {x, upd, row0, k}).value();
  const ValueId cat = p.Add(ConcatenateAttrs{1}, {x, sl, ds}).value();
  const ValueId g = p.Add(GatherAttrs{0}, {table, ids}).value();
  const ValueId sc = p.Add(ScatterAttrs{1, ScatterMode::kAdd}, {x, cols, ds}).value();
  ASSERT_TRUE(p.SetOutputs({sl, pd, srt, ds, dus, cat, g, sc}).ok());
  Result<SpmdProgram> sp = PartitionForMesh(
      p, Mesh1(), {S({I, R}), S({R, R}), S({I}), S({}), S({R})});
  ASSERT_TRUE(sp.ok()) << sp.status().to_string();
  EXPECT_EQ(Count(sp.value(), SpmdStage::Kind::kAllGather), 0) << sp.value().ToText();
  EXPECT_EQ(sp.value().num_compute_stages(), 1) << sp.value().ToText();
  for (int slot : sp.value().output_slots) {
    EXPECT_EQ(sp.value().slots[slot].sharding.dims[0], I) << sp.value().ToText();
    EXPECT_EQ(sp.value().slots[slot].block.dim(0), 2) << sp.value().ToText();
  }
  std::vector<Literal> args = {
      Arg(Shape{8, 6}, 1), Arg(Shape{5, 6}, 2),
      Literal::FromVector(std::vector<int32_t>{4, 0, 3, 3, 1, 2, 2, 0}, Shape{8}),
      Literal::FromVector(std::vector<int32_t>{3}, Shape{}),
      Literal::FromVector(std::vector<int32_t>{5, 1}, Shape{2})};
  auto want = Interpret(p, args);
  auto got = InterpretSpmd(sp.value(), args);
  ASSERT_TRUE(want.ok() && got.ok()) << got.status().to_string();
  for (size_t j = 0; j < want.value().size(); ++j) {
    EXPECT_EQ(std::memcmp(got.value()[j].untyped_data(),
                          want.value()[j].untyped_data(),
                          static_cast<size_t>(want.value()[j].byte_size())),
              0)
        << "output " << j;
  }
}

// The same ops along the split dimension read it whole (one all-gather of
// x) and compute whole there; each result then keeps the split where its
// length divides by it -- a slice stage gives each device its block, no
// communication -- as JAX's layouts do (x[0:8], a pad to 20 rows, a sort,
// a dynamic update, a concatenation to 20 rows, a scatter along the split
// rows stay split), and is whole where it does not (x[1:4], a pad to 18).
TEST(SpmdPartitionerTest, OpsAlongTheSplitDimensionKeepItWhereTheirLengthDivides) {
  Program p;
  const ValueId x = p.AddParameter(F32({16, 3})).value();
  const ValueId rows = p.AddParameter(ValueType{Shape{2}, DType::kInt32}).value();
  const ValueId zero = Scalar<float>(p, 0.0f);
  const ValueId at = Scalar<int32_t>(p, 5);
  const ValueId col = Scalar<int32_t>(p, 0);
  const ValueId sl = p.Add(SliceAttrs{{0, 0}, {8, 3}, {1, 1}}, {x}).value();
  const ValueId pd = p.Add(PadAttrs{{2, 0}, {2, 0}, {0, 0}}, {x, zero}).value();
  const ValueId srt = p.Add(SortAttrs{0, false, false}, {x}).value();
  const ValueId upd = p.Add(SliceAttrs{{0, 0}, {2, 3}, {1, 1}}, {srt}).value();
  const ValueId dus = p.Add(DynamicUpdateSliceAttrs{}, {x, upd, at, col}).value();
  const ValueId cat = p.Add(ConcatenateAttrs{0}, {x, sl}).value();
  const ValueId sc = p.Add(ScatterAttrs{0, ScatterMode::kAdd}, {x, rows, upd}).value();
  const ValueId odd = p.Add(SliceAttrs{{1, 0}, {4, 3}, {1, 1}}, {x}).value();
  const ValueId pad18 = p.Add(PadAttrs{{1, 0}, {1, 0}, {0, 0}}, {x, zero}).value();
  ASSERT_TRUE(p.SetOutputs({sl, pd, srt, dus, cat, sc, odd, pad18}).ok());
  Result<SpmdProgram> sp = PartitionForMesh(p, Mesh1(), {S({I, R}), S({R})});
  ASSERT_TRUE(sp.ok()) << sp.status().to_string();
  const SpmdProgram& got = sp.value();
  EXPECT_EQ(Count(got, SpmdStage::Kind::kAllGather), 1) << got.ToText();
  EXPECT_EQ(got.num_communication_stages(), 1 + 6) << got.ToText();  // + slices
  const std::vector<Shape> blocks = {{2, 3}, {5, 3}, {4, 3}, {4, 3},
                                     {6, 3}, {4, 3}, {3, 3}, {18, 3}};
  for (size_t j = 0; j < blocks.size(); ++j) {
    EXPECT_EQ(got.slots[got.output_slots[j]].block, blocks[j]) << "output " << j;
  }
  std::vector<Literal> args = {
      Arg(Shape{16, 3}, 1),
      Literal::FromVector(std::vector<int32_t>{9, 2}, Shape{2})};
  auto want = Interpret(p, args);
  auto ran = InterpretSpmd(got, args);
  ASSERT_TRUE(want.ok() && ran.ok()) << ran.status().to_string();
  for (size_t j = 0; j < want.value().size(); ++j) {
    EXPECT_EQ(std::memcmp(ran.value()[j].untyped_data(), want.value()[j].untyped_data(),
                          static_cast<size_t>(want.value()[j].byte_size())),
              0)
        << "output " << j;
  }
}

// A sort along the split dimension read only whole (its first two rows,
// which do not divide by the split): no device slices its block of it.
TEST(SpmdPartitionerTest, AValueComputedWholeAndReadWholeIsNotSliced) {
  Program p;
  const ValueId x = p.AddParameter(F32({16, 3})).value();
  const ValueId srt = p.Add(SortAttrs{0, false, false}, {x}).value();
  const ValueId top = p.Add(SliceAttrs{{0, 0}, {2, 3}, {1, 1}}, {srt}).value();
  ASSERT_TRUE(p.SetOutputs({top}).ok());
  const SpmdProgram sp = CheckAgainstOneDevice(p, Mesh1(), {S({I, R})});
  EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllGather), 1) << sp.ToText();
  EXPECT_EQ(Count(sp, SpmdStage::Kind::kSlice), 0) << sp.ToText();
  EXPECT_EQ(sp.slots[sp.output_slots[0]].block, Shape({2, 3}));
}

// A batch of LU factorizations and of real FFTs split over the devices:
// each device factors and transforms its own rows; the matrices and the
// transformed dimension are whole.
TEST(SpmdPartitionerTest, BatchedLinearAlgebraAndFftsKeepTheBatchSplit) {
  Program p;
  const ValueId a = p.AddParameter(F32({8, 4, 4})).value();
  const ValueId x = p.AddParameter(F32({8, 6})).value();
  LinalgAttrs lu;
  lu.kind = LinalgKind::kLu;
  const ValueId f = p.Add(lu, {a}).value();
  const ValueId r = p.Add(FftAttrs{FftType::kRfft, {6}}, {x}).value();
  ASSERT_TRUE(p.SetOutputs({f, r}).ok());
  const SpmdProgram sp =
      CheckAgainstOneDevice(p, Mesh1(), {S({I, R, R}), S({I, R})});
  EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllGather), 0) << sp.ToText();
  EXPECT_EQ(sp.slots[sp.output_slots[0]].block, Shape({2, 4, 5}));
  EXPECT_EQ(sp.slots[sp.output_slots[1]].block, Shape({2, 4}));
  // Split along a matrix dimension, the factorization reads it whole.
  const SpmdProgram gathered =
      CheckAgainstOneDevice(p, Mesh1(), {S({R, I, R}), S({R, R})});
  EXPECT_EQ(Count(gathered, SpmdStage::Kind::kAllGather), 1) << gathered.ToText();
}

// A gather along the split dimension reads the whole operand: it is
// gathered first, and the result (replicated) is sliced where a split
// value reads it.
TEST(SpmdPartitionerTest, AGatherAlongTheSplitDimensionGathersItsOperand) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 3})).value();
  const ValueId idx = p.AddParameter(ValueType{Shape{8}, DType::kInt32}).value();
  const ValueId e = p.Add(UnaryAttrs{UnaryOp::kNeg}, {x}).value();
  const ValueId g = p.Add(GatherAttrs{0}, {e, idx}).value();
  const ValueId sum = p.Add(BinaryAttrs{BinaryOp::kAdd}, {g, x}).value();
  ASSERT_TRUE(p.SetOutputs({sum}).ok());
  Result<SpmdProgram> sp = PartitionForMesh(p, Mesh1(), {S({I, R}), S({R})});
  ASSERT_TRUE(sp.ok()) << sp.status().to_string();
  EXPECT_EQ(Count(sp.value(), SpmdStage::Kind::kAllGather), 1);
  EXPECT_EQ(Count(sp.value(), SpmdStage::Kind::kSlice), 1);
  // Indices in range: the values are checked against one device.
  std::vector<int32_t> iv = {7, 0, 3, 3, 1, 6, 2, 5};
  std::vector<Literal> args = {Arg(Shape{8, 3}, 1),
                               Literal::FromVector(iv, Shape{8})};
  auto want = Interpret(p, args);
  auto got = InterpretSpmd(sp.value(), args);
  ASSERT_TRUE(want.ok() && got.ok()) << got.status().to_string();
  EXPECT_EQ(std::memcmp(got.value()[0].untyped_data(),
                        want.value()[0].untyped_data(),
                        static_cast<size_t>(want.value()[0].byte_size())),
            0);
}

// A data-parallel gradient step: both weight gradients contract over the
// split batch (partial sums). They are computed in one stage, packed into
// one block per device there (12 + 16 values) and all-reduced together,
// once, before the first update reads one; the update slices each out.
TEST(SpmdPartitionerTest, PartialResultsAreCombinedTogetherWhenFirstRead) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId a = p.AddParameter(F32({8, 3})).value();
  const ValueId w1 = p.AddParameter(F32({4, 3})).value();
  const ValueId w2 = p.AddParameter(F32({4, 4})).value();
  const ValueId g1 = Dot(p, x, a, {0}, {0});
  const ValueId g2 = Dot(p, x, x, {0}, {0});
  const ValueId u1 = p.Add(BinaryAttrs{BinaryOp::kSub}, {w1, g1}).value();
  const ValueId u2 = p.Add(BinaryAttrs{BinaryOp::kSub}, {w2, g2}).value();
  ASSERT_TRUE(p.SetOutputs({u1, u2}).ok());
  const SpmdProgram sp = CheckAgainstOneDevice(
      p, Mesh1(), {S({I, R}), S({I, R}), S({R, R}), S({R, R})});
  ASSERT_EQ(sp.stages.size(), 3u) << sp.ToText();
  EXPECT_EQ(sp.stages[0].kind, SpmdStage::Kind::kCompute);
  EXPECT_EQ(sp.stages[1].kind, SpmdStage::Kind::kAllReduce);
  EXPECT_EQ(sp.stages[2].kind, SpmdStage::Kind::kCompute);
  EXPECT_EQ(sp.slots[sp.stages[1].source].block, Shape({28}));
  EXPECT_TRUE(sp.slots[sp.stages[1].source].partial);
  EXPECT_EQ(sp.stages[0].outputs, std::vector<int>{sp.stages[1].source});
}

// Only small partial results are packed (all_reduce_combiner.h), and only
// with others combined the same way: a 1 MiB gradient keeps an all-reduce
// of its own (packing would copy it to save a few launches), and a max is
// not packed with sums. Outputs that were packed are sliced out by a stage
// right after their all-reduce.
TEST(SpmdPartitionerTest, OnlySmallPartialResultsCombinedAlikeArePacked) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 512})).value();
  const ValueId big = Dot(p, x, x, {0}, {0});  // [512, 512]: 1 MiB, partial
  const ValueId cols = p.Add(ReduceAttrs{ReduceOp::kSum, {0}}, {x}).value();
  const ValueId all = p.Add(ReduceAttrs{ReduceOp::kSum, {0, 1}}, {x}).value();
  const ValueId top = p.Add(ReduceAttrs{ReduceOp::kMax, {0}}, {x}).value();
  ASSERT_TRUE(p.SetOutputs({big, cols, all, top}).ok());
  const SpmdProgram sp = CheckAgainstOneDevice(p, Mesh1(), {S({I, R})});
  ASSERT_EQ(Count(sp, SpmdStage::Kind::kAllReduce), 3) << sp.ToText();
  std::vector<Shape> combined;
  for (const SpmdStage& st : sp.stages) {
    if (st.kind == SpmdStage::Kind::kAllReduce) {
      combined.push_back(sp.slots[st.source].block);
    }
  }
  EXPECT_NE(std::find(combined.begin(), combined.end(), Shape({513})),
            combined.end()) << sp.ToText();  // cols and all, packed
  EXPECT_NE(std::find(combined.begin(), combined.end(), Shape({512, 512})),
            combined.end()) << sp.ToText();
  EXPECT_NE(std::find(combined.begin(), combined.end(), Shape({512})),
            combined.end()) << sp.ToText();  // the max, alone
  // The packed outputs come out of a stage of slices after the all-reduce.
  ASSERT_EQ(sp.num_compute_stages(), 2) << sp.ToText();
  for (size_t s = 1; s < sp.stages.size(); ++s) {
    if (sp.stages[s].kind != SpmdStage::Kind::kCompute) continue;
    EXPECT_EQ(sp.stages[s - 1].kind, SpmdStage::Kind::kAllReduce);
    EXPECT_EQ(sp.slots[sp.stages[s - 1].result].block, Shape({513}));
    EXPECT_EQ(sp.stages[s].outputs,
              (std::vector<int>{sp.output_slots[1], sp.output_slots[2]}));
  }
  EXPECT_EQ(sp.slots[sp.output_slots[1]].block, Shape({512}));
  EXPECT_EQ(sp.slots[sp.output_slots[2]].block, Shape({}));
}

// A training step's loss is summed over the split batch before the
// backward pass, and read (scaled) as an output. Its reader waits for the
// gradients' all-reduce (spmd_partitioner.cc: PartitionOrder): forward and
// backward are one compute stage, and both partial sums are combined at one
// point -- not a stage before the loss's all-reduce and one after.
TEST(SpmdPartitionerTest, ReadersOfAPartialLossWaitForTheGradients) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId w = p.AddParameter(F32({4, 3})).value();
  const ValueId h = Dot(p, x, w, {1}, {0});  // [8, 3], split rows
  const ValueId loss = p.Add(ReduceAttrs{ReduceOp::kSum, {0, 1}}, {h}).value();
  const ValueId half = Scalar<float>(p, 0.5f);
  const ValueId scaled = p.Add(BinaryAttrs{BinaryOp::kMul}, {loss, half}).value();
  const ValueId g = Dot(p, x, h, {0}, {0});  // [4, 3], partial
  const ValueId u = p.Add(BinaryAttrs{BinaryOp::kSub}, {w, g}).value();
  ASSERT_TRUE(p.SetOutputs({u, scaled}).ok());
  const SpmdProgram sp = CheckAgainstOneDevice(p, Mesh1(), {S({I, R}), S({R, R})});
  // The loss and the gradient, packed (1 + 12 values): one all-reduce.
  ASSERT_EQ(sp.stages.size(), 3u) << sp.ToText();
  EXPECT_EQ(sp.stages[0].kind, SpmdStage::Kind::kCompute);
  EXPECT_EQ(sp.stages[1].kind, SpmdStage::Kind::kAllReduce);
  EXPECT_EQ(sp.stages[2].kind, SpmdStage::Kind::kCompute);
  EXPECT_EQ(sp.slots[sp.stages[1].source].block, Shape({13}));
}

// with_sharding_constraint inside jit: the constrained value is its operand
// in the layout asked for (one reshard, no computation), and that layout
// flows on; a dimension left unconstrained (vmap's batch dimension) keeps
// the operand's split. An axis the mesh lacks is an error naming the value.
TEST(SpmdPartitionerTest, ShardingConstraintsLayValuesOut) {
  auto constrained = [](std::vector<std::vector<std::string>> sharding) {
    Program p;
    const ValueId x = p.AddParameter(F32({8, 4})).value();
    const ValueId y = p.Add(BinaryAttrs{BinaryOp::kAdd}, {x, x}).value();
    CallAttrs c;
    c.kind = CallKind::kShardingConstraint;
    c.sharding = std::move(sharding);
    const ValueId z = p.Add(c, {y}).value();
    const ValueId t = p.Add(UnaryAttrs{UnaryOp::kAbs}, {z}).value();
    EXPECT_TRUE(p.SetOutputs({t}).ok());
    return p;
  };
  {
    const SpmdProgram sp =
        CheckAgainstOneDevice(constrained({{}, {"i"}}), Mesh1(), {S({I, R})});
    EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllGather), 1) << sp.ToText();
    EXPECT_EQ(sp.slots[sp.output_slots[0]].sharding, S({R, I}));
  }
  {
    const SpmdProgram sp =
        CheckAgainstOneDevice(constrained({{}, {}}), Mesh1(), {S({I, R})});
    EXPECT_EQ(sp.slots[sp.output_slots[0]].sharding, S({R, R}));
  }
  {
    const SpmdProgram sp = CheckAgainstOneDevice(
        constrained({{kUnconstrainedAxis}, {}}), Mesh1(), {S({I, R})});
    EXPECT_EQ(Count(sp, SpmdStage::Kind::kAllGather), 0) << sp.ToText();
    EXPECT_EQ(Count(sp, SpmdStage::Kind::kCompute), 1) << sp.ToText();
    EXPECT_EQ(sp.slots[sp.output_slots[0]].sharding, S({I, R}));
  }
  Result<SpmdProgram> bad =
      PartitionForMesh(constrained({{"j"}, {}}), Mesh1(), {S({I, R})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("no axis 'j'"), std::string::npos)
      << bad.status().to_string();
  EXPECT_NE(bad.status().message().find("with_sharding_constraint on %"),
            std::string::npos);
}

// A split contraction of bfloat16 values: each device's partial sum is kept
// in float32 and the sum rounded once, after the all-reduce -- the same
// bfloat16 result as the whole dot or sum on one device (rounding each part
// first gave 20.875 for JAX's and baton's unsplit 21.0 in issue 37's port).
TEST(SpmdPartitionerTest, SixteenBitPartialSumsAreRoundedOnce) {
  std::vector<double> v(64);
  for (size_t k = 0; k < v.size(); ++k) v[k] = ((k * 37 + 11) % 101) / 101.0;
  const Literal a = Literal::FromDoubles(DType::kBFloat16, Shape{64}, v);
  for (DType t : {DType::kBFloat16, DType::kFloat16}) {
    Program p;
    const ValueType vt{Shape{64}, t};
    const ValueId x = p.AddParameter(vt).value();
    const ValueId d = Dot(p, x, x, {0}, {0});
    const ValueId s = p.Add(ReduceAttrs{ReduceOp::kSum, {0}}, {x}).value();
    ASSERT_TRUE(p.SetOutputs({d, s}).ok());
    Result<SpmdProgram> sp = PartitionForMesh(p, Mesh1(), {S({I})});
    ASSERT_TRUE(sp.ok()) << sp.status().to_string();
    // The partial slots are float32; the combined ones the program's type.
    for (const SpmdStage& st : sp.value().stages) {
      if (st.kind != SpmdStage::Kind::kAllReduce) continue;
      EXPECT_EQ(sp.value().slots[st.source].global.dtype, DType::kFloat32);
      EXPECT_EQ(sp.value().slots[st.result].global.dtype, t);
    }
    const Literal arg = t == DType::kBFloat16
                            ? a
                            : Literal::FromDoubles(t, Shape{64}, v);
    auto want = Interpret(p, {arg});
    auto got = InterpretSpmd(sp.value(), {arg});
    ASSERT_TRUE(want.ok() && got.ok());
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(got.value()[k].dtype(), t);
      EXPECT_EQ(std::memcmp(got.value()[k].untyped_data(),
                            want.value()[k].untyped_data(), 2),
                0)
          << dtype_name(t) << " output " << k << ": "
          << got.value()[k].ToString() << " vs " << want.value()[k].ToString();
    }
  }
}

// jit's out_shardings: an output made where the caller asks, by a last
// all-gather or slice; a bad request names the output.
TEST(SpmdPartitionerTest, RequestedOutputLayoutsEndTheProgram) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId y = p.Add(UnaryAttrs{UnaryOp::kNeg}, {x}).value();
  const ValueId s = p.Add(ReduceAttrs{ReduceOp::kSum, {1}}, {x}).value();
  ASSERT_TRUE(p.SetOutputs({y, s, y}).ok());
  Result<SpmdProgram> sp = PartitionForMesh(
      p, Mesh1(), {S({I, R})}, {S({R, R}), std::nullopt, S({I, R})});
  ASSERT_TRUE(sp.ok()) << sp.status().to_string();
  EXPECT_TRUE(sp.value().slots[sp.value().output_slots[0]].sharding.IsReplicated());
  EXPECT_EQ(sp.value().slots[sp.value().output_slots[1]].sharding, S({I}));
  EXPECT_EQ(sp.value().slots[sp.value().output_slots[2]].sharding, S({I, R}));
  EXPECT_EQ(Count(sp.value(), SpmdStage::Kind::kAllGather), 1);
  std::vector<Literal> args = {Arg(Shape{8, 4}, 1)};
  auto want = Interpret(p, args);
  auto got = InterpretSpmd(sp.value(), args);
  ASSERT_TRUE(want.ok() && got.ok()) << got.status().to_string();
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(std::memcmp(got.value()[k].untyped_data(),
                          want.value()[k].untyped_data(),
                          static_cast<size_t>(want.value()[k].byte_size())),
              0);
  }
  auto bad = PartitionForMesh(p, Mesh1(), {S({I, R})},
                              {std::nullopt, S({I, R}), std::nullopt});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("output 1"), std::string::npos)
      << bad.status().message();
}

TEST(SpmdPartitionerTest, BadShardingsNameTheParameter) {
  Program p;
  const ValueId x = p.AddParameter(F32({6, 3})).value();
  ASSERT_TRUE(p.SetOutputs({x}).ok());
  Result<SpmdProgram> sp = PartitionForMesh(p, Mesh1(), {S({I, R})});
  ASSERT_FALSE(sp.ok());
  EXPECT_NE(sp.status().message().find("parameter 0"), std::string::npos)
      << sp.status().message();
}

TEST(SpmdPartitionerTest, BlockOriginsFollowTheMeshRowMajor) {
  const DeviceMesh mesh = Mesh2();
  EXPECT_EQ(MeshCoordinate(mesh, 3), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(MeshCoordinate(mesh, 1), (std::vector<int64_t>{0, 1}));
  // Rows over ('a', 'b'): device d holds block d.
  for (int64_t d = 0; d < 4; ++d) {
    EXPECT_EQ(BlockOrigin(Shape{8, 2}, S({{0, 1}, R}), mesh, d),
              (std::vector<int64_t>{2 * d, 0}));
  }
  // Rows over ('b', 'a'): 'b' is major.
  EXPECT_EQ(BlockOrigin(Shape{8, 2}, S({{1, 0}, R}), mesh, 1),
            (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(BlockShape(Shape{8, 6}, S({I, B}), mesh), Shape({4, 3}));
}

}  // namespace
}  // namespace baton::compiler
