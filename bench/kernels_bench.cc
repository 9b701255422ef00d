// CPU kernel throughput against baselines measured in the same run:
// memcpy and a STREAM-style triad for memory bandwidth, cblas_sgemm called
// directly for matmul. DESIGN.md section 4 targets: elementwise >= 0.7 of
// memory bandwidth, matmul >= 0.9 of the BLAS it calls.
//
// Each case also has a plain benchmark (the usual table, bytes/s or FLOP/s).
// The ratios come from the two *Interleaved benchmarks, which run the
// kernels and their baselines alternately in one loop and keep each one's
// best time: on a shared or noisy machine both sides then see the same
// conditions, so the ratio is stable even when absolute numbers are not.
// A summary of those ratios prints after the table.
//
// Run: kernels_bench --benchmark_min_time=0.2 (Google Benchmark >= 1.8
// spells it 0.2s; Debian 12 ships 1.7, which wants a plain number).
#include <benchmark/benchmark.h>
#include "baton/core/blas_symbols.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "baton/backend/cpu/kernels/dot.h"
#include "baton/backend/cpu/kernels/elementwise.h"
#include "baton/backend/cpu/kernels/indexing.h"
#include "baton/backend/cpu/kernels/isa.h"
#include "baton/backend/cpu/kernels/parallel.h"
#include "baton/backend/cpu/kernels/reduce.h"
#include "baton/backend/cpu/kernels/strided_copy.h"
#include "baton/runtime/thread_pool.h"

namespace baton::cpu {
namespace {

constexpr int64_t kBytes = 64 << 20;  // each array in the bandwidth cases
constexpr int64_t kFloats = kBytes / 4;
constexpr int64_t kSide = 4096;  // kFloats as a square, for axis reductions

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

// The operations measured, on shared buffers: each is one call over 64 MiB
// arrays (or one matmul), with the bytes (or FLOP) it moves.
struct Op {
  std::string name;
  double units;  // bytes or FLOP per call
  std::function<void()> run;
};

struct BandwidthOps {
  std::unique_ptr<float[]> a = Floats(kFloats, 1.f);
  std::unique_ptr<float[]> b = Floats(kFloats, 2.f);
  std::unique_ptr<float[]> out = Floats(kFloats, 0.f);
  std::vector<float> row_sums = std::vector<float>(kSide);
  float sum = 0;

