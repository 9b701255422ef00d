// SpmdExecutable (jit/spmd_executable.h): programs of sharded arguments run
// on 4 devices of this process -- CPU devices, or simulated accelerators
// under BATON_TEST_PLATFORM=sim -- compared with the same program on one
// device, with each device's memory checked: a parameter split four ways
// takes a quarter of its bytes on each device, and nothing the stages made
// stays allocated after the call but the outputs.
#include "baton/jit/spmd_executable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <thread>

#include "baton/backend/host_staged_exchange.h"
#include "baton/backend/simulated/simulated_backend.h"
#include "baton/collectives/coordinator.h"
#include "baton/collectives/process_group.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/shard_map_body.h"
#include "baton/compiler/spmd_interpreter.h"
#include "baton/compiler/tracer.h"
#include "baton/compiler/control_flow.h"
#include "baton/core/error.h"
#include "baton/runtime/client.h"
#include "baton/runtime/transfer.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using compiler::DeviceMesh;
using compiler::Literal;
using compiler::Program;
using compiler::Sharding;
using compiler::ValueId;
using compiler::ValueType;

std::vector<Device*> Devices() { return testing::FourMeshDevices().devices(); }

ValueType F32(Shape s) { return ValueType{std::move(s), DType::kFloat32}; }

Literal Arg(const Shape& shape, int seed) {
  std::vector<float> v(shape.num_elements());
  for (size_t k = 0; k < v.size(); ++k) {
    v[k] = static_cast<float>(static_cast<int>((k * 37 + seed * 11) % 7) - 3);
  }
  return Literal::FromVector(v, shape);
}

Array Put(const Literal& l, Device* device) {
  return ValueOrThrow(DevicePut(
      HostBuffer{l.untyped_data(), l.shape(), l.dtype()}, device,
      MemoryKind::kDevice));
}

// Each of this process's devices' block of each argument.
std::vector<std::vector<Array>> Blocks(const SpmdExecutable& exe,
                                       const std::vector<Literal>& args) {
  const auto& sp = exe.partitioned();
  std::vector<std::vector<Array>> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const Sharding& s = sp.slots[sp.parameter_slots[i]].sharding;
    std::vector<Array> per_device;
    for (int d : exe.local_positions()) {
      per_device.push_back(Put(compiler::BlockOf(args[i], s, sp.mesh, d),
                               exe.devices()[d]));
    }
    out.push_back(std::move(per_device));
  }
  return out;
}

// The whole output from the devices' blocks (every device's block checked).
void ExpectOutputEquals(const SpmdExecutable& exe, int k,
                        const std::vector<Array>& blocks, const Literal& want) {
  const auto& sp = exe.partitioned();
  const Sharding& s = sp.slots[sp.output_slots[k]].sharding;
  ASSERT_EQ(blocks.size(), exe.local_positions().size());
  for (size_t j = 0; j < blocks.size(); ++j) {
    const int d = exe.local_positions()[j];
    const Literal mine = compiler::BlockOf(want, s, sp.mesh, d);
    const Literal got = testing::ToLiteral(blocks[j]);
    ASSERT_EQ(got.shape(), mine.shape()) << "output " << k << " device " << d;
    EXPECT_EQ(std::memcmp(got.untyped_data(), mine.untyped_data(),
                          static_cast<size_t>(mine.byte_size())),
              0)
        << "output " << k << " on mesh position " << d << "\n"
        << sp.ToText();
    EXPECT_EQ(blocks[j].device(), exe.devices()[d]);
  }
}

// What an array of `bytes` takes: the allocator rounds every block up to
// 256 bytes (best_fit_allocator.h).
// The number of stages of `kind` at the top level of `sp`.
int Count(const compiler::SpmdProgram& sp, compiler::SpmdStage::Kind kind) {
  return static_cast<int>(std::count_if(sp.stages.begin(), sp.stages.end(),
                                        [&](const compiler::SpmdStage& st) {
                                          return st.kind == kind;
                                        }));
}

int64_t Block(int64_t bytes) { return (bytes + 255) / 256 * 256; }

// Device memory in use once the device's queued work is done: an array
// released while its queue still runs (an earlier test's) is freed then.
int64_t InUse(Device* d) {
  EXPECT_TRUE(d->Synchronize().ok());
  return d->memory_space(MemoryKind::kDevice).stats().bytes_in_use;
}

// Each device's count of allocations so far, once its queued work is done.
std::vector<int64_t> NumAllocs() {
  std::vector<int64_t> n;
  for (Device* d : Devices()) {
    EXPECT_TRUE(d->Synchronize().ok());
    n.push_back(d->memory_space(MemoryKind::kDevice).stats().num_allocs);
  }
  return n;
}

ValueId Dot(Program& p, ValueId l, ValueId r) {
  return p.Add(compiler::DotGeneralAttrs{{}, {}, {1}, {0}}, {l, r}).value();
}

// A Megatron-style MLP layer over ('i': 4): w1 by columns, w2 by rows.
Program MlpLayer() {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 16})).value();
  const ValueId w1 = p.AddParameter(F32({16, 32})).value();
  const ValueId w2 = p.AddParameter(F32({32, 4})).value();
  const ValueId h = Dot(p, x, w1);
  const ValueId t = p.Add(compiler::UnaryAttrs{UnaryOp::kAbs}, {h}).value();
  const ValueId y = Dot(p, t, w2);
  const ValueId loss =
      p.Add(compiler::ReduceAttrs{ReduceOp::kSum, {0, 1}}, {y}).value();
  EXPECT_TRUE(p.SetOutputs({y, loss}).ok());
  return p;
}

