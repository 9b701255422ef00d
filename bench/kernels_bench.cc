// CPU kernel throughput against baselines measured in the same run:
// memcpy and a STREAM-style triad for memory bandwidth, cblas_sgemm called
// directly for matmul. DESIGN.md section 4 targets: elementwise >= 0.7 of
// memory bandwidth, matmul >= 0.9 of the BLAS it calls. After the usual
// Google Benchmark table, a summary prints those ratios.
//
// Run: kernels_bench --benchmark_min_time=0.2s
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "baton/backend/cpu/kernels/dot.h"
#include "baton/backend/cpu/kernels/elementwise.h"
#include "baton/backend/cpu/kernels/parallel.h"
#include "baton/backend/cpu/kernels/reduce.h"
#include "baton/backend/cpu/kernels/strided_copy.h"
#include "baton/runtime/thread_pool.h"

namespace baton::cpu {
namespace {

constexpr int64_t kBytes = 64 << 20;  // each array in the bandwidth cases
constexpr int64_t kFloats = kBytes / 4;

// Best rate (units/s) seen per case, for the summary.
std::map<std::string, double>& Rates() {
  static std::map<std::string, double> rates;
  return rates;
}

// Runs body once per benchmark iteration, reports `units` per iteration as
// bytes (or FLOP) per second, and keeps the best rate for the summary.
template <typename F>
void Measure(benchmark::State& state, const std::string& name, double units,
             bool flops, F&& body) {
  body();  // warm up: page faults, BLAS thread start
  const auto start = std::chrono::steady_clock::now();
  int64_t iters = 0;
  for (auto _ : state) {
    body();
    ++iters;
  }
  const double secs = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  const double rate = units * static_cast<double>(iters) / secs;
  double& best = Rates()[name];
  best = std::max(best, rate);
  if (flops) {
    state.counters["FLOP/s"] = benchmark::Counter(
        units, benchmark::Counter::kIsIterationInvariantRate);
  } else {
    state.SetBytesProcessed(static_cast<int64_t>(units) * state.iterations());
  }
}

// Page-touched float buffer (first touch spread over the pool's threads, as
// the kernels will read it).
std::unique_ptr<float[]> Floats(int64_t n, float value) {
  std::unique_ptr<float[]> p(new float[n]);
  float* raw = p.get();
  ParallelRanges(n, kCheapGrain, [=](int64_t lo, int64_t hi) {
    std::fill(raw + lo, raw + hi, value);
  });
  return p;
}

void BM_Memcpy(benchmark::State& state) {
  auto a = Floats(kFloats, 1.f), b = Floats(kFloats, 0.f);
  Measure(state, "memcpy", 2.0 * kBytes, false,
          [&] { std::memcpy(b.get(), a.get(), kBytes); });
}
BENCHMARK(BM_Memcpy)->UseRealTime();

void BM_ParallelCopy(benchmark::State& state) {
  auto a = Floats(kFloats, 1.f), b = Floats(kFloats, 0.f);
  Measure(state, "parallel copy", 2.0 * kBytes, false,
          [&] { Copy(a.get(), b.get(), kBytes); });
}
BENCHMARK(BM_ParallelCopy)->UseRealTime();

// STREAM triad a = b + s * c over the pool: the bandwidth an elementwise
// binary op (two reads, one write) can reach on this machine.
void BM_Triad(benchmark::State& state) {
  auto a = Floats(kFloats, 0.f), b = Floats(kFloats, 1.f),
       c = Floats(kFloats, 2.f);
  float* ap = a.get();
  const float* bp = b.get();
  const float* cp = c.get();
  Measure(state, "triad", 3.0 * kBytes, false, [&] {
    ParallelRanges(kFloats, kCheapGrain, [=](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) ap[i] = bp[i] + 3.f * cp[i];
    });
  });
}
BENCHMARK(BM_Triad)->UseRealTime();

void BM_AddFloat32(benchmark::State& state) {
  auto a = Floats(kFloats, 1.f), b = Floats(kFloats, 2.f),
       out = Floats(kFloats, 0.f);
  Measure(state, "add", 3.0 * kBytes, false, [&] {
    Binary(BinaryOp::kAdd, DType::kFloat32, a.get(), b.get(), out.get(),
           kFloats);
  });
}
BENCHMARK(BM_AddFloat32)->UseRealTime();

void BM_AddFloat32InPlace(benchmark::State& state) {
  auto a = Floats(kFloats, 1.f), b = Floats(kFloats, 0.f);
  Measure(state, "add in place", 3.0 * kBytes, false, [&] {
    Binary(BinaryOp::kAdd, DType::kFloat32, a.get(), b.get(), a.get(),
           kFloats);
  });
}
BENCHMARK(BM_AddFloat32InPlace)->UseRealTime();

// tanh(exp(x) * 2 + 1): four kernels, one pass each, the last three in place
// (as the planner runs them). Bytes: one read and one write per pass.
void BM_TanhExpChain(benchmark::State& state) {
  auto x = Floats(kFloats, 0.5f), t = Floats(kFloats, 0.f);
  const float two = 2.f, one = 1.f;
  Measure(state, "tanh(exp(x)*2+1)", 4 * 2.0 * kBytes, false, [&] {
    Unary(UnaryOp::kExp, DType::kFloat32, x.get(), t.get(), kFloats);
    Binary(BinaryOp::kMul, DType::kFloat32, t.get(), &two, t.get(), kFloats,
           ScalarOperand::kRhs);
    Binary(BinaryOp::kAdd, DType::kFloat32, t.get(), &one, t.get(), kFloats,
           ScalarOperand::kRhs);
    Unary(UnaryOp::kTanh, DType::kFloat32, t.get(), t.get(), kFloats);
  });
}
BENCHMARK(BM_TanhExpChain)->UseRealTime();

void BM_ReduceSumAll(benchmark::State& state) {
  auto x = Floats(kFloats, 1.f);
  float out = 0;
  const int64_t axes[] = {0};
  Measure(state, "reduce sum (all)", 1.0 * kBytes, false, [&] {
    Reduce(ReduceOp::kSum, DType::kFloat32, x.get(), Shape{kFloats}, axes,
           &out);
  });
  benchmark::DoNotOptimize(out);
}
BENCHMARK(BM_ReduceSumAll)->UseRealTime();

// [4096, 4096] reduced over axis 1 (rows) and axis 0 (columns).
void BM_ReduceSumAxis(benchmark::State& state) {
  const int64_t axis = state.range(0);
  auto x = Floats(kFloats, 1.f);
  std::vector<float> out(4096);
  const int64_t axes[] = {axis};
  Measure(state, "reduce sum axis " + std::to_string(axis), 1.0 * kBytes,
          false, [&] {
            Reduce(ReduceOp::kSum, DType::kFloat32, x.get(), Shape{4096, 4096},
                   axes, out.data());
          });
}
BENCHMARK(BM_ReduceSumAxis)->Arg(1)->Arg(0)->UseRealTime();

void BM_SgemmDirect(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto a = Floats(int64_t{n} * n, 1.f), b = Floats(int64_t{n} * n, 0.5f),
       c = Floats(int64_t{n} * n, 0.f);
  Measure(state, "sgemm " + std::to_string(n), 2.0 * n * n * n, true, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f,
                a.get(), n, b.get(), n, 0.f, c.get(), n);
  });
}
BENCHMARK(BM_SgemmDirect)->Arg(256)->Arg(1024)->UseRealTime();

