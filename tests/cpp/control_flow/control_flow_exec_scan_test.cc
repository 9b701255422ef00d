// Control flow on the CPU executor (backend/cpu/region_step.h), compiled
// through the jit layer (Optimize, then CompileExecutable, which builds a
// CpuExecutable) against the reference interpreter on many inputs, carries
// kept in place, and memory (helpers: control_flow_exec_util.h).
// This file: scans, regions returning constants, concurrent calls.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "control_flow/control_flow_exec_util.h"

namespace baton {
namespace {

using namespace baton::cf_exec;

// ---- scan ----

// body(c, x, w) = (c * w + x, c - x, tanh(x) * w)
Program ScanProgram(int64_t length, bool reverse) {
  const ValueType s = T({4});
  auto body = Region({s, s, s}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] * a[2] + a[1], a[0] - a[1],
                               tanh(a[1]) * a[2]};
  });
  return Build(
      {s, T({length, 4}), s}, [&](c::TraceContext& ctx, const auto& a) {
        return EmitGroup(ctx, c::cf_test::Scan(1, 1, length, body, reverse),
                         {a[0], a[1], a[2]});
      });
}

TEST(ControlFlowExecTest, ScanWithCarriesXsYsAndInvariants) {
  uint32_t seed = 0;
  for (int64_t length : {0, 1, 2, 7, 33}) {
    for (bool reverse : {false, true}) {
      const Program p = ScanProgram(length, reverse);
      for (const std::vector<int>& donate :
           {std::vector<int>{}, std::vector<int>{0},
            std::vector<int>{0, 1, 2}}) {
        ExpectMatchesReference(
            p,
            {Data(Shape{4}, ++seed), Data(Shape{length, 4}, ++seed),
             Data(Shape{4}, ++seed)},
            {.donate = donate},
            "length " + std::to_string(length) + (reverse ? " reverse" : ""));
      }
    }
  }
  // The order matters: forward and reverse differ (for a length > 1).
  const std::vector<Literal> args{Data(Shape{4}, 1), Data(Shape{3, 4}, 2),
                                  Data(Shape{4}, 3)};
  EXPECT_NE(c::Interpret(ScanProgram(3, false), args).value()[1],
            c::Interpret(ScanProgram(3, true), args).value()[1]);
}

TEST(ControlFlowExecTest, ScanWithoutCarriesIsAMap) {
  const ValueType s = T({3, 2});
  auto body = Region({s}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{exp(a[0]) * 2, sum(a[0], {1}) + 1};
  });
  uint32_t seed = 0;
  for (int64_t length : {0, 1, 9}) {
    for (bool reverse : {false, true}) {
      const Program p =
          Build({T({length, 3, 2})}, [&](c::TraceContext& ctx, const auto& a) {
            return EmitGroup(ctx, c::cf_test::Scan(0, 1, length, body, reverse),
                             {a[0]});
          });
      for (const std::vector<int>& donate :
           {std::vector<int>{}, std::vector<int>{0}}) {
        ExpectMatchesReference(p, {Data(Shape{length, 3, 2}, ++seed)},
                               {.donate = donate},
                               "length " + std::to_string(length));
      }
    }
  }
}

// ys that are a body parameter returned as it is (the x slice, the old
// carry, an invariant) or the same value as the new carry.
TEST(ControlFlowExecTest, ScanYsThatAreParametersOrTheCarry) {
  const ValueType s = T({5});
  auto body = Region({s, s, s}, [](c::TraceContext&, const auto& a) {
    Tracer next = a[0] + a[1];
    return std::vector<Tracer>{next, a[1], next, a[0], a[2], next};
  });
  uint32_t seed = 0;
  for (int64_t length : {0, 1, 4}) {
    for (bool reverse : {false, true}) {
      const Program p = Build(
          {s, T({length, 5}), s}, [&](c::TraceContext& ctx, const auto& a) {
            return EmitGroup(ctx, c::cf_test::Scan(1, 1, length, body, reverse),
                             {a[0], a[1], a[2]});
          });
      for (const std::vector<int>& donate :
           {std::vector<int>{}, std::vector<int>{0}, std::vector<int>{0, 1}}) {
        const std::vector<Literal> args{Data(Shape{5}, ++seed),
                                        Data(Shape{length, 5}, ++seed),
                                        Data(Shape{5}, ++seed)};
        ExpectMatchesReference(
            p, args, {.donate = donate},
            "length " + std::to_string(length) + (reverse ? " reverse" : ""));
        // The stacked x slices are xs itself.
        EXPECT_EQ(c::Interpret(p, args).value()[1], args[1]);
      }
    }
  }
}