  std::vector<Op> Ops() {
    float* ap = a.get();
    float* bp = b.get();
    float* op = out.get();
    const int64_t all[] = {0}, axis0[] = {0}, axis1[] = {1};
    return {
        {"memcpy", 2.0 * kBytes, [=] { std::memcpy(op, ap, kBytes); }},
        {"parallel copy", 2.0 * kBytes, [=] { Copy(ap, op, kBytes); }},
        // STREAM triad over the pool: what a two-read, one-write
        // elementwise op can reach here.
        {"triad", 3.0 * kBytes,
         [=] {
           ParallelRanges(kFloats, kCheapGrain, [=](int64_t lo, int64_t hi) {
             for (int64_t i = lo; i < hi; ++i) op[i] = ap[i] + 3.f * bp[i];
           });
         }},
        {"add", 3.0 * kBytes,
         [=] { Binary(BinaryOp::kAdd, DType::kFloat32, ap, bp, op, kFloats); }},
        // out = out + b: the planner's in-place form (b is 2: values grow
        // but stay finite over any run length here).
        {"add in place", 3.0 * kBytes,
         [=] { Binary(BinaryOp::kAdd, DType::kFloat32, op, bp, op, kFloats); }},
        {"reduce sum (all)", 1.0 * kBytes,
         [=, this] {
           Reduce(ReduceOp::kSum, DType::kFloat32, ap, Shape{kFloats}, all,
                  &sum);
         }},
        // The same with the AVX2 variants off (isa.h): what they buy.
        {"reduce sum (all) baseline ISA", 1.0 * kBytes,
         [=, this] {
           const bool previous = SetAvx2KernelsForTesting(false);
           Reduce(ReduceOp::kSum, DType::kFloat32, ap, Shape{kFloats}, all,
                  &sum);
           SetAvx2KernelsForTesting(previous);
         }},
        {"reduce sum axis 1", 1.0 * kBytes,
         [=, this] {
           Reduce(ReduceOp::kSum, DType::kFloat32, ap, Shape{kSide, kSide},
                  axis1, row_sums.data());
         }},
        {"reduce sum axis 0", 1.0 * kBytes,
         [=, this] {
           Reduce(ReduceOp::kSum, DType::kFloat32, ap, Shape{kSide, kSide},
                  axis0, row_sums.data());
         }},
    };
  }
};

// Best rate (units/s) per interleaved op, for the summary.
std::map<std::string, double>& Rates() {
  static std::map<std::string, double> rates;
  return rates;
}

// Runs one op per benchmark iteration and reports its rate.
void RunSingle(benchmark::State& state, const Op& op, bool flops) {
  op.run();  // warm up: page faults, BLAS thread start
  for (auto _ : state) op.run();
  if (flops) {
    state.counters["FLOP/s"] = benchmark::Counter(
        op.units, benchmark::Counter::kIsIterationInvariantRate);
  } else {
    state.SetBytesProcessed(static_cast<int64_t>(op.units) *
                            state.iterations());
  }
}

// Each iteration runs every op once, in turn; each op's best time gives its
// rate (a counter per op, and Rates() for the summary).
void RunInterleaved(benchmark::State& state, const std::vector<Op>& ops) {
  std::vector<double> best(ops.size(), 1e30);
  for (const Op& op : ops) op.run();
  for (auto _ : state) {
    for (size_t i = 0; i < ops.size(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      ops[i].run();
      const double dt =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      best[i] = std::min(best[i], dt);
    }
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const double rate = ops[i].units / best[i];
    state.counters[ops[i].name] = rate;
    Rates()[ops[i].name] = std::max(Rates()[ops[i].name], rate);
  }
}

void BM_Bandwidth(benchmark::State& state) {
  BandwidthOps buffers;
  const std::vector<Op> ops = buffers.Ops();
  RunSingle(state, ops[state.range(0)], false);
  state.SetLabel(ops[state.range(0)].name);
}
BENCHMARK(BM_Bandwidth)->DenseRange(0, 7)->UseRealTime();

void BM_BandwidthInterleaved(benchmark::State& state) {
  BandwidthOps buffers;
  RunInterleaved(state, buffers.Ops());
}
// Fixed iteration counts: the ratios are best-of-N, so N must not shrink to
// 2 or 3 when --benchmark_min_time is small.
BENCHMARK(BM_BandwidthInterleaved)
    ->Iterations(25)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// tanh(exp(x) * 2 + 1): four kernels, one pass each, the last three in place
// (as the planner runs them). Bytes: one read and one write per pass.
void BM_TanhExpChain(benchmark::State& state) {
  auto x = Floats(kFloats, 0.5f), t = Floats(kFloats, 0.f);
  const float two = 2.f, one = 1.f;
  const Op chain{
      "tanh(exp(x)*2+1)", 4 * 2.0 * kBytes, [&] {
        Unary(UnaryOp::kExp, DType::kFloat32, x.get(), t.get(), kFloats);
        Binary(BinaryOp::kMul, DType::kFloat32, t.get(), &two, t.get(), kFloats,
               ScalarOperand::kRhs);
        Binary(BinaryOp::kAdd, DType::kFloat32, t.get(), &one, t.get(), kFloats,
               ScalarOperand::kRhs);
        Unary(UnaryOp::kTanh, DType::kFloat32, t.get(), t.get(), kFloats);
      }};
  RunInterleaved(state, {chain});
}
BENCHMARK(BM_TanhExpChain)
    ->Iterations(5)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// One transcendental kernel per op over 64 MiB float32 (one read and one
// write per element), on inputs spread over [-4, 4) (log: (0, 8)) so that
// range-dependent libm paths are all exercised.
struct TranscendentalOps {
  std::unique_ptr<float[]> x = Spread(-4.f);
  std::unique_ptr<float[]> pos = Spread(0.f);
  std::unique_ptr<float[]> out = Floats(kFloats, 0.f);

  static std::unique_ptr<float[]> Spread(float lo) {
    auto p = Floats(kFloats, 0.f);
    float* raw = p.get();
    ParallelRanges(kFloats, kCheapGrain, [=](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        raw[i] = lo + 8.f * static_cast<float>((i * 7919) % 65536) / 65536.f +
                 (lo == 0.f ? 1e-3f : 0.f);
      }
    });
    return p;
  }

  std::vector<Op> Ops() {
    const float* xp = x.get();
    const float* pp = pos.get();
    float* op = out.get();
    auto unary = [=](const char* name, UnaryOp u, const float* in) {
      return Op{name, 2.0 * kBytes,
                [=] { Unary(u, DType::kFloat32, in, op, kFloats); }};
    };
    return {unary("exp", UnaryOp::kExp, xp), unary("log", UnaryOp::kLog, pp),
            unary("tanh", UnaryOp::kTanh, xp),
            unary("logistic", UnaryOp::kLogistic, xp)};
  }
};

void BM_Transcendental(benchmark::State& state) {
  TranscendentalOps buffers;
  const std::vector<Op> ops = buffers.Ops();
  RunSingle(state, ops[state.range(0)], false);
  state.SetLabel(ops[state.range(0)].name);
}
BENCHMARK(BM_Transcendental)->DenseRange(0, 3)->UseRealTime();

void BM_TranscendentalInterleaved(benchmark::State& state) {
  TranscendentalOps buffers;
  RunInterleaved(state, buffers.Ops());
}
BENCHMARK(BM_TranscendentalInterleaved)
    ->Iterations(5)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// exp, log, tanh or logistic (range(0): 0-3) over float32[2^range(1)]
// (inputs in [-2, 2), as bench/cases/sweep.py's tanh uses; log: (0, 4)),
// per ISA variant (range(2): 0 baseline, 1 AVX2, 2 AVX-512): where the
// pool's split starts paying and what each vector width gives.
void BM_FastMathSize(benchmark::State& state) {
  constexpr UnaryOp kOps[] = {UnaryOp::kExp, UnaryOp::kLog, UnaryOp::kTanh,
                              UnaryOp::kLogistic};
  const UnaryOp op = kOps[state.range(0)];
  const int64_t n = int64_t{1} << state.range(1);
  const int64_t isa = state.range(2);
  std::unique_ptr<float[]> x = Floats(n, 0.f), out = Floats(n, 0.f);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = op == UnaryOp::kLog ? dist(rng) + 2.f + 1e-3f : dist(rng);
  }
  const bool avx2 = SetAvx2KernelsForTesting(isa >= 1);
  const bool avx512 = SetAvx512KernelsForTesting(isa >= 2);
  if ((isa >= 1 && !UseAvx2Kernels()) || (isa >= 2 && !UseAvx512Kernels())) {
    state.SkipWithError("ISA not available");
  }
  for (auto _ : state) {
    Unary(op, DType::kFloat32, x.get(), out.get(), n);
    benchmark::DoNotOptimize(out.get());
  }
  SetAvx512KernelsForTesting(avx512);
  SetAvx2KernelsForTesting(avx2);
  state.SetItemsProcessed(state.iterations() * n);
  state.SetLabel(std::string(op_name(op)));
}
BENCHMARK(BM_FastMathSize)
    ->ArgsProduct({{0, 1, 2, 3}, {10, 12, 14, 16, 18, 20, 22, 24}, {0, 1, 2}})
    ->UseRealTime();

struct MatmulOps {
  explicit MatmulOps(int64_t n)
      : n(n),
        a(Floats(n * n, 1.f)),
        b(Floats(n * n, 0.5f)),
        c(Floats(n * n, 0.f)) {}
  int64_t n;
  std::unique_ptr<float[]> a, b, c;

