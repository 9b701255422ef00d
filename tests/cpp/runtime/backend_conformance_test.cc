// The runtime's memory contract on every backend: the CPU, the simulated
// accelerator (device memory the host cannot touch: any direct access
// faults; asynchronous streams), the simulated accelerator in slow-device
// mode (random delays, poisoned frees) and CUDA where a GPU is visible
// (skipped elsewhere).
//
// Each test states one promise of DESIGN R1-R9 -- values survive every
// transfer, statistics count exactly, storage is released when the last
// handle goes, in-place overwrites keep their storage, host views are
// zero-copy exactly where the host can address the memory -- and checks it
// on memory_stats() and buffer identity as well as on values.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "baton/backend/cuda/cuda_platform.h"
#include "baton/backend/simulated/simulated_backend.h"
#include "baton/runtime/copy_into.h"
#include "baton/runtime/host_view.h"
#include "runtime/runtime_test_util.h"

namespace baton {
namespace {

using testing::EnqueueRead;
using testing::GetFloats;
using testing::InUse;
using testing::PutFloats;
using testing::ValueOrThrowForTest;

constexpr MemoryKind kAllKinds[] = {
    MemoryKind::kDevice, MemoryKind::kPinnedHost, MemoryKind::kUnpinnedHost};

std::vector<float> Iota(size_t n, float scale = 1.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * scale;
  return v;
}

const void* StorageOf(const Array& a) {
  return ValueOrThrowForTest(a.impl()->buffer())->data();
}

class BackendConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string& p = GetParam();
    if (p == "cpu") {
      owned_ = std::make_unique<Client>(2);
      client_ = owned_.get();
    } else if (p == "sim" || p == "sim_slow") {
      // sim_slow: every device operation starts after a random delay and
      // freed device memory is poisoned, so a missing dependency shows.
      SimulatedBackend::Options options;
      options.slow = p == "sim_slow";
      options.seed = 20261205;
      options.max_delay_us = 300;
      sim_ = std::make_shared<SimulatedBackend>(options);
      owned_ = std::make_unique<Client>(2, sim_);
      client_ = owned_.get();
    } else {
      client_ = &cuda::CudaClient();
      if (client_->device_count() == 0) {
        GTEST_SKIP() << "no CUDA device: " << cuda::UnavailableReason();
      }
    }
    dev_ = client_->devices()[0];
    other_ = client_->devices()[client_->device_count() > 1 ? 1 : 0];
  }

  // How many bytes the simulated backend wrote into device memory (-1 on
  // other backends, which do not count).
  int64_t ToDevice() const { return sim_ ? sim_->bytes_to_device() : -1; }

  std::unique_ptr<Client> owned_;
  std::shared_ptr<SimulatedBackend> sim_;
  Client* client_ = nullptr;
  Device* dev_ = nullptr;
  Device* other_ = nullptr;
};

TEST_P(BackendConformanceTest, DevicePutRoundTripsAndCountsExactly) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{1023}, size_t{1} << 20}) {
    const std::vector<float> v = Iota(n, 0.25f);
    const int64_t before = InUse(dev_);
    const int64_t copied = ToDevice();
    Array a = PutFloats(dev_, v);
    EXPECT_EQ(GetFloats(a), v) << n << " elements";
    // Sizes are rounded to the allocator's granularity, never below.
    EXPECT_GE(InUse(dev_) - before, static_cast<int64_t>(n * sizeof(float)));
    if (sim_) {
      EXPECT_EQ(ToDevice() - copied, static_cast<int64_t>(n * sizeof(float)))
          << "one copy into device memory, of exactly the array's bytes";
    }
    a.Delete();  // R1: released at once, nothing pending on it
    EXPECT_EQ(InUse(dev_), before);
  }
}

TEST_P(BackendConformanceTest, AsyncPutAndAsyncGetKeepValues) {
  const std::vector<float> v = Iota(1 << 18, 3.f);
  bool done = false;
  Array a = ValueOrThrowForTest(
      DevicePut(HostBuffer{v.data(), Shape{1 << 18}, DType::kFloat32}, dev_,
                MemoryKind::kDevice,
                HostBufferSemantics::kImmutableUntilTransferCompletes,
                [&done] { done = true; }));
  std::vector<float> back(v.size());
  Event got = ValueOrThrowForTest(
      CopyToHostAsync(a, back.data(), back.size() * sizeof(float)));
  ASSERT_TRUE(got.Wait().ok());
  EXPECT_TRUE(done);
  EXPECT_EQ(back, v);
}

