// ShardedArray (jit/sharded_array.h) and SpmdExecutable::Run: a C++ caller
// lays host data out over a mesh, runs a partitioned program on sharded
// arrays and reads the whole result back -- with each device holding its
// block only (bytes_in_use), the whole array round-tripping bytewise, and
// bad layouts named.
#include "baton/jit/sharded_array.h"

#include <gtest/gtest.h>

#include <numeric>

#include "baton/compiler/reference_interpreter.h"
#include "baton/jit/spmd_executable.h"
#include "baton/runtime/client.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using compiler::DeviceMesh;
using compiler::Literal;
using compiler::Program;
using compiler::Sharding;
using compiler::ValueId;
using compiler::ValueType;

// Device memory in use once the device's queued work is done: an array
// released while its queue still runs (an earlier test's) is freed then.
int64_t InUse(Device* d) {
  EXPECT_TRUE(d->Synchronize().ok());
  return d->memory_space(MemoryKind::kDevice).stats().bytes_in_use;
}

std::vector<float> Iota(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST(ShardedArrayTest, PutCutsBlocksAndCopyToHostAssemblesThem) {
  const std::vector<Device*> devices = testing::FourMeshDevices().devices();
  const DeviceMesh mesh{{"a", "b"}, {2, 2}};
  const std::vector<float> host = Iota(8 * 6);
  std::vector<int64_t> before;
  for (Device* d : devices) before.push_back(InUse(d));
  // Rows over 'a', columns over 'b': a 4 x 3 block per device.
  auto a = ShardedArray::Put(HostBuffer{host.data(), Shape{8, 6}, DType::kFloat32},
                             mesh, Sharding{{{0}, {1}}}, devices);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(a.value().block_shape(), (Shape{4, 3}));
  ASSERT_EQ(a.value().blocks().size(), 4u);
  for (size_t d = 0; d < 4; ++d) {
    EXPECT_EQ(a.value().blocks()[d].device(), devices[d]);
    ASSERT_TRUE(devices[d]->Synchronize().ok());
    EXPECT_EQ(InUse(devices[d]) - before[d], 256) << "one 48-byte block";
  }
  // Device (a=1, b=0) holds rows 4..7, columns 0..2.
  const Literal block = testing::ToLiteral(a.value().blocks()[2]);
  EXPECT_EQ(block.data<float>()[0], 4 * 6 + 0);
  EXPECT_EQ(block.data<float>()[5], 5 * 6 + 2);
  std::vector<float> back(host.size(), -1.0f);
  ASSERT_TRUE(a.value().CopyToHost(back.data(), back.size() * 4).ok());
  EXPECT_EQ(back, host);
  EXPECT_FALSE(a.value().CopyToHost(back.data(), 4).ok());
  // A dimension its axes do not divide, and a device count that is wrong.
  auto odd = ShardedArray::Put(HostBuffer{host.data(), Shape{6, 8}, DType::kFloat32},
                               DeviceMesh{{"i"}, {4}}, Sharding{{{0}, {}}}, devices);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("does not divide"), std::string::npos)
      << odd.status().to_string();
  EXPECT_FALSE(ShardedArray::Put(HostBuffer{host.data(), Shape{8, 6}, DType::kFloat32},
                                 mesh, Sharding{{{0}, {}}},
                                 {devices[0], devices[1]})
                   .ok());
  // FromBlocks names a block on the wrong device.
  std::vector<Array> swapped = a.value().blocks();
  std::swap(swapped[0], swapped[1]);
  auto bad = ShardedArray::FromBlocks(Shape{8, 6}, DType::kFloat32, mesh,
                                      Sharding{{{0}, {1}}}, devices, swapped);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("mesh position 0"), std::string::npos)
      << bad.status().to_string();
}

TEST(ShardedArrayTest, APartitionedProgramRunsOnShardedArrays) {
  const std::vector<Device*> devices = testing::FourMeshDevices().devices();
  const DeviceMesh mesh{{"i"}, {4}};
  // y = x @ w with x's rows split, then the column sums (an all-reduce).
  Program p;
  const ValueId x = p.AddParameter(ValueType{Shape{8, 4}, DType::kFloat32}).value();
  const ValueId w = p.AddParameter(ValueType{Shape{4, 3}, DType::kFloat32}).value();
  const ValueId y =
      p.Add(compiler::DotGeneralAttrs{{}, {}, {1}, {0}}, {x, w}).value();
  const ValueId s = p.Add(compiler::ReduceAttrs{ReduceOp::kSum, {0}}, {y}).value();
  ASSERT_TRUE(p.SetOutputs({y, s}).ok());
  const Sharding rows{{{0}, {}}}, whole{{{}, {}}};
  auto exe = SpmdExecutable::Compile(p, mesh, {rows, whole}, devices, "layer");
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  const std::vector<float> xs = Iota(8 * 4), ws = Iota(4 * 3);
  auto xa = ShardedArray::Put(HostBuffer{xs.data(), Shape{8, 4}, DType::kFloat32},
                              mesh, rows, devices);
  auto wa = ShardedArray::Put(HostBuffer{ws.data(), Shape{4, 3}, DType::kFloat32},
                              mesh, whole, devices);
  ASSERT_TRUE(xa.ok() && wa.ok());
  auto out = exe.value()->Run({xa.value(), wa.value()});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const auto want = compiler::Interpret(
      p, {Literal::FromVector(xs, Shape{8, 4}), Literal::FromVector(ws, Shape{4, 3})});
  ASSERT_TRUE(want.ok());
  for (size_t k = 0; k < 2; ++k) {
    const ShardedArray& o = out.value()[k];
    EXPECT_EQ(o.sharding(), exe.value()->output_shardings()[k]);
    std::vector<float> got(static_cast<size_t>(o.shape().num_elements()));
    ASSERT_TRUE(o.CopyToHost(got.data(), got.size() * 4).ok());
    const Literal& w_k = want.value()[k];
    EXPECT_EQ(std::memcmp(got.data(), w_k.untyped_data(), got.size() * 4), 0)
        << "output " << k;
  }
  EXPECT_EQ(out.value()[0].sharding(), rows);  // y keeps x's rows split
  // An argument laid out otherwise is named, nothing run.
  auto wrong = exe.value()->Run({wa.value(), wa.value()});
  ASSERT_FALSE(wrong.ok());
  auto cols = ShardedArray::Put(HostBuffer{xs.data(), Shape{8, 4}, DType::kFloat32},
                                mesh, Sharding{{{}, {0}}}, devices);
  ASSERT_TRUE(cols.ok());
  auto relaid = exe.value()->Run({cols.value(), wa.value()});
  ASSERT_FALSE(relaid.ok());
  EXPECT_NE(relaid.status().message().find("argument 0 is laid out as"),
            std::string::npos)
      << relaid.status().to_string();
}

}  // namespace
}  // namespace baton