TEST(ControlFlowExecTest, ScanCarriesThatSwapPlaces) {
  const ValueType s = T({6});
  auto body = Region({s, s}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[1], a[0], a[0] * 2};
  });
  for (int64_t length = 0; length <= 5; ++length) {
    const Program p = Build({s, s}, [&](c::TraceContext& ctx, const auto& a) {
      return EmitGroup(ctx, c::cf_test::Scan(2, 0, length, body), {a[0], a[1]});
    });
    for (const std::vector<int>& donate :
         {std::vector<int>{}, std::vector<int>{0, 1}, std::vector<int>{1}}) {
      ExpectMatchesReference(
          p, {Data(Shape{6}, 50 + length), Data(Shape{6}, 60 + length)},
          {.donate = donate}, "length " + std::to_string(length));
    }
  }
}

TEST(ControlFlowExecTest, ScanCarryPairThatCannotStayInPlace) {
  const ValueType s = T({64});
  auto body = Region({s, s, s}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] + a[1], a[0] * a[1] + a[2]};
  });
  const Program p = Build({s, s, T({4, 64})}, [&](c::TraceContext& ctx,
                                                  const auto& a) {
    return EmitGroup(ctx, c::cf_test::Scan(2, 1, 4, body), {a[0], a[1], a[2]});
  });
  auto misses = ExpectMatchesReference(
      p, {Data(Shape{64}, 1), Data(Shape{64}, 2), Data(Shape{4, 64}, 3)},
      {.donate = {0, 1}});
  EXPECT_THAT(MissesText(misses), HasSubstr("loop carry"))
      << MissesText(misses);
  EXPECT_THAT(MissesText(misses), HasSubstr("of scan")) << MissesText(misses);
}

TEST(ControlFlowExecTest, DonatedScanCarryStaysInPlace) {
  const ValueType s = T({1024});
  auto body = Region({s, s}, [](c::TraceContext&, const auto& a) {
    Tracer next = a[0] + a[1];
    return std::vector<Tracer>{next, sum(next)};
  });
  const Program p =
      Build({s, T({16, 1024})}, [&](c::TraceContext& ctx, const auto& a) {
        return EmitGroup(ctx, c::cf_test::Scan(1, 1, 16, body), {a[0], a[1]});
      });
  auto misses = ExpectMatchesReference(
      p, {Data(Shape{1024}, 1), Data(Shape{16, 1024}, 2)},
      {.donate = {0}, .rtol = 1e-6});
  EXPECT_TRUE(misses.empty()) << MissesText(misses);
  Jitted f([&p](TraceScope& sc,
                const std::vector<Tracer>& a) { return Replay(p, sc, a); },
           {.name = "cumsum", .donate_argnums = {0}});
  auto exe = ValueOrThrow(
      f.Lower({Spec(Shape{1024}, true), Spec(Shape{16, 1024})}, Dev()));
  EXPECT_EQ(exe->memory_analysis().alias_size_in_bytes, 4096);
  EXPECT_LT(exe->memory_analysis().temp_size_in_bytes, 16 * kKiB)
      << exe->memory_analysis().ToString();
}

// Slices large enough to be split into tiles and across threads, at
// offsets that are not a multiple of any vector width (5001 floats).
TEST(ControlFlowExecTest, ScanOverLargeUnalignedSlices) {
  for (int64_t width : {5001, 20000}) {
    const ValueType s = T({width});
    auto body = Region({s, s}, [](c::TraceContext&, const auto& a) {
      Tracer next = tanh(a[0] * 0.5f + a[1]);
      return std::vector<Tracer>{next, next * a[1] - 1, a[1]};
    });
    for (bool reverse : {false, true}) {
      const Program p =
          Build({s, T({5, width})}, [&](c::TraceContext& ctx, const auto& a) {
            return EmitGroup(ctx, c::cf_test::Scan(1, 1, 5, body, reverse),
                             {a[0], a[1]});
          });
      for (const std::vector<int>& donate :
           {std::vector<int>{}, std::vector<int>{0, 1}}) {
        ExpectMatchesReference(
            p, {Data(Shape{width}, 1), Data(Shape{5, width}, 2)},
            {.donate = donate}, "width " + std::to_string(width));
      }
    }
  }
}

