// Host callbacks run by the CPU executor, through the jit layer: each call
// of a compiled program calls them with the values, in program order,
// inside loops once per iteration, from any number of threads at once; a
// callback's error fails the call's outputs and stops the program there.
#include <gtest/gtest.h>

#include <cmath>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compiler/recording_callback.h"
#include "control_flow/control_flow_test_util.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;
namespace c = compiler;
using c::test_util::Callback;
using c::test_util::Seen;

TEST(JitHostCallbackTest, CallsInProgramOrderOnEveryCall) {
  std::vector<Seen> log;
  Jitted f(
      [&](TraceScope& s, const std::vector<Tracer>& a) {
        s.context().Emit(Callback("x", &log), {a[0]});
        Tracer y = exp(a[0]) * 2;
        s.context().Emit(Callback("y", &log), {y, a[0]});
        return std::vector<Tracer>{y + 1};
      },
      {.name = "prints"});
  for (float v : {0.0f, 1.0f, 2.0f}) {
    std::vector<Array> out = f({Floats({v, -v})});
    EXPECT_NEAR(ToHost(out[0])[0], 2 * std::exp(v) + 1, 1e-5);
  }
  ASSERT_EQ(log.size(), 6u);
  for (int call = 0; call < 3; ++call) {
    const double v = call;
    EXPECT_EQ(log[2 * call].tag, "x");
    EXPECT_EQ(log[2 * call].operands[0], (std::vector<double>{v, -v}));
    EXPECT_EQ(log[2 * call + 1].tag, "y");
    EXPECT_NEAR(log[2 * call + 1].operands[0][0], 2 * std::exp(v), 1e-5);
    EXPECT_EQ(log[2 * call + 1].operands[1], (std::vector<double>{v, -v}));
  }
}

TEST(JitHostCallbackTest, RunsWithoutOutputsAndLargeOperands) {
  // Nothing reads the callback: it still runs (after the work before it).
  std::vector<Seen> log;
  Jitted f(
      [&](TraceScope& s, const std::vector<Tracer>& a) {
        s.context().Emit(Callback("sum", &log), {sum(a[0] * 3)});
        return std::vector<Tracer>{};
      },
      {.name = "no_outputs"});
  std::vector<float> big(1 << 20, 1.0f);
  f({Floats(big)});
  Dev()->Synchronize();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].operands[0], (std::vector<double>{3.0 * (1 << 20)}));
}

TEST(JitHostCallbackTest, CallsOncePerLoopIteration) {
  using c::cf_test::EmitGroup;
  using c::cf_test::I32;
  using c::cf_test::Pred;
  using c::cf_test::Region;
  std::vector<Seen> log;
  auto cond = Region({I32()}, [](c::TraceContext&, const std::vector<Tracer>& p) {
    return std::vector<Tracer>{lt(p[0], 4)};
  });
  auto body = Region({I32()}, [&](c::TraceContext& ctx,
                                  const std::vector<Tracer>& p) {
    ctx.Emit(Callback("i", &log), {p[0]});
    return std::vector<Tracer>{p[0] + 1};
  });
  Jitted f(
      [&](TraceScope& s, const std::vector<Tracer>& a) {
        std::vector<Tracer> out =
            EmitGroup(s.context(), c::cf_test::While(1, cond, body), {a[0]});
        return out;
      },
      {.name = "loop"});
  std::vector<Array> out = f({Int32(1)});
  int32_t result = 0;
  ASSERT_TRUE(CopyToHost(out[0], &result, sizeof(result)).ok());
  EXPECT_EQ(result, 4);
  ASSERT_EQ(log.size(), 3u);  // i = 1, 2, 3
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(log[k].operands[0], (std::vector<double>{double(k + 1)}));
  }
}

TEST(JitHostCallbackTest, AnErrorFailsTheOutputsAndStopsTheProgram) {
  std::vector<Seen> log;
  Jitted f(
      [&](TraceScope& s, const std::vector<Tracer>& a) {
        s.context().Emit(Callback("bad", &log, Internal("callback said no")),
                         {a[0]});
        s.context().Emit(Callback("after", &log), {a[0]});
        return std::vector<Tracer>{a[0] + 1};
      },
      {.name = "failing"});
  Result<std::vector<Array>> out = f.Call({Floats({1, 2})});
  Status st = out.ok() ? CopyToHost(out.value()[0], nullptr, 0) : out.status();
  if (out.ok()) {
    std::vector<float> host(2);
    st = CopyToHost(out.value()[0], host.data(), host.size() * sizeof(float));
  }
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("callback said no"), std::string::npos)
      << st.message();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].tag, "bad");
  // The failure is that call's alone: the next call runs again.
  Result<std::vector<Array>> again = f.Call({Floats({3, 4})});
  EXPECT_EQ(log.size(), 2u);
}

TEST(JitHostCallbackTest, ConcurrentCallsEachCallOnce) {
  std::vector<Seen> log;
  Jitted f(
      [&](TraceScope& s, const std::vector<Tracer>& a) {
        s.context().Emit(Callback("t", &log), {a[0]});
        return std::vector<Tracer>{a[0] * 2};
      },
      {.name = "threads"});
  constexpr int kThreads = 4, kCalls = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        std::vector<Array> out = f({Floats({float(t), float(i)})});
        EXPECT_EQ(ToHost(out[0]), (std::vector<float>{2.0f * t, 2.0f * i}));
      }
    });
  }
  for (std::thread& th : threads) th.join();
  Dev()->Synchronize();
  std::lock_guard<std::mutex> lock(c::test_util::LogMutex());
  ASSERT_EQ(log.size(), size_t{kThreads * kCalls});
  // Each thread's calls ran in its own call order.
  std::vector<int> next(kThreads, 0);
  for (const Seen& s : log) {
    const int t = static_cast<int>(s.operands[0][0]);
    EXPECT_EQ(s.operands[0][1], next[t]++) << "thread " << t;
  }
}

}  // namespace
}  // namespace baton
