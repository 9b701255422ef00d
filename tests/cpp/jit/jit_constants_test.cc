// Issue 3 acceptance 6 (DESIGN R5): a captured host array is snapshotted
// when captured and de-duplicated by content -- inside one program (CSE) and
// across executables (ConstantCache, one device copy) -- and its device copy
// is freed when the last executable using it goes.
#include <gtest/gtest.h>

#include "baton/backend/constant_cache.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;
constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kElements = 16 * kMiB / 4;  // a 16 MiB float32 constant
constexpr int kUses = 160;
constexpr int64_t kSlice = 256;  // each use reads its own slice
constexpr int kFewUses = 8;      // where the count does not matter

// Captures `host` `uses` times, as a front end closing over a numpy array
// does (each capture is a fresh snapshot, a distinct Literal), and uses each
// capture once: out = sum_i slice_i(c) * x, slice i being elements
// [i * kSlice, (i + 1) * kSlice). No other constant appears, so the
// program's constant bytes are the captured array's alone.
std::vector<Tracer> UseCapturedConstant(TraceScope& s, const Tracer& x,
                                        const std::vector<float>& host,
                                        int uses = kUses) {
  Tracer acc;
  for (int i = 0; i < uses; ++i) {
    // The snapshot is handed over, not copied again.
    const Tracer c = compiler::constant(
        s.context(),
        std::make_shared<const compiler::Literal>(
            compiler::Literal::FromVector(host, Shape{kElements})));
    const Tracer part =
        compiler::slice(c, {i * kSlice}, {(i + 1) * kSlice}) * x;
    acc = acc.valid() ? acc + part : part;
  }
  return {acc};
}

// What UseCapturedConstant computes, on the host, in the same order.
std::vector<float> Expected(const std::vector<float>& host,
                            const std::vector<float>& x, int uses = kUses) {
  std::vector<float> acc(kSlice);
  for (int i = 0; i < uses; ++i) {
    for (int64_t j = 0; j < kSlice; ++j) {
      const float part = host[i * kSlice + j] * x[j];
      acc[j] = i == 0 ? part : acc[j] + part;
    }
  }
  return acc;
}

std::vector<float> HostData(float offset) {
  std::vector<float> host(kElements);
  for (int64_t i = 0; i < kElements; ++i) {
    host[i] = static_cast<float>(i % 1000) * 0.001f + offset;
  }
  return host;
}

int64_t InUse() {
  EXPECT_TRUE(Dev()->Synchronize().ok());
  return Stats().bytes_in_use;
}

TEST(JitConstantsTest, ConstantCapturedManyTimesIsStoredOnce) {
  std::vector<float> host = HostData(0.5f);
  auto& cache = ConstantCache::Global();
  const size_t cached_before = cache.size();
  const int64_t before = InUse();
  {
    Jitted f(
        [&host](TraceScope& s, const std::vector<Tracer>& a) {
          return UseCapturedConstant(s, a[0], host);
        },
        {.name = "uses_constant_160_times", .donate_argnums = {}});
    auto exe = ValueOrThrow(f.Lower({Spec(Shape{kSlice})}, Dev()));
    const auto& m = exe->memory_analysis();
    EXPECT_LE(m.constant_size_in_bytes, 16 * kMiB) << m.ToString();
    EXPECT_EQ(m.constant_size_in_bytes, 16 * kMiB) << m.ToString();
    int constants = 0;
    for (const auto& inst : exe->program().instructions()) {
      constants += inst.kind() == compiler::OpKind::kConstant;
    }
    EXPECT_EQ(constants, 1);
    EXPECT_EQ(cache.size(), cached_before + 1);
    // Device memory holds one copy (allocator rounding aside).
    EXPECT_GE(InUse() - before, 16 * kMiB);
    EXPECT_LE(InUse() - before, 16 * kMiB + 4096);

    std::vector<float> x(kSlice);
    for (int64_t j = 0; j < kSlice; ++j) x[j] = static_cast<float>(j % 7) - 3.f;
    const std::vector<float> want = Expected(host, x);
    EXPECT_EQ(ToHost(f({Floats(x)})[0]), want);
  }
  // The executable is gone, and with it the constant's device copy.
  EXPECT_EQ(cache.size(), cached_before);
  EXPECT_EQ(InUse(), before);
}

