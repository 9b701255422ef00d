// Fused elementwise steps: scratch tiles are reused along a chain
// (compiler/fused_tiles.h), so a long chain needs two tiles, a chain on
// scalars needs a few bytes, and values stay exact.
#include <gtest/gtest.h>

#include "baton/compiler/fused_tiles.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;

// x + 0 + 1 + ... + (n-1), one fused chain.
Jitted Chain(int n) {
  return Jitted([n](TraceScope&, const std::vector<Tracer>& a) {
    Tracer x = a[0];
    for (int i = 0; i < n; ++i) x = x + static_cast<float>(i);
    return std::vector<Tracer>{x};
  }, {.name = "chain"});
}

const compiler::Step& OnlyFusedStep(const compiler::StepPlan& plan) {
  for (const compiler::Step& s : plan.steps) {
    if (s.kind == compiler::Step::Kind::kFusedElementwise) return s;
  }
  ADD_FAILURE() << "no fused step";
  return plan.steps.front();
}

TEST(JitFusionTest, LongChainReusesTwoScratchSlots) {
  auto exe = ValueOrThrow(Chain(2000).Lower({Spec(Shape{1 << 16})}, Dev()));
  const compiler::StepPlan plan = compiler::PlanSteps(exe->program());
  const compiler::Step& step = OnlyFusedStep(plan);
  EXPECT_EQ(step.members.size(), 2000u);
  const compiler::FusedTiles t = compiler::PlanFusedTiles(exe->program(), step);
  EXPECT_EQ(t.num_slots, 2);
  EXPECT_EQ(t.tile_elements, compiler::kFusionTileElements);
  EXPECT_EQ(t.scratch_bytes(), 2 * compiler::kFusionTileElements * 4);
  // The analysis reports that scratch (per pool thread), nothing per member.
  EXPECT_LE(exe->memory_analysis().temp_size_in_bytes,
            t.scratch_bytes() * 64);
}

TEST(JitFusionTest, ScalarChainTilesHoldOneElement) {
  auto exe = ValueOrThrow(Chain(3000).Lower({Spec(Shape{})}, Dev()));
  const compiler::StepPlan plan = compiler::PlanSteps(exe->program());
  const compiler::FusedTiles t =
      compiler::PlanFusedTiles(exe->program(), OnlyFusedStep(plan));
  EXPECT_EQ(t.tile_elements, 1);
  EXPECT_EQ(t.scratch_bytes(), 2 * 4);
}

TEST(JitFusionTest, SharedInnerValuesKeepTheirSlotUntilLastRead) {
  // a = x * 2 is read by b and by the result: its slot must not be reused
  // for b.
  Jitted f([](TraceScope&, const std::vector<Tracer>& in) {
    Tracer a = in[0] * 2.0f;
    Tracer b = a + 1.0f;
    Tracer c = b * 3.0f;
    return std::vector<Tracer>{c - a};
  }, {.name = "diamond"});
  Array x = Floats({1, 2, 3, 4, 5});
  // c - a = (2x + 1) * 3 - 2x = 4x + 3
  EXPECT_EQ(ToHost(f({x})[0]), (std::vector<float>{7, 11, 15, 19, 23}));
  auto exe = ValueOrThrow(f.Lower({Spec(Shape{5})}, Dev()));
  const compiler::StepPlan plan = compiler::PlanSteps(exe->program());
  const compiler::FusedTiles t =
      compiler::PlanFusedTiles(exe->program(), OnlyFusedStep(plan));
  EXPECT_EQ(t.num_slots, 2);  // a lives across b and c
}

TEST(JitFusionTest, LongChainValuesAreExact) {
  const int n = 2000;
  Jitted f = Chain(n);
  std::vector<float> host(10000);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 7);
  std::vector<float> out = ToHost(f({Floats(host)})[0]);
  for (size_t i = 0; i < host.size(); ++i) {
    float e = host[i];
    for (int k = 0; k < n; ++k) e = e + static_cast<float>(k);
    ASSERT_EQ(out[i], e) << i;
  }
  // The scalar case, run twice (cached executable).
  for (int rep = 0; rep < 2; ++rep) {
    std::vector<float> s = ToHost(f({Floats({1.0f})})[0]);
    float e = 1.0f;
    for (int k = 0; k < n; ++k) e = e + static_cast<float>(k);
    EXPECT_EQ(s[0], e);
  }
}

}  // namespace
}  // namespace baton