// Regions returning constants (a constant output is a copy into its
// buffer): a while body's new carry, a case branch's result.
TEST(ControlFlowExecTest, RegionsThatReturnConstants) {
  const ValueType x = T({6});
  auto cond = Region({I32(), x}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{lt(a[0], 3)};
  });
  auto body = Region({I32(), x}, [](c::TraceContext& ctx, const auto& a) {
    return std::vector<Tracer>{
        a[0] + 1,
        c::constant(ctx, Literal::FromVector<float>({1, 2, 3, 4, 5, 6}))};
  });
  auto b0 = Region({x}, [](c::TraceContext& ctx, const auto& a) {
    return std::vector<Tracer>{c::full(ctx, Shape{6}, 2.5f), a[0]};
  });
  auto b1 = Region({x}, [](c::TraceContext& ctx, const auto& a) {
    Tracer k = c::constant(ctx, Literal::FromVector<float>({6, 5, 4, 3, 2, 1}));
    return std::vector<Tracer>{k, k};
  });
  const Program p = Build({I32(), x}, [&](c::TraceContext& ctx, const auto& a) {
    auto w = EmitGroup(ctx, c::cf_test::While(2, cond, body), {a[0], a[1]});
    auto r = EmitGroup(ctx, c::cf_test::Case({b0, b1}), {a[0], w[1]});
    return std::vector<Tracer>{w[1], r[0], r[1]};
  });
  for (int32_t start : {-1, 0, 1, 2, 3, 5}) {
    for (const std::vector<int>& donate :
         {std::vector<int>{}, std::vector<int>{1}}) {
      ExpectMatchesReference(
          p, {Literal::Scalar<int32_t>(start), Data(Shape{6}, 3)},
          {.donate = donate}, "start " + std::to_string(start));
    }
  }
}

// One executable called from several threads at once: each call keeps its
// loop state (carries, spares) to itself.
TEST(ControlFlowExecTest, ConcurrentCallsOfOneLoop) {
  const ValueType x = T({257});
  auto cond = Region({I32(), x, I32(), x}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{lt(a[0], a[2])};
  });
  auto body = Region({I32(), x, I32(), x}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] + 1, a[1] * 0.5f + a[3]};
  });
  const Program p =
      Build({I32(), x, I32(), x}, [&](c::TraceContext& ctx, const auto& a) {
        return EmitGroup(ctx, c::cf_test::While(2, cond, body),
                         {a[0], a[1], a[2], a[3]});
      });
  Jitted f([&p](TraceScope& s,
                const std::vector<Tracer>& a) { return Replay(p, s, a); },
           {.name = "concurrent", .donate_argnums = {}});
  constexpr int kThreads = 4, kCalls = 40;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kCalls; ++k) {
        const std::vector<Literal> args{
            Literal::Scalar<int32_t>(0),
            Data(Shape{257}, static_cast<uint32_t>(t * 1000 + k)),
            Literal::Scalar<int32_t>(k % 7), Data(Shape{257}, 5)};
        const Literal want = c::Interpret(p, args).value()[1];
        std::vector<Arg> call;
        for (const Literal& l : args) call.emplace_back(ToArray(l));
        Result<std::vector<Array>> got = f.Call(std::move(call));
        if (!got.ok()) {
          errors[t] = got.status().to_string();
          return;
        }
        const std::string m = Mismatch(want, ToLiteral(got.value()[1]), 0);
        if (!m.empty()) {
          errors[t] = "call " + std::to_string(k) + ": " + m;
          return;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
}

// Checkpoint calls (inlined before planning, control_flow's regions too)
// around a scan and inside a scan body.
std::vector<Tracer> EmitCheckpoint(c::TraceContext& ctx,
                                   std::shared_ptr<const Program> body,
                                   const std::vector<Tracer>& operands) {
  c::CallAttrs attrs;
  attrs.kind = c::CallKind::kCheckpoint;
  attrs.body = body;
  std::vector<Tracer> outs;
  for (size_t i = 0; i < body->outputs().size(); ++i) {
    attrs.output_index = static_cast<int>(i);
    outs.push_back(ctx.Emit(attrs, operands));
  }
  return outs;
}

TEST(ControlFlowExecTest, CheckpointCallsAroundAndInsideAScan) {
  const ValueType s = T({8});
  const ValueType xs = T({5, 8});
  // A scan body that calls a checkpointed function of (c, x).
  auto layer = Region({s, s}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{tanh(a[0] + a[1]), a[0] * a[1]};
  });
  auto body = Region({s, s}, [&](c::TraceContext& ctx, const auto& a) {
    auto r = EmitCheckpoint(ctx, layer, {a[0], a[1]});
    return std::vector<Tracer>{r[0], r[1] + 1};
  });
  // A checkpointed function whose body is the scan.
  auto outer = Region({s, xs}, [&](c::TraceContext& ctx, const auto& a) {
    return EmitGroup(ctx, c::cf_test::Scan(1, 1, 5, body), {a[0], a[1]});
  });
  const Program p = Build({s, xs}, [&](c::TraceContext& ctx, const auto& a) {
    auto r = EmitCheckpoint(ctx, outer, {a[0], a[1]});
    return std::vector<Tracer>{r[0], r[1], r[0] * 2};
  });
  for (const std::vector<int>& donate :
       {std::vector<int>{}, std::vector<int>{0, 1}}) {
    ExpectMatchesReference(p, {Data(Shape{8}, 1), Data(Shape{5, 8}, 2)},
                           {.donate = donate});
  }
}

}  // namespace
}  // namespace baton