TEST(JitConstantsTest, ExecutablesWithEqualConstantsShareOneDeviceCopy) {
  std::vector<float> host = HostData(0.25f);
  auto& cache = ConstantCache::Global();
  const size_t cached_before = cache.size();
  const int64_t before = InUse();
  std::vector<float> x(kSlice, 2.f);

  auto f = std::make_unique<Jitted>(
      [&host](TraceScope& s, const std::vector<Tracer>& a) {
        return UseCapturedConstant(s, a[0], host, kFewUses);
      },
      JitOptions{.name = "f", .donate_argnums = {}});
  // Another function: captures the same data (its own snapshot) twice.
  auto g = std::make_unique<Jitted>(
      [&host](TraceScope& s, const std::vector<Tracer>& a) {
        const Tracer c1 = compiler::constant(
            s.context(), compiler::Literal::FromVector(host, Shape{kElements}));
        const Tracer c2 = compiler::constant(
            s.context(), compiler::Literal::FromVector(host, Shape{kElements}));
        return std::vector<Tracer>{compiler::slice(c1, {0}, {kSlice}) -
                                   compiler::slice(c2, {kSlice}, {2 * kSlice}) *
                                       a[0]};
      },
      JitOptions{.name = "g", .donate_argnums = {}});

  const std::vector<float> want_f = Expected(host, x, kFewUses);
  EXPECT_EQ(ToHost((*f)({Floats(x)})[0]), want_f);
  const int64_t after_f = InUse();
  EXPECT_GE(after_f - before, 16 * kMiB);
  EXPECT_LE(after_f - before, 16 * kMiB + 4096);
  EXPECT_EQ(cache.size(), cached_before + 1);

  std::vector<float> want_g(kSlice);
  for (int64_t j = 0; j < kSlice; ++j)
    want_g[j] = host[j] - host[kSlice + j] * 2.f;
  EXPECT_EQ(ToHost((*g)({Floats(x)})[0]), want_g);
  // The second executable found the first one's copy: no growth.
  EXPECT_EQ(InUse(), after_f);
  EXPECT_EQ(cache.size(), cached_before + 1);

  // Dropping one keeps the copy for the other; dropping both frees it.
  f.reset();
  EXPECT_EQ(InUse(), after_f);
  EXPECT_EQ(cache.size(), cached_before + 1);
  EXPECT_EQ(ToHost((*g)({Floats(x)})[0]), want_g);
  g.reset();
  EXPECT_EQ(InUse(), before);
  EXPECT_EQ(cache.size(), cached_before);
}

TEST(JitConstantsTest, MutatingTheHostArrayAfterTracingChangesNothing) {
  std::vector<float> host = HostData(1.f);
  const std::vector<float> snapshot = host;
  auto& cache = ConstantCache::Global();
  const size_t cached_before = cache.size();

  Jitted f(
      [&host](TraceScope& s, const std::vector<Tracer>& a) {
        return UseCapturedConstant(s, a[0], host, kFewUses);
      },
      {.name = "closes_over_host", .donate_argnums = {}});
  std::vector<float> x(kSlice);
  for (int64_t j = 0; j < kSlice; ++j) x[j] = 0.5f * static_cast<float>(j % 5);
  const std::vector<float> want = Expected(snapshot, x, kFewUses);
  EXPECT_EQ(ToHost(f({Floats(x)})[0]), want);

  // The user mutates the array the function closed over.
  for (float& v : host) v = -v * 3.f;
  // The compiled program keeps its snapshot.
  EXPECT_EQ(ToHost(f({Floats(x)})[0]), want);
  EXPECT_EQ(cache.size(), cached_before + 1);
  EXPECT_EQ(f.cache_size(), 1u);

  // A new signature re-traces, capturing the mutated data: a different
  // constant (a second device copy), while the first program is unchanged.
  const std::vector<float> x2(2 * kSlice, 1.f);
  Array y2 = f({Floats(x2, Shape{2, kSlice})})[0];
  EXPECT_EQ(f.cache_size(), 2u);
  EXPECT_EQ(cache.size(), cached_before + 2);
  const std::vector<float> want_mutated =
      Expected(host, std::vector<float>(kSlice, 1.f), kFewUses);
  const std::vector<float> got2 = ToHost(y2);
  ASSERT_EQ(got2.size(), static_cast<size_t>(2 * kSlice));
  EXPECT_EQ(std::vector<float>(got2.begin(), got2.begin() + kSlice),
            want_mutated);
  EXPECT_NE(want_mutated,
            Expected(snapshot, std::vector<float>(kSlice, 1.f), kFewUses));
  EXPECT_EQ(ToHost(f({Floats(x)})[0]), want);

  y2 = Array();
}

}  // namespace
}  // namespace baton
