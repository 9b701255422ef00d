// Host callbacks run by the CPU executor, through the jit layer: each call
// of a compiled program calls them with the values, in program order,
// inside loops once per iteration, from any number of threads at once; a
// callback's error fails the call's outputs and stops the program there.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compiler/recording_callback.h"
#include "control_flow/control_flow_test_util.h"
#include "jit/jit_test_util.h"
#include "runtime/deadline.h"

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
  EXPECT_TRUE(Dev()->Synchronize().ok());
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
  // On an accelerator the call is queued: wait for it (it fails again).
  if (again.ok()) {
    std::vector<float> host(2);
    EXPECT_FALSE(CopyToHost(again.value()[0], host.data(),
                            host.size() * sizeof(float))
                     .ok());
  }
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
  EXPECT_TRUE(Dev()->Synchronize().ok());
  std::lock_guard<std::mutex> lock(c::test_util::LogMutex());
  ASSERT_EQ(log.size(), size_t{kThreads * kCalls});
  // Each thread's calls ran in its own call order.
  std::vector<int> next(kThreads, 0);
  for (const Seen& s : log) {
    const int t = static_cast<int>(s.operands[0][0]);
    EXPECT_EQ(s.operands[0][1], next[t]++) << "thread " << t;
  }
}

// A callback that runs `fn` with its first operand's float elements.
class FunctionCallback final : public c::HostCallback {
 public:
  explicit FunctionCallback(std::function<Status(std::vector<float>)> fn)
      : fn_(std::move(fn)) {}
  Status Call(std::span<const c::HostCallbackOperand> operands) const override {
    const auto* p = static_cast<const float*>(operands[0].data);
    return fn_(std::vector<float>(
        p, p + operands[0].type->shape.num_elements()));
  }
  std::string name() const override { return "function"; }

 private:
  std::function<Status(std::vector<float>)> fn_;
};

c::HostCallbackAttrs Calls(std::function<Status(std::vector<float>)> fn) {
  return {std::make_shared<const FunctionCallback>(std::move(fn))};
}

// A callback that calls a jitted function on the same device and reads its
// result (and a transfer's) gets the values, as in JAX: work launched from
// inside the running program runs at once, on its thread (work_queue.h) --
// even while another thread's read of the program's output occupies the
// device-to-host queue.
TEST(JitHostCallbackTest, ACallbackMayRunAndReadWorkOnItsOwnDevice) {
  RunWithDeadline([] {
    Jitted inner = AddOne();
    std::vector<float> via_jit, via_transfer, via_copy;
    Jitted f(
        [&](TraceScope& s, const std::vector<Tracer>& a) {
          s.context().Emit(Calls([&](std::vector<float> v) -> Status {
                             Result<std::vector<Array>> r =
                                 inner.Call({Floats(v)});
                             if (!r.ok()) return r.status();
                             // Twice: the second call reuses what the first
                             // released.
                             r = inner.Call({r.value()[0]});
                             if (!r.ok()) return r.status();
                             via_jit.resize(v.size());
                             BATON_RETURN_IF_ERROR(CopyToHost(
                                 r.value()[0], via_jit.data(),
                                 via_jit.size() * sizeof(float)));
                             Array put = Floats(v);
                             Result<Array> copy = CopyArray(
                                 put, Dev(), MemoryKind::kDevice);
                             if (!copy.ok()) return copy.status();
                             via_transfer = ToHost(put);
                             via_copy = ToHost(copy.value());
                             return OkStatus();
                           }),
                           {a[0] * 2});
          return std::vector<Tracer>{a[0] + 10};
        },
        {.name = "calls_back"});
    // Large enough to go to the device's queue rather than run inline.
    std::vector<float> x(1 << 16);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 7);
    Result<std::vector<Array>> out = f.Call({Floats(x)});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    std::vector<float> y = ToHost(out.value()[0]);
    ASSERT_EQ(via_jit.size(), x.size());
    ASSERT_EQ(via_transfer.size(), x.size());
    ASSERT_EQ(via_copy.size(), x.size());
    for (size_t i = 0; i < x.size(); i += 997) {
      EXPECT_EQ(y[i], x[i] + 10);
      EXPECT_EQ(via_jit[i], 2 * x[i] + 2);
      EXPECT_EQ(via_transfer[i], 2 * x[i]);
      EXPECT_EQ(via_copy[i], 2 * x[i]);
    }
  });
}

// A callback that reads the result of a call launched after the program
// that runs it would wait for itself: the read fails, it does not hang.
TEST(JitHostCallbackTest, ReadingWorkQueuedBehindTheCallbackFails) {
  RunWithDeadline([] {
    std::promise<void> started;
    std::promise<Array> later_promise;
    std::shared_future<Array> later = later_promise.get_future().share();
    Status read;
    Jitted f(
        [&](TraceScope& s, const std::vector<Tracer>& a) {
          s.context().Emit(Calls([&](std::vector<float>) -> Status {
                             started.set_value();
                             std::vector<float> host(4);
                             read = CopyToHost(later.get(), host.data(),
                                               host.size() * sizeof(float));
                             return OkStatus();
                           }),
                           {a[0]});
          return std::vector<Tracer>{a[0] + 1};
        },
        {.name = "reads_later"});
    Jitted g = AddOne();
    // The first call runs on another thread (inline there if the queue is
    // idle); the second is queued behind it once the callback has started.
    std::future<Result<std::vector<Array>>> first = std::async(
        std::launch::async, [&] { return f.Call({Floats({1, 2, 3, 4})}); });
    started.get_future().wait();
    Result<std::vector<Array>> second = g.Call({Floats({5, 6, 7, 8})});
    ASSERT_TRUE(second.ok()) << second.status().to_string();
    later_promise.set_value(second.value()[0]);
    Result<std::vector<Array>> r = first.get();
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(ToHost(r.value()[0]), (std::vector<float>{2, 3, 4, 5}));
    EXPECT_EQ(read.code(), ErrorCode::kWouldDeadlock) << read.to_string();
    EXPECT_EQ(ToHost(second.value()[0]), (std::vector<float>{6, 7, 8, 9}));
  });
}

}  // namespace
}  // namespace baton
