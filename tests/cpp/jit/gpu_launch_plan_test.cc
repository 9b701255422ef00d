// Launch plans of the GPU executable (backend/launch_plan.h,
// gpu_executable.h): from the third call with one topology a segment of
// launches is recorded and replayed, its kernel and copy nodes updated in
// place when buffers move, recorded again when a GEMM's operands move, and
// abandoned when every call would record anew -- with the values right
// after each (under emulation a replay runs the recorded nodes, so a node
// left with stale addresses shows in the values or fails). On the
// simulated device; with $BATON_TEST_PLATFORM=cuda on the first CUDA
// device, where the recording is a CUDA graph (tools/gpu_check.sh).
// Which addresses the outputs get is the allocator's: a block freed by the
// previous call is reused by the next, one kept alive is not; the tests
// check the addresses they rely on.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "baton/backend/cuda/gpu_executable.h"
#include "baton/backend/simulated/simulated_backend.h"
#include "baton/compiler/sort_ops.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;
using Mode = LaunchPlan::Mode;

// The GPU the tests run on: the simulated one, or a CUDA device when the
// suite runs with $BATON_TEST_PLATFORM=cuda.
Device* Gpu() {
  return TestPlatform() == "cuda" ? Dev() : SimulatedClient().devices()[0];
}

Array OnGpu(const Array& a) {
  Array on = ValueOrThrow(CopyArray(a, Gpu(), MemoryKind::kDevice));
  on.BlockUntilReady();
  return on;
}

const void* Storage(const Array& a) {
  return ValueOrThrow(a.impl()->buffer())->data();
}

const cuda::GpuExecutable& GpuOf(const std::shared_ptr<Executable>& exe) {
  return dynamic_cast<const cuda::GpuExecutable&>(*exe);
}

// The only segment's last decision.
LaunchPlan::Decision Last(const cuda::GpuExecutable& g) {
  std::vector<LaunchPlan::Decision> d = g.last_launch_decisions();
  EXPECT_EQ(d.size(), 1u);
  return d.empty() ? LaunchPlan::Decision{} : d[0];
}

// x / (sum(x * x) + 1): a reduction and an elementwise division, several
// launches (partial sums, their total, the division).
Jitted Normalize(std::vector<int> donate = {}) {
  return Jitted(
      [](TraceScope&, const std::vector<Tracer>& p) {
        Tracer t = sum(p[0] * p[0]);
        return std::vector<Tracer>{p[0] / (t + 1.0f)};
      },
      {.name = "normalize", .donate_argnums = std::move(donate)});
}

constexpr int64_t kN = 1000;

void ExpectNormalized(const Array& out, float x, const std::string& where) {
  const float want = x / (x * x * kN + 1.0f);
  std::vector<float> got = ToHost(out);
  ASSERT_EQ(got.size(), static_cast<size_t>(kN)) << where;
  EXPECT_FLOAT_EQ(got[0], want) << where;
  EXPECT_FLOAT_EQ(got[kN - 1], want) << where;
}

TEST(GpuLaunchPlanTest, ReplaysWhenNothingMovedAndUpdatesAlternatingOutputs) {
  Jitted f = Normalize();
  auto exe = ValueOrThrow(f.Lower({Spec(Shape{kN})}, Gpu()));
  const cuda::GpuExecutable& g = GpuOf(exe);
  ASSERT_EQ(g.num_segments(), 1);
  Array x = OnGpu(Floats(std::vector<float>(kN, 2.0f)));
  const Mode warm_up[] = {Mode::kDirect, Mode::kDirect, Mode::kCapture};
  const void* last_out = nullptr;
  for (int call = 0; call < 6; ++call) {
    std::vector<Array> out = f({x});
    ExpectNormalized(out[0], 2.0f, "call " + std::to_string(call));
    const LaunchPlan::Decision d = Last(g);
    if (call < 3) {
      EXPECT_EQ(d.mode, warm_up[call]) << "call " << call;
    } else if (Storage(out[0]) == last_out) {
      // The output reused the block the previous one freed.
      EXPECT_EQ(d.mode, Mode::kReplay) << "call " << call;
    } else {
      EXPECT_EQ(d.mode, Mode::kUpdate) << "call " << call;
    }
    last_out = Storage(out[0]);
  }
  LaunchPlan::Counters c = g.launch_plan_counters();
  EXPECT_EQ(c.direct, 2);
  EXPECT_EQ(c.captures, 1);
  EXPECT_EQ(c.replays + c.updates, 3);
  EXPECT_EQ(c.recaptures, 0);

  // Outputs alternating between two buffers (each kept until the next call
  // is done): the nodes binding the output (and the temporaries, where the
  // arena moved too) are updated, the values stay right.
  Array kept = f({x})[0];
  const int64_t updates_before = g.launch_plan_counters().updates;
  for (int call = 0; call < 4; ++call) {
    std::vector<Array> out = f({x});
    ASSERT_NE(Storage(out[0]), Storage(kept));
    ExpectNormalized(out[0], 2.0f, "alternating call " + std::to_string(call));
    const LaunchPlan::Decision d = Last(g);
    EXPECT_EQ(d.mode, Mode::kUpdate) << "alternating call " << call;
    EXPECT_FALSE(d.updated_nodes.empty());
    ExpectNormalized(kept, 2.0f, "the kept output");
    kept = out[0];
  }
  c = g.launch_plan_counters();
  EXPECT_GE(c.updates - updates_before, 4);
  EXPECT_EQ(c.recaptures, 0);
  EXPECT_EQ(c.abandoned, 0);
}

