// The CUDA platform (DESIGN 5.7): what every build and machine must do (a
// client of zero devices with a reason, graceful failures without a driver),
// and, where a GPU is visible, the backend itself -- region providers, Copy
// and Fill, memory spaces and transfers of a Client over CudaDeviceBackend().
//
// Without a GPU the GPU tests skip with UnavailableReason(). tools/gpu_check.sh
// sets BATON_EXPECT_CUDA_DEVICES=1 so that a GPU machine where the platform
// finds no device fails instead of skipping everything.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "baton/backend/cuda/cuda_platform.h"
#include "baton/runtime/array.h"
#include "baton/runtime/client.h"
#include "baton/runtime/device.h"
#include "baton/runtime/event.h"
#include "baton/runtime/transfer.h"

namespace baton {
namespace {

using cuda::CudaClient;
using cuda::CudaDeviceBackend;
using cuda::UnavailableReason;

constexpr size_t kAlignment = 4096;
constexpr size_t kMiB = size_t{1} << 20;
constexpr QueueKind kQueues[] = {QueueKind::kCompute, QueueKind::kHostToDevice,
                                 QueueKind::kDeviceToHost};

template <typename T>
T ValueOrDie(Result<T> r) {
  if (!r.ok()) throw std::runtime_error(r.status().to_string());
  return std::move(r).value();
}

bool Aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % kAlignment == 0;
}

// Deterministic, position-dependent bytes (no period of 2^k).
std::vector<unsigned char> Bytes(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<unsigned char>(x >> 24);
  }
  return v;
}

// ---------------------------------------------------------------------------
// Every build, every machine.

TEST(CudaPlatform, ReasonIsEmptyExactlyWhenThereAreDevices) {
  Client& client = CudaClient();
  EXPECT_EQ(client.platform(), "cuda");
  if (client.device_count() == 0) {
    EXPECT_FALSE(UnavailableReason().empty());
  } else {
    EXPECT_EQ(UnavailableReason(), "");
    for (Device* d : client.devices()) EXPECT_EQ(d->platform(), "cuda");
  }
  EXPECT_EQ(&CudaClient(), &client);  // process-wide
}

TEST(CudaPlatform, ConcurrentCallsSeeOneClient) {
  std::vector<std::thread> threads;
  std::vector<Client*> seen(8, nullptr);
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&seen, i] {
      seen[i] = &CudaClient();
      (void)UnavailableReason();
      (void)CudaDeviceBackend();
    });
  }
  for (auto& t : threads) t.join();
  for (Client* c : seen) EXPECT_EQ(c, &CudaClient());
}

TEST(CudaPlatform, BuildDecidesTheBackend) {
  if (!cuda::Built()) {
    EXPECT_EQ(CudaDeviceBackend(), nullptr);
    EXPECT_EQ(CudaClient().device_count(), 0);
    EXPECT_NE(UnavailableReason().find("built without the CUDA backend"),
              std::string::npos)
        << UnavailableReason();
    return;
  }
  std::shared_ptr<DeviceBackend> backend = CudaDeviceBackend();
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend, CudaDeviceBackend());
  EXPECT_EQ(backend->platform(), "cuda");
  EXPECT_FALSE(backend->host_addressable(MemoryKind::kDevice));
  EXPECT_TRUE(backend->host_addressable(MemoryKind::kPinnedHost));
  EXPECT_TRUE(backend->host_addressable(MemoryKind::kUnpinnedHost));
}

// Without the NVIDIA driver's device nodes there can be no CUDA device:
// the platform must say so instead of crashing or aborting.
TEST(CudaPlatform, NoDriverMeansZeroDevicesAndAReason) {
  if (std::filesystem::exists("/dev/nvidiactl")) {
    GTEST_SKIP() << "this machine has the NVIDIA driver's device nodes";
  }
  EXPECT_EQ(CudaClient().device_count(), 0);
  EXPECT_FALSE(UnavailableReason().empty());
  if (cuda::Built()) {
    EXPECT_EQ(UnavailableReason().rfind("no CUDA device", 0), 0u)
        << UnavailableReason();
  }
}

