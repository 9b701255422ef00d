// Compiled-call benchmarks (issue 3, acceptance 8), each against a baseline
// measured in the same run:
//  - dispatch: Jitted::Call of f(x) = x + 1 on a 4-element array, timed
//    alone (the work runs on the device queue; the loop synchronizes every
//    kDispatchBatch calls with the timer paused) and with
//    BlockUntilReady. DESIGN.md section 4 target: dispatch under 2 us.
//  - elementwise: tanh(exp(x) * 2 + 1) and x * 2 + 1 on 64 MiB through jit
//    (one fused pass: read x, write the result) against memcpy and the
//    pool-parallel copy of the same 64 MiB. Target: >= 0.7 of bandwidth.
//  - matmul: 1024 x 1024 float32 through jit against cblas_sgemm called
//    directly. Target: >= 0.9 of the BLAS.
// After the Google Benchmark table a summary prints the ratios.
//
// Run: build/release/bench/jit_bench --benchmark_min_time=0.5
// (Google Benchmark >= 1.8 spells it 0.5s; Debian 12 ships 1.7.)
#include <benchmark/benchmark.h>
#include "baton/core/blas_symbols.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "baton/core/error.h"
#include "baton/jit/jit.h"
#include "baton/runtime/client.h"
#include "baton/runtime/parallel_copy.h"
#include "baton/runtime/thread_pool.h"
#include "baton/runtime/transfer.h"

