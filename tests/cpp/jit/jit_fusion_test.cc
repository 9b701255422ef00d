// Fused elementwise steps: scratch tiles are reused along a chain
// (compiler/fused_tiles.h), so a long chain needs two tiles, a chain on
// scalars needs a few bytes, and values stay exact.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "baton/backend/cpu/float_chain.h"
#include "baton/backend/cpu/fusion_tiling.h"
#include "baton/compiler/fused_tiles.h"
#include "baton/core/scalar_math.h"
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
  const compiler::FusedTiles t =
      compiler::PlanFusedTiles(exe->program(), step, cpu::kFusionTiling);
  EXPECT_EQ(t.num_slots, 2);
  EXPECT_EQ(t.tile_elements, cpu::kFusionTiling.max_tile_elements);
  EXPECT_EQ(t.scratch_bytes(), 2 * cpu::kFusionTiling.max_tile_elements * 4);
  // The analysis reports that scratch (per pool thread), nothing per member.
  EXPECT_LE(exe->memory_analysis().temp_size_in_bytes,
            t.scratch_bytes() * 64);
}

TEST(JitFusionTest, ScalarChainTilesHoldOneElement) {
  auto exe = ValueOrThrow(Chain(3000).Lower({Spec(Shape{})}, Dev()));
  const compiler::StepPlan plan = compiler::PlanSteps(exe->program());
  const compiler::FusedTiles t = compiler::PlanFusedTiles(
      exe->program(), OnlyFusedStep(plan), cpu::kFusionTiling);
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
  const compiler::Step& step = OnlyFusedStep(plan);
  // a is read by two members of one group: it is an inner value too, not a
  // materialized array.
  EXPECT_EQ(step.members.size(), 4u);
  const compiler::FusedTiles t =
      compiler::PlanFusedTiles(exe->program(), step, cpu::kFusionTiling);
  // a's slot lives across b and c; c is written while b's slot is read.
  EXPECT_EQ(t.num_slots, 3);
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

// ((x * 2 + y) * x - 0.5) / 3 with y - x on the side: arrays and scalars on
// either side of each op, all four ops.
std::vector<Tracer> ArithChain(TraceScope&, const std::vector<Tracer>& a) {
  Tracer x = a[0], y = a[1];
  Tracer t = (x * 2.0f + y) * x;
  Tracer u = 0.5f - t;  // scalar on the left
  return std::vector<Tracer>{(u / 3.0f) + (y - x)};
}

float ArithChainScalar(float x, float y) {
  using scalar::Binary;
  const float t = Binary<BinaryOp::kMul, float>(
      Binary<BinaryOp::kAdd, float>(Binary<BinaryOp::kMul, float>(x, 2.0f), y),
      x);
  const float u = Binary<BinaryOp::kSub, float>(0.5f, t);
  return Binary<BinaryOp::kAdd, float>(Binary<BinaryOp::kDiv, float>(u, 3.0f),
                                       Binary<BinaryOp::kSub, float>(y, x));
}

TEST(JitFusionTest, FloatArithmeticChainsRunBlockwiseAndBitwiseExact) {
  Jitted f(ArithChain, {.name = "arith"});
  auto exe = ValueOrThrow(f.Lower({Spec(Shape{300}), Spec(Shape{300})}, Dev()));
  const compiler::StepPlan plan = compiler::PlanSteps(exe->program());
  const compiler::Step& step = OnlyFusedStep(plan);
  const compiler::FusedTiles tiles =
      compiler::PlanFusedTiles(exe->program(), step, cpu::kFusionTiling);
  EXPECT_NE(cpu::FloatChain::TryPlan(exe->program(), plan, step,
                                     tiles.operand_member),
            nullptr);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // Lengths around the 256-element block and the 16-element vector loop,
  // and one that the pool splits.
  for (int64_t n : {1, 15, 255, 256, 257, 1000, 70001}) {
    std::vector<float> x(n), y(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>((i * 37) % 101) * 0.25f - 12.0f;
      y[i] = i % 97 == 0 ? nan : (i % 89 == 0 ? -inf : static_cast<float>(i % 13));
    }
    std::vector<float> out = ToHost(f({Floats(x), Floats(y)})[0]);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(std::bit_cast<uint32_t>(out[i]),
                std::bit_cast<uint32_t>(ArithChainScalar(x[i], y[i])))
          << "n=" << n << " i=" << i;
    }
  }
}