TEST(CudaPlatform, DevicesPresentWhenExpected) {
  const char* expect = std::getenv("BATON_EXPECT_CUDA_DEVICES");
  if (expect == nullptr || std::string(expect) != "1") {
    GTEST_SKIP() << "set BATON_EXPECT_CUDA_DEVICES=1 on a GPU machine";
  }
  ASSERT_TRUE(cuda::Built()) << UnavailableReason();
  EXPECT_GT(CudaClient().device_count(), 0) << UnavailableReason();
}

// Without a device every entry point fails with a Status (no crash), and
// memory spaces report the failed region as an out-of-memory error.
TEST(CudaPlatform, CallsFailGracefullyWithoutDevices) {
  if (!cuda::Built()) GTEST_SKIP() << UnavailableReason();
  if (CudaClient().device_count() > 0) GTEST_SKIP() << "a CUDA device exists";
  std::shared_ptr<DeviceBackend> backend = CudaDeviceBackend();
  char a[16] = {}, b[16] = {};
  EXPECT_FALSE(backend->Copy(0, QueueKind::kCompute, a, b, sizeof(a)).ok());
  EXPECT_FALSE(backend->Fill(0, QueueKind::kCompute, a, 4, 4, 7).ok());
  EXPECT_TRUE(backend->Copy(0, QueueKind::kCompute, a, b, 0).ok());
  for (MemoryKind kind : {MemoryKind::kDevice, MemoryKind::kPinnedHost}) {
    std::unique_ptr<RegionProvider> provider =
        backend->MakeRegionProvider(0, kind);
    ASSERT_NE(provider, nullptr);
    EXPECT_EQ(provider->AllocateRegion(2 * kMiB), nullptr);
  }
  // A Client that believes in a device it cannot reach still fails cleanly.
  Client client(1, backend);
  Device* dev = client.devices()[0];
  Result<void*> r = dev->memory_space(MemoryKind::kDevice)
                        .Allocate(1024, kNoQueue, "float32(256)");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResourceExhausted)
      << r.status().to_string();
}

// ---------------------------------------------------------------------------
// With a GPU.

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaClient().device_count() == 0) GTEST_SKIP() << UnavailableReason();
    backend_ = CudaDeviceBackend();
  }

  // A region of device or pinned memory, given back at the end of the test.
  void* Region(MemoryKind kind, size_t bytes) {
    auto& provider = providers_[static_cast<int>(kind)];
    if (provider == nullptr) provider = backend_->MakeRegionProvider(0, kind);
    void* p = provider->AllocateRegion(bytes);
    if (p != nullptr) regions_.push_back({kind, p, bytes});
    return p;
  }
  void TearDown() override {
    for (auto& r : regions_) {
      providers_[static_cast<int>(r.kind)]->FreeRegion(r.ptr, r.bytes);
    }
  }

  // Reads `bytes` at device address `src` back to the host.
  std::vector<unsigned char> ReadBack(const void* src, size_t bytes) {
    std::vector<unsigned char> out(bytes);
    Status s =
        backend_->Copy(0, QueueKind::kDeviceToHost, out.data(), src, bytes);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return out;
  }

  std::shared_ptr<DeviceBackend> backend_;

 private:
  struct Held {
    MemoryKind kind;
    void* ptr;
    size_t bytes;
  };
  std::unique_ptr<RegionProvider> providers_[kNumMemoryKinds];
  std::vector<Held> regions_;
};