  std::vector<Op> Ops() {
    const int ni = static_cast<int>(n);
    const std::string size = std::to_string(n);
    return {
        {"sgemm " + size, 2.0 * n * n * n,
         [=, this] {
           BATON_BLAS(cblas_sgemm)(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni,
                       1.f, a.get(), ni, b.get(), ni, 0.f, c.get(), ni);
         }},
        {"dot " + size, 2.0 * n * n * n,
         [=, this] {
           // Row-major operands: no scratch (DotGeneralScratchBytes 0).
           DotGeneral(DType::kFloat32, a.get(), Shape{n, n}, b.get(),
                      Shape{n, n}, DotDimensions{{}, {}, {1}, {0}}, c.get(),
                      {});
         }},
    };
  }
};

void BM_SgemmDirect(benchmark::State& state) {
  MatmulOps m(state.range(0));
  RunSingle(state, m.Ops()[0], true);
}
BENCHMARK(BM_SgemmDirect)->Arg(256)->Arg(1024)->UseRealTime();

void BM_DotGeneral(benchmark::State& state) {
  MatmulOps m(state.range(0));
  RunSingle(state, m.Ops()[1], true);
}
BENCHMARK(BM_DotGeneral)->Arg(256)->Arg(1024)->UseRealTime();

void BM_MatmulInterleaved(benchmark::State& state) {
  MatmulOps m(state.range(0));
  RunInterleaved(state, m.Ops());
}
BENCHMARK(BM_MatmulInterleaved)->Arg(256)->Iterations(300)->UseRealTime();
BENCHMARK(BM_MatmulInterleaved)->Arg(1024)->Iterations(20)->UseRealTime();

// take(a, idx) as the size sweep runs it: float32 a[n], n/4 random int32
// indices in [0, n), one Gather call; items/s counts indices.
void BM_GatherTake(benchmark::State& state) {
  const int64_t n = int64_t{1} << state.range(0);
  const int64_t m = n / 4;
  std::unique_ptr<float[]> a = Floats(n, 1.0f);
  std::vector<int32_t> idx(static_cast<size_t>(m));
  std::mt19937 rng(static_cast<uint32_t>(n));
  for (int32_t& i : idx) i = static_cast<int32_t>(rng() % n);
  std::unique_ptr<float[]> out = Floats(m, 0.0f);
  const Shape shape{n};
  // Second argument: 1 takes the vector (AVX2 gather) loop, 0 the scalar one.
  const bool previous = SetAvx2KernelsForTesting(state.range(1) != 0);
  for (auto _ : state) {
    Gather(DType::kFloat32, a.get(), shape, idx.data(), DType::kInt32, m, 0,
           out.get());
    benchmark::DoNotOptimize(out.get());
  }
  SetAvx2KernelsForTesting(previous);
  state.SetItemsProcessed(state.iterations() * m);
}
BENCHMARK(BM_GatherTake)
    ->ArgsProduct({benchmark::CreateDenseRange(14, 24, 2), {0, 1}})
    ->UseRealTime();

void PrintSummary() {
  auto& r = Rates();
  auto get = [&](const std::string& k) { return r.count(k) ? r[k] : 0.0; };
  const double bandwidth =
      std::max({get("memcpy"), get("parallel copy"), get("triad")});
  if (bandwidth > 0) {
    std::printf(
        "\nSummary (%d pool threads; best times, interleaved runs).\n"
        "Bandwidth = best of memcpy, parallel copy, triad = %.2f GB/s\n",
        ThreadPool::Global().num_threads(), bandwidth / 1e9);
    for (const char* k :
         {"memcpy", "parallel copy", "triad", "add", "add in place",
          "tanh(exp(x)*2+1)", "exp", "log", "tanh", "logistic",
          "reduce sum (all)", "reduce sum axis 1",
          "reduce sum axis 0"}) {
      if (get(k) > 0) {
        std::printf("  %-20s %7.2f GB/s  %.2fx bandwidth\n", k, get(k) / 1e9,
                    get(k) / bandwidth);
      }
    }
  }
  for (int n : {256, 1024}) {
    const double s = get("sgemm " + std::to_string(n));
    const double d = get("dot " + std::to_string(n));
    if (s > 0 && d > 0) {
      std::printf(
          "  dot %-4d             %7.2f GFLOP/s  %.3fx direct sgemm "
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