TEST(SpmdExecutableTest, TensorParallelLayerMatchesOneDevice) {
  const Program p = MlpLayer();
  const DeviceMesh mesh{{"i"}, {4}};
  const std::vector<Sharding> shardings = {
      Sharding{{{}, {}}}, Sharding{{{}, {0}}}, Sharding{{{0}, {}}}};
  auto exe = SpmdExecutable::Compile(p, mesh, shardings, Devices(), "mlp");
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  const std::vector<Literal> args = {Arg({8, 16}, 1), Arg({16, 32}, 2),
                                     Arg({32, 4}, 3)};
  const auto want = compiler::Interpret(p, args);
  ASSERT_TRUE(want.ok());
  std::vector<int64_t> before;
  for (Device* d : Devices()) before.push_back(InUse(d));
  {
    auto in = Blocks(*exe.value(), args);
    // Parameters: x whole on every device, w1 and w2 a quarter each.
    EXPECT_EQ(exe.value()->parameter_bytes_per_device(),
              (8 * 16 + 16 * 32 / 4 + 32 * 4 / 4) * 4);
    const int64_t params =
        Block(8 * 16 * 4) + Block(16 * 8 * 4) + Block(8 * 4 * 4);
    for (size_t d = 0; d < 4; ++d) {
      EXPECT_EQ(InUse(Devices()[d]) - before[d], params);
    }
    auto out = exe.value()->Execute(in);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ExpectOutputEquals(*exe.value(), 0, out.value()[0], want.value()[0]);
    ExpectOutputEquals(*exe.value(), 1, out.value()[1], want.value()[1]);
    for (Device* d : Devices()) ASSERT_TRUE(d->Synchronize().ok());
    // y is replicated (4 x 4 floats) and the loss a scalar, on each device:
    // beyond the arguments and outputs, nothing stays allocated.
    for (size_t d = 0; d < 4; ++d) {
      EXPECT_EQ(InUse(Devices()[d]) - before[d],
                params + Block(8 * 4 * 4) + Block(4))
          << "device " << d;
    }
  }
  for (Device* d : Devices()) ASSERT_TRUE(d->Synchronize().ok());
  for (size_t d = 0; d < 4; ++d) EXPECT_EQ(InUse(Devices()[d]), before[d]);
  EXPECT_EQ(exe.value()->output_shardings()[0], (Sharding{{{}, {}}}));
}

// One process's CPU devices share the host's memory: the device combining
// an all-reduce reads the other members' partial blocks where they lie (no
// copy of them onto it first), so it allocates no more than the others do
// -- by memory_analysis and by its allocator's counts; an all-gather
// assembles the whole from the blocks where they lie likewise.
// (The simulated device stands for a GPU: its blocks are copied.)
TEST(SpmdExecutableTest, AllReducesAndGathersReadTheOtherDevicesBlocksInPlace) {
  SKIP_UNLESS_CPU();
  Program p;
  const ValueId x = p.AddParameter(F32({64, 256})).value();
  const ValueId sum = p.Add(compiler::ReduceAttrs{ReduceOp::kSum, {0}}, {x}).value();
  ASSERT_TRUE(p.SetOutputs({sum}).ok());
  auto exe = SpmdExecutable::Compile(p, DeviceMesh{{"i"}, {4}},
                                     {Sharding{{{0}, {}}}}, Devices(), "sum_rows");
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  ASSERT_EQ(Count(exe.value()->partitioned(), compiler::SpmdStage::Kind::kAllReduce), 1);
  const std::vector<Literal> args = {Arg({64, 256}, 1)};
  const auto want = compiler::Interpret(p, args);
  ASSERT_TRUE(want.ok());
  // Each device: its 16 x 256 block, its partial sum and the result.
  for (int k = 0; k < 4; ++k) {
    auto m = exe.value()->memory_analysis(k);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m.value().peak_memory_in_bytes, (16 * 256 + 256 + 256) * 4)
        << "device " << k;
  }
  auto in = Blocks(*exe.value(), args);
  const std::vector<int64_t> allocs = NumAllocs();
  auto out = exe.value()->Execute(in);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ExpectOutputEquals(*exe.value(), 0, out.value()[0], want.value()[0]);
  // The partial sum and the result on each device; the combining one made
  // its result where the others received a copy of it.
  const std::vector<int64_t> made = NumAllocs();
  for (size_t d = 0; d < 4; ++d) EXPECT_EQ(made[d] - allocs[d], 2) << "device " << d;
  // Read only by the next compute stage (x + the column sums): the other
  // members read the combining device's result where it lies, so only that
  // device allocates it.
  Program r;
  const ValueId z = r.AddParameter(F32({64, 256})).value();
  const ValueId zsum = r.Add(compiler::ReduceAttrs{ReduceOp::kSum, {0}}, {z}).value();
  const ValueId zb = r.Add(compiler::BroadcastInDimAttrs{{64, 256}, {1}}, {zsum}).value();
  ASSERT_TRUE(r.SetOutputs({r.Add(compiler::BinaryAttrs{BinaryOp::kAdd}, {z, zb}).value()}).ok());
  auto shifted = SpmdExecutable::Compile(r, DeviceMesh{{"i"}, {4}}, {Sharding{{{0}, {}}}},
                                         Devices(), "shift_rows");
  ASSERT_TRUE(shifted.ok()) << shifted.status().to_string();
  ASSERT_EQ(Count(shifted.value()->partitioned(), compiler::SpmdStage::Kind::kAllReduce), 1);
  const auto r_want = compiler::Interpret(r, args);
  ASSERT_TRUE(r_want.ok());
  auto r_in = Blocks(*shifted.value(), args);
  const std::vector<int64_t> r_allocs = NumAllocs();
  auto r_out = shifted.value()->Execute(r_in);
  ASSERT_TRUE(r_out.ok()) << r_out.status().to_string();
  ExpectOutputEquals(*shifted.value(), 0, r_out.value()[0], r_want.value()[0]);
  const std::vector<int64_t> r_made = NumAllocs();
  int combining = 0;
  for (size_t d = 0; d < 4; ++d) {
    // The partial sum and the output's rows; the combining device the sum.
    const int64_t n = r_made[d] - r_allocs[d];
    EXPECT_TRUE(n == 2 || n == 3) << "device " << d << ": " << n;
    combining += n == 3 ? 1 : 0;
    auto m = shifted.value()->memory_analysis(static_cast<int>(d));
    ASSERT_TRUE(m.ok());
    // At the peak: its rows of x and of the output, and on the combining
    // device the sum (the partial sums are released by then).
    EXPECT_EQ(m.value().peak_memory_in_bytes,
              (16 * 256 + 16 * 256 + (n == 3 ? 256 : 0)) * 4)
        << "device " << d;
  }
  EXPECT_EQ(combining, 1);

  // x @ x.T with x's rows split: each device gathers x whole for the
  // right-hand side and computes its rows of the product.
  Program q;
  const ValueId y = q.AddParameter(F32({64, 32})).value();
  const ValueId yt = q.Add(compiler::TransposeAttrs{{1, 0}}, {y}).value();
  ASSERT_TRUE(q.SetOutputs({Dot(q, y, yt)}).ok());
  auto gather = SpmdExecutable::Compile(q, DeviceMesh{{"i"}, {4}}, {Sharding{{{0}, {}}}},
                                        Devices(), "x_xT");
  ASSERT_TRUE(gather.ok()) << gather.status().to_string();
  ASSERT_EQ(Count(gather.value()->partitioned(), compiler::SpmdStage::Kind::kAllGather), 1);
  const std::vector<Literal> q_args = {Arg({64, 32}, 2)};
  const auto q_want = compiler::Interpret(q, q_args);
  ASSERT_TRUE(q_want.ok());
  auto q_in = Blocks(*gather.value(), q_args);
  const std::vector<int64_t> q_allocs = NumAllocs();
  auto q_out = gather.value()->Execute(q_in);
  ASSERT_TRUE(q_out.ok()) << q_out.status().to_string();
  ExpectOutputEquals(*gather.value(), 0, q_out.value()[0], q_want.value()[0]);
  const std::vector<int64_t> q_made = NumAllocs();
  for (size_t d = 0; d < 4; ++d) {
    // The gathered x, the product's rows, the stage's temporaries.
    EXPECT_EQ(q_made[d] - q_allocs[d], 3) << "device " << d;
    // Its block of x, x whole and its rows of the product: no copies of
    // the others' blocks.
    auto m = gather.value()->memory_analysis(static_cast<int>(d));
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m.value().peak_memory_in_bytes, (16 * 32 + 64 * 32 + 16 * 64) * 4)
        << "device " << d;
  }
}