TEST_F(CudaDeviceTest, RegionProvidersAlignAndSeparateRegions) {
  for (MemoryKind kind : {MemoryKind::kDevice, MemoryKind::kPinnedHost,
                          MemoryKind::kUnpinnedHost}) {
    SCOPED_TRACE(std::string(memory_kind_name(kind)));
    std::unique_ptr<RegionProvider> provider =
        backend_->MakeRegionProvider(0, kind);
    ASSERT_NE(provider, nullptr);
    EXPECT_EQ(provider->AllocateRegion(0), nullptr);
    const std::vector<size_t> sizes = {4096,      2 * kMiB, 2 * kMiB + 3 * 4096,
                                       64 * kMiB, 256,      4096 + 256};
    std::vector<std::pair<char*, size_t>> got;
    for (size_t n : sizes) {
      void* p = provider->AllocateRegion(n);
      ASSERT_NE(p, nullptr) << n << " bytes";
      EXPECT_TRUE(Aligned(p)) << p << " (" << n << " bytes)";
      got.emplace_back(static_cast<char*>(p), n);
    }
    std::sort(got.begin(), got.end());
    for (size_t i = 1; i < got.size(); ++i) {
      EXPECT_LE(got[i - 1].first + got[i - 1].second, got[i].first)
          << "regions overlap";
    }
    // The memory is really there: write and read every region's both ends.
    for (auto& [p, n] : got) {
      const std::vector<unsigned char> v = Bytes(256, static_cast<unsigned>(n));
      for (size_t off : {size_t{0}, n - 256}) {
        ASSERT_TRUE(
            backend_->Copy(0, QueueKind::kHostToDevice, p + off, v.data(), 256)
                .ok());
        EXPECT_EQ(ReadBack(p + off, 256), v);
      }
    }
    for (auto& [p, n] : got) provider->FreeRegion(p, n);
    // Freed regions can be allocated again.
    void* again = provider->AllocateRegion(2 * kMiB);
    ASSERT_NE(again, nullptr);
    EXPECT_TRUE(Aligned(again));
    provider->FreeRegion(again, 2 * kMiB);
  }
}

TEST_F(CudaDeviceTest, ImpossibleRegionIsNullAndLaterCallsStillWork) {
  for (MemoryKind kind : {MemoryKind::kDevice, MemoryKind::kPinnedHost}) {
    std::unique_ptr<RegionProvider> provider =
        backend_->MakeRegionProvider(0, kind);
    EXPECT_EQ(provider->AllocateRegion(size_t{1} << 52), nullptr);  // 4 PiB
    void* p = provider->AllocateRegion(2 * kMiB);
    ASSERT_NE(p, nullptr);
    const std::vector<unsigned char> v = Bytes(4096, 3);
    ASSERT_TRUE(
        backend_->Copy(0, QueueKind::kCompute, p, v.data(), v.size()).ok());
    EXPECT_EQ(ReadBack(p, v.size()), v);
    provider->FreeRegion(p, 2 * kMiB);
  }
}

// Host -> device -> device -> host, from pageable and from pinned memory.
TEST_F(CudaDeviceTest, CopyRoundTrips) {
  EXPECT_TRUE(
      backend_->Copy(0, QueueKind::kHostToDevice, nullptr, nullptr, 0).ok());
  for (bool pinned : {false, true}) {
    for (size_t n : {size_t{1}, size_t{4097}, 64 * kMiB}) {
      SCOPED_TRACE((pinned ? "pinned, " : "pageable, ") + std::to_string(n) +
                   " bytes");
      const std::vector<unsigned char> v = Bytes(n, static_cast<unsigned>(n));
      const size_t region = (n + kAlignment - 1) / kAlignment * kAlignment;
      unsigned char* src = nullptr;
      unsigned char* dst = nullptr;
      std::vector<unsigned char> pageable_dst;
      if (pinned) {
        src = static_cast<unsigned char*>(
            Region(MemoryKind::kPinnedHost, region));
        dst = static_cast<unsigned char*>(
            Region(MemoryKind::kPinnedHost, region));
        ASSERT_NE(src, nullptr);
        ASSERT_NE(dst, nullptr);
        std::memcpy(src, v.data(), n);
        std::memset(dst, 0, n);
      } else {
        src = const_cast<unsigned char*>(v.data());
        pageable_dst.assign(n, 0);
        dst = pageable_dst.data();
      }
      char* a = static_cast<char*>(Region(MemoryKind::kDevice, region));
      char* b = static_cast<char*>(Region(MemoryKind::kDevice, region));
      ASSERT_NE(a, nullptr);
      ASSERT_NE(b, nullptr);
      Status s = backend_->Copy(0, QueueKind::kHostToDevice, a, src, n);
      ASSERT_TRUE(s.ok()) << s.to_string();
      s = backend_->Copy(0, QueueKind::kCompute, b, a, n);
      ASSERT_TRUE(s.ok()) << s.to_string();
      s = backend_->Copy(0, QueueKind::kDeviceToHost, dst, b, n);
      ASSERT_TRUE(s.ok()) << s.to_string();
      EXPECT_TRUE(std::equal(v.begin(), v.end(), dst)) << "values differ";
      // Host to host through the backend (pinned <-> pageable).
      std::vector<unsigned char> h(n, 0);
      s = backend_->Copy(0, QueueKind::kCompute, h.data(), dst, n);
      ASSERT_TRUE(s.ok()) << s.to_string();
      EXPECT_EQ(h, v);
    }
  }
}

