// Table gathers in fused steps (compiler/step_plan.h: IsTableGather): take
// from a one-dimensional table with numpy's index wrap and an out-of-range
// fill is one fused pass -- nothing materialized between the index
// arithmetic, the gather and the fill -- with the values of the unfused
// ops, and the result never written over the table it reads.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "baton/compiler/step_plan.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;

Array Ints(const std::vector<int32_t>& v) {
  return ValueOrThrow(DevicePut(
      HostBuffer{v.data(), Shape{static_cast<int64_t>(v.size())},
                 DType::kInt32},
      Dev(), MemoryKind::kDevice));
}

// baton.numpy's take: negative indices wrap, out-of-range ones give NaN.
Jitted TakeWithFill(int64_t n) {
  return Jitted([n](TraceScope&, const std::vector<Tracer>& a) {
    const Tracer& i = a[1];
    const Tracer wrapped = where(lt(i, 0), i + static_cast<int32_t>(n), i);
    const Tracer in_range =
        ge(i, static_cast<int32_t>(-n)) & lt(i, static_cast<int32_t>(n));
    return std::vector<Tracer>{where(in_range, take(a[0], wrapped),
                                     std::numeric_limits<float>::quiet_NaN())};
  }, {.name = "take_fill"});
}

TEST(JitFusedGatherTest, TakeWithWrapAndFillIsOneFusedPass) {
  const int64_t n = 3000, m = 5000;  // several tiles of indices
  std::vector<float> table(n);
  for (int64_t k = 0; k < n; ++k) table[k] = 0.5f * static_cast<float>(k);
  std::vector<int32_t> idx(m);
  for (int64_t k = 0; k < m; ++k) {
    idx[k] = static_cast<int32_t>((k * 7919) % (3 * n) - n - n / 2);
  }
  Jitted f = TakeWithFill(n);
  auto exe = ValueOrThrow(f.Lower(
      {Spec(Shape{n}), Spec(Shape{m}, false, DType::kInt32)}, Dev()));
  const compiler::StepPlan plan = compiler::PlanSteps(exe->program());
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].kind, compiler::Step::Kind::kFusedElementwise);
  EXPECT_EQ(exe->memory_analysis().temp_size_in_bytes, 0);

  const std::vector<float> out = ToHost(f({Floats(table), Ints(idx)})[0]);
  ASSERT_EQ(out.size(), static_cast<size_t>(m));
  int filled = 0;
  for (int64_t k = 0; k < m; ++k) {
    const int64_t i = idx[k];
    if (i < -n || i >= n) {
      EXPECT_TRUE(std::isnan(out[k])) << k;
      ++filled;
    } else {
      EXPECT_EQ(out[k], table[i < 0 ? i + n : i]) << k;
    }
  }
  EXPECT_GT(filled, 0);  // the indices reach both sides of the range
}

// A donated table the size of the result may not take the result: tiles
// written early would be read as table entries later (the reversal reads
// the table's end while it writes its start).
TEST(JitFusedGatherTest, ResultIsNeverWrittenOverTheTable) {
  const int64_t n = 4096;
  Jitted reverse([n](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{take(a[0], static_cast<int32_t>(n - 1) - a[1]) *
                               2.0f};
  }, {.name = "reverse", .donate_argnums = {0}});
  auto exe = ValueOrThrow(reverse.Lower(
      {Spec(Shape{n}, true), Spec(Shape{n}, false, DType::kInt32)}, Dev()));
  const compiler::StepPlan plan = compiler::PlanSteps(exe->program());
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_FALSE(compiler::InPlaceCapable(exe->program(), plan.steps[0]));
  std::vector<float> table(n);
  std::vector<int32_t> idx(n);
  for (int64_t k = 0; k < n; ++k) {
    table[k] = static_cast<float>(k);
    idx[k] = static_cast<int32_t>(k);
  }
  const std::vector<float> out = ToHost(reverse({Floats(table), Ints(idx)})[0]);
  for (int64_t k = 0; k < n; ++k) {
    EXPECT_EQ(out[k], 2.0f * static_cast<float>(n - 1 - k)) << k;
  }
}

}  // namespace
}  // namespace baton