TEST(SpmdExecutableTest, GathersSlicesAndTwoDimensionalMeshes) {
  // x @ x.T with rows over ('a', 'b') (an all-gather of the right-hand
  // side), plus a column sum (a partial sum all-reduced over both axes),
  // plus x added to a replicated constant (sliced).
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId g =
      p.Add(compiler::DotGeneralAttrs{{}, {}, {1}, {1}}, {x, x}).value();
  const ValueId cols = p.Add(compiler::ReduceAttrs{ReduceOp::kSum, {0}}, {x}).value();
  const ValueId iota = p.Add(compiler::IotaAttrs{Shape{8, 4}, DType::kFloat32, 0}, {}).value();
  const ValueId shifted = p.Add(compiler::BinaryAttrs{BinaryOp::kAdd}, {x, iota}).value();
  ASSERT_TRUE(p.SetOutputs({g, cols, shifted}).ok());
  const DeviceMesh mesh{{"a", "b"}, {2, 2}};
  auto exe = SpmdExecutable::Compile(p, mesh, {Sharding{{{0, 1}, {}}}},
                                     Devices(), "gram");
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  const auto& sp = exe.value()->partitioned();
  int gathers = 0, slices = 0, reduces = 0;
  for (const auto& st : sp.stages) {
    gathers += st.kind == compiler::SpmdStage::Kind::kAllGather;
    slices += st.kind == compiler::SpmdStage::Kind::kSlice;
    reduces += st.kind == compiler::SpmdStage::Kind::kAllReduce;
  }
  EXPECT_EQ(gathers, 1);
  EXPECT_EQ(slices, 1);
  EXPECT_EQ(reduces, 1);
  const std::vector<Literal> args = {Arg({8, 4}, 5)};
  const auto want = compiler::Interpret(p, args);
  ASSERT_TRUE(want.ok());
  auto out = exe.value()->Execute(Blocks(*exe.value(), args));
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  for (int k = 0; k < 3; ++k) {
    ExpectOutputEquals(*exe.value(), k, out.value()[k], want.value()[k]);
  }
}

TEST(SpmdExecutableTest, ShardMapBodiesCombineEachDevicesOwnValues) {
  // shard_map(lambda x: (x + psum(x * x, 'b'), pmax(x, ('a', 'b')))) on a
  // ('a': 2, 'b': 2) mesh, each device given its own block: the body's
  // trace (the collectives' results stand-in parameters 1 and 2, their
  // operands outputs 2 and 3) compiled once for every device.
  Program p;
  const ValueId x = p.AddParameter(F32({3})).value();
  const ValueId r = p.AddParameter(F32({3})).value();
  const ValueId m = p.AddParameter(F32({3})).value();
  const ValueId sq = p.Add(compiler::BinaryAttrs{BinaryOp::kMul}, {x, x}).value();
  const ValueId y = p.Add(compiler::BinaryAttrs{BinaryOp::kAdd}, {x, r}).value();
  ASSERT_TRUE(p.SetOutputs({y, m, sq, x}).ok());
  const DeviceMesh mesh{{"a", "b"}, {2, 2}};
  auto spmd = compiler::PartitionShardMapBody(
      p, mesh,
      {compiler::ShardMapCollective{1, 2, {1}, ReduceOp::kSum},
       compiler::ShardMapCollective{2, 3, {0, 1}, ReduceOp::kMax}});
  ASSERT_TRUE(spmd.ok()) << spmd.status().to_string();
  auto exe = SpmdExecutable::CompilePartitioned(std::move(spmd).value(),
                                                Devices(), "body");
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  // Device d holds {d, d + 1, -d}.
  std::vector<Literal> blocks;
  std::vector<Array> per_device;
  for (int d : exe.value()->local_positions()) {
    blocks.push_back(Literal::FromVector(
        std::vector<float>{float(d), float(d + 1), float(-d)}, Shape{3}));
    per_device.push_back(Put(blocks.back(), exe.value()->devices()[d]));
  }
  auto out = exe.value()->Execute({per_device});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out.value().size(), 2u);
  const auto value = [&](int d, int k) {
    return static_cast<const float*>(blocks[d].untyped_data())[k];
  };
  for (int d : exe.value()->local_positions()) {
    const Literal y = testing::ToLiteral(out.value()[0][d]);
    const Literal m = testing::ToLiteral(out.value()[1][d]);
    const int partner = d ^ 1;  // the other device along 'b'
    for (int k = 0; k < 3; ++k) {
      float squares = value(d, k) * value(d, k) + value(partner, k) * value(partner, k);
      float max = value(0, k);
      for (int e = 1; e < 4; ++e) max = std::max(max, value(e, k));
      EXPECT_EQ(static_cast<const float*>(y.untyped_data())[k], value(d, k) + squares)
          << "device " << d << " element " << k;
      EXPECT_EQ(static_cast<const float*>(m.untyped_data())[k], max)
          << "device " << d << " element " << k;
    }
    EXPECT_EQ(out.value()[0][d].device(), exe.value()->devices()[d]);
  }
}

