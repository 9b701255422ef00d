// The asynchronous device contract (DESIGN section 6, "Asynchronous"), on
// the simulated accelerator: the host enqueues device work and returns at
// once, events complete in stream order from the backend's completion
// thread, a dependency across streams is a wait on the device, and the
// slow-device mode turns a missing dependency edge into wrong values.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "baton/backend/simulated/simulated_backend.h"
#include "baton/runtime/client.h"
#include "baton/runtime/transfer.h"
#include "runtime/runtime_test_util.h"
#include "sanitizer_build.h"

namespace baton {
namespace {

using testing::GetFloats;
using testing::InUse;
using testing::PutFloats;
using testing::ValueOrThrowForTest;

std::vector<float> Iota(size_t n, float scale = 1.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * scale;
  return v;
}

Array FullFloats(Device* d, int64_t n, float value) {
  return ValueOrThrowForTest(
      Full(Shape{n}, DType::kFloat32, &value, d, MemoryKind::kDevice));
}

// N copies enqueued while the device is held all return, none is done;
// once the device runs, waiting for the last one is enough, in stream order.
TEST(AsyncDeviceTest, HostRunsAheadOfTheDevice) {
  auto sim = std::make_shared<SimulatedBackend>();
  Client client(1, sim);
  Device* dev = client.devices()[0];
  const std::vector<float> v = Iota(4096, 0.5f);
  Array src = PutFloats(dev, v);
  src.BlockUntilReady();
  const int64_t to_device_before = sim->bytes_to_device();

  sim->HoldDevices();
  constexpr int kCopies = 16;
  std::vector<Array> copies;
  for (int i = 0; i < kCopies; ++i) {
    copies.push_back(ValueOrThrowForTest(
        CopyArray(src, dev, MemoryKind::kDevice)));
  }
  // Every call returned although the device has run nothing.
  for (const Array& c : copies) EXPECT_FALSE(c.IsReady());
  EXPECT_EQ(sim->bytes_to_device(), to_device_before);
  // The storage is already counted: memory is the host's decision, made at
  // enqueue time (R1), not the device's.
  EXPECT_EQ(InUse(dev), static_cast<int64_t>((kCopies + 1) * v.size() *
                                             sizeof(float)));

  sim->ReleaseDevices();
  copies.back().BlockUntilReady();
  // Stream order: the last one done means every earlier one is.
  for (const Array& c : copies) EXPECT_TRUE(c.IsReady());
  EXPECT_EQ(sim->bytes_to_device() - to_device_before,
            static_cast<int64_t>(kCopies * v.size() * sizeof(float)));
  for (const Array& c : copies) EXPECT_EQ(GetFloats(c), v);
}

// A snapshot device_put of pageable memory into device memory returns once
// the bytes are in pinned staging: the caller may change its buffer at once,
// the device copies later, and the staging is counted (pinned_host) until
// then and returned after.
TEST(AsyncDeviceTest, SnapshotPutReturnsOnceStagedAndKeepsTheSnapshot) {
  auto sim = std::make_shared<SimulatedBackend>();
  Client client(1, sim);
  Device* dev = client.devices()[0];
  constexpr size_t kN = (size_t{10} << 20) / sizeof(float);  // 10 MiB
  static_assert(kN * sizeof(float) <= StagingPool::kDefaultCapacity);
  std::vector<float> host = Iota(kN, 0.5f);
  const std::vector<float> snapshot = host;
  const int64_t pinned_before = InUse(dev, MemoryKind::kPinnedHost);
  const int64_t to_device_before = sim->bytes_to_device();
  sim->HoldDevices();
  Array a = ValueOrThrowForTest(
      DevicePut(HostBuffer{host.data(), Shape{int64_t(kN)}, DType::kFloat32},
                dev, MemoryKind::kDevice, HostBufferSemantics::kSnapshot));
  std::fill(host.begin(), host.end(), -7.f);  // allowed: it was snapshotted
  EXPECT_FALSE(a.IsReady());
  EXPECT_EQ(InUse(dev, MemoryKind::kPinnedHost) - pinned_before,
            static_cast<int64_t>(kN * sizeof(float)))
      << "the staging chunks, counted while the device has not read them";
  sim->ReleaseDevices();
  EXPECT_EQ(GetFloats(a), snapshot);
  EXPECT_EQ(sim->bytes_to_device() - to_device_before,
            static_cast<int64_t>(kN * sizeof(float)));
  EXPECT_EQ(InUse(dev, MemoryKind::kPinnedHost), pinned_before);
}

// Larger than the staging pool: chunks go round it, values and statistics
// exact, in slow-device mode too.
TEST(AsyncDeviceTest, SnapshotPutLargerThanTheStagingPool) {
  for (bool slow : {false, true}) {
    SimulatedBackend::Options options;
    options.slow = slow;
    options.seed = 5;
    options.max_delay_us = 200;
    auto sim = std::make_shared<SimulatedBackend>(options);
    Client client(1, sim);
    Device* dev = client.devices()[0];
    const size_t n = 3 * StagingPool::kDefaultCapacity / sizeof(float) + 17;
    const std::vector<float> v = Iota(n, 0.25f);
    const int64_t pinned_before = InUse(dev, MemoryKind::kPinnedHost);
    Array a = PutFloats(dev, v);
    EXPECT_EQ(GetFloats(a), v) << (slow ? "slow" : "normal");
    EXPECT_EQ(sim->bytes_to_device(), static_cast<int64_t>(n * sizeof(float)));
    EXPECT_EQ(InUse(dev, MemoryKind::kPinnedHost), pinned_before);
  }
}

// A reader on another stream (device-to-host) of work still held on the
// compute stream waits for it on the device: the host thread that launched
// the read is not blocked, and the value read is the written one.
TEST(AsyncDeviceTest, CrossStreamDependencyIsADeviceWait) {
  auto sim = std::make_shared<SimulatedBackend>();
  Client client(1, sim);
  Device* dev = client.devices()[0];
  sim->HoldDevices();
  Array filled = FullFloats(dev, 1024, 2.5f);  // compute stream
  std::vector<float> out(1024, 0.f);
  Event read = ValueOrThrowForTest(
      CopyToHostAsync(filled, out.data(), out.size() * sizeof(float)));
  // The device-to-host queue launched its copy behind a device-side wait:
  // its worker is free, so a second read is launched as well.
  std::vector<float> out2(1024, 0.f);
  Event read2 = ValueOrThrowForTest(
      CopyToHostAsync(filled, out2.data(), out2.size() * sizeof(float)));
  EXPECT_FALSE(read.IsReady());
  EXPECT_FALSE(read2.IsReady());
  sim->ReleaseDevices();
  ASSERT_TRUE(read2.Wait().ok());
  EXPECT_TRUE(read.IsReady());
  EXPECT_EQ(out, std::vector<float>(1024, 2.5f));
  EXPECT_EQ(out2, std::vector<float>(1024, 2.5f));
}

// Releasing an array whose device work is still pending frees its storage
// only when that work is done (R1), then the statistics drop exactly.
TEST(AsyncDeviceTest, ReleaseWaitsForPendingDeviceWork) {
  auto sim = std::make_shared<SimulatedBackend>();
  Client client(1, sim);
  Device* dev = client.devices()[0];
  const int64_t before = InUse(dev);
  sim->HoldDevices();
  Array a = FullFloats(dev, 1 << 16, 1.f);
  const int64_t bytes = InUse(dev) - before;
  EXPECT_GE(bytes, int64_t{1} << 18);
  a.Delete();
  EXPECT_EQ(InUse(dev) - before, bytes) << "freed while the device writes it";
  sim->ReleaseDevices();
  ASSERT_TRUE(dev->Synchronize().ok());
  EXPECT_EQ(InUse(dev), before);
}

// A queue's events complete in its order even when a later host task
// finishes before the device work an earlier task launched (found by
// fuzz_runtime_calls): usage tracking and stream-ordered reuse take "a
// later event of the queue is complete" to mean "every earlier one is".
TEST(AsyncDeviceTest, QueueEventsCompleteInQueueOrder) {
  WorkQueue q("order-test");
  Event device_work = Event::Create();
  Event launched = q.EnqueueLaunch({}, [&] { return device_work; });
  std::atomic<bool> ran{false};
  Event host = q.Enqueue({}, [&] {
    ran = true;
    return OkStatus();
  });
  while (!ran) std::this_thread::yield();
  // The host task has run, but its event waits for the launch before it.
  EXPECT_FALSE(launched.IsReady());
  EXPECT_FALSE(host.IsReady());
  device_work.SetReady();
  EXPECT_TRUE(host.Wait().ok());
  EXPECT_TRUE(launched.IsReady());
  // An earlier task's error stays its own.
  Event failing = Event::Create();
  Event bad = q.EnqueueLaunch({}, [&] { return failing; });
  Event after = q.Enqueue({}, [] { return OkStatus(); });
  failing.SetError(Internal("device fault"));
  EXPECT_FALSE(bad.Wait().ok());
  EXPECT_TRUE(after.Wait().ok());
}

// Work depending on an earlier task of its own queue whose device work is
// still running: a launch is ordered behind it by the stream (no wait), a
// host task waits for it -- neither is a wait "for itself" (found by
// fuzz_runtime_calls: a copy of a copy on one device failed WouldDeadlock).
TEST(AsyncDeviceTest, DependenciesOnEarlierWorkOfTheSameQueue) {
  WorkQueue q("same-queue-test");
  Event device_work = Event::Create();
  Event first = q.EnqueueLaunch({}, [&] { return device_work; });
  std::atomic<bool> launched{false};
  Event second = q.EnqueueLaunch({first}, [&] {
    launched = true;
    return Event::Ready();
  });
  while (!launched) std::this_thread::yield();  // launched without waiting
  EXPECT_FALSE(second.IsReady());
  std::atomic<bool> read{false};
  Event host = q.Enqueue({first}, [&] {
    read = true;
    return OkStatus();
  });
  device_work.SetReady();
  EXPECT_TRUE(second.Wait().ok()) << second.status().to_string();
  EXPECT_TRUE(host.Wait().ok()) << host.status().to_string();
  EXPECT_TRUE(read);
}

// A copy the accelerator makes (its memory into a CPU device's) is
// launched from the accelerator's own device-to-host queue, whose order is
// its stream's -- not from the CPU device's queue (found by
// fuzz_runtime_calls: that queue's later CPU work reused memory the copy
// still wrote).
TEST(AsyncDeviceTest, AcceleratorCopiesLaunchFromTheirOwnQueue) {
  auto sim = std::make_shared<SimulatedBackend>();
  Client client(1, sim);
  Client cpu(1);
  Device* dev = client.devices()[0];
  Device* host = cpu.devices()[0];
  Array a = FullFloats(dev, 256, 4.f);
  a.BlockUntilReady();
  sim->HoldDevices();
  Array b = ValueOrThrowForTest(CopyArray(a, host, MemoryKind::kDevice));
  EXPECT_FALSE(b.IsReady());
  EXPECT_EQ(host->queue(QueueKind::kHostToDevice).pending(), 0u);
  EXPECT_EQ(dev->queue(QueueKind::kDeviceToHost).pending(), 1u);
  sim->ReleaseDevices();
  EXPECT_EQ(GetFloats(b), std::vector<float>(256, 4.f));
}

// Slow-device mode catches a missing dependency edge: the same fill and
// read, launched with the edge (through the runtime) and without it
// (straight onto the two streams), over many trials. With the edge every
// read sees the filled values; without it the read overtakes the fill on
// the device and sees the poisoned bytes of the memory's previous owner.
TEST(AsyncDeviceTest, SlowDeviceModeCatchesAMissingDependencyEdge) {
#ifdef BATON_TSAN
  GTEST_SKIP() << "races on purpose (the read without its edge); "
                  "ThreadSanitizer would rightly report it";
#endif
  SimulatedBackend::Options options;
  options.slow = true;
  options.seed = 42;
  options.max_delay_us = 400;
  auto sim = std::make_shared<SimulatedBackend>(options);
  Client client(1, sim);
  Device* dev = client.devices()[0];
  constexpr int64_t kN = 256;
  constexpr int kTrials = 40;
  int wrong_without_edge = 0;
  int wrong_with_edge = 0;
  for (int t = 0; t < kTrials; ++t) {
    // A block that was used and freed: poisoned, then reused below.
    FullFloats(dev, kN, -1.f).BlockUntilReady();
    const float value = static_cast<float>(t + 1);
    {
      // With the edge: the runtime's read depends on the fill.
      Array a = FullFloats(dev, kN, value);
      std::vector<float> out(kN);
      ASSERT_TRUE(CopyToHost(a, out.data(), out.size() * sizeof(float)).ok());
      if (out != std::vector<float>(kN, value)) ++wrong_with_edge;
    }
    {
      // Without it: the same two operations, the read not told to wait.
      Array a = FullFloats(dev, kN, value);
      std::shared_ptr<TrackedBuffer> buffer =
          ValueOrThrowForTest(a.impl()->buffer());
      std::vector<float> out(kN);
      Event read = sim->CopyAsync(0, QueueKind::kDeviceToHost, out.data(),
                                  buffer->data(), out.size() * sizeof(float));
      ASSERT_TRUE(read.Wait().ok());
      if (out != std::vector<float>(kN, value)) ++wrong_without_edge;
      a.BlockUntilReady();
    }
  }
  EXPECT_EQ(wrong_with_edge, 0);
  EXPECT_GT(wrong_without_edge, 0)
      << "slow-device mode never caught the read that skipped its dependency";
}

// Freed device memory is poisoned in slow-device mode, and only then.
TEST(AsyncDeviceTest, SlowModePoisonsFreedDeviceMemory) {
  for (bool slow : {false, true}) {
    SimulatedBackend::Options options;
    options.slow = slow;
    options.max_delay_us = 50;
    auto sim = std::make_shared<SimulatedBackend>(options);
    Client client(1, sim);
    Device* dev = client.devices()[0];
    Array a = FullFloats(dev, 64, 3.f);
    a.BlockUntilReady();
    void* storage = ValueOrThrowForTest(a.impl()->buffer())->data();
    a.Delete();
    std::vector<unsigned char> bytes(64 * sizeof(float));
    ASSERT_TRUE(sim->Copy(0, QueueKind::kDeviceToHost, bytes.data(), storage,
                          bytes.size())
                    .ok());
    unsigned char expected[4];
    const float three = 3.f;
    std::memcpy(expected, &three, 4);
    for (size_t i = 0; i < bytes.size(); ++i) {
      ASSERT_EQ(bytes[i], slow ? SimulatedBackend::kPoisonByte : expected[i % 4])
          << "byte " << i << (slow ? " (slow mode)" : "");
    }
  }
}

// Errors of a producer reach a consumer on another stream even when the
// consumer waited for it on the device.
TEST(AsyncDeviceTest, LaunchErrorsReachTheTaskEvent) {
  auto sim = std::make_shared<SimulatedBackend>();
  Client client(1, sim);
  Device* dev = client.devices()[0];
  Array a = FullFloats(dev, 16, 1.f);
  void* storage = ValueOrThrowForTest(a.impl()->buffer())->data();
  // A read running past the end of the device region: refused at launch.
  const std::vector<SegmentInfo> segments =
      dev->memory_space(MemoryKind::kDevice).Segments();
  ASSERT_EQ(segments.size(), 1u);
  const size_t past_end = static_cast<size_t>(
      segments[0].address + static_cast<uint64_t>(segments[0].size) -
      reinterpret_cast<uint64_t>(storage) + 1);
  WorkQueue& q = dev->queue(QueueKind::kDeviceToHost);
  std::vector<char> out(past_end);
  Event bad = q.EnqueueLaunch({}, [&] {
    return dev->CopyAsync(QueueKind::kDeviceToHost, out.data(), storage,
                          out.size());
  });
  Status s = bad.Wait();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.to_string();
  // The queue goes on.
  EXPECT_EQ(GetFloats(a), std::vector<float>(16, 1.f));
}

}  // namespace
}  // namespace baton
