// Inline execution of small programs (Executable::runs_inline, decided by
// the CPU backend's cost model): a call whose work is smaller than a thread
// hand-off runs on the caller when the compute queue is idle, and is queued
// like any other otherwise. Either way values, donation and memory
// accounting are the same.
#include <gtest/gtest.h>

#include "baton/backend/cpu/cost_model.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;

TEST(JitDispatchTest, SmallProgramsRunInlineLargeOnesAreQueued) {
  SKIP_UNLESS_CPU();  // the CPU cost model
  Jitted f = AddOne();
  EXPECT_TRUE(ValueOrThrow(f.Lower({Spec(Shape{4})}, Dev()))->runs_inline());
  const int64_t limit = cpu::CpuExecutable::kInlineWorkLimit;
  EXPECT_TRUE(ValueOrThrow(f.Lower({Spec(Shape{limit / 2})}, Dev()))->runs_inline());
  EXPECT_FALSE(ValueOrThrow(f.Lower({Spec(Shape{limit * 4})}, Dev()))->runs_inline());
  // A small matmul still counts its contraction: 256x256x256 is queued.
  Jitted mm([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{matmul(a[0], a[1])};
  }, {.name = "mm"});
  EXPECT_TRUE(ValueOrThrow(mm.Lower({Spec(Shape{2, 2}), Spec(Shape{2, 2})}, Dev()))
                  ->runs_inline());
  EXPECT_FALSE(
      ValueOrThrow(mm.Lower({Spec(Shape{256, 256}), Spec(Shape{256, 256})}, Dev()))
          ->runs_inline());
}

// Where a call runs is decided by the work it does (cost_model.h), not by
// the size of its result: a reduction counts the elements it reads, a
// transcendental several times a cheap op, and an update written over its
// donated operand only the elements it writes.
TEST(JitDispatchTest, TheCostModelCountsTheWorkNotTheResultSize) {
  SKIP_UNLESS_CPU();
  const int64_t limit = cpu::CpuExecutable::kInlineWorkLimit;
  Jitted total([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{sum(a[0])};
  }, {.name = "total"});
  EXPECT_TRUE(ValueOrThrow(total.Lower({Spec(Shape{limit / 2})}, Dev()))
                  ->runs_inline());
  auto big_sum = ValueOrThrow(total.Lower({Spec(Shape{limit * 64})}, Dev()));
  EXPECT_FALSE(big_sum->runs_inline());  // one output element, 1M read
  EXPECT_GE(CpuOf(big_sum).work(), limit * 64);

  Jitted th([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{tanh(a[0])};
  }, {.name = "th"});
  // Half the limit in elements: inline as an add (above), queued as a tanh.
  EXPECT_FALSE(ValueOrThrow(th.Lower({Spec(Shape{limit / 2})}, Dev()))
                   ->runs_inline());
  EXPECT_EQ(CpuOf(ValueOrThrow(th.Lower({Spec(Shape{64})}, Dev()))).work(),
            64 * cpu::kFastMathCost);
  // float64 tanh is libm's: dearer than the vectorized float32 one.
  EXPECT_EQ(CpuOf(ValueOrThrow(th.Lower(
                      {Spec(Shape{64}, false, DType::kFloat64)}, Dev())))
                .work(),
            64 * cpu::kTranscendentalCost);

  auto set_one = [](std::vector<int> donate) {
    return Jitted([](TraceScope&, const std::vector<Tracer>& a) {
      return std::vector<Tracer>{dynamic_update_slice(a[0], a[1], {a[2]})};
    }, {.name = "set_one", .donate_argnums = std::move(donate)});
  };
  const std::vector<ArgSpec> donated = {
      Spec(Shape{limit * 256}, true), Spec(Shape{1}),
      Spec(Shape{}, false, DType::kInt32)};
  auto in_place = ValueOrThrow(set_one({0}).Lower(donated, Dev()));
  EXPECT_TRUE(in_place->in_place_misses().empty());
  EXPECT_TRUE(in_place->runs_inline());  // O(1) on a large donated array
  EXPECT_LE(CpuOf(in_place).work(), 2);
  const std::vector<ArgSpec> kept = {Spec(Shape{limit * 256}), Spec(Shape{1}),
                                     Spec(Shape{}, false, DType::kInt32)};
  auto copying = ValueOrThrow(set_one({}).Lower(kept, Dev()));
  EXPECT_FALSE(copying->in_place_misses().empty());
  EXPECT_FALSE(copying->runs_inline());  // it copies the whole operand
}