TEST(GpuLaunchPlanTest, ADonatedBufferThatMovesUpdatesTheNodesBindingIt) {
  Jitted f = Normalize({0});
  auto exe = ValueOrThrow(f.Lower({Spec(Shape{kN}, true)}, Gpu()));
  const cuda::GpuExecutable& g = GpuOf(exe);
  std::vector<Array> results;  // kept: each call's buffer is a new one
  for (int call = 0; call < 7; ++call) {
    const float v = 1.0f + static_cast<float>(call);
    Array x = OnGpu(Floats(std::vector<float>(kN, v)));
    const void* donated = Storage(x);
    std::vector<Array> out = f({x});
    EXPECT_EQ(Storage(out[0]), donated) << "call " << call;
    ExpectNormalized(out[0], v, "call " + std::to_string(call));
    const LaunchPlan::Decision d = Last(g);
    if (call < 2) EXPECT_EQ(d.mode, Mode::kDirect);
    if (call == 2) EXPECT_EQ(d.mode, Mode::kCapture);
    if (call > 2) {
      // The kernels that read or write the donated buffer (and those of
      // the temporaries, when the arena moved too).
      EXPECT_EQ(d.mode, Mode::kUpdate) << "call " << call;
      EXPECT_FALSE(d.updated_nodes.empty());
    }
    results.push_back(out[0]);
  }
  for (size_t i = 0; i < results.size(); ++i) {
    ExpectNormalized(results[i], 1.0f + static_cast<float>(i), "kept result");
  }
  EXPECT_EQ(g.launch_plan_counters().updates, 4);
}

TEST(GpuLaunchPlanTest, AMovedGemmIsRecapturedAndAPlanRecapturedEachCallStops) {
  Jitted f(
      [](TraceScope&, const std::vector<Tracer>& p) {
        return std::vector<Tracer>{matmul(p[0], p[0]) + 1.0f, sum(p[0])};
      },
      {.name = "gemm"});
  auto exe = ValueOrThrow(f.Lower({Spec(Shape{4, 4})}, Gpu()));
  const cuda::GpuExecutable& g = GpuOf(exe);
  std::vector<float> a(16);
  for (int i = 0; i < 16; ++i) a[i] = static_cast<float>(i % 5) - 2.0f;
  Array x = OnGpu(Floats(a, Shape{4, 4}));
  std::vector<float> want(16);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      float s = 0;
      for (int k = 0; k < 4; ++k) s += a[i * 4 + k] * a[k * 4 + j];
      want[i * 4 + j] = s + 1.0f;
    }
  }
  auto check = [&](const std::vector<Array>& out, int call) {
    EXPECT_EQ(ToHost(out[0]), want) << "call " << call;
  };
  for (int call = 0; call < 4; ++call) check(f({x}), call);  // dropped
  EXPECT_EQ(g.launch_plan_counters().captures, 1);
  // Kept outputs: the GEMM's result moves every call (from the second on:
  // the first takes the block the last dropped one freed).
  std::vector<std::vector<Array>> kept;
  kept.push_back(f({x}));
  check(kept.back(), 0);
  for (int call = 0; call < 3; ++call) {
    kept.push_back(f({x}));
    check(kept.back(), call);
    EXPECT_EQ(Last(g).mode, Mode::kRecapture) << "call " << call;
  }
  kept.push_back(f({x}));
  check(kept.back(), 3);
  EXPECT_EQ(Last(g).mode, Mode::kDirect);
  const LaunchPlan::Counters c = g.launch_plan_counters();
  EXPECT_EQ(c.recaptures, 3);
  EXPECT_EQ(c.abandoned, 1);
  for (int call = 0; call < 2; ++call) check(f({x}), call);
  EXPECT_EQ(Last(g).mode, Mode::kDirect);
  for (size_t i = 0; i < kept.size(); ++i) check(kept[i], static_cast<int>(i));
}