TEST(SpmdExecutableTest, ShardMapCollectivesMoveEachDevicesOwnBlocks) {
  // shard_map(lambda x: (all_gather(x, 'b', tiled=True),
  //                      ppermute(x, ('a', 'b'), [(0, 1), (1, 2), (2, 3)])))
  // on ('a': 2, 'b': 2), device d holding {d, 10 + d}.
  Program p;
  const ValueId x = p.AddParameter(F32({2})).value();
  const ValueId g = p.AddParameter(F32({4})).value();
  const ValueId r = p.AddParameter(F32({2})).value();
  ASSERT_TRUE(p.SetOutputs({g, r, x, x}).ok());
  compiler::SpmdCollective gather;
  gather.tiled = true;
  compiler::SpmdCollective shift;
  shift.kind = compiler::SpmdCollective::Kind::kPermute;
  shift.source_of = {-1, 0, 1, 2};
  auto spmd = compiler::PartitionShardMapBody(
      p, DeviceMesh{{"a", "b"}, {2, 2}},
      {compiler::ShardMapCollective{1, 2, {1}, ReduceOp::kSum, gather},
       compiler::ShardMapCollective{2, 3, {0, 1}, ReduceOp::kSum, shift}});
  ASSERT_TRUE(spmd.ok()) << spmd.status().to_string();
  auto exe = SpmdExecutable::CompilePartitioned(std::move(spmd).value(),
                                                Devices(), "moves");
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  std::vector<Array> per_device;
  for (int d : exe.value()->local_positions()) {
    per_device.push_back(Put(Literal::FromVector(
                                 std::vector<float>{float(d), float(10 + d)}, Shape{2}),
                             exe.value()->devices()[d]));
  }
  auto out = exe.value()->Execute({per_device});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  for (int d : exe.value()->local_positions()) {
    const int first = d & ~1;  // the group along 'b': {first, first + 1}
    const Literal g = testing::ToLiteral(out.value()[0][d]);
    const float* gv = static_cast<const float*>(g.untyped_data());
    EXPECT_EQ(std::vector<float>(gv, gv + 4),
              (std::vector<float>{float(first), float(10 + first), float(first + 1),
                                  float(11 + first)}))
        << "device " << d;
    const Literal r = testing::ToLiteral(out.value()[1][d]);
    const float* rv = static_cast<const float*>(r.untyped_data());
    const std::vector<float> want =
        d == 0 ? std::vector<float>{0, 0}
               : std::vector<float>{float(d - 1), float(9 + d)};
    EXPECT_EQ(std::vector<float>(rv, rv + 2), want) << "device " << d;
  }
  // Each device reads its group's other block for the gather.
  auto m = exe.value()->memory_analysis(0);
  ASSERT_TRUE(m.ok());
  EXPECT_GE(m.value().peak_memory_in_bytes, 8 + 8 + 16);
}

TEST(SpmdExecutableTest, BadArgumentsAreRefusedByArgumentAndDevice) {
  const Program p = MlpLayer();
  const DeviceMesh mesh{{"i"}, {4}};
  auto exe = SpmdExecutable::Compile(
      p, mesh, {Sharding{{{}, {}}}, Sharding{{{}, {0}}}, Sharding{{{0}, {}}}},
      Devices(), "mlp");
  ASSERT_TRUE(exe.ok());
  auto in = Blocks(*exe.value(), {Arg({8, 16}, 1), Arg({16, 32}, 2),
                                  Arg({32, 4}, 3)});
  // w1's block on device 2 swapped for device 3's: wrong device.
  std::swap(in[1][2], in[1][3]);
  auto out = exe.value()->Execute(in);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("argument 1's block for"),
            std::string::npos)
      << out.status().message();
  // Too few devices for the mesh.
  std::vector<Device*> three = Devices();
  three.pop_back();
  auto bad = SpmdExecutable::Compile(p, mesh, {Sharding{{{}, {}}},
                                               Sharding{{{}, {0}}},
                                               Sharding{{{0}, {}}}},
                                     three, "mlp");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("4 positions but 3 devices"),
            std::string::npos)
      << bad.status().message();
}

