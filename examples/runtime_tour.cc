// A tour of baton's runtime contract, with the memory figures it measures:
//   1. deterministic release: storage returns the moment the last handle is
//      gone and in-flight work is done -- no garbage collector involved;
//   2. delete() with work in flight;
//   3. an in-place parameter swap (device_put into=) while a server thread
//      keeps reading the parameters: peak memory stays at one copy;
//   4. a host view blocks donation until it is released.
// Run: build/examples/runtime_tour
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "baton/runtime/client.h"
#include "baton/runtime/host_view.h"
#include "baton/runtime/transfer.h"

using namespace baton;

namespace {

double MiB(int64_t b) { return static_cast<double>(b) / (1 << 20); }

template <typename T>
T Check(Result<T> r) {
  if (!r.ok()) {
    std::fprintf(stderr, "error: %s\n", r.status().to_string().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

Array Put(Device* d, const std::vector<float>& v) {
  return Check(DevicePut(
      HostBuffer{v.data(), Shape{int64_t(v.size())}, DType::kFloat32}, d,
      MemoryKind::kDevice));
}

// A computation that keeps reading `a` until `gate` opens.
Event SlowRead(const Array& a, Event gate) {
  UsageHold hold = Check(a.impl()->AcquireRead());
  std::vector<Event> deps = hold.dependencies();
  deps.push_back(gate);
  Event done = a.device()->queue(QueueKind::kCompute).Enqueue(
      deps, [] { return OkStatus(); });
  hold.Finish(done);
  return done;
}

}  // namespace

int main() {
  Device* dev = Client::Default().devices()[0];
  MemorySpace& mem = dev->memory_space(MemoryKind::kDevice);
  auto in_use = [&] { return mem.stats().bytes_in_use; };
  std::printf("baton runtime tour on %s\n\n", dev->ToString().c_str());
  std::printf("%-66s %12s\n", "step", "MiB in use");
  auto row = [&](const char* what) {
    std::printf("%-66s %12.1f\n", what, MiB(in_use()));
  };

  // 1. Deterministic release.
  row("start");
  Event gate = Event::Create();
  Event work;
  {
    Array x = Put(dev, std::vector<float>(16 << 20, 1.f));  // 64 MiB
    row("1. x = device_put(64 MiB)");
    work = SlowRead(x, gate);
  }
  row("1. last handle to x dropped, computation still running");
  gate.SetReady();
  (void)work.Wait();
  row("1. computation finished -> storage already returned");

  // 2. delete() with work in flight.
  Array y = Put(dev, std::vector<float>(16 << 20, 2.f));
  Event gate2 = Event::Create();
  Event work2 = SlowRead(y, gate2);
  y.Delete();
  row("2. y.delete() while a computation reads y");
  try {
    y.BlockUntilReady();
  } catch (const std::exception& e) {
    std::printf("   using y now raises: %.70s...\n", e.what());
  }
  gate2.SetReady();
  (void)work2.Wait();
  row("2. computation finished -> y's storage returned");

  // 3. In-place parameter swap while serving.
  constexpr int kParams = 8;
  constexpr size_t kElems = (16 << 20) / sizeof(float);  // 16 MiB each
  std::mutex mu;
  std::vector<Array> params;
  for (int i = 0; i < kParams; ++i) params.push_back(Put(dev, std::vector<float>(kElems, 0.f)));
  row("3. 8 parameters of 16 MiB on the device");
  mem.ResetPeak();
  std::atomic<bool> stop{false};
  std::atomic<int> served{0};
  std::thread server([&] {
    while (!stop) {
      std::vector<Event> batch;
      {
        std::lock_guard<std::mutex> lock(mu);
        for (auto& p : params) batch.push_back(SlowRead(p, Event::Ready()));
      }
      (void)WaitAll(batch);
      served++;
    }
  });
  std::vector<float> fresh(kElems, 1.f);
  for (int i = 0; i < kParams; ++i) {
    std::lock_guard<std::mutex> lock(mu);
    params[i] = Check(DevicePutInto(
        HostBuffer{fresh.data(), Shape{int64_t(kElems)}, DType::kFloat32},
        params[i]));
  }
  stop = true;
  server.join();
  (void)dev->Synchronize();  // refused only from inside a task
  row("3. all 8 swapped in place with device_put(into=) while serving");
  std::printf("   peak during the swap: %.1f MiB (parameters: %.1f MiB); "
              "staging peak %.1f MiB (bound %.0f MiB); %d batches served\n",
              MiB(mem.stats().peak_bytes_in_use), MiB(kParams * 16 << 20),
              MiB(dev->memory_space(MemoryKind::kPinnedHost).stats().peak_bytes_in_use),
              MiB(StagingPool::kDefaultCapacity), served.load());

  // 4. A host view blocks donation; after it dies, donation works.
  Array z = params[0];
  {
    HostView view = Check(HostView::Acquire(z, false, "numpy view"));
    auto refused = z.impl()->TakeExclusive(
        {ConsumedReason::Kind::kDonated, "update"});
    std::printf("4. donate while a view lives: %.60s...\n",
                refused.status().message().c_str());
  }
  auto taken = z.impl()->TakeExclusive({ConsumedReason::Kind::kDonated, "update"});
  std::printf("4. donate after the view died: %s\n",
              taken.ok() ? "ok, z consumed" : taken.status().to_string().c_str());
  return 0;
}
