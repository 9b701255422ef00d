// CUDA transfer benchmarks (issue 16, acceptance 2): baton's copies between a
// GPU's memory kinds against cudaMemcpyAsync of the same bytes between
// buffers of the same kinds, measured alternately in the same iterations, so
// the ratio is of one run on one machine.
//
//   build/gpu/bench/cuda_transfer_bench --benchmark_min_time=0.2s
//
// Counters per size: baton_GBps, cuda_GBps and ratio (baton's bandwidth over
// CUDA's; acceptance asks >= 0.9 for pinned host -> device). The reported
// time is baton's. Built only when CMake enables the CUDA backend; on a
// machine without a GPU every case is skipped with the platform's reason.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/backend/cuda/cuda_platform.h"
#include "baton/runtime/array.h"
#include "baton/runtime/client.h"
#include "baton/runtime/transfer.h"

namespace baton {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Runs `body` and returns the seconds it took.
template <typename F>
double Timed(F&& body) {
  const Clock::time_point t0 = Clock::now();
  body();
  return Seconds(t0);
}

// The raw baseline's buffers: `bytes` of pinned host memory and of device
// memory, allocated once per case outside the timed region.
struct RawBuffers {
  void* pinned = nullptr;
  void* device = nullptr;
  cudaStream_t stream = nullptr;
  bool ok = false;
  explicit RawBuffers(size_t bytes) {
    ok = cudaSetDevice(0) == cudaSuccess &&
         cudaHostAlloc(&pinned, bytes, cudaHostAllocPortable) == cudaSuccess &&
         cudaMalloc(&device, bytes) == cudaSuccess &&
         cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) ==
             cudaSuccess &&
         cudaMemset(device, 0, bytes) == cudaSuccess;
  }
  ~RawBuffers() {
    if (stream != nullptr) cudaStreamDestroy(stream);
    if (device != nullptr) cudaFree(device);
    if (pinned != nullptr) cudaFreeHost(pinned);
  }
};

// One direction: baton's CopyArray from `from` memory to `to` memory of
// cuda:0, against cudaMemcpyAsync between raw buffers of the same kinds.
void CopyCase(benchmark::State& state, MemoryKind from, MemoryKind to) {
  Client& client = cuda::CudaClient();
  if (client.device_count() == 0) {
    state.SkipWithError(cuda::UnavailableReason().c_str());
    return;
  }
  const size_t bytes = static_cast<size_t>(state.range(0));
  RawBuffers raw(bytes);
  if (!raw.ok) {
    state.SkipWithError("allocating the baseline's CUDA buffers failed");
    return;
  }
  void* raw_dst = to == MemoryKind::kDevice ? raw.device : raw.pinned;
  const void* raw_src = to == MemoryKind::kDevice ? raw.pinned : raw.device;

  Device* dev = client.devices()[0];
  const std::vector<uint8_t> host(bytes, 7);
  Result<Array> src = DevicePut(
      HostBuffer{host.data(), Shape{int64_t(bytes)}, DType::kUInt8}, dev, from);
  if (!src.ok()) {
    state.SkipWithError(src.status().to_string().c_str());
    return;
  }
  src->BlockUntilReady();
  // Warm-up: the first copy of a size allocates the destination region
  // (cudaHostAlloc of 256 MiB takes ~150 ms). It is released before the
  // loop, so each timed copy reuses that region: while it was kept, the
  // first timed copy allocated a second region, and at 256 MiB that one
  // iteration was all the benchmark measured (device -> pinned at 0.03).
  {
    Result<Array> warm = CopyArray(*src, dev, to);
    if (!warm.ok()) {
      state.SkipWithError(warm.status().to_string().c_str());
      return;
    }
    warm->BlockUntilReady();
  }

  double baton_s = 0;
  double cuda_s = 0;
  for (auto _ : state) {
    const double b = Timed([&] {
      Result<Array> out = CopyArray(*src, dev, to);
      out->BlockUntilReady();
    });
    cuda_s += Timed([&] {
      cudaMemcpyAsync(raw_dst, raw_src, bytes, cudaMemcpyDefault, raw.stream);
      cudaStreamSynchronize(raw.stream);
    });
    baton_s += b;
    state.SetIterationTime(b);
  }
  const double n = static_cast<double>(state.iterations()) * double(bytes);
  state.counters["baton_GBps"] = n / baton_s / 1e9;
  state.counters["cuda_GBps"] = n / cuda_s / 1e9;
  state.counters["ratio"] = cuda_s / baton_s;
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}

void BM_PinnedToDevice(benchmark::State& state) {
  CopyCase(state, MemoryKind::kPinnedHost, MemoryKind::kDevice);
}
void BM_DeviceToPinned(benchmark::State& state) {
  CopyCase(state, MemoryKind::kDevice, MemoryKind::kPinnedHost);
}

// 64 KiB to 256 MiB, every power of 4: small copies show the per-call cost,
// large ones the bandwidth.
BENCHMARK(BM_PinnedToDevice)
    ->RangeMultiplier(4)
    ->Range(64 << 10, 256 << 20)
    ->UseManualTime();
BENCHMARK(BM_DeviceToPinned)
    ->RangeMultiplier(4)
    ->Range(64 << 10, 256 << 20)
    ->UseManualTime();

}  // namespace
}  // namespace baton

BENCHMARK_MAIN();