// Two processes (ranks as threads of this test, joined by Gloo), two devices
// each, mesh ('data': 2, 'model': 2) with 'data' across the processes: a
// tensor-parallel layer whose all-reduce over 'model' stays in a process,
// a loss all-reduced over both axes and an x @ x.T all-gathered over 'data'
// (both across processes). Every rank's blocks equal one device's result.
// A data-parallel update w - dot(x, x w) over the batch with w donated:
// each device's w block goes to the stage reading it last (the update, after
// the gradient's all-reduce) and the new w is written over it -- the same
// storage on every device, no second copy of w left, the old w consumed.
TEST(SpmdExecutableTest, DonatedParametersAreUpdatedInPlaceOnEveryDevice) {
  Program p;
  const ValueId x = p.AddParameter(F32({8, 4})).value();
  const ValueId w = p.AddParameter(F32({4, 4})).value();
  const ValueId h = Dot(p, x, w);  // [8, 4], rows split
  const ValueId g =
      p.Add(compiler::DotGeneralAttrs{{}, {}, {0}, {0}}, {x, h}).value();
  const ValueId u = p.Add(compiler::BinaryAttrs{BinaryOp::kSub}, {w, g}).value();
  ASSERT_TRUE(p.SetOutputs({u}).ok());
  const DeviceMesh mesh{{"i"}, {4}};
  const std::vector<Sharding> shardings = {Sharding{{{0}, {}}},
                                           Sharding{{{}, {}}}};
  auto exe = SpmdExecutable::Compile(p, mesh, shardings, Devices(), "update",
                                     nullptr, {}, {false, true});
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  const std::vector<Literal> args = {Arg({8, 4}, 1), Arg({4, 4}, 2)};
  const auto want = compiler::Interpret(p, args);
  ASSERT_TRUE(want.ok());
  // Per device: x's block (2 x 4) and w (4 x 4) in, the new w out, over w.
  for (int k = 0; k < 4; ++k) {
    auto a = exe.value()->memory_analysis(k);
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    EXPECT_EQ(a.value().argument_size_in_bytes, (2 * 4 + 4 * 4) * 4);
    EXPECT_EQ(a.value().output_size_in_bytes, 4 * 4 * 4);
    EXPECT_EQ(a.value().alias_size_in_bytes, 4 * 4 * 4);
    EXPECT_GE(a.value().peak_memory_in_bytes,
              a.value().argument_size_in_bytes + 8 * 4 /* h's block */);
  }
  EXPECT_FALSE(exe.value()->memory_analysis(4).ok());
  auto in = Blocks(*exe.value(), args);
  // Without its donations the call is refused and nothing is consumed.
  auto refused = exe.value()->Execute(in);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("compiled donated"),
            std::string::npos)
      << refused.status().to_string();
  std::vector<const TrackedBuffer*> w_storage;
  std::vector<int64_t> before;
  std::vector<Donated> donations;
  for (size_t k = 0; k < in[1].size(); ++k) {
    EXPECT_FALSE(in[1][k].IsDeleted());
    w_storage.push_back(in[1][k].impl()->buffer().value().get());
    before.push_back(InUse(in[1][k].device()));
    donations.push_back(ValueOrThrow(TryDonate(in[1][k])));
  }
  std::vector<std::vector<Donated*>> donated(2);
  for (Donated& d : donations) donated[1].push_back(&d);
  auto out = exe.value()->Execute(in, donated);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ExpectOutputEquals(*exe.value(), 0, out.value()[0], want.value()[0]);
  for (Device* d : Devices()) ASSERT_TRUE(d->Synchronize().ok());
  for (size_t k = 0; k < in[1].size(); ++k) {
    EXPECT_TRUE(in[1][k].IsDeleted()) << "device " << k;
    EXPECT_EQ(out.value()[0][k].impl()->buffer().value().get(), w_storage[k])
        << "the new w is not written over the donated block on device " << k;
    // x's block and the new w (where the old w was): nothing else is left.
    EXPECT_EQ(InUse(out.value()[0][k].device()), before[k]) << "device " << k;
  }
}

// Runs `rank(r, group, devices, processes)` on two threads as the two
// processes of a Gloo group, rank r holding mesh positions 2r and 2r + 1 of
// a 4-position mesh.
void RunTwoRanks(
    const std::function<void(int, std::vector<Device*>, SpmdProcesses)>& rank) {
  using collectives::CoordinatorServer;
  using collectives::ProcessGroup;
  auto server = CoordinatorServer::Start("127.0.0.1:0");
  ASSERT_TRUE(server.ok());
  const std::string address = "127.0.0.1:" + std::to_string((*server)->port());
  server->reset();  // process 0 of the group serves it again
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      collectives::ProcessGroupOptions o;
      o.coordinator_address = address;
      o.num_processes = 2;
      o.process_id = r;
      o.init_timeout = std::chrono::milliseconds(10000);
      o.op_timeout = std::chrono::milliseconds(10000);
      auto group = ProcessGroup::Connect(o);
      ASSERT_TRUE(group.ok()) << group.status().to_string();
      std::vector<Device*> devices(4, nullptr);
      devices[2 * r] = Devices()[2 * r];
      devices[2 * r + 1] = Devices()[2 * r + 1];
      rank(r, devices, SpmdProcesses{r, {0, 0, 1, 1}, group->get()});
    });
  }
  for (auto& t : ranks) t.join();
}

TEST(SpmdExecutableTest, MeshesAcrossProcessesExchangeThroughTheGroup) {
  if (!collectives::ProcessGroup::GlooAvailable()) GTEST_SKIP() << "built without Gloo";
  Program p;
  const ValueId x = p.AddParameter(F32({8, 16})).value();
  const ValueId w1 = p.AddParameter(F32({16, 8})).value();
  const ValueId w2 = p.AddParameter(F32({8, 4})).value();
  const ValueId h = Dot(p, x, w1);
  const ValueId t = p.Add(compiler::UnaryAttrs{UnaryOp::kAbs}, {h}).value();
  const ValueId y = Dot(p, t, w2);
  const ValueId loss =
      p.Add(compiler::ReduceAttrs{ReduceOp::kSum, {0, 1}}, {y}).value();
  const ValueId gram =
      p.Add(compiler::DotGeneralAttrs{{}, {}, {1}, {1}}, {x, x}).value();
  ASSERT_TRUE(p.SetOutputs({y, loss, gram}).ok());
  const DeviceMesh mesh{{"data", "model"}, {2, 2}};
  const std::vector<Sharding> shardings = {
      Sharding{{{0}, {}}}, Sharding{{{}, {1}}}, Sharding{{{1}, {}}}};
  const std::vector<Literal> args = {Arg({8, 16}, 1), Arg({16, 8}, 2),
                                     Arg({8, 4}, 3)};
  const auto want = compiler::Interpret(p, args);
  ASSERT_TRUE(want.ok());
  RunTwoRanks([&](int r, std::vector<Device*> devices, SpmdProcesses processes) {
      auto exe = SpmdExecutable::Compile(p, mesh, shardings, devices,
                                         "tp_layer", &processes);
      ASSERT_TRUE(exe.ok()) << exe.status().to_string();
      EXPECT_EQ(exe.value()->local_positions(), (std::vector<int>{2 * r, 2 * r + 1}));
      auto out = exe.value()->Execute(Blocks(*exe.value(), args));
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      for (int k = 0; k < 3; ++k) {
        ExpectOutputEquals(*exe.value(), k, out.value()[k], want.value()[k]);
      }
  });
}