TEST_P(BackendConformanceTest, EveryKindIsCountedApartAndMovesKeepValues) {
  const std::vector<float> v = Iota(4096, 0.5f);
  const int64_t bytes = 4096 * sizeof(float);
  int64_t before[3];
  for (MemoryKind k : kAllKinds) before[static_cast<int>(k)] = InUse(dev_, k);
  Array d = PutFloats(dev_, v, MemoryKind::kDevice);
  Array p = ValueOrThrowForTest(CopyArray(d, dev_, MemoryKind::kPinnedHost));
  Array u = ValueOrThrowForTest(CopyArray(p, dev_, MemoryKind::kUnpinnedHost));
  Array back = ValueOrThrowForTest(CopyArray(u, dev_, MemoryKind::kDevice));
  Array same = ValueOrThrowForTest(CopyArray(back, dev_, MemoryKind::kDevice));
  for (const Array* a : {&d, &p, &u, &back, &same}) EXPECT_EQ(GetFloats(*a), v);
  EXPECT_EQ(InUse(dev_, MemoryKind::kDevice) - before[0], 3 * bytes);
  EXPECT_EQ(InUse(dev_, MemoryKind::kPinnedHost) - before[1], bytes);
  EXPECT_EQ(InUse(dev_, MemoryKind::kUnpinnedHost) - before[2], bytes);
  if (other_ != dev_) {
    const int64_t other_before = InUse(other_);
    Array o = ValueOrThrowForTest(CopyArray(d, other_, MemoryKind::kDevice));
    EXPECT_EQ(GetFloats(o), v);
    EXPECT_EQ(InUse(other_) - other_before, bytes);
  }
  p.Delete();
  EXPECT_EQ(InUse(dev_, MemoryKind::kPinnedHost), before[1]);
}

TEST_P(BackendConformanceTest, PutIntoOverwritesTheSameStorage) {
  Array a = PutFloats(dev_, Iota(1 << 16));
  const void* storage = StorageOf(a);
  const int64_t in_use = InUse(dev_);
  const std::vector<float> next = Iota(1 << 16, -2.f);
  Array b = ValueOrThrowForTest(DevicePutInto(
      HostBuffer{next.data(), Shape{1 << 16}, DType::kFloat32}, a));
  EXPECT_TRUE(a.IsDeleted());
  EXPECT_EQ(StorageOf(b), storage) << "R2: written in place";
  EXPECT_EQ(InUse(dev_), in_use) << "R2: no second copy";
  EXPECT_EQ(GetFloats(b), next);
}

TEST_P(BackendConformanceTest, PutIntoWhileInUseWaitsThroughStaging) {
  Array a = PutFloats(dev_, Iota(1 << 20));
  const void* storage = StorageOf(a);
  Event gate = Event::Create();
  // A "computation" still reading a; the overwrite must wait for it.
  Event read = EnqueueRead(a, QueueKind::kCompute, gate);
  const std::vector<float> next = Iota(1 << 20, 7.f);
  Array b = ValueOrThrowForTest(DevicePutInto(
      HostBuffer{next.data(), Shape{1 << 20}, DType::kFloat32}, a));
  EXPECT_FALSE(read.IsReady());
  gate.SetReady();
  EXPECT_EQ(StorageOf(b), storage);
  EXPECT_EQ(GetFloats(b), next);
}

TEST_P(BackendConformanceTest, CopyIntoKeepsTheDestinationStorage) {
  Array src = PutFloats(dev_, Iota(4096, 2.f), MemoryKind::kPinnedHost);
  Array into = PutFloats(dev_, Iota(4096));
  const void* storage = StorageOf(into);
  const int64_t in_use = InUse(dev_);
  Array out = ValueOrThrowForTest(CopyArrayInto(src, into));
  EXPECT_EQ(StorageOf(out), storage);
  EXPECT_EQ(InUse(dev_), in_use);
  EXPECT_EQ(GetFloats(out), Iota(4096, 2.f));
}

TEST_P(BackendConformanceTest, FullWritesEveryPatternWidth) {
  const double d = -1.25;
  const int8_t i8 = -3;
  const uint16_t h = 0x3c00;  // 1.0 as float16
  const float zero = 0.f, f = 2.5f;
  struct Case {
    DType dtype;
    const void* value;
  } cases[] = {{DType::kFloat64, &d},
               {DType::kInt8, &i8},
               {DType::kFloat16, &h},
               {DType::kFloat32, &zero},
               {DType::kFloat32, &f}};
  for (const Case& c : cases) {
    const int64_t n = 100003;  // odd: no width divides the tail evenly
    Array a = ValueOrThrowForTest(
        Full(Shape{n}, c.dtype, c.value, dev_, MemoryKind::kDevice));
    const size_t w = dtype_size(c.dtype);
    std::vector<char> back(static_cast<size_t>(n) * w);
    ASSERT_TRUE(CopyToHost(a, back.data(), back.size()).ok());
    for (int64_t i : {int64_t{0}, int64_t{1}, n / 2, n - 1}) {
      EXPECT_EQ(std::memcmp(back.data() + i * w, c.value, w), 0)
          << dtype_name(c.dtype) << " element " << i;
    }
  }
}