TEST(JitFusionTest, FloatChainInPlaceOverADonatedInput) {
  Jitted f(ArithChain, {.name = "arith_donated", .donate_argnums = {0}});
  const int64_t n = 100000;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000) * 0.5f;
    y[i] = static_cast<float>(i % 7);
  }
  Array ax = Floats(x);
  EXPECT_TRUE(Dev()->Synchronize().ok());
  const void* storage = ValueOrThrow(ax.impl()->AcquireRead()).data();
  Array out = f({ax, Floats(y)})[0];
  EXPECT_EQ(ValueOrThrow(out.impl()->AcquireRead()).data(), storage);
  std::vector<float> got = ToHost(out);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i], ArithChainScalar(x[i], y[i])) << i;
  }
}

TEST(JitFusionTest, ChainsWithOtherOpsUseTheTiledRunner) {
  Jitted f([](TraceScope&, const std::vector<Tracer>& a) {
    return std::vector<Tracer>{exp(a[0] * 2.0f) + 1.0f};
  }, {.name = "not_arith"});
  auto exe = ValueOrThrow(f.Lower({Spec(Shape{300})}, Dev()));
  const compiler::StepPlan plan = compiler::PlanSteps(exe->program());
  const compiler::Step& step = OnlyFusedStep(plan);
  EXPECT_EQ(
      cpu::FloatChain::TryPlan(
          exe->program(), plan, step,
          compiler::PlanFusedTiles(exe->program(), step, cpu::kFusionTiling)
              .operand_member),
      nullptr);
}

// A bias broadcast over a batch (broadcast_in_dim of a row, dims=[1]) and
// a per-row scale (dims=[0]) inside a fused step that is not a float chain
// (tanh): the tiles and the parallel chunks start mid-row (37 columns), and
// every element is the reference's, for 4- and 1-byte elements.
TEST(JitFusionTest, BroadcastRowsAndColumnsInTiledStepsStartingMidRow) {
  constexpr int64_t kRows = 4099, kCols = 37;
  for (DType t : {DType::kFloat32, DType::kInt8}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    Jitted f([t](TraceScope&, const std::vector<Tracer>& a) {
      const Shape shape{kRows, kCols};
      Tracer row = broadcast_in_dim(a[1], shape, {1});
      Tracer col = broadcast_in_dim(a[2], shape, {0});
      Tracer y = t == DType::kFloat32 ? tanh(a[0]) * row + col
                                      : (a[0] ^ row) + col;
      return std::vector<Tracer>{y};
    }, {.name = "bias"});
    std::vector<double> x(kRows * kCols), b(kCols), c(kRows);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 11);
    for (int64_t j = 0; j < kCols; ++j) b[j] = static_cast<double>(j + 1);
    for (int64_t i = 0; i < kRows; ++i) c[i] = static_cast<double>(i % 5);
    const compiler::Literal xl =
        compiler::Literal::FromDoubles(t, Shape{kRows, kCols}, x);
    const compiler::Literal bl = compiler::Literal::FromDoubles(t, Shape{kCols}, b);
    const compiler::Literal cl = compiler::Literal::FromDoubles(t, Shape{kRows}, c);
    const compiler::Literal out = ToLiteral(
        f({ToArray(xl), ToArray(bl), ToArray(cl)})[0]);
    for (int64_t i = 0; i < kRows; ++i) {
      for (int64_t j = 0; j < kCols; ++j) {
        const int64_t k = i * kCols + j;
        if (t == DType::kFloat32) {
          const float e = std::tanh(static_cast<float>(x[k])) *
                              static_cast<float>(b[j]) +
                          static_cast<float>(c[i]);
          ASSERT_NEAR(out.data<float>()[k], e, 1e-5f) << i << "," << j;
        } else {
          const int8_t e = static_cast<int8_t>(
              (static_cast<int8_t>(x[k]) ^ static_cast<int8_t>(b[j])) +
              static_cast<int8_t>(c[i]));
          ASSERT_EQ(out.data<int8_t>()[k], e) << i << "," << j;
        }
      }
    }
  }
}

// Threefry-style hashing of counters: each round reads both words twice
// (x0 + x1, and x1 rotated then xored with the new x0), so every value has
// two readers. One fused step holds the whole graph in tile slots.
Jitted CounterHash(int rounds) {
  return Jitted([rounds](TraceScope& s, const std::vector<Tracer>& a) {
    const Tracer& key = a[0];  // uint32 scalar
    const Tracer& n = a[1];    // only its shape is used
    Tracer count = iota(s.context(), DType::kUInt32, n.shape());
    Tracer x0 = count + key;
    Tracer x1 = count ^ 0x1BD11BDA;
    for (int r = 0; r < rounds; ++r) {
      const int rot = 13 + r % 7;
      x0 = x0 + x1;
      x1 = shift_left(x1, rot) | shift_right_logical(x1, 32 - rot);
      x1 = x1 ^ x0;
    }
    return std::vector<Tracer>{x0 ^ x1};
  }, {.name = "counter_hash"});
}