// A tensor-parallel layer applied by a while loop until a counter reaches
// 3: (x, n, w1, w2) -> (x, n), x [8, 16] replicated, w1 [16, 32] split by
// columns and w2 [32, 16] by rows over ('i': 4). The layer's output is
// clipped to [-3, 3] so every sum stays an exact small integer.
Program TensorParallelLoop() {
  using compiler::TraceContext;
  using compiler::Tracer;
  TraceContext body;
  const Tracer x = body.AddParameter(F32({8, 16}));
  const Tracer n = body.AddParameter(F32(Shape{}));
  const Tracer w1 = body.AddParameter(F32({16, 32}));
  const Tracer w2 = body.AddParameter(F32({32, 16}));
  const Tracer y = minimum(maximum(matmul(matmul(x, w1), w2), -3.0), 3.0);
  compiler::WhileAttrs loop;
  loop.num_carries = 2;
  loop.body = std::make_shared<const Program>(body.Finish({y, n + 1.0}));
  TraceContext cond;
  cond.AddParameter(F32({8, 16}));
  const Tracer c = cond.AddParameter(F32(Shape{}));
  cond.AddParameter(F32({16, 32}));
  cond.AddParameter(F32({32, 16}));
  loop.cond = std::make_shared<const Program>(cond.Finish({lt(c, 3.0)}));
  Program p;
  std::vector<ValueId> params;
  for (const ValueType& t : {F32({8, 16}), F32(Shape{}), F32({16, 32}), F32({32, 16})}) {
    params.push_back(p.AddParameter(t).value());
  }
  const std::vector<ValueId> outs = compiler::AddRegionGroup(p, loop, params).value();
  EXPECT_TRUE(p.SetOutputs({outs[0], outs[1]}).ok());
  return p;
}

const std::vector<Sharding> kLoopShardings = {
    Sharding{{{}, {}}}, Sharding{{}}, Sharding{{{}, {0}}}, Sharding{{{0}, {}}}};

std::vector<Literal> LoopArgs() {
  return {Arg({8, 16}, 1), Literal::Scalar<float>(0.0f), Arg({16, 32}, 2),
          Arg({32, 16}, 3)};
}

// The loop runs as a loop stage: its weights stay a quarter per device
// through every iteration (each iteration all-reduces inside the body),
// the values are the one-device program's, and after the call only the
// arguments and outputs stay allocated.
TEST(SpmdExecutableTest, WhileLoopsNeedingCommunicationKeepTheirOperandsSplit) {
  const Program p = TensorParallelLoop();
  auto exe = SpmdExecutable::Compile(p, DeviceMesh{{"i"}, {4}}, kLoopShardings,
                                     Devices(), "tp_loop");
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  const auto& sp = exe.value()->partitioned();
  ASSERT_EQ(Count(sp, compiler::SpmdStage::Kind::kLoop), 1) << sp.ToText();
  EXPECT_EQ(sp.num_communication_stages(), 0);
  const std::vector<Literal> args = LoopArgs();
  const auto want = compiler::Interpret(p, args);
  ASSERT_TRUE(want.ok());
  std::vector<int64_t> before;
  for (Device* d : Devices()) before.push_back(InUse(d));
  {
    auto in = Blocks(*exe.value(), args);
    const int64_t params =
        Block(8 * 16 * 4) + Block(4) + Block(16 * 8 * 4) + Block(8 * 16 * 4);
    auto out = exe.value()->Execute(in);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ExpectOutputEquals(*exe.value(), 0, out.value()[0], want.value()[0]);
    ExpectOutputEquals(*exe.value(), 1, out.value()[1], want.value()[1]);
    for (size_t d = 0; d < 4; ++d) {
      EXPECT_EQ(InUse(Devices()[d]) - before[d], params + Block(8 * 16 * 4) + Block(4))
          << "device " << d;
    }
    // One device's view: the arguments at a quarter of the weights; the
    // peak holds them, the old and new carries and the layer's blocks --
    // never a whole weight.
    auto m = exe.value()->memory_analysis(0);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(m.value().argument_size_in_bytes,
              (8 * 16 + 1 + 16 * 8 + 8 * 16) * 4);
    EXPECT_EQ(m.value().output_size_in_bytes, (8 * 16 + 1) * 4);
    EXPECT_GE(m.value().peak_memory_in_bytes,
              m.value().argument_size_in_bytes + m.value().output_size_in_bytes);
    EXPECT_LT(m.value().peak_memory_in_bytes,
              m.value().argument_size_in_bytes + (16 * 32 + 32 * 16) * 4);
  }
  for (size_t d = 0; d < 4; ++d) EXPECT_EQ(InUse(Devices()[d]), before[d]);
  EXPECT_NE(exe.value()->as_text().find("while %"), std::string::npos);
}

// Across two processes the loop's all-reduces go through the group, every
// iteration; each process reads the same predicate and stops alike.
TEST(SpmdExecutableTest, WhileLoopsAcrossProcessesStopTogether) {
  if (!collectives::ProcessGroup::GlooAvailable()) GTEST_SKIP() << "built without Gloo";
  const Program p = TensorParallelLoop();
  const std::vector<Literal> args = LoopArgs();
  const auto want = compiler::Interpret(p, args);
  ASSERT_TRUE(want.ok());
  RunTwoRanks([&](int r, std::vector<Device*> devices, SpmdProcesses processes) {
    auto exe = SpmdExecutable::Compile(p, DeviceMesh{{"i"}, {4}}, kLoopShardings,
                                       devices, "tp_loop", &processes);
    ASSERT_TRUE(exe.ok()) << exe.status().to_string();
    // The loop's exchanges are part of what the processes agree on.
    EXPECT_NE(exe.value()->agreement().find("while {"), std::string::npos)
        << exe.value()->agreement();
    auto out = exe.value()->Execute(Blocks(*exe.value(), args));
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    for (int k = 0; k < 2; ++k) {
      ExpectOutputEquals(*exe.value(), k, out.value()[k], want.value()[k]);
    }
  });
}

