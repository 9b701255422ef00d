// NcclProcessGroup (backend/cuda/nccl_process_group.h): the dtype and op
// mappings; without a GPU (or NCCL, or the CUDA backend) Connect fails
// saying why; with one GPU a group of one all-reduces, all-gathers,
// reduce-scatters and broadcasts device memory (tools/gpu_check.sh).
#include "baton/backend/cuda/nccl_process_group.h"

#include <gtest/gtest.h>

#include <vector>

#include "baton/backend/cuda/cuda_platform.h"
#include "baton/collectives/coordinator.h"
#include "baton/core/error.h"
#include "baton/runtime/client.h"
#include "baton/runtime/transfer.h"

namespace baton::cuda {
namespace {

using collectives::ReduceOp;

TEST(NcclProcessGroupTest, DTypesAndOpsMapToNcclsValues) {
  EXPECT_EQ(ValueOrThrow(NcclDataType(DType::kInt8)), 0);
  EXPECT_EQ(ValueOrThrow(NcclDataType(DType::kUInt8)), 1);
  EXPECT_EQ(ValueOrThrow(NcclDataType(DType::kInt32)), 2);
  EXPECT_EQ(ValueOrThrow(NcclDataType(DType::kUInt32)), 3);
  EXPECT_EQ(ValueOrThrow(NcclDataType(DType::kInt64)), 4);
  EXPECT_EQ(ValueOrThrow(NcclDataType(DType::kFloat16)), 6);
  EXPECT_EQ(ValueOrThrow(NcclDataType(DType::kFloat32)), 7);
  EXPECT_EQ(ValueOrThrow(NcclDataType(DType::kFloat64)), 8);
  EXPECT_EQ(ValueOrThrow(NcclDataType(DType::kBFloat16)), 9);
  for (DType d : {DType::kBool, DType::kInt16, DType::kComplex64,
                  DType::kComplex128}) {
    Result<int> r = NcclDataType(d);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(std::string(dtype_name(d))),
              std::string::npos)
        << r.status().to_string();
  }
  EXPECT_EQ(NcclRedOp(ReduceOp::kSum), 0);
  EXPECT_EQ(NcclRedOp(ReduceOp::kMax), 2);
  EXPECT_EQ(NcclRedOp(ReduceOp::kMin), 3);
}

NcclOptions OneProcess() {
  NcclOptions o;
  auto port = collectives::CoordinatorServer::Start("127.0.0.1:0");
  o.group.coordinator_address =
      "127.0.0.1:" + std::to_string(port.ok() ? (*port)->port() : 0);
  o.group.init_timeout = std::chrono::milliseconds(20000);
  return o;
}

TEST(NcclProcessGroupTest, ConnectWithoutAGpuSaysWhy) {
  if (NcclProcessGroup::Built() && CudaClient().device_count() > 0 &&
      NcclProcessGroup::UnavailableReason().empty()) {
    GTEST_SKIP() << "a CUDA device and NCCL exist";
  }
  Result<std::unique_ptr<NcclProcessGroup>> g =
      NcclProcessGroup::Connect(OneProcess());
  ASSERT_FALSE(g.ok());
  const std::string m = g.status().message();
  EXPECT_NE(m.find("NCCL group"), std::string::npos) << m;
  if (!NcclProcessGroup::Built()) {
    EXPECT_EQ(g.status().code(), ErrorCode::kUnimplemented) << m;
  } else if (!NcclProcessGroup::UnavailableReason().empty()) {
    EXPECT_EQ(g.status().code(), ErrorCode::kFailedPrecondition) << m;
    EXPECT_NE(m.find("libnccl"), std::string::npos) << m;
  } else {
    EXPECT_EQ(g.status().code(), ErrorCode::kFailedPrecondition) << m;
    EXPECT_NE(m.find("CUDA device"), std::string::npos) << m;
  }
}

TEST(NcclProcessGroupTest, ABadProcessIdIsRefused) {
  if (!NcclProcessGroup::Built()) GTEST_SKIP() << "built without NCCL";
  NcclOptions o = OneProcess();
  o.group.process_id = 1;
  Result<std::unique_ptr<NcclProcessGroup>> g = NcclProcessGroup::Connect(o);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), ErrorCode::kInvalidArgument)
      << g.status().to_string();
}

// One GPU: a group of one, on the legacy default stream.
TEST(NcclProcessGroupTest, AGroupOfOneComputesOnDeviceMemory) {
  if (CudaClient().device_count() == 0) GTEST_SKIP() << UnavailableReason();
  if (!NcclProcessGroup::UnavailableReason().empty()) {
    GTEST_SKIP() << NcclProcessGroup::UnavailableReason();
  }
  auto group = ValueOrThrow(NcclProcessGroup::Connect(OneProcess()));
  EXPECT_EQ(group->rank(), 0);
  EXPECT_EQ(group->size(), 1);
  Device* gpu = CudaClient().devices()[0];
  std::vector<float> v = {1.5f, -2, 3, 4};
  auto put = [&](const std::vector<float>& h) {
    Array a = ValueOrThrow(DevicePut(
        HostBuffer{h.data(), Shape{static_cast<int64_t>(h.size())},
                   DType::kFloat32},
        gpu, MemoryKind::kDevice));
    a.BlockUntilReady();
    return a;
  };
  auto data = [](const Array& a) {
    return ValueOrThrow(a.impl()->buffer())->data();
  };
  auto host = [](const Array& a) {
    std::vector<float> h(static_cast<size_t>(a.shape().num_elements()));
    ThrowIfError(CopyToHost(a, h.data(), h.size() * sizeof(float)));
    return h;
  };
  Array in = put(v), out = put({0, 0, 0, 0});
  ThrowIfError(group->AllReduce(data(in), data(out), 4, DType::kFloat32,
                                ReduceOp::kSum, nullptr));
  ThrowIfError(group->Synchronize(nullptr));
  EXPECT_EQ(host(out), v);
  Array gathered = put({0, 0, 0, 0});
  ThrowIfError(group->AllGather(data(in), data(gathered), 4, DType::kFloat32,
                                nullptr));
  Array scattered = put({0, 0, 0, 0});
  ThrowIfError(group->ReduceScatter(data(in), data(scattered), 4,
                                    DType::kFloat32, ReduceOp::kMax, nullptr));
  Array cast = put({0, 0, 0, 0});
  ThrowIfError(group->Broadcast(data(in), data(cast), 4, DType::kFloat32, 0,
                                nullptr));
  ThrowIfError(group->Synchronize(nullptr));
  EXPECT_EQ(host(gathered), v);
  EXPECT_EQ(host(scattered), v);
  EXPECT_EQ(host(cast), v);
  EXPECT_FALSE(group->Broadcast(data(in), data(cast), 4, DType::kFloat32, 1,
                                nullptr)
                   .ok());
}

}  // namespace
}  // namespace baton::cuda