uint32_t CounterHashScalar(uint32_t key, uint32_t count, int rounds) {
  uint32_t x0 = count + key, x1 = count ^ 0x1BD11BDAu;
  for (int r = 0; r < rounds; ++r) {
    const int rot = 13 + r % 7;
    x0 += x1;
    x1 = (x1 << rot) | (x1 >> (32 - rot));
    x1 ^= x0;
  }
  return x0 ^ x1;
}

TEST(JitFusionTest, ValuesWithSeveralReadersInOneChainFuseIntoOneStep) {
  const int rounds = 20;
  const int64_t n = int64_t{1} << 18;  // 1 MiB of uint32
  Jitted f = CounterHash(rounds);
  const std::vector<ArgSpec> specs = {Spec(Shape{}, false, DType::kUInt32),
                                      Spec(Shape{n}, false, DType::kUInt32)};
  auto exe = ValueOrThrow(f.Lower(specs, Dev()));
  const compiler::StepPlan plan = compiler::PlanSteps(exe->program());
  int fused = 0;
  size_t members = 0;
  for (const compiler::Step& st : plan.steps) {
    if (st.kind != compiler::Step::Kind::kFusedElementwise) continue;
    ++fused;
    members = st.members.size();
  }
  // Every full-size op after the iota: 2 + 5 per round + the final xor.
  EXPECT_EQ(fused, 1);
  EXPECT_EQ(members, static_cast<size_t>(2 + 5 * rounds + 1));
  // Split at every shared value, the rounds left several full-size
  // temporaries alive at once (megabytes); fused, nothing but the output.
  const compiler::FusedTiles t = compiler::PlanFusedTiles(
      exe->program(), OnlyFusedStep(plan), cpu::kFusionTiling);
  EXPECT_LE(t.num_slots, 4);
  EXPECT_LT(exe->memory_analysis().temp_size_in_bytes, 64 * 1024);

  const uint32_t key = 0xC0FFEEu;
  Array k = ValueOrThrow(DevicePut(HostBuffer{&key, Shape{}, DType::kUInt32},
                                   Dev(), MemoryKind::kDevice));
  std::vector<uint32_t> zeros(static_cast<size_t>(n), 0);
  Array shape_only = ValueOrThrow(DevicePut(
      HostBuffer{zeros.data(), Shape{n}, DType::kUInt32}, Dev(),
      MemoryKind::kDevice));
  Array out = f({k, shape_only})[0];
  std::vector<uint32_t> got(static_cast<size_t>(n));
  ThrowIfError(CopyToHost(out, got.data(), got.size() * sizeof(uint32_t)));
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i], CounterHashScalar(key, static_cast<uint32_t>(i), rounds))
        << i;
  }
}

TEST(JitFusionTest, ValueAlsoReadOutsideTheGroupStaysMaterialized) {
  // e = exp(x) feeds the fused e * 3 + e and a sum: the sum cannot read a
  // tile slot, so e keeps storage of its own and the group reads it.
  Jitted f([](TraceScope&, const std::vector<Tracer>& a) {
    Tracer e = exp(a[0]);
    return std::vector<Tracer>{e * 3.0f + e, sum(e)};
  }, {.name = "shared_outside"});
  auto exe = ValueOrThrow(f.Lower({Spec(Shape{64})}, Dev()));
  const compiler::Program& p = exe->program();
  const compiler::StepPlan plan = compiler::PlanSteps(p);
  const compiler::Step& step = OnlyFusedStep(plan);
  EXPECT_EQ(step.members.size(), 2u);  // e * 3, then + e
  const compiler::ValueId e = step.inputs[0];
  EXPECT_TRUE(plan.materialized[e]);
  EXPECT_GE(plan.step_of[e], 0);
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[i] = 0.01f * static_cast<float>(i);
  std::vector<Array> out = f({Floats(x, Shape{64})});
  const std::vector<float> got = ToHost(out[0]);
  for (int i = 0; i < 64; ++i) {
    const float ei = std::exp(x[i]);
    EXPECT_FLOAT_EQ(got[i], ei * 3.0f + ei) << i;
  }
}

}  // namespace
}  // namespace baton