// A conditional choosing, by its index parameter (an int32 scalar), a
// tensor-parallel layer (its all-reduce inside the branch) or x * 2.
Program TensorParallelCase() {
  auto branch = [](bool layer) {
    TraceContext ctx;
    const Tracer x = ctx.AddParameter(F32({8, 16}));
    const Tracer w1 = ctx.AddParameter(F32({16, 32}));
    const Tracer w2 = ctx.AddParameter(F32({32, 16}));
    if (layer) return ctx.Finish({minimum(maximum(matmul(matmul(x, w1), w2), -3.0), 3.0)});
    return ctx.Finish({x * 2.0});
  };
  compiler::CaseAttrs c;
  c.branches = {std::make_shared<const Program>(branch(true)),
                std::make_shared<const Program>(branch(false))};
  Program p;
  std::vector<ValueId> params;
  for (const ValueType& t : {ValueType{Shape{}, DType::kInt32}, F32({8, 16}),
                             F32({16, 32}), F32({32, 16})}) {
    params.push_back(p.AddParameter(t).value());
  }
  const std::vector<ValueId> outs = compiler::AddRegionGroup(p, c, params).value();
  EXPECT_TRUE(p.SetOutputs({outs[0]}).ok());
  return p;
}

const std::vector<Sharding> kCaseShardings = {
    Sharding{{}}, Sharding{{{}, {}}}, Sharding{{{}, {0}}}, Sharding{{{0}, {}}}};

std::vector<Literal> CaseArgs(int32_t index) {
  return {Literal::Scalar<int32_t>(index), Arg({8, 16}, 1), Arg({16, 32}, 2),
          Arg({32, 16}, 3)};
}

// The conditional runs as a case stage: its weights stay a quarter per
// device (the layer's all-reduce is inside its branch), every index -- out
// of range ones clamped -- gives the one-device program's values, and after
// the call only the arguments and the output stay allocated.
TEST(SpmdExecutableTest, ConditionalsNeedingCommunicationKeepTheirOperandsSplit) {
  const Program p = TensorParallelCase();
  auto exe = SpmdExecutable::Compile(p, DeviceMesh{{"i"}, {4}}, kCaseShardings,
                                     Devices(), "tp_case");
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  const auto& sp = exe.value()->partitioned();
  ASSERT_EQ(Count(sp, compiler::SpmdStage::Kind::kCase), 1) << sp.ToText();
  EXPECT_EQ(sp.num_communication_stages(), 0);
  std::vector<int64_t> before;
  for (Device* d : Devices()) before.push_back(InUse(d));
  for (const int32_t index : {0, 1, 9, -4}) {
    SCOPED_TRACE("index " + std::to_string(index));
    const std::vector<Literal> args = CaseArgs(index);
    const auto want = compiler::Interpret(p, args);
    ASSERT_TRUE(want.ok());
    auto in = Blocks(*exe.value(), args);
    const int64_t params =
        Block(4) + Block(8 * 16 * 4) + Block(16 * 8 * 4) + Block(8 * 16 * 4);
    auto out = exe.value()->Execute(in);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ExpectOutputEquals(*exe.value(), 0, out.value()[0], want.value()[0]);
    for (size_t d = 0; d < 4; ++d) {
      EXPECT_EQ(InUse(Devices()[d]) - before[d], params + Block(8 * 16 * 4))
          << "device " << d;
    }
  }
  for (size_t d = 0; d < 4; ++d) EXPECT_EQ(InUse(Devices()[d]), before[d]);
  // One device's view: the arguments at a quarter of the weights; the peak
  // is the layer branch's, never a whole weight.
  auto m = exe.value()->memory_analysis(0);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m.value().argument_size_in_bytes, (1 + 8 * 16 + 16 * 8 + 8 * 16) * 4);
  EXPECT_EQ(m.value().output_size_in_bytes, 8 * 16 * 4);
  EXPECT_GT(m.value().peak_memory_in_bytes,
            m.value().argument_size_in_bytes + m.value().output_size_in_bytes);
  EXPECT_LT(m.value().peak_memory_in_bytes,
            m.value().argument_size_in_bytes + (16 * 32 + 32 * 16) * 4);
  EXPECT_NE(exe.value()->as_text().find("case %"), std::string::npos);
}

// Across two processes the layer branch's all-reduce goes through the
// group; each process reads the same index and takes the same branch.
TEST(SpmdExecutableTest, ConditionalsAcrossProcessesTakeTheSameBranch) {
  if (!collectives::ProcessGroup::GlooAvailable()) GTEST_SKIP() << "built without Gloo";
  const Program p = TensorParallelCase();
  RunTwoRanks([&](int r, std::vector<Device*> devices, SpmdProcesses processes) {
    auto exe = SpmdExecutable::Compile(p, DeviceMesh{{"i"}, {4}}, kCaseShardings,
                                       devices, "tp_case", &processes);
    ASSERT_TRUE(exe.ok()) << exe.status().to_string();
    // The branches' exchanges are part of what the processes agree on.
    EXPECT_NE(exe.value()->agreement().find("case {"), std::string::npos)
        << exe.value()->agreement();
    for (const int32_t index : {0, 1}) {
      const std::vector<Literal> args = CaseArgs(index);
      const auto want = compiler::Interpret(p, args);
      ASSERT_TRUE(want.ok());
      auto out = exe.value()->Execute(Blocks(*exe.value(), args));
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      ExpectOutputEquals(*exe.value(), 0, out.value()[0], want.value()[0]);
    }
  });
}

// A BlockExchange that serves this process's devices when `serves` says
// so, records what it is asked for and moves the blocks as the host-staged
// exchange does.
class RecordingExchange final : public BlockExchange {
 public:
  RecordingExchange(collectives::ProcessGroup* group, bool serves)
      : host_(group), serves_(serves) {}
  std::string name() const override { return "recording"; }
  bool Serves(const std::vector<Device*>&, MemoryKind) const override {
    return serves_;
  }
  Result<std::vector<std::vector<Array>>> Gather(
      const std::vector<Array>& local, const std::vector<int>& process_of,
      int process_index, const std::vector<std::vector<int>>& wanted) override {
    ++calls;
    for (const auto& w : wanted) {
      for (int e : w) {
        if (process_of[e] == process_index) ++own_positions_wanted;
      }
    }
    // The host-staged exchange allocates exactly the wanted blocks on each
    // device, in `local`'s memory kind.
    std::vector<int64_t> before;
    for (const Array& a : local) {
      EXPECT_TRUE(a.device()->Synchronize().ok());
      before.push_back(a.device()->memory_space(a.memory_kind()).stats().bytes_in_use);
    }
    auto got = host_.Gather(local, process_of, process_index, wanted);
    if (!got.ok()) return got;
    for (size_t k = 0; k < local.size(); ++k) {
      const int64_t block = (local[k].nbytes() + 255) / 256 * 256;
      EXPECT_TRUE(local[k].device()->Synchronize().ok());
      EXPECT_EQ(local[k].device()->memory_space(local[k].memory_kind()).stats().bytes_in_use -
                    before[k],
                block * static_cast<int64_t>(wanted[k].size()));
      for (size_t e = 0; e < process_of.size(); ++e) {
        const bool is_wanted =
            std::find(wanted[k].begin(), wanted[k].end(), static_cast<int>(e)) !=
            wanted[k].end();
        EXPECT_EQ(got.value()[k][e].valid(), is_wanted) << "position " << e;
        if (is_wanted) EXPECT_EQ(got.value()[k][e].device(), local[k].device());
      }
    }
    return got;
  }
  int calls = 0;
  int own_positions_wanted = 0;