void BM_DotGeneral(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto a = Floats(n * n, 1.f), b = Floats(n * n, 0.5f), c = Floats(n * n, 0.f);
  const DotDimensions dims{{}, {}, {1}, {0}};
  Measure(state, "dot " + std::to_string(n), 2.0 * n * n * n, true, [&] {
    DotGeneral(DType::kFloat32, a.get(), Shape{n, n}, b.get(), Shape{n, n},
               dims, c.get());
  });
}
BENCHMARK(BM_DotGeneral)->Arg(256)->Arg(1024)->UseRealTime();

void PrintSummary() {
  auto& r = Rates();
  auto get = [&](const std::string& k) { return r.count(k) ? r[k] : 0.0; };
  const double bandwidth = std::max(
      {get("memcpy"), get("parallel copy"), get("triad")});
  if (bandwidth <= 0) return;
  std::printf("\nSummary (%d pool threads). Bandwidth = best of memcpy, "
              "parallel copy, triad = %.2f GB/s\n",
              ThreadPool::Global().num_threads(), bandwidth / 1e9);
  for (const char* k : {"memcpy", "parallel copy", "triad", "add",
                        "add in place", "tanh(exp(x)*2+1)", "reduce sum (all)",
                        "reduce sum axis 1", "reduce sum axis 0"}) {
    if (get(k) > 0) {
      std::printf("  %-20s %7.2f GB/s  %.2fx bandwidth\n", k, get(k) / 1e9,
                  get(k) / bandwidth);
    }
  }
  for (int n : {256, 1024}) {
    const double s = get("sgemm " + std::to_string(n));
    const double d = get("dot " + std::to_string(n));
    if (s > 0 && d > 0) {
      std::printf("  dot %-4d             %7.2f GFLOP/s  %.3fx direct sgemm "
                  "(%.2f GFLOP/s)\n",
                  n, d / 1e9, d / s, s / 1e9);
    }
  }
}

}  // namespace
}  // namespace baton::cpu

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  baton::cpu::PrintSummary();
  return 0;
}