namespace baton {
namespace {

constexpr int64_t kBytes = 64 << 20;
constexpr int64_t kFloats = kBytes / 4;
constexpr int kDispatchBatch = 1024;

Device* Dev() { return Client::Default().devices()[0]; }

Array Put(const std::vector<float>& v, Shape shape) {
  return ValueOrThrow(
      DevicePut(HostBuffer{v.data(), std::move(shape), DType::kFloat32}, Dev(),
                MemoryKind::kDevice));
}

// Per case, the rate (units/s) or time (s) of each run long enough to
// mean something; the summary prints their median (this machine may be
// shared, so single runs are noisy).
std::map<std::string, std::vector<double>>& Samples() {
  static std::map<std::string, std::vector<double>> samples;
  return samples;
}
void Record(const std::string& k, double v) { Samples()[k].push_back(v); }
double Median(const std::string& k) {
  auto it = Samples().find(k);
  if (it == Samples().end() || it->second.empty()) return 0;
  std::vector<double> v = it->second;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs body once per iteration after a warm-up; reports `units` per
// iteration as bytes/s (or FLOP/s) and records the rate of runs over 50 ms
// (Google Benchmark's first calibration runs are shorter).
template <typename F>
void Measure(benchmark::State& state, const std::string& name, double units,
             bool flops, F&& body) {
  body();  // warm up: compile, page faults, BLAS threads
  const auto start = std::chrono::steady_clock::now();
  int64_t iters = 0;
  for (auto _ : state) {
    body();
    ++iters;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (secs >= 0.05) Record(name, units * static_cast<double>(iters) / secs);
  if (flops) {
    state.counters["FLOP/s"] = benchmark::Counter(
        units, benchmark::Counter::kIsIterationInvariantRate);
  } else {
    state.SetBytesProcessed(static_cast<int64_t>(units) * state.iterations());
  }
}

Jitted AddOne() {
  return Jitted(
      [](TraceScope&, const std::vector<Tracer>& a) {
        return std::vector<Tracer>{a[0] + 1};
      },
      {.name = "add_one", .donate_argnums = {}});
}

// ---- Dispatch ----

// Jitted::Call alone: the device queue runs the work meanwhile; every
// kDispatchBatch calls the timer stops while it drains, so the queue (and
// the outputs waiting to be freed) stay bounded.
void BM_JitDispatch(benchmark::State& state) {
  Jitted f = AddOne();
  Array x = Put({1, 2, 3, 4}, Shape{4});
  ValueOrThrow(f.Call({x}))[0].BlockUntilReady();  // compile
  int64_t in_batch = 0;
  double timed = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.Call({x}));
    if (++in_batch == kDispatchBatch) {
      timed +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      state.PauseTiming();
      (void)Dev()->Synchronize();  // refused only from inside a task
      in_batch = 0;
      state.ResumeTiming();
      t0 = std::chrono::steady_clock::now();
    }
  }
  timed += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
               .count();
  (void)Dev()->Synchronize();  // refused only from inside a task
  // Google Benchmark's short calibration runs do not reach a full batch.
  if (state.iterations() >= kDispatchBatch) {
    Record("dispatch", timed / static_cast<double>(state.iterations()));
  }
}
BENCHMARK(BM_JitDispatch)->UseRealTime();

// Call and wait for the result: dispatch + queue hand-off + the kernel +
// completion.
void BM_JitCallAndWait(benchmark::State& state) {
  Jitted f = AddOne();
  Array x = Put({1, 2, 3, 4}, Shape{4});
  ValueOrThrow(f.Call({x}))[0].BlockUntilReady();
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    ValueOrThrow(f.Call({x}))[0].BlockUntilReady();
  }
  if (state.iterations() >= kDispatchBatch) {
    Record("call+wait", std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                                .count() /
                            static_cast<double>(state.iterations()));
  }
}
BENCHMARK(BM_JitCallAndWait)->UseRealTime();

// ---- Elementwise against bandwidth ----

std::vector<float> Touched(int64_t n, float v) {
  return std::vector<float>(n, v);
}

void BM_Memcpy64MiB(benchmark::State& state) {
  auto a = Touched(kFloats, 1.f), b = Touched(kFloats, 0.f);
  Measure(state, "memcpy", 2.0 * kBytes, false, [&] {
    std::memcpy(b.data(), a.data(), kBytes);
    benchmark::ClobberMemory();
  });
}
BENCHMARK(BM_Memcpy64MiB)->UseRealTime();

void BM_ParallelCopy64MiB(benchmark::State& state) {
  auto a = Touched(kFloats, 1.f), b = Touched(kFloats, 0.f);
  Measure(state, "parallel copy", 2.0 * kBytes, false, [&] {
    ParallelCopy(b.data(), a.data(), kBytes);
    benchmark::ClobberMemory();
  });
}
BENCHMARK(BM_ParallelCopy64MiB)->UseRealTime();

// One call: reads x and writes a fresh 64 MiB output (the allocator hands
// the previous call's block back, so no page faults after the warm-up), or,
// for a reduction (`traffic` kBytes), reads x and writes one number.
template <typename Fn>
void JitElementwise(benchmark::State& state, const std::string& name, Fn fn,
                    double traffic = 2.0 * kBytes) {
  Jitted f(
      [fn](TraceScope&, const std::vector<Tracer>& a) {
        return std::vector<Tracer>{fn(a[0])};
      },
      {.name = name, .donate_argnums = {}});
  Array x = Put(std::vector<float>(kFloats, 0.25f), Shape{kFloats});
  Measure(state, name, traffic, false,
          [&] { ValueOrThrow(f.Call({x}))[0].BlockUntilReady(); });
}

void BM_JitTanhExpChain64MiB(benchmark::State& state) {
  JitElementwise(state, "jit tanh(exp(x)*2+1)",
                 [](const Tracer& x) { return tanh(exp(x) * 2 + 1); });
}
BENCHMARK(BM_JitTanhExpChain64MiB)->UseRealTime();

void BM_JitAxpb64MiB(benchmark::State& state) {
  JitElementwise(state, "jit x*2+1", [](const Tracer& x) { return x * 2 + 1; });
}
BENCHMARK(BM_JitAxpb64MiB)->UseRealTime();

void BM_JitSum64MiB(benchmark::State& state) {
  JitElementwise(
      state, "jit sum(x)", [](const Tracer& x) { return sum(x); }, kBytes);
}
BENCHMARK(BM_JitSum64MiB)->UseRealTime();

void BM_JitSumOfSquares64MiB(benchmark::State& state) {
  JitElementwise(
      state, "jit sum(x*x)", [](const Tracer& x) { return sum(x * x); },
      kBytes);
}
BENCHMARK(BM_JitSumOfSquares64MiB)->UseRealTime();

// ---- Matmul against the BLAS ----

constexpr int kN = 1024;

void BM_SgemmDirect1024(benchmark::State& state) {
  auto a = Touched(kN * kN, 1.f), b = Touched(kN * kN, 0.5f),
       c = Touched(kN * kN, 0.f);
  Measure(state, "sgemm", 2.0 * kN * kN * kN, true, [&] {
    BATON_BLAS(cblas_sgemm)(CblasRowMajor, CblasNoTrans, CblasNoTrans, kN, kN, kN, 1.f,
                a.data(), kN, b.data(), kN, 0.f, c.data(), kN);
  });
}
BENCHMARK(BM_SgemmDirect1024)->UseRealTime();

void BM_JitMatmul1024(benchmark::State& state) {
  Jitted f(
      [](TraceScope&, const std::vector<Tracer>& a) {
        return std::vector<Tracer>{matmul(a[0], a[1])};
      },
      {.name = "matmul", .donate_argnums = {}});
  Array a = Put(Touched(kN * kN, 1.f), Shape{kN, kN});
  Array b = Put(Touched(kN * kN, 0.5f), Shape{kN, kN});
  Measure(state, "jit matmul", 2.0 * kN * kN * kN, true, [&] {
    ValueOrThrow(f.Call({a, b}))[0].BlockUntilReady();
  });
}
BENCHMARK(BM_JitMatmul1024)->UseRealTime();

void PrintSummary() {
  auto get = [](const std::string& k) { return Median(k); };
  std::printf("\nSummary (%d pool threads; medians of runs)\n",
              ThreadPool::Global().num_threads());
  if (get("dispatch") > 0) {
    std::printf(
        "  dispatch (Jitted::Call, x + 1 on f32[4])  %6.2f us/call  "
        "(target < 2 us)\n",
        get("dispatch") * 1e6);
  }
  if (get("call+wait") > 0) {
    std::printf("  call + BlockUntilReady                    %6.2f us/call\n",
                get("call+wait") * 1e6);
  }
  const double bandwidth = std::max(get("memcpy"), get("parallel copy"));
  if (bandwidth > 0) {
    std::printf(
        "  bandwidth = best of memcpy (%.2f GB/s) and parallel copy "
        "(%.2f GB/s), 64 MiB read + 64 MiB written\n",
        get("memcpy") / 1e9, get("parallel copy") / 1e9);
    for (const char* k : {"jit tanh(exp(x)*2+1)", "jit x*2+1"}) {
      if (get(k) > 0) {
        std::printf("  %-22s %7.2f GB/s  %.2fx bandwidth  %.2fx memcpy\n", k,
                    get(k) / 1e9, get(k) / bandwidth, get(k) / get("memcpy"));
      }
    }
  }
  if (get("sgemm") > 0 && get("jit matmul") > 0) {
    std::printf(
        "  jit matmul 1024        %7.2f GFLOP/s  %.3fx direct sgemm "
        "(%.2f GFLOP/s)\n",
        get("jit matmul") / 1e9, get("jit matmul") / get("sgemm"),
        get("sgemm") / 1e9);
  }
}

}  // namespace
}  // namespace baton

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  baton::PrintSummary();
  return 0;
}