 private:
  HostStagedExchange host_;
  bool serves_;
};

TEST(SpmdExecutableTest, BlocksCrossProcessesThroughTheExchangeThatServesThem) {
  // The same tensor-parallel layer as above, with an exchange given: used
  // for every crossing stage when it serves the process's devices (as NCCL
  // serves one GPU), never when it does not (the host-staged one over the
  // group then carries them). Values are the one-device program's either
  // way.
  if (!collectives::ProcessGroup::GlooAvailable()) GTEST_SKIP() << "built without Gloo";
  Program p;
  const ValueId x = p.AddParameter(F32({8, 16})).value();
  const ValueId w1 = p.AddParameter(F32({16, 8})).value();
  const ValueId h = Dot(p, x, w1);
  const ValueId loss =
      p.Add(compiler::ReduceAttrs{ReduceOp::kSum, {0, 1}}, {h}).value();
  ASSERT_TRUE(p.SetOutputs({h, loss}).ok());
  const DeviceMesh mesh{{"data", "model"}, {2, 2}};
  const std::vector<Sharding> shardings = {Sharding{{{0}, {1}}},
                                           Sharding{{{1}, {}}}};
  const std::vector<Literal> args = {Arg({8, 16}, 1), Arg({16, 8}, 2)};
  const auto want = compiler::Interpret(p, args);
  ASSERT_TRUE(want.ok());
  for (const bool serves : {true, false}) {
    std::vector<int> calls(2, 0), own(2, 0);
    RunTwoRanks([&](int r, std::vector<Device*> devices, SpmdProcesses processes) {
      RecordingExchange exchange(processes.group, serves);
      processes.exchange = &exchange;
      auto exe = SpmdExecutable::Compile(p, mesh, shardings, devices, "layer",
                                         &processes);
      ASSERT_TRUE(exe.ok()) << exe.status().to_string();
      ASSERT_FALSE(exe.value()->agreement().empty()) << "no stage crosses processes";
      auto out = exe.value()->Execute(Blocks(*exe.value(), args));
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      for (int k = 0; k < 2; ++k) {
        ExpectOutputEquals(*exe.value(), k, out.value()[k], want.value()[k]);
      }
      calls[r] = exchange.calls;
      own[r] = exchange.own_positions_wanted;
    });
    for (int r = 0; r < 2; ++r) {
      if (serves) {
        EXPECT_GT(calls[r], 0) << "rank " << r;
      } else {
        EXPECT_EQ(calls[r], 0) << "rank " << r;
      }
      EXPECT_EQ(own[r], 0) << "a process asked for its own blocks";
    }
    EXPECT_EQ(calls[0], calls[1]) << "the exchange is a collective";
  }
}

TEST(SpmdExecutableTest, ProcessesRunningDifferentExchangesFailAlike) {
  // A shard_map body traced differently on the two ranks (psum on rank 0,
  // pmax on rank 1): every rank refuses the call, naming the exchange,
  // before anything is exchanged; then a program they share runs.
  if (!collectives::ProcessGroup::GlooAvailable()) GTEST_SKIP() << "built without Gloo";
  auto body = [](ReduceOp op, const DeviceMesh& mesh) {
    Program p;
    const ValueId x = p.AddParameter(F32({2})).value();
    const ValueId r = p.AddParameter(F32({2})).value();
    EXPECT_TRUE(p.SetOutputs({r, x}).ok());
    return compiler::PartitionShardMapBody(
        p, mesh, {compiler::ShardMapCollective{1, 1, {0}, op}});
  };
  const DeviceMesh mesh{{"data"}, {4}};
  std::vector<std::string> errors(2);
  RunTwoRanks([&](int r, std::vector<Device*> devices, SpmdProcesses processes) {
      std::vector<Array> blocks;
      for (int k = 0; k < 2; ++k) {
        blocks.push_back(Put(Literal::FromVector(std::vector<float>{1, 2}, Shape{2}),
                             devices[2 * r + k]));
      }
      auto mixed = SpmdExecutable::CompilePartitioned(
          body(r == 0 ? ReduceOp::kSum : ReduceOp::kMax, mesh).value(), devices,
          "mixed", &processes);
      ASSERT_TRUE(mixed.ok()) << mixed.status().to_string();
      EXPECT_NE(mixed.value()->agreement().find(r == 0 ? "all_reduce(sum) over 'data' of float32(2,)"
                                                       : "all_reduce(max)"),
                std::string::npos)
          << mixed.value()->agreement();
      auto out = mixed.value()->Execute({blocks});
      ASSERT_FALSE(out.ok());
      errors[r] = out.status().message();
      auto shared = SpmdExecutable::CompilePartitioned(
          body(ReduceOp::kSum, mesh).value(), devices, "shared", &processes);
      ASSERT_TRUE(shared.ok()) << shared.status().to_string();
      auto sum = shared.value()->Execute({blocks});
      ASSERT_TRUE(sum.ok()) << sum.status().to_string();
      const Literal got = testing::ToLiteral(sum.value()[0][0]);
      EXPECT_EQ(static_cast<const float*>(got.untyped_data())[1], 8.0f);
  });
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("called different collectives"), std::string::npos) << e;
    EXPECT_NE(e.find("process 0 all_reduce(sum)"), std::string::npos) << e;
    EXPECT_NE(e.find("process 1 all_reduce(max)"), std::string::npos) << e;
  }
  EXPECT_EQ(errors[0], errors[1]);
}

}  // namespace
}  // namespace baton