TEST_P(BackendConformanceTest, HostViewsAreZeroCopyExactlyWhereAddressable) {
  for (MemoryKind k : kAllKinds) {
    Array a = PutFloats(dev_, Iota(256), k);
    Result<HostView> view = HostView::Acquire(a, /*writable=*/false);
    if (dev_->host_addressable(k)) {
      ASSERT_TRUE(view.ok()) << view.status().to_string();
      EXPECT_EQ(view.value().data(), StorageOf(a)) << "R7: zero-copy";
      EXPECT_EQ(static_cast<const float*>(view.value().data())[255], 255.f);
    } else {
      EXPECT_EQ(view.status().code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(
          view.status().message().find("needs memory the host can address"),
          std::string::npos)
          << view.status().message();
      EXPECT_FALSE(a.IsDeleted());
      EXPECT_EQ(GetFloats(a), Iota(256)) << "a refused view changes nothing";
    }
  }
}

TEST_P(BackendConformanceTest, ZeroCopyPutNeedsHostMemory) {
  alignas(64) static float host[64];
  for (MemoryKind k : kAllKinds) {
    const int64_t before = InUse(dev_, k);
    bool released = false;
    Result<Array> a = DevicePut(HostBuffer{host, Shape{64}, DType::kFloat32},
                                dev_, k, HostBufferSemantics::kZeroCopy,
                                [&released] { released = true; });
    if (dev_->host_addressable(k)) {
      ASSERT_TRUE(a.ok());
      EXPECT_EQ(StorageOf(a.value()), static_cast<const void*>(host));
    } else {
      EXPECT_EQ(a.status().code(), ErrorCode::kInvalidArgument);
      EXPECT_FALSE(released) << "a refused borrow is still the caller's";
    }
    EXPECT_EQ(InUse(dev_, k), before) << "borrowed memory is not counted";
  }
}

TEST_P(BackendConformanceTest, LiveArraysAndLimitsHold) {
  const size_t live_before = dev_->LiveArrays().size();
  Array a = PutFloats(dev_, Iota(1024));
  EXPECT_EQ(dev_->LiveArrays().size(), live_before + 1);
  MemorySpace& space = dev_->memory_space(MemoryKind::kDevice);
  space.SetLimit(InUse(dev_) + 4096);
  const std::vector<float> big(1 << 20);
  Result<Array> r =
      DevicePut(HostBuffer{big.data(), Shape{1 << 20}, DType::kFloat32}, dev_,
                MemoryKind::kDevice);
  space.SetLimit(std::nullopt);
  EXPECT_EQ(r.status().code(), ErrorCode::kResourceExhausted);
  EXPECT_EQ(dev_->LiveArrays().size(), live_before + 1) << "nothing changed";
  a.Delete();
  EXPECT_EQ(dev_->LiveArrays().size(), live_before);
}

TEST_P(BackendConformanceTest, CopiesBetweenPlatformsGoThroughTheAccelerator) {
  // A CPU device's memory is host memory: every platform can copy from it.
  Client cpu(1);
  const std::vector<float> v = Iota(1000, 1.5f);
  Array on_cpu = PutFloats(cpu.devices()[0], v);
  Array there =
      ValueOrThrowForTest(CopyArray(on_cpu, dev_, MemoryKind::kDevice));
  Array home = ValueOrThrowForTest(
      CopyArray(there, cpu.devices()[0], MemoryKind::kDevice));
  EXPECT_EQ(GetFloats(there), v);
  EXPECT_EQ(GetFloats(home), v);
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendConformanceTest,
                         ::testing::Values("cpu", "sim", "sim_slow", "cuda"),
                         [](const auto& info) { return info.param; });

// The simulation is real: host code touching device memory faults.
TEST(SimulatedBackendTest, DeviceMemoryFaultsOnDirectAccess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto sim = std::make_shared<SimulatedBackend>();
  Client client(1, sim);
  Array a = PutFloats(client.devices()[0], Iota(16));
  const float* p = static_cast<const float*>(StorageOf(a));
  EXPECT_TRUE(sim->IsDeviceMemory(p, 64));
  EXPECT_DEATH(
      {
        volatile float x = p[3];
        (void)x;
      },
      "");
}

TEST(SimulatedBackendTest, TwoSimulatedPlatformsDoNotCopyDirectly) {
  Client a(1, std::make_shared<SimulatedBackend>());
  Client b(1, std::make_shared<SimulatedBackend>());
  Array x = PutFloats(a.devices()[0], Iota(8));
  const int64_t before = InUse(b.devices()[0]);
  Result<Array> y = CopyArray(x, b.devices()[0], MemoryKind::kDevice);
  EXPECT_EQ(y.status().code(), ErrorCode::kUnimplemented);
  EXPECT_NE(y.status().message().find("pinned_host"), std::string::npos)
      << y.status().message();
  EXPECT_EQ(InUse(b.devices()[0]), before);
  // Through host memory it works.
  Array pinned = ValueOrThrowForTest(
      CopyArray(x, a.devices()[0], MemoryKind::kPinnedHost));
  Array z = ValueOrThrowForTest(
      CopyArray(pinned, b.devices()[0], MemoryKind::kDevice));
  EXPECT_EQ(GetFloats(z), Iota(8));
}

}  // namespace
}  // namespace baton