TEST(GpuLaunchPlanTest, AHostStepSplitsTheCommandListIntoSegments) {
  auto fn = [](TraceScope&, const std::vector<Tracer>& p) {
    Tracer y = exp(p[0]) * 2.0f;
    Tracer s = compiler::sort(y * -1.0f, 0);  // on the host
    return std::vector<Tracer>{sum(s) + s, y};
  };
  Jitted f(fn, {.name = "split"});
  Jitted on_cpu(fn, {.name = "split_cpu"});
  auto exe = ValueOrThrow(f.Lower({Spec(Shape{8})}, Gpu()));
  const cuda::GpuExecutable& g = GpuOf(exe);
  EXPECT_EQ(g.host_steps(), 1);
  EXPECT_GE(g.num_segments(), 2);
  EXPECT_FALSE(g.dispatches_directly());
  std::vector<float> v = {0.5f, -1, 2, 0, 1, -0.25f, 0.75f, 1.5f};
  Array x = OnGpu(Floats(v));
  auto cpu = ValueOrThrow(
      on_cpu.Lower({Spec(Shape{8})}, Client::Default().devices()[0]));
  ASSERT_EQ(cpu->device()->platform(), "cpu");
  std::vector<CallArgument> cpu_call(1);
  cpu_call[0].array = ValueOrThrow(
      DevicePut(HostBuffer{v.data(), Shape{8}, DType::kFloat32},
                Client::Default().devices()[0], MemoryKind::kDevice));
  const std::vector<Array> want = ValueOrThrow(cpu->Execute(cpu_call));
  for (int call = 0; call < 6; ++call) {
    std::vector<Array> out = f({x});
    for (size_t o = 0; o < 2; ++o) {
      std::vector<float> w = ToHost(want[o]), got = ToHost(out[o]);
      ASSERT_EQ(w.size(), got.size());
      for (size_t e = 0; e < w.size(); ++e) {
        EXPECT_NEAR(got[e], w[e], 1e-5f * (1 + std::abs(w[e])))
            << "call " << call << " output " << o << " element " << e;
      }
    }
  }
  const LaunchPlan::Counters c = g.launch_plan_counters();
  // Every segment ran each call; the ones with several nodes were recorded.
  EXPECT_EQ(c.direct + c.captures + c.replays + c.updates + c.recaptures,
            6 * g.num_segments());
  EXPECT_GE(c.captures, 1);
}

TEST(GpuLaunchPlanTest, AProgramCompiledForAnotherShapeHasAPlanOfItsOwn) {
  Jitted f = Normalize();
  Array small = OnGpu(Floats(std::vector<float>(kN, 2.0f)));
  for (int call = 0; call < 4; ++call) ExpectNormalized(f({small})[0], 2.0f, "small");
  auto small_exe = ValueOrThrow(f.Lower({Spec(Shape{kN})}, Gpu()));
  EXPECT_EQ(GpuOf(small_exe).launch_plan_counters().captures, 1);
  Array big = OnGpu(Floats(std::vector<float>(2 * kN, 1.0f)));
  auto big_exe = ValueOrThrow(f.Lower({Spec(Shape{2 * kN})}, Gpu()));
  ASSERT_NE(big_exe.get(), small_exe.get());
  const float want = 1.0f / (2.0f * kN + 1.0f);
  for (int call = 0; call < 3; ++call) {
    EXPECT_FLOAT_EQ(ToHost(f({big})[0])[2 * kN - 1], want);
    EXPECT_EQ(Last(GpuOf(big_exe)).mode,
              call < 2 ? Mode::kDirect : Mode::kCapture);
  }
  // The first one is still recorded, and replays.
  ExpectNormalized(f({small})[0], 2.0f, "small again");
  EXPECT_NE(Last(GpuOf(small_exe)).mode, Mode::kDirect);
  EXPECT_EQ(GpuOf(small_exe).launch_plan_counters().captures, 1);
}

TEST(GpuLaunchPlanTest, AnIdleQueueIsEnqueuedOnByTheCallingThread) {
  Jitted f = Normalize();
  auto exe = ValueOrThrow(f.Lower({Spec(Shape{kN})}, Gpu()));
  const cuda::GpuExecutable& g = GpuOf(exe);
  EXPECT_TRUE(g.dispatches_directly());
  Array x = OnGpu(Floats(std::vector<float>(kN, 2.0f)));
  WorkQueue& compute = Gpu()->queue(QueueKind::kCompute);
  const int64_t before = g.direct_dispatches();
  for (int call = 0; call < 3; ++call) {
    ASSERT_TRUE(compute.Synchronize().ok());
    std::vector<Array> out = f({x});
    ExpectNormalized(out[0], 2.0f, "call " + std::to_string(call));
  }
  EXPECT_EQ(g.direct_dispatches() - before, 3);
  // A program with a host step goes through the queue's worker.
  Jitted h(
      [](TraceScope&, const std::vector<Tracer>& p) {
        return std::vector<Tracer>{compiler::sort(p[0] * 2.0f, 0) + 1.0f};
      },
      {.name = "with_sort"});
  auto hexe = ValueOrThrow(h.Lower({Spec(Shape{kN})}, Gpu()));
  ASSERT_TRUE(compute.Synchronize().ok());
  EXPECT_EQ(ToHost(h({x})[0])[0], 5.0f);
  EXPECT_FALSE(GpuOf(hexe).dispatches_directly());
  EXPECT_EQ(GpuOf(hexe).direct_dispatches(), 0);
}

}  // namespace
}  // namespace baton