TEST_F(CudaDeviceTest, EveryQueueCopiesFromEveryThread) {
  char* d = static_cast<char*>(Region(MemoryKind::kDevice, 8 * kMiB));
  ASSERT_NE(d, nullptr);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      const QueueKind q = kQueues[t % 3];
      char* mine = d + t * kMiB;
      for (int i = 0; i < 20; ++i) {
        const std::vector<unsigned char> v = Bytes(kMiB, t * 100 + i);
        std::vector<unsigned char> back(kMiB);
        if (!backend_->Copy(0, q, mine, v.data(), kMiB).ok() ||
            !backend_->Copy(0, q, back.data(), mine, kMiB).ok() || back != v) {
          failures++;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(CudaDeviceTest, FillWritesEveryPatternAndNothingElse) {
  constexpr size_t kSeed = kMiB;  // CudaBackend::kFillSeedBytes
  constexpr size_t kGuard = 4096;
  const size_t capacity = 4 * kSeed + 2 * kGuard + 64;
  char* base = static_cast<char*>(
      Region(MemoryKind::kDevice,
             (capacity + kAlignment - 1) / kAlignment * kAlignment));
  ASSERT_NE(base, nullptr);
  const std::vector<unsigned char> guard(kGuard, 0xEE);
  for (size_t elem : {size_t{1}, size_t{2}, size_t{4}, size_t{8}}) {
    const uint64_t mask =
        elem == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * elem)) - 1;
    const uint64_t patterns[] = {0, 0xABABABABABABABABull & mask,
                                 0x0807060504030201ull & mask,
                                 0x00000000000000FFull & mask};
    const int64_t counts[] = {1, 7, static_cast<int64_t>(kSeed / elem) + 3,
                              static_cast<int64_t>(3 * kSeed / elem) + 5};
    for (uint64_t pattern : patterns) {
      if (elem == 1 && pattern == 0xFF) continue;  // byte-uniform already
      for (int64_t count : counts) {
        SCOPED_TRACE(std::to_string(elem) + "-byte pattern " +
                     std::to_string(pattern) + " x " + std::to_string(count));
        const size_t n = static_cast<size_t>(count) * elem;
        // Guards before and after the filled range (offset by an element,
        // so the target is not region aligned).
        char* dst = base + kGuard + elem;
        ASSERT_TRUE(backend_
                        ->Copy(0, QueueKind::kCompute, dst - kGuard,
                               guard.data(), kGuard)
                        .ok());
        ASSERT_TRUE(
            backend_
                ->Copy(0, QueueKind::kCompute, dst + n, guard.data(), kGuard)
                .ok());
        Status s =
            backend_->Fill(0, QueueKind::kCompute, dst, count, elem, pattern);
        ASSERT_TRUE(s.ok()) << s.to_string();
        std::vector<unsigned char> expected(n);
        FillHost(expected.data(), count, elem, pattern);
        EXPECT_EQ(ReadBack(dst, n), expected);
        EXPECT_EQ(ReadBack(dst - kGuard, kGuard), guard);
        EXPECT_EQ(ReadBack(dst + n, kGuard), guard);
      }
    }
  }
  // Zero elements, any size: nothing happens. A bad element size is refused.
  EXPECT_TRUE(backend_->Fill(0, QueueKind::kCompute, base, 0, 4, 1).ok());
  EXPECT_EQ(backend_->Fill(0, QueueKind::kCompute, base, 4, 3, 1).code(),
            ErrorCode::kInvalidArgument);
}

TEST_F(CudaDeviceTest, FillOfPinnedHostMemory) {
  auto* p = static_cast<uint32_t*>(Region(MemoryKind::kPinnedHost, 4 * kMiB));
  ASSERT_NE(p, nullptr);
  const int64_t count = kMiB - 1;
  ASSERT_TRUE(
      backend_->Fill(0, QueueKind::kCompute, p, count, 4, 0x01020304u).ok());
  EXPECT_EQ(p[0], 0x01020304u);
  EXPECT_EQ(p[count - 1], 0x01020304u);
  EXPECT_EQ(std::count(p, p + count, 0x01020304u), count);
}

TEST_F(CudaDeviceTest, BadOrdinalIsInvalidArgument) {
  char a[8] = {};
  const int n = CudaClient().device_count();
  EXPECT_EQ(backend_->Copy(n, QueueKind::kCompute, a, a + 4, 4).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(backend_->Copy(-1, QueueKind::kCompute, a, a + 4, 4).code(),
            ErrorCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------
// A Client over the CUDA backend: memory spaces and transfers.

class CudaClientTest : public CudaDeviceTest {
 protected:
  void SetUp() override {
    CudaDeviceTest::SetUp();
    if (IsSkipped()) return;
    client_ = std::make_unique<Client>(1, backend_);
    dev_ = client_->devices()[0];
  }
  void TearDown() override {
    if (dev_ != nullptr) EXPECT_TRUE(dev_->Synchronize().ok());
    client_.reset();
    CudaDeviceTest::TearDown();
  }
  int64_t InUse(MemoryKind kind = MemoryKind::kDevice) {
    return dev_->memory_space(kind).stats().bytes_in_use;
  }
  Array Put(const std::vector<float>& v, MemoryKind kind) {
    return ValueOrDie(
        DevicePut(HostBuffer{v.data(), Shape{static_cast<int64_t>(v.size())},
                             DType::kFloat32},
                  dev_, kind));
  }
  std::vector<float> Get(const Array& a) {
    std::vector<float> out(static_cast<size_t>(a.size()), -1.f);
    Status s = CopyToHost(a, out.data(), out.size() * sizeof(float));
    EXPECT_TRUE(s.ok()) << s.to_string();
    return out;
  }

  std::unique_ptr<Client> client_;
  Device* dev_ = nullptr;
};

std::vector<float> Iota(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * scale;
  return v;
}

TEST_F(CudaClientTest, DeviceIsCudaAndNotHostAddressable) {
  EXPECT_EQ(dev_->platform(), "cuda");
  EXPECT_EQ(dev_->ToString(), "cuda:0");
  EXPECT_EQ(dev_->ordinal(), 0);
  EXPECT_FALSE(dev_->host_addressable(MemoryKind::kDevice));
  EXPECT_TRUE(dev_->host_addressable(MemoryKind::kPinnedHost));
}

TEST_F(CudaClientTest, DeviceMemorySpaceAllocatesCountsAndFreesAfterWork) {
  MemorySpace& space = dev_->memory_space(MemoryKind::kDevice);
  WorkQueue& compute = dev_->queue(QueueKind::kCompute);
  const MemoryStats before = space.stats();
  EXPECT_EQ(before.bytes_in_use, 0);
  void* p = ValueOrDie(space.Allocate(kMiB, compute.id(), "float32(262144)"));
  EXPECT_TRUE(reinterpret_cast<uintptr_t>(p) % 256 == 0);
  MemoryStats s = space.stats();
  EXPECT_EQ(s.bytes_in_use, static_cast<int64_t>(kMiB));
  EXPECT_EQ(s.peak_bytes_in_use, static_cast<int64_t>(kMiB));
  EXPECT_EQ(s.num_allocs, before.num_allocs + 1);
  EXPECT_GE(s.largest_alloc_size, static_cast<int64_t>(kMiB));
  EXPECT_GE(s.bytes_reserved, static_cast<int64_t>(kMiB));
  // It is device memory: the backend moves bytes in and out.
  const std::vector<unsigned char> v = Bytes(kMiB, 11);
  ASSERT_TRUE(dev_->Copy(QueueKind::kHostToDevice, p, v.data(), kMiB).ok());
  EXPECT_EQ(ReadBack(p, kMiB), v);

  // Freed after work still running on the compute queue: counted until the
  // work ends, then returned to the cache (no cudaFree: reserved stays).
  Event gate = Event::Create();
  Event work = compute.Enqueue({gate}, [] { return OkStatus(); });
  space.FreeAfter(p, {work});
  EXPECT_EQ(space.stats().bytes_in_use, static_cast<int64_t>(kMiB));
  gate.SetReady();
  ASSERT_TRUE(work.Wait().ok());
  s = space.stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.peak_bytes_in_use, static_cast<int64_t>(kMiB));
  EXPECT_GE(s.bytes_reserved, static_cast<int64_t>(kMiB));
  // Trim gives the cached regions back to CUDA.
  EXPECT_GT(space.Trim(), 0u);
  EXPECT_EQ(space.stats().bytes_reserved, 0);
}

TEST_F(CudaClientTest, DeviceMemoryLimitAndOutOfMemoryAreResourceExhausted) {
  MemorySpace& space = dev_->memory_space(MemoryKind::kDevice);
  space.SetLimit(static_cast<int64_t>(kMiB));
  Result<void*> r = space.Allocate(2 * kMiB, kNoQueue, "float32(524288)");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResourceExhausted);
  space.SetLimit(std::nullopt);
  // More than any GPU has: the region provider fails, the space says so.
  r = space.Allocate(size_t{1} << 52, kNoQueue, "too big");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResourceExhausted)
      << r.status().to_string();
  EXPECT_EQ(space.stats().bytes_in_use, 0);
  // ... and nothing is broken afterwards.
  void* p = ValueOrDie(space.Allocate(4096, kNoQueue, "float32(1024)"));
  space.Free(p);
}

TEST_F(CudaClientTest, PinnedHostSpaceIsHostMemory) {
  MemorySpace& space = dev_->memory_space(MemoryKind::kPinnedHost);
  const int64_t before = space.stats().bytes_in_use;
  auto* p = static_cast<float*>(
      ValueOrDie(space.Allocate(4096, kNoQueue, "float32(1024)")));
  for (int i = 0; i < 1024; ++i) p[i] = static_cast<float>(i);  // host writes
  EXPECT_EQ(space.stats().bytes_in_use - before, 4096);
  EXPECT_EQ(p[1023], 1023.f);
  space.Free(p);
  EXPECT_EQ(space.stats().bytes_in_use, before);
}

TEST_F(CudaClientTest, DevicePutAndCopyToHostEveryKind) {
  for (MemoryKind kind : {MemoryKind::kDevice, MemoryKind::kPinnedHost,
                          MemoryKind::kUnpinnedHost}) {
    for (size_t n : {size_t{1}, size_t{1025}, size_t{16} << 20}) {  // to 64 MiB
      SCOPED_TRACE(std::string(memory_kind_name(kind)) + ", " +
                   std::to_string(n) + " floats");
      const std::vector<float> v = Iota(n, 0.25f);
      const int64_t before = InUse(kind);
      Array a = Put(v, kind);
      EXPECT_EQ(a.memory_kind(), kind);
      EXPECT_EQ(InUse(kind) - before,
                static_cast<int64_t>((n * 4 + 255) / 256 * 256));
      EXPECT_EQ(Get(a), v);
      a.Delete();
      EXPECT_TRUE(dev_->Synchronize().ok());
      EXPECT_EQ(InUse(kind), before);  // deterministic release (R1)
    }
  }
}

TEST_F(CudaClientTest, SnapshotIgnoresLaterHostMutation) {
  std::vector<float> v(4 << 20, 1.f);
  Array a = Put(v, MemoryKind::kDevice);
  std::fill(v.begin(), v.end(), 2.f);
  const std::vector<float> back = Get(a);
  EXPECT_EQ(std::count(back.begin(), back.end(), 1.f),
            static_cast<long>(back.size()));
}

TEST_F(CudaClientTest, CopiesBetweenKindsPreserveValues) {
  const std::vector<float> v = Iota(1 << 20, 0.5f);
  Array d = Put(v, MemoryKind::kDevice);
  Array d2 = ValueOrDie(CopyArray(d, dev_, MemoryKind::kDevice));
  Array p = ValueOrDie(CopyArray(d2, dev_, MemoryKind::kPinnedHost));
  Array u = ValueOrDie(CopyArray(p, dev_, MemoryKind::kUnpinnedHost));
  Array back = ValueOrDie(CopyArray(u, dev_, MemoryKind::kDevice));
  EXPECT_EQ(Get(d2), v);
  EXPECT_EQ(Get(p), v);
  EXPECT_EQ(Get(u), v);
  EXPECT_EQ(Get(back), v);
}

TEST_F(CudaClientTest, FullOnTheDevice) {
  for (MemoryKind kind : {MemoryKind::kDevice, MemoryKind::kPinnedHost}) {
    const float seven = 7.f;
    Array f = ValueOrDie(
        Full(Shape{3, 1 << 20}, DType::kFloat32, &seven, dev_, kind));
    EXPECT_EQ(Get(f), std::vector<float>(3 << 20, 7.f));
    const float zero = 0.f;
    Array z = ValueOrDie(Full(Shape{1000}, DType::kFloat32, &zero, dev_, kind));
    EXPECT_EQ(Get(z), std::vector<float>(1000, 0.f));
  }
}

TEST_F(CudaClientTest, DevicePutIntoOverwritesInPlace) {
  const std::vector<float> v = Iota(1 << 20, 1.f);
  Array a = Put(std::vector<float>(1 << 20, 0.f), MemoryKind::kDevice);
  const int64_t in_use = InUse();
  Array b = ValueOrDie(
      DevicePutInto(HostBuffer{v.data(), Shape{1 << 20}, DType::kFloat32}, a));
  EXPECT_TRUE(a.IsDeleted());
  EXPECT_EQ(Get(b), v);
  EXPECT_EQ(InUse(), in_use);
}

TEST_F(CudaClientTest, ZeroCopyOfDeviceMemoryIsRefused) {
  const std::vector<float> v(256, 1.f);
  Result<Array> r =
      DevicePut(HostBuffer{v.data(), Shape{256}, DType::kFloat32}, dev_,
                MemoryKind::kDevice, HostBufferSemantics::kZeroCopy);
  EXPECT_FALSE(r.ok());
}

TEST(CudaMultiDevice, CopyBetweenTwoGpus) {
  if (CudaClient().device_count() < 2) {
    GTEST_SKIP() << "needs 2 CUDA devices; this machine has "
                 << CudaClient().device_count() << ". " << UnavailableReason();
  }
  Client client(2, CudaDeviceBackend());
  Device* d0 = client.devices()[0];
  Device* d1 = client.devices()[1];
  const std::vector<float> v = Iota(1 << 20, 3.f);
  Array a = ValueOrDie(
      DevicePut(HostBuffer{v.data(), Shape{1 << 20}, DType::kFloat32}, d0,
                MemoryKind::kDevice));
  Array b = ValueOrDie(CopyArray(a, d1, MemoryKind::kDevice));
  std::vector<float> out(v.size());
  ASSERT_TRUE(CopyToHost(b, out.data(), out.size() * 4).ok());
  EXPECT_EQ(out, v);
  EXPECT_EQ(b.device(), d1);
}

}  // namespace
}  // namespace baton
