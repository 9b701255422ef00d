// PartitionShardMapBody and CollectiveProgram (compiler/shard_map_body.h):
// a traced shard_map body cut into compute stages and collectives, run by
// the SPMD interpreter; each collective's per-device program checked
// against the definition of JAX's collective on distinct blocks.
#include "baton/compiler/shard_map_body.h"

#include <gtest/gtest.h>

#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/spmd_interpreter.h"

namespace baton::compiler {
namespace {

ValueType F32(Shape shape) { return ValueType{std::move(shape), DType::kFloat32}; }

DeviceMesh Mesh2() { return DeviceMesh{{"a", "b"}, {2, 2}}; }

int Count(const SpmdProgram& sp, SpmdStage::Kind kind) {
  int n = 0;
  for (const SpmdStage& s : sp.stages) n += s.kind == kind;
  return n;
}

std::vector<float> Floats(const Literal& l) {
  const float* f = static_cast<const float*>(l.untyped_data());
  return std::vector<float>(f, f + l.shape().num_elements());
}

// A shard_map body as its trace gives it: x, the stand-in r for
// psum(2x) over 'b', and the stand-in m for pmax(x) over both axes;
// outputs x + r (read after the psum), m, and the operands 2x and x.
Program ReducingBody() {
  Program p;
  const ValueId x = p.AddParameter(F32({3})).value();
  const ValueId r = p.AddParameter(F32({3})).value();
  const ValueId m = p.AddParameter(F32({3})).value();
  const ValueId two = p.Add(BinaryAttrs{BinaryOp::kAdd}, {x, x}).value();
  const ValueId out = p.Add(BinaryAttrs{BinaryOp::kAdd}, {x, r}).value();
  EXPECT_TRUE(p.SetOutputs({out, m, two, x}).ok());
  return p;
}

TEST(ShardMapBodyTest, AllReducesComeBeforeTheirResultsAreRead) {
  Result<SpmdProgram> sp = PartitionShardMapBody(
      ReducingBody(), Mesh2(),
      {ShardMapCollective{1, 2, {1}, ReduceOp::kSum},
       ShardMapCollective{2, 3, {0, 1}, ReduceOp::kMax}});
  ASSERT_TRUE(sp.ok()) << sp.status().to_string();
  // One compute stage makes the operand, both all-reduces follow, one more
  // stage adds.
  ASSERT_EQ(Count(sp.value(), SpmdStage::Kind::kAllReduce), 2) << sp.value().ToText();
  EXPECT_EQ(sp.value().num_compute_stages(), 2) << sp.value().ToText();
  EXPECT_EQ(sp.value().parameter_slots.size(), 1u);
  EXPECT_EQ(sp.value().output_slots.size(), 2u);
  // With the same x on every device: x + 2 * (2x), and x.
  const Literal x = Literal::FromVector(std::vector<float>{1, -2, 3}, Shape{3});
  Result<std::vector<Literal>> got = InterpretSpmd(sp.value(), {x});
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(Floats(got.value()[0]), (std::vector<float>{5, -10, 15}));
  EXPECT_EQ(Floats(got.value()[1]), (std::vector<float>{1, -2, 3}));
}

// A data-parallel body's psums over the same axes are one all-reduce
// (all_reduce_combiner.h): psum(x) and psum(2x) over both axes packed into
// one block of 6 per device; the body reads both (sliced out of the
// pack), and returns the second as it is (a stage of slices makes it).
TEST(ShardMapBodyTest, PsumsOverTheSameAxesAreOneAllReduce) {
  Program p;
  const ValueId x = p.AddParameter(F32({3})).value();
  const ValueId r1 = p.AddParameter(F32({3})).value();
  const ValueId r2 = p.AddParameter(F32({3})).value();
  const ValueId two = p.Add(BinaryAttrs{BinaryOp::kAdd}, {x, x}).value();
  const ValueId sum = p.Add(BinaryAttrs{BinaryOp::kAdd}, {r1, r2}).value();
  ASSERT_TRUE(p.SetOutputs({sum, r2, x, two}).ok());
  Result<SpmdProgram> sp = PartitionShardMapBody(
      p, Mesh2(),
      {ShardMapCollective{1, 2, {0, 1}, ReduceOp::kSum},
       ShardMapCollective{2, 3, {0, 1}, ReduceOp::kSum}});
  ASSERT_TRUE(sp.ok()) << sp.status().to_string();
  ASSERT_EQ(Count(sp.value(), SpmdStage::Kind::kAllReduce), 1) << sp.value().ToText();
  for (const SpmdStage& st : sp.value().stages) {
    if (st.kind == SpmdStage::Kind::kAllReduce) {
      EXPECT_EQ(sp.value().slots[st.source].block, Shape({6}));
    }
  }
  // x + 2x on each of the 4 devices: psum(x) = 4x, psum(2x) = 8x.
  const Literal in = Literal::FromVector(std::vector<float>{1, -2, 3}, Shape{3});
  Result<std::vector<Literal>> got = InterpretSpmd(sp.value(), {in});
  ASSERT_TRUE(got.ok()) << got.status().to_string() << sp.value().ToText();
  EXPECT_EQ(Floats(got.value()[0]), (std::vector<float>{12, -24, 36}));
  EXPECT_EQ(Floats(got.value()[1]), (std::vector<float>{8, -16, 24}));
}

TEST(ShardMapBodyTest, BadCollectivesAreRefused) {
  const DeviceMesh mesh = Mesh2();
  // The same result parameter twice.
  EXPECT_FALSE(PartitionShardMapBody(ReducingBody(), mesh,
                                     {ShardMapCollective{1, 2, {1}},
                                      ShardMapCollective{1, 3, {0}}})
                   .ok());
  // An axis the mesh has not.
  EXPECT_FALSE(
      PartitionShardMapBody(ReducingBody(), mesh, {ShardMapCollective{1, 2, {2}}})
          .ok());
  // A result of another type than its operand makes.
  Program p;
  const ValueId x = p.AddParameter(F32({3})).value();
  const ValueId r = p.AddParameter(F32({2})).value();
  ASSERT_TRUE(p.SetOutputs({r, x}).ok());
  Result<SpmdProgram> sp =
      PartitionShardMapBody(p, mesh, {ShardMapCollective{1, 1, {0}}});
  ASSERT_FALSE(sp.ok());
  EXPECT_NE(sp.status().message().find("operand"), std::string::npos);
  // An all-gather of (3,) over 2 devices makes (6,), not (2,).
  SpmdCollective gather;
  gather.tiled = true;
  sp = PartitionShardMapBody(p, mesh, {ShardMapCollective{1, 1, {0}, ReduceOp::kSum, gather}});
  ASSERT_FALSE(sp.ok());
  EXPECT_NE(sp.status().message().find("makes " + Shape{6}.to_string()),
            std::string::npos)
      << sp.status().to_string();
}

TEST(ShardMapBodyTest, GroupsAreInGroupOrderWhateverTheAxisOrder) {
  const DeviceMesh mesh = Mesh2();  // device d = 2 * a + b
  EXPECT_EQ(GroupMembers(mesh, 3, {1}), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(GroupMembers(mesh, 3, {0}), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(GroupMembers(mesh, 0, {1, 0}), (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(GroupIndex(mesh, 1, {1, 0}), 2);
  EXPECT_EQ(GroupIndex(mesh, 2, {0, 1}), 2);
}

// Device d's block of the collective over 'b' (group {2a, 2a + 1}), whose
// operand on device e is (e * 10 + [0, 1, 2, 3]) reshaped (2, 2).
std::vector<float> RunOn(const SpmdCollective& c, int64_t d) {
  const DeviceMesh mesh = Mesh2();
  SpmdStage st;
  st.kind = SpmdStage::Kind::kCollective;
  st.axes = {1};
  st.collective = std::make_shared<const SpmdCollective>(c);
  Result<CollectivePart> part = CollectiveProgram(st, F32({2, 2}), mesh, d);
  EXPECT_TRUE(part.ok()) << part.status().to_string();
  if (!part.ok()) return {};
  std::vector<Literal> in;
  for (int64_t e : part.value().sources) {
    const float b = static_cast<float>(e * 10);
    in.push_back(Literal::FromVector(std::vector<float>{b, b + 1, b + 2, b + 3},
                                     Shape{2, 2}));
  }
  if (!part.value().program.has_value()) return Floats(in[0]);
  Result<std::vector<Literal>> out = Interpret(*part.value().program, in);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? Floats(out.value()[0]) : std::vector<float>{};
}

TEST(ShardMapBodyTest, EachCollectiveMakesWhatJaxDefines) {
  SpmdCollective c;
  // all_gather(x, 'b', axis=0, tiled=True) on device 3 (group {2, 3}).
  c.kind = SpmdCollective::Kind::kAllGather;
  c.tiled = true;
  EXPECT_EQ(RunOn(c, 3), (std::vector<float>{20, 21, 22, 23, 30, 31, 32, 33}));
  // ... axis=1, stacked: [[20, 21], [30, 31]], [[22, 23], [32, 33]].
  c.tiled = false;
  c.dimension = 1;
  EXPECT_EQ(RunOn(c, 3), (std::vector<float>{20, 21, 30, 31, 22, 23, 32, 33}));
  // psum_scatter(x, 'b', scatter_dimension=0): device 3 (index 1) sums the
  // members' rows 1: [22 + 32, 23 + 33].
  c.kind = SpmdCollective::Kind::kReduceScatter;
  c.dimension = 0;
  c.tiled = false;
  EXPECT_EQ(RunOn(c, 3), (std::vector<float>{54, 56}));
  c.tiled = true;  // device 2 (index 0): row 0 of each, kept as a row
  EXPECT_EQ(RunOn(c, 2), (std::vector<float>{50, 52}));
  // all_to_all(x, 'b', split_axis=0, concat_axis=1, tiled=True) on device
  // 2 (index 0): row 0 of each member, joined along columns.
  c.kind = SpmdCollective::Kind::kAllToAll;
  c.concat_dimension = 1;
  EXPECT_EQ(RunOn(c, 2), (std::vector<float>{20, 21, 30, 31}));
  // ppermute(x, 'b', [(0, 1)]): device 3 gets device 2's; device 2 zeros.
  c = SpmdCollective{};
  c.kind = SpmdCollective::Kind::kPermute;
  c.source_of = {-1, 0};
  EXPECT_EQ(RunOn(c, 3), (std::vector<float>{20, 21, 22, 23}));
  EXPECT_EQ(RunOn(c, 2), (std::vector<float>{0, 0, 0, 0}));
}

TEST(ShardMapBodyTest, AllGatherThenSumIsOneProgramPerDevice) {
  // shard_map(lambda x: all_gather(x, 'a', tiled=True).sum()) with the
  // same x everywhere: 2 * sum(x).
  Program p;
  const ValueId x = p.AddParameter(F32({3})).value();
  const ValueId g = p.AddParameter(F32({6})).value();
  const ValueId s = p.Add(ReduceAttrs{ReduceOp::kSum, {0}}, {g}).value();
  ASSERT_TRUE(p.SetOutputs({s, x}).ok());
  SpmdCollective gather;
  gather.tiled = true;
  Result<SpmdProgram> sp = PartitionShardMapBody(
      p, Mesh2(), {ShardMapCollective{1, 1, {0}, ReduceOp::kSum, gather}});
  ASSERT_TRUE(sp.ok()) << sp.status().to_string();
  EXPECT_EQ(Count(sp.value(), SpmdStage::Kind::kCollective), 1);
  EXPECT_NE(sp.value().ToText().find("all-gather over 'a' dim 0 tiled"),
            std::string::npos)
      << sp.value().ToText();
  Result<std::vector<Literal>> got = InterpretSpmd(
      sp.value(), {Literal::FromVector(std::vector<float>{1, 2, 4}, Shape{3})});
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(Floats(got.value()[0]), (std::vector<float>{14}));
}

}  // namespace
}  // namespace baton::compiler
