// Issue 3 acceptance 3-5: temporaries, donated fixed-point loops and training
// steps, asserted on memory_analysis() and memory_stats().
#include <gtest/gtest.h>

#include <cmath>

#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;
constexpr int64_t kMiB = 1 << 20;

// Acceptance 3: tanh(exp(x) * 2 + 1) on 64 MiB: temporaries <= 1 MiB.
TEST(JitMemoryTest, ElementwiseChainNeedsNoWholeArrayTemporaries) {
  Jitted f([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{tanh(exp(a[0]) * 2 + 1)};
  }, {.name = "chain"});
  const int64_t n = 64 * kMiB / 4;
  auto exe = ValueOrThrow(f.Lower({Spec(Shape{n})}, Dev()));
  const auto& m = exe->memory_analysis();
  EXPECT_LE(m.temp_size_in_bytes, kMiB) << m.ToString();
  EXPECT_EQ(m.argument_size_in_bytes, 64 * kMiB);
  EXPECT_EQ(m.output_size_in_bytes, 64 * kMiB);
  EXPECT_EQ(m.alias_size_in_bytes, 0);

  std::vector<float> host(n);
  for (int64_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 100) * 0.01f - 0.5f;
  Array x = Floats(host);
  const int64_t before = Stats().bytes_in_use;
  Stats();
  Dev()->memory_space(MemoryKind::kDevice).ResetPeak();
  Array y = f({x})[0];
  std::vector<float> out = ToHost(y);
  EXPECT_LE(Stats().peak_bytes_in_use - before, 64 * kMiB + kMiB);
  for (int64_t i : {int64_t{0}, int64_t{12345}, n - 1}) {
    const float e = std::tanh(std::exp(host[i]) * 2.f + 1.f);
    EXPECT_NEAR(out[i], e, 1e-6f) << i;
  }
}

// Acceptance 4: a fixed-point loop with a donated 64 MiB state and
// dynamic_update_slice at a dynamic index runs in place.
TEST(JitMemoryTest, DonatedFixedPointLoopRunsInPlace) {
  const int64_t n = 64 * kMiB / 4;
  Jitted step([](TraceScope& s, const std::vector<Tracer>& a) {
    Tracer update = full(s.context(), Shape{1024}, 1.0f) + astype(a[1], DType::kFloat32);
    return std::vector<Tracer>{dynamic_update_slice(a[0], update, {a[1]})};
  }, {.name = "step", .donate_argnums = {0}});
  auto exe = ValueOrThrow(
      step.Lower({Spec(Shape{n}, true), Spec(Shape{}, false, DType::kInt32)}, Dev()));
  EXPECT_EQ(exe->memory_analysis().alias_size_in_bytes, 64 * kMiB);
  EXPECT_LE(exe->memory_analysis().temp_size_in_bytes, kMiB);

  Array state = Floats(std::vector<float>(n, 0.f));
  state.BlockUntilReady();
  const int64_t base = Stats().bytes_in_use;
  Dev()->memory_space(MemoryKind::kDevice).ResetPeak();
  for (int i = 0; i < 50; ++i) {
    Array old = state;
    state = step({state, Int32(i * 1024)})[0];
    EXPECT_TRUE(old.IsDeleted());
  }
  std::vector<float> out = ToHost(state);
  EXPECT_LE(Stats().peak_bytes_in_use - base, kMiB);
  EXPECT_EQ(out[0], 1.f);
  EXPECT_EQ(out[49 * 1024 + 5], 1.f + 49 * 1024);  // 1 + index
  EXPECT_EQ(out[50 * 1024], 0.f);
}

TEST(JitMemoryTest, UndonatedFixedPointLoopPeaksAtTwiceTheState) {
  const int64_t n = 64 * kMiB / 4;
  Jitted step([](TraceScope& s, const std::vector<Tracer>& a) {
    Tracer update = full(s.context(), Shape{1024}, 2.0f);
    return std::vector<Tracer>{dynamic_update_slice(a[0], update, {a[1]})};
  }, {.name = "step"});
  Array state = Floats(std::vector<float>(n, 0.f));
  state.BlockUntilReady();
  const int64_t base = Stats().bytes_in_use - 64 * kMiB;
  Dev()->memory_space(MemoryKind::kDevice).ResetPeak();
  for (int i = 0; i < 50; ++i) state = step({state, Int32(i * 1024)})[0];
  std::vector<float> out = ToHost(state);
  EXPECT_LE(Stats().peak_bytes_in_use - base, 2 * 64 * kMiB + kMiB);
  // Old states are freed; what remains is the state and the executable's
  // scalar constant 2.0 (one 256-byte granule, held while `step` lives).
  EXPECT_EQ(Stats().bytes_in_use - base, 64 * kMiB + 256);
  EXPECT_EQ(out[49 * 1024], 2.f);
}

// Acceptance 5: params - lr * grads over 8 arrays with donated params.
TEST(JitMemoryTest, DonatedTrainingStepAliasesEveryParameter) {
  constexpr int kArrays = 8;
  const int64_t n = 4 * kMiB / 4;
  Jitted train([](TraceScope&, const std::vector<Tracer>& a) {
    std::vector<Tracer> out;
    for (int i = 0; i < kArrays; ++i) out.push_back(a[i] - a[kArrays + i] * 0.5f);
    return out;
  }, {.name = "train_step", .donate_argnums = {0, 1, 2, 3, 4, 5, 6, 7}});
  std::vector<ArgSpec> specs;
  for (int i = 0; i < 2 * kArrays; ++i) specs.push_back(Spec(Shape{n}, i < kArrays));
  auto exe = ValueOrThrow(train.Lower(specs, Dev()));
  EXPECT_EQ(exe->memory_analysis().alias_size_in_bytes, kArrays * 4 * kMiB);
  EXPECT_TRUE(exe->unusable_donations().empty());

  std::vector<Array> params, grads;
  for (int i = 0; i < kArrays; ++i) {
    params.push_back(Floats(std::vector<float>(n, 10.f)));
    grads.push_back(Floats(std::vector<float>(n, 2.f)));
  }
  const int64_t base = Stats().bytes_in_use;  // params + grads
  Dev()->memory_space(MemoryKind::kDevice).ResetPeak();
  for (int step = 0; step < 5; ++step) {
    std::vector<Arg> args;
    for (auto& p : params) args.emplace_back(p);
    for (auto& g : grads) args.emplace_back(g);
    params = train(std::move(args));
  }
  EXPECT_EQ(ToHost(params[7])[n - 1], 5.f);
  EXPECT_LE(Stats().peak_bytes_in_use - base, kMiB);
  EXPECT_EQ(Stats().bytes_in_use, base);
}

}  // namespace
}  // namespace baton
