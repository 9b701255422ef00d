// NcclBlockExchange (backend/cuda/nccl_block_exchange.h): a device that is
// not a GPU is refused, naming it; with one GPU, a group of one serves
// exactly one CUDA device's device memory and runs its exchange on the
// compute stream, leaving the block's values as they were
// (tools/gpu_check.sh; skipped without a GPU and NCCL).
#include "baton/backend/cuda/nccl_block_exchange.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "baton/backend/cuda/cuda_platform.h"
#include "baton/backend/cuda/nccl_process_group.h"
#include "baton/core/error.h"
#include "baton/runtime/client.h"
#include "baton/runtime/transfer.h"

namespace baton::cuda {
namespace {

// A process group of this one process: its collectives are copies.
class GroupOfOne final : public collectives::ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char* backend() const override { return "one"; }

 protected:
  Status DoAllReduce(void*, size_t, DType, collectives::ReduceOp) override {
    return OkStatus();
  }
  Status DoAllGather(const void* in, void* out, size_t bytes) override {
    if (bytes > 0) std::memcpy(out, in, bytes);
    return OkStatus();
  }
  Status DoBroadcast(void*, size_t, int) override { return OkStatus(); }
  Status DoBarrier() override { return OkStatus(); }
};

TEST(NcclBlockExchangeTest, ADeviceThatIsNotAGpuIsRefused) {
  GroupOfOne group;
  Device* cpu = Client::Default().devices()[0];
  auto e = NcclBlockExchange::Connect(group, cpu);
  ASSERT_FALSE(e.ok());
  const std::string m = e.status().message();
  if (NcclProcessGroup::Built()) {
    EXPECT_EQ(e.status().code(), ErrorCode::kInvalidArgument) << m;
    EXPECT_NE(m.find(cpu->ToString()), std::string::npos) << m;
  } else {
    EXPECT_EQ(e.status().code(), ErrorCode::kUnimplemented) << m;
  }
}

TEST(NcclBlockExchangeTest, AGroupOfOneExchangesOnTheComputeStream) {
  if (CudaClient().device_count() == 0) GTEST_SKIP() << UnavailableReason();
  if (!NcclProcessGroup::UnavailableReason().empty()) {
    GTEST_SKIP() << NcclProcessGroup::UnavailableReason();
  }
  GroupOfOne group;
  Device* gpu = CudaClient().devices()[0];
  auto exchange = ValueOrThrow(NcclBlockExchange::Connect(group, gpu));
  EXPECT_EQ(exchange->name(), "nccl");
  EXPECT_TRUE(exchange->Serves({gpu}, MemoryKind::kDevice));
  EXPECT_FALSE(exchange->Serves({gpu}, MemoryKind::kPinnedHost));
  EXPECT_FALSE(exchange->Serves({gpu, gpu}, MemoryKind::kDevice));
  const std::vector<float> v = {1.5f, -2, 3, 4};
  Array block =
      ValueOrThrow(DevicePut(HostBuffer{v.data(), Shape{4}, DType::kFloat32},
                             gpu, MemoryKind::kDevice));
  auto got = exchange->Gather({block}, {0}, 0, {{}});
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(got.value().size(), 1u);
  ASSERT_EQ(got.value()[0].size(), 1u);
  EXPECT_FALSE(got.value()[0][0].valid()) << "nothing was wanted";
  // The broadcast ran (in place, rooted here) behind the block's upload.
  ThrowIfError(gpu->Synchronize());
  std::vector<float> back(4, 0);
  ThrowIfError(CopyToHost(block, back.data(), back.size() * sizeof(float)));
  EXPECT_EQ(back, v);
  // Another process's layout is refused before anything is enqueued.
  auto refused = exchange->Gather({block, block}, {0, 0}, 0, {{}, {}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  // So is wanting this process's own position, or one outside the mesh:
  // nothing is allocated for them.
  ThrowIfError(gpu->Synchronize());
  const int64_t in_use =
      gpu->memory_space(MemoryKind::kDevice).stats().bytes_in_use;
  for (int wanted : {0, 1, -1}) {
    auto own = exchange->Gather({block}, {0}, 0, {{wanted}});
    ASSERT_FALSE(own.ok()) << wanted;
    EXPECT_EQ(own.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(own.status().message().find("wanted position"), std::string::npos)
        << own.status().message();
  }
  ThrowIfError(gpu->Synchronize());
  EXPECT_EQ(gpu->memory_space(MemoryKind::kDevice).stats().bytes_in_use,
            in_use);
}

}  // namespace
}  // namespace baton::cuda
