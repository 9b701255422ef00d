// Runtime benchmarks (issue 2, acceptance 9): device_put throughput against a
// plain memcpy of the same bytes in the same run, allocation and event costs.
//
//   build/release/bench/runtime_bench --benchmark_min_time=0.5
// Read the ratio off the bytes_per_second counters of BM_Memcpy/N and
// BM_DevicePut/N for the same N.
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <vector>

#include "baton/runtime/client.h"
#include "baton/runtime/transfer.h"

namespace baton {
namespace {

Device* Dev() { return Client::Default().devices()[0]; }

// Baseline: one memcpy into an already-touched destination.
void BM_Memcpy(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<char> src(n, 1), dst(n, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(n));
}

// device_put (snapshot) of a host array; the array is dropped each iteration,
// so the caching allocator hands the same (already touched) block back.
void BM_DevicePut(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<char> src(n, 1);
  Device* dev = Dev();
  // Warm-up: the first put of a size maps fresh pages (first-touch faults);
  // the memcpy baseline's destination is already touched, so compare the
  // steady state. BM_DevicePutFirstTouch below reports the cold case.
  (void)DevicePut(HostBuffer{src.data(), Shape{int64_t(n)}, DType::kUInt8},
                  dev, MemoryKind::kDevice);
  for (auto _ : state) {
    Result<Array> a = DevicePut(
        HostBuffer{src.data(), Shape{int64_t(n)}, DType::kUInt8}, dev,
        MemoryKind::kDevice);
    benchmark::DoNotOptimize(a);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(n));
}

// The cold case: a size never allocated before (Trim returns cached regions
// to the system first), so the copy pays the page faults of fresh memory.
void BM_DevicePutFirstTouch(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<char> src(n, 1);
  Device* dev = Dev();
  for (auto _ : state) {
    state.PauseTiming();
    dev->memory_space(MemoryKind::kDevice).Trim();
    state.ResumeTiming();
    Result<Array> a = DevicePut(
        HostBuffer{src.data(), Shape{int64_t(n)}, DType::kUInt8}, dev,
        MemoryKind::kDevice);
    benchmark::DoNotOptimize(a);
    state.PauseTiming();
    a = Result<Array>(Array());
    state.ResumeTiming();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(n));
}
BENCHMARK(BM_DevicePutFirstTouch)->Arg(64 << 20)->UseRealTime();

BENCHMARK(BM_Memcpy)->Arg(1 << 10)->Arg(1 << 20)->Arg(64 << 20)->Arg(1 << 30)
    ->UseRealTime();
BENCHMARK(BM_DevicePut)->Arg(1 << 10)->Arg(1 << 20)->Arg(64 << 20)->Arg(1 << 30)
    ->UseRealTime();

// Allocation through a memory space (stats, limit, labels), cached block.
void BM_AllocateFree(benchmark::State& state) {
  MemorySpace& space = Dev()->memory_space(MemoryKind::kDevice);
  const size_t n = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    Result<void*> p = space.Allocate(n, kNoQueue, "bench");
    space.Free(p.value());
  }
}
BENCHMARK(BM_AllocateFree)->Arg(256)->Arg(1 << 20);

// Event create + complete + wait on one thread.
void BM_EventRoundTrip(benchmark::State& state) {
  for (auto _ : state) {
    Event e = Event::Create();
    e.SetReady();
    benchmark::DoNotOptimize(e.Wait());
  }
}
BENCHMARK(BM_EventRoundTrip);

// Enqueue an empty task and wait for it: the queue's cross-thread latency.
void BM_QueueRoundTrip(benchmark::State& state) {
  WorkQueue& q = Dev()->queue(QueueKind::kCompute);
  for (auto _ : state) {
    Event e = q.Enqueue({}, [] { return OkStatus(); });
    benchmark::DoNotOptimize(e.Wait());
  }
}
BENCHMARK(BM_QueueRoundTrip)->UseRealTime();

// Enqueue only (dispatch side), draining every 1024 tasks.
void BM_QueueEnqueue(benchmark::State& state) {
  WorkQueue& q = Dev()->queue(QueueKind::kCompute);
  int64_t i = 0;
  for (auto _ : state) {
    q.Enqueue({}, [] { return OkStatus(); });
    if (++i % 1024 == 0) {
      state.PauseTiming();
      (void)q.Synchronize();  // refused only from inside a task
      state.ResumeTiming();
    }
  }
  (void)q.Synchronize();  // refused only from inside a task
}
BENCHMARK(BM_QueueEnqueue);

}  // namespace
}  // namespace baton

BENCHMARK_MAIN();
