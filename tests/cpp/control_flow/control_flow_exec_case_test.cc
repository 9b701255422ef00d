// Control flow on the CPU executor (backend/cpu/region_step.h), compiled
// through the jit layer (Optimize, then CompileExecutable, which builds a
// CpuExecutable) against the reference interpreter on many inputs, carries
// kept in place, and memory (helpers: control_flow_exec_util.h).
// This file: case, and regions nested in one another.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "control_flow/control_flow_exec_util.h"

namespace baton {
namespace {

using namespace baton::cf_exec;

// ---- case ----

TEST(ControlFlowExecTest, CaseClampsTheIndexAndReturnsOperands) {
  const ValueType s = T({5});
  auto b0 = Region({s, s}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] * 2, a[1] - 1};
  });
  // Returns its operands as they are (one of them twice).
  auto b1 = Region({s, s}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[1], a[1]};
  });
  // The same computed value twice.
  auto b2 = Region({s, s}, [](c::TraceContext&, const auto& a) {
    Tracer e = exp(a[0]) + a[1];
    return std::vector<Tracer>{e, e};
  });
  const Program p = Build({I32(), s, s}, [&](c::TraceContext& ctx,
                                             const auto& a) {
    auto r = EmitGroup(ctx, c::cf_test::Case({b0, b1, b2}), {a[0], a[1], a[2]});
    return std::vector<Tracer>{r[0], r[1], r[0] + r[1]};
  });
  uint32_t seed = 0;
  for (int32_t index : {-100, -1, 0, 1, 2, 3, 7, 1 << 30}) {
    for (const std::vector<int>& donate :
         {std::vector<int>{}, std::vector<int>{1}, std::vector<int>{1, 2}}) {
      ExpectMatchesReference(p,
                             {Literal::Scalar<int32_t>(index),
                              Data(Shape{5}, ++seed), Data(Shape{5}, ++seed)},
                             {.donate = donate},
                             "index " + std::to_string(index));
    }
  }
  // Clamping: below 0 is branch 0, above 2 is branch 2.
  const Literal x = Data(Shape{5}, 1), y = Data(Shape{5}, 2);
  auto at = [&](int32_t i) {
    return c::Interpret(p, {Literal::Scalar<int32_t>(i), x, y}).value();
  };
  EXPECT_EQ(at(-5), at(0));
  EXPECT_EQ(at(99), at(2));
  EXPECT_EQ(at(1)[0], y);
}

TEST(ControlFlowExecTest, CaseOverALargeOperandWritesIntoItsResults) {
  const ValueType s = T({40000});
  auto b0 = Region({s}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{tanh(a[0]) * 3};
  });
  auto b1 = Region({s}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0]};
  });
  const Program p = Build({I32(), s}, [&](c::TraceContext& ctx, const auto& a) {
    return EmitGroup(ctx, c::cf_test::Case({b0, b1}), {a[0], a[1]});
  });
  for (int32_t index : {0, 1}) {
    for (const std::vector<int>& donate :
         {std::vector<int>{}, std::vector<int>{1}}) {
      ExpectMatchesReference(
          p, {Literal::Scalar<int32_t>(index), Data(Shape{40000}, 9)},
          {.donate = donate}, "index " + std::to_string(index));
    }
  }
}

// ---- nested ----

TEST(ControlFlowExecTest, ScanInsideAWhileBody) {
  const ValueType h = T({3});
  const ValueType xs = T({4, 3});
  // inner: scan over xs with carry h: (h * 0.5 + x, h + x)
  auto inner = Region({h, h}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] * 0.5f + a[1], a[0] + a[1]};
  });
  auto cond =
      Region({I32(), h, xs, I32()}, [](c::TraceContext&, const auto& a) {
        return std::vector<Tracer>{lt(a[0], a[3])};
      });
  auto body =
      Region({I32(), h, xs, I32()}, [&](c::TraceContext& ctx, const auto& a) {
        auto r = EmitGroup(ctx, c::cf_test::Scan(1, 1, 4, inner), {a[1], a[2]});
        return std::vector<Tracer>{a[0] + 1, r[0] + sum(r[1], {0}) * 0.25f};
      });
  const Program p =
      Build({I32(), h, xs, I32()}, [&](c::TraceContext& ctx, const auto& a) {
        return EmitGroup(ctx, c::cf_test::While(2, cond, body),
                         {a[0], a[1], a[2], a[3]});
      });
  uint32_t seed = 0;
  for (int32_t trips : {0, 1, 3, 8}) {
    for (const std::vector<int>& donate :
         {std::vector<int>{}, std::vector<int>{1}, std::vector<int>{0, 1, 2}}) {
      ExpectMatchesReference(
          p,
          {Literal::Scalar<int32_t>(0), Data(Shape{3}, ++seed),
           Data(Shape{4, 3}, ++seed), Literal::Scalar<int32_t>(trips)},
          {.donate = donate, .rtol = 1e-6}, "trips " + std::to_string(trips));
    }
  }
}

TEST(ControlFlowExecTest, CaseInsideAScanBody) {
  const ValueType s = T({3});
  auto b0 = Region({s, s}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] + a[1]};
  });
  auto b1 = Region({s, s}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] * a[1]};
  });
  auto b2 = Region({s, s}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[1]};  // an operand unchanged
  });
  auto body = Region({s, s, I32()}, [&](c::TraceContext& ctx, const auto& a) {
    auto r = EmitGroup(ctx, c::cf_test::Case({b0, b1, b2}), {a[2], a[0], a[1]});
    return std::vector<Tracer>{r[0], r[0] * 2, a[2]};
  });
  uint32_t seed = 0;
  for (int64_t length : {0, 1, 6}) {
    for (bool reverse : {false, true}) {
      const Program p = Build(
          {s, T({length, 3}), T({length}, DType::kInt32)},
          [&](c::TraceContext& ctx, const auto& a) {
            return EmitGroup(ctx, c::cf_test::Scan(1, 2, length, body, reverse),
                             {a[0], a[1], a[2]});
          });
      for (const std::vector<int>& donate :
           {std::vector<int>{}, std::vector<int>{0}}) {
        ExpectMatchesReference(
            p,
            {Data(Shape{3}, ++seed), Data(Shape{length, 3}, ++seed),
             Data(Shape{length}, ++seed, DType::kInt32)},
            {.donate = donate}, "length " + std::to_string(length));
      }
    }
  }
}

// An RNN step as bt.lax.scan writes it: h = tanh(W @ h + x_t).
TEST(ControlFlowExecTest, RnnScanWithADotInTheBody) {
  const int64_t n = 16, steps = 10;
  auto body =
      Region({T({n}), T({n}), T({n, n})}, [](c::TraceContext&, const auto& a) {
        Tracer h = tanh(matmul(a[2], a[0]) + a[1]);
        return std::vector<Tracer>{h, h};
      });
  const Program p =
      Build({T({n}), T({steps, n}), T({n, n})},
            [&](c::TraceContext& ctx, const auto& a) {
              return EmitGroup(ctx, c::cf_test::Scan(1, 1, steps, body),
                               {a[0], a[1], a[2]});
            });
  for (const std::vector<int>& donate :
       {std::vector<int>{}, std::vector<int>{0}}) {
    auto misses = ExpectMatchesReference(
        p, {Data(Shape{n}, 1), Data(Shape{steps, n}, 2), Data(Shape{n, n}, 3)},
        {.donate = donate, .rtol = 1e-5});
    (void)misses;
  }
}

}  // namespace
}  // namespace baton