// An inline call longer than a lock hand-off tells its caller to release
// the locks other threads wait on (the Python bindings: the GIL); a brief one
// lets it keep them. A queued call never holds the caller long.
TEST(JitDispatchTest, OnlyBriefInlineCallsKeepTheCallersLocks) {
  SKIP_UNLESS_CPU();  // the CPU cost model
  Jitted f = AddOne();
  const int64_t brief = cpu::CpuExecutable::kBriefWorkLimit;
  const int64_t limit = cpu::CpuExecutable::kInlineWorkLimit;
  ASSERT_LT(brief, limit);
  auto small = ValueOrThrow(f.Lower({Spec(Shape{brief / 2})}, Dev()));
  EXPECT_TRUE(small->runs_inline());
  EXPECT_TRUE(small->keeps_caller_locks());
  auto mid = ValueOrThrow(f.Lower({Spec(Shape{brief * 4})}, Dev()));
  EXPECT_TRUE(mid->runs_inline());
  EXPECT_FALSE(mid->keeps_caller_locks());
  auto large = ValueOrThrow(f.Lower({Spec(Shape{limit * 4})}, Dev()));
  EXPECT_FALSE(large->runs_inline());
  EXPECT_FALSE(large->keeps_caller_locks());
}

// A mid-size inline call (longer than brief) gives the same values and
// memory accounting as a small one: it runs on the caller, the pool's
// helpers joining, and returns with its output ready.
TEST(JitDispatchTest, MidSizeInlineCallReturnsWithItsOutputReady) {
  SKIP_UNLESS_CPU();
  Jitted f = AddOne();
  const int64_t n = cpu::CpuExecutable::kBriefWorkLimit * 2;
  std::vector<float> host(n);
  for (int64_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 1000);
  Array x = Floats(host);
  f({x});  // compile
  EXPECT_TRUE(Dev()->Synchronize().ok());
  const int64_t before = Stats().bytes_in_use;
  Array y = f({x})[0];
  EXPECT_TRUE(y.IsReady());
  EXPECT_EQ(Stats().bytes_in_use - before, n * 4);
  const std::vector<float> got = ToHost(y);
  for (int64_t i = 0; i < n; i += 4099) ASSERT_EQ(got[i], host[i] + 1) << i;
  y = Array();
  EXPECT_EQ(Stats().bytes_in_use, before);
}

TEST(JitDispatchTest, InlineCallReturnsWithTheWorkDoneAndInputsReleased) {
  SKIP_UNLESS_CPU();  // the CPU runs small programs on the caller
  Jitted f = AddOne();
  Array x = Floats({1, 2, 3, 4});
  f({x});  // compile: the constant 1 gets its device copy now
  EXPECT_TRUE(Dev()->Synchronize().ok());
  const int64_t before = Stats().bytes_in_use;
  Array y = f({x})[0];
  EXPECT_TRUE(y.IsReady());  // no BlockUntilReady needed
  EXPECT_EQ(Stats().bytes_in_use - before, 256);  // one 256-byte block: y
  EXPECT_EQ(ToHost(y), (std::vector<float>{2, 3, 4, 5}));
  y = Array();
  EXPECT_EQ(Stats().bytes_in_use, before);  // freed at once, no sync
}

TEST(JitDispatchTest, InlineDonationReusesTheBuffer) {
  SKIP_UNLESS_CPU();  // the CPU runs small programs on the caller
  Jitted f = AddOne({0});
  f({Floats({0, 0, 0, 0})});  // compile (and store the constant 1)
  Array x = Floats({1, 2, 3, 4});
  EXPECT_TRUE(Dev()->Synchronize().ok());
  const void* storage = ValueOrThrow(x.impl()->AcquireRead()).data();
  const int64_t before = Stats().bytes_in_use;
  Array y = f({x})[0];
  EXPECT_TRUE(x.IsDeleted());
  EXPECT_TRUE(y.IsReady());
  EXPECT_EQ(Stats().bytes_in_use, before);  // same storage, nothing new
  EXPECT_EQ(ValueOrThrow(y.impl()->AcquireRead()).data(), storage);
  EXPECT_EQ(ToHost(y), (std::vector<float>{2, 3, 4, 5}));
}

TEST(JitDispatchTest, SmallCallQueuesBehindBusyComputeQueue) {
  Jitted f = AddOne();
  Array x = Floats({1, 2, 3, 4});
  EXPECT_TRUE(Dev()->Synchronize().ok());
  Event gate = Event::Create();
  Dev()->queue(QueueKind::kCompute).Enqueue({gate}, [] { return OkStatus(); });
  Array y = f({x})[0];
  EXPECT_FALSE(y.IsReady());  // behind the gated task, in queue order
  gate.SetReady();
  EXPECT_EQ(ToHost(y), (std::vector<float>{2, 3, 4, 5}));
}

}  // namespace
}  // namespace baton
