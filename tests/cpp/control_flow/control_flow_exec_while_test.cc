// Control flow on the CPU executor (backend/cpu/region_step.h), compiled
// through the jit layer (Optimize, then CompileExecutable, which builds a
// CpuExecutable) against the reference interpreter on many inputs, carries
// kept in place, and memory (helpers: control_flow_exec_util.h).
// This file: while loops, their memory, and scans read beside them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "baton/backend/cpu/cost_model.h"
#include "control_flow/control_flow_exec_util.h"

namespace baton {
namespace {

using namespace baton::cf_exec;

// ---- while ----

// A while loop's trip count is known only when it runs, and it may never end:
// a program holding one is handed to the device's queue whatever its size, so
// the caller (in Python, the thread holding the GIL) returns at once instead
// of running the whole loop itself. A scan of a tiny body still runs inline.
c::WhileAttrs CounterWhile(const ValueType& x);
Program CounterProgram(int64_t n);

TEST(ControlFlowExecTest, AWhileLoopIsNeverRunOnTheCallersThread) {
  SKIP_UNLESS_CPU();
  const Program p = CounterProgram(1);
  Jitted f([&p](TraceScope& s,
                const std::vector<Tracer>& a) { return Replay(p, s, a); },
           {.name = "tiny_while"});
  const std::vector<Literal> args{
      Literal::Scalar<int32_t>(0), Data(Shape{1}, 1),
      Literal::Scalar<int32_t>(3), Data(Shape{1}, 2)};
  auto exe = ValueOrThrow(f.Lower(SpecsOf(args, {}), Dev()));
  EXPECT_FALSE(exe->runs_inline());
  EXPECT_EQ(CpuOf(exe).work(), cpu::kUnboundedWork);
}

// cond(i, x, limit, w) = i < limit; body = (i + 1, x * 0.5 + w)
c::WhileAttrs CounterWhile(const ValueType& x) {
  auto cond = Region({I32(), x, I32(), x}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{lt(a[0], a[2])};
  });
  auto body = Region({I32(), x, I32(), x}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] + 1, a[1] * 0.5f + a[3]};
  });
  return c::cf_test::While(2, cond, body);
}

// (i0, x, limit, w) -> while: (i, x)
Program CounterProgram(int64_t n) {
  const ValueType x = T({n});
  return Build({I32(), x, I32(), x}, [&](c::TraceContext& ctx, const auto& a) {
    return EmitGroup(ctx, CounterWhile(x), {a[0], a[1], a[2], a[3]});
  });
}

TEST(ControlFlowExecTest, WhileCounterLoopMatchesReference) {
  for (int64_t n : {1, 5, 4099}) {
    const Program p = CounterProgram(n);
    uint32_t seed = 0;
    for (int32_t start : {0, 3}) {
      for (int32_t limit : {-3, 0, 1, 2, 3, 4, 9, 40}) {
        for (const std::vector<int>& donate :
             {std::vector<int>{}, std::vector<int>{1},
              std::vector<int>{0, 1}}) {
          const std::vector<Literal> args{
              Literal::Scalar<int32_t>(start), Data(Shape{n}, ++seed),
              Literal::Scalar<int32_t>(limit), Data(Shape{n}, ++seed)};
          ExpectMatchesReference(
              p, args, {.donate = donate},
              "n=" + std::to_string(n) + " start=" + std::to_string(start) +
                  " limit=" + std::to_string(limit) +
                  " donated=" + std::to_string(donate.size()));
        }
      }
    }
  }
}

TEST(ControlFlowExecTest, WhileWithZeroTripsReturnsTheInitialCarries) {
  const ValueType x = T({6});
  // Outputs: the loop's carries, and a value computed from one of them.
  const Program p =
      Build({I32(), x, I32(), x}, [&](c::TraceContext& ctx, const auto& a) {
        auto r = EmitGroup(ctx, CounterWhile(x), {a[0], a[1], a[2], a[3]});
        return std::vector<Tracer>{r[0], r[1], r[1] + 1};
      });
  for (const std::vector<int>& donate :
       {std::vector<int>{}, std::vector<int>{1}, std::vector<int>{0, 1, 3}}) {
    const std::vector<Literal> args{
        Literal::Scalar<int32_t>(5), Data(Shape{6}, 1),
        Literal::Scalar<int32_t>(5), Data(Shape{6}, 2)};
    ExpectMatchesReference(p, args, {.donate = donate},
                           "donated " + std::to_string(donate.size()));
    auto want = c::Interpret(p, args).value();
    EXPECT_EQ(want[1], args[1]);  // the reference agrees: nothing ran
  }
}

TEST(ControlFlowExecTest, WhileCarryWhoseInitialValueIsReadAgain) {
  const ValueType x = T({8});
  // x is also returned, and also an invariant of the loop (w = x).
  const Program p =
      Build({I32(), x, I32()}, [&](c::TraceContext& ctx, const auto& a) {
        auto r = EmitGroup(ctx, CounterWhile(x), {a[0], a[1], a[2], a[1]});
        return std::vector<Tracer>{r[1], a[1] * 3};
      });
  for (int32_t limit : {0, 1, 4}) {
    for (const std::vector<int>& donate :
         {std::vector<int>{}, std::vector<int>{1}}) {
      auto misses = ExpectMatchesReference(
          p,
          {Literal::Scalar<int32_t>(0), Data(Shape{8}, 7),
           Literal::Scalar<int32_t>(limit)},
          {.donate = donate}, "limit " + std::to_string(limit));
      EXPECT_THAT(MissesText(misses), HasSubstr("loop carry 1"))
          << MissesText(misses);
    }
  }
}

TEST(ControlFlowExecTest, WhileWithOneValueAsTwoCarries) {
  const ValueType x = T({5});
  // carries (i, a, b) start as (i0, x, x): body (i + 1, a * 2, b + a)
  auto cond = Region({I32(), x, x, I32()}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{lt(a[0], a[3])};
  });
  auto body = Region({I32(), x, x, I32()}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] + 1, a[1] * 2, a[2] + a[1]};
  });
  const Program p =
      Build({I32(), x, I32()}, [&](c::TraceContext& ctx, const auto& a) {
        return EmitGroup(ctx, c::cf_test::While(3, cond, body),
                         {a[0], a[1], a[1], a[2]});
      });
  for (int32_t limit : {0, 1, 2, 5}) {
    for (const std::vector<int>& donate :
         {std::vector<int>{}, std::vector<int>{1}, std::vector<int>{0, 1}}) {
      ExpectMatchesReference(p,
                             {Literal::Scalar<int32_t>(0), Data(Shape{5}, 3),
                              Literal::Scalar<int32_t>(limit)},
                             {.donate = donate},
                             "limit " + std::to_string(limit));
    }
  }
}

TEST(ControlFlowExecTest, WhileCarriesThatSwapPlaces) {
  const ValueType x = T({7});
  // (i, a, b) -> (i + 1, b, a), and a variant that also changes one.
  for (bool plus_one : {false, true}) {
    auto cond =
        Region({I32(), x, x, I32()}, [](c::TraceContext&, const auto& a) {
          return std::vector<Tracer>{lt(a[0], a[3])};
        });
    auto body = Region({I32(), x, x, I32()}, [plus_one](c::TraceContext&,
                                                        const auto& a) {
      return std::vector<Tracer>{a[0] + 1, plus_one ? a[2] + 1 : a[2], a[1]};
    });
    const Program p =
        Build({I32(), x, x, I32()}, [&](c::TraceContext& ctx, const auto& a) {
          auto r = EmitGroup(ctx, c::cf_test::While(3, cond, body),
                             {a[0], a[1], a[2], a[3]});
          return std::vector<Tracer>{r[1], r[2], r[0]};
        });
    for (int32_t trips = 0; trips <= 5; ++trips) {
      for (const std::vector<int>& donate :
           {std::vector<int>{}, std::vector<int>{1, 2}, std::vector<int>{2}}) {
        const std::vector<Literal> args{
            Literal::Scalar<int32_t>(0), Data(Shape{7}, 10 + trips),
            Data(Shape{7}, 20 + trips), Literal::Scalar<int32_t>(trips)};
        ExpectMatchesReference(p, args, {.donate = donate},
                               std::string(plus_one ? "(b + 1, a)" : "(b, a)") +
                                   " trips " + std::to_string(trips) +
                                   " donated " + std::to_string(donate.size()));
        if (!plus_one) {
          auto want = c::Interpret(p, args).value();
          EXPECT_EQ(want[0], args[trips % 2 == 0 ? 1 : 2]);
        }
      }
    }
  }
}

// (a, b) -> (a + b, a * b): both read both old carries, so at most one new
// carry can overwrite an old one; the other takes a spare each iteration.
TEST(ControlFlowExecTest, CarryPairThatCannotStayInPlace) {
  const ValueType x = T({300});
  auto cond = Region({I32(), x, x, I32()}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{lt(a[0], a[3])};
  });
  auto body = Region({I32(), x, x, I32()}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] + 1, a[1] + a[2], a[1] * a[2]};
  });
  const Program p =
      Build({I32(), x, x, I32()}, [&](c::TraceContext& ctx, const auto& a) {
        auto r = EmitGroup(ctx, c::cf_test::While(3, cond, body),
                           {a[0], a[1], a[2], a[3]});
        return std::vector<Tracer>{r[1], r[2]};
      });
  for (int32_t trips : {0, 1, 2, 3, 6}) {
    for (const std::vector<int>& donate :
         {std::vector<int>{}, std::vector<int>{0, 1, 2}}) {
      auto misses = ExpectMatchesReference(
          p,
          {Literal::Scalar<int32_t>(0), Data(Shape{300}, 1 + trips),
           Data(Shape{300}, 2 + trips), Literal::Scalar<int32_t>(trips)},
          {.donate = donate}, "trips " + std::to_string(trips));
      const std::string text = MissesText(misses);
      EXPECT_THAT(text, HasSubstr("loop carry")) << text;
      EXPECT_THAT(text, HasSubstr("of while")) << text;
    }
  }
}

// Bodies that return a carry unchanged, one new value as two carries, or
// a carry that only another carry reads.
TEST(ControlFlowExecTest, WhileBodiesThatReturnCarriesUnchangedOrTwice) {
  const ValueType x = T({9});
  using Fn = std::vector<Tracer> (*)(const std::vector<Tracer>&);
  const std::vector<std::pair<std::string, Fn>> bodies = {
      {"(a, a + b)",
       [](const std::vector<Tracer>& a) {
         return std::vector<Tracer>{a[0] + 1, a[1], a[1] + a[2]};
       }},
      {"(a + b, a + b)",
       [](const std::vector<Tracer>& a) {
         Tracer s = a[1] + a[2];
         return std::vector<Tracer>{a[0] + 1, s, s};
       }},
      {"(b, b * 2)",
       [](const std::vector<Tracer>& a) {
         return std::vector<Tracer>{a[0] + 1, a[2], a[2] * 2};
       }},
      {"(a, b)",
       [](const std::vector<Tracer>& a) {
         return std::vector<Tracer>{a[0] + 1, a[1], a[2]};
       }},
  };
  auto cond = Region({I32(), x, x, I32()}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{lt(a[0], a[3])};
  });
  for (const auto& [name, fn] : bodies) {
    auto body =
        Region({I32(), x, x, I32()},
               [fn = fn](c::TraceContext&, const auto& a) { return fn(a); });
    const Program p =
        Build({I32(), x, x, I32()}, [&](c::TraceContext& ctx, const auto& a) {
          auto r = EmitGroup(ctx, c::cf_test::While(3, cond, body),
                             {a[0], a[1], a[2], a[3]});
          return std::vector<Tracer>{r[1], r[2], r[2]};
        });
    for (int32_t trips : {0, 1, 2, 5}) {
      for (const std::vector<int>& donate :
           {std::vector<int>{}, std::vector<int>{1, 2}, std::vector<int>{1}}) {
        ExpectMatchesReference(
            p,
            {Literal::Scalar<int32_t>(0), Data(Shape{9}, 70 + trips),
             Data(Shape{9}, 80 + trips), Literal::Scalar<int32_t>(trips)},
            {.donate = donate}, name + " trips " + std::to_string(trips));
      }
    }
  }
}

// The condition is a bool carry (a parameter of the condition returned as
// it is), or a constant.
TEST(ControlFlowExecTest, WhileConditionThatIsACarryOrAConstant) {
  const ValueType x = T({4});
  auto cond =
      Region({T({}, DType::kBool), x}, [](c::TraceContext&, const auto& a) {
        return std::vector<Tracer>{a[0]};
      });
  // Doubles x until its sum reaches 100.
  auto body =
      Region({T({}, DType::kBool), x}, [](c::TraceContext&, const auto& a) {
        Tracer next = a[1] * 2;
        return std::vector<Tracer>{lt(sum(next), 100.f), next};
      });
  const Program p = Build({x}, [&](c::TraceContext& ctx, const auto& a) {
    Tracer go = lt(sum(a[0]), 100.f);
    return EmitGroup(ctx, c::cf_test::While(2, cond, body), {go, a[0]});
  });
  for (double start : {0.25, 1.0, 30.0, 200.0}) {
    for (const std::vector<int>& donate :
         {std::vector<int>{}, std::vector<int>{0}}) {
      ExpectMatchesReference(
          p,
          {Literal::FromDoubles(DType::kFloat32, Shape{4},
                                {start, start, start, start})},
          {.donate = donate}, "start " + std::to_string(start));
    }
  }
  for (bool value : {false}) {
    auto constant_cond =
        Region({x}, [value](c::TraceContext& ctx, const auto&) {
          return std::vector<Tracer>{c::full(ctx, Shape{}, value)};
        });
    auto plus = Region({x}, [](c::TraceContext&, const auto& a) {
      return std::vector<Tracer>{a[0] + 1};
    });
    const Program q = Build({x}, [&](c::TraceContext& ctx, const auto& a) {
      auto r =
          EmitGroup(ctx, c::cf_test::While(1, constant_cond, plus), {a[0]});
      return std::vector<Tracer>{r[0], r[0] * 2};
    });
    for (const std::vector<int>& donate :
         {std::vector<int>{}, std::vector<int>{0}}) {
      ExpectMatchesReference(q, {Data(Shape{4}, 5)}, {.donate = donate},
                             "constant condition");
    }
  }
}

TEST(ControlFlowExecTest, WhileInsideAWhileBody) {
  const ValueType x = T({33});
  // inner: (j, y) -> (j + 1, y * 0.75 + 1) while j < 3
  auto inner_cond = Region({I32(), x}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{lt(a[0], 3)};
  });
  auto inner_body = Region({I32(), x}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] + 1, a[1] * 0.75f + 1};
  });
  auto cond = Region({I32(), x, I32()}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{lt(a[0], a[2])};
  });
  auto body =
      Region({I32(), x, I32()}, [&](c::TraceContext& ctx, const auto& a) {
        Tracer j0 = c::full(ctx, Shape{}, 0, DType::kInt32);
        auto r = EmitGroup(ctx, c::cf_test::While(2, inner_cond, inner_body),
                           {j0, a[1]});
        return std::vector<Tracer>{a[0] + 1, r[1] - a[1] * 0.5f};
      });
  const Program p = Build({I32(), x, I32()}, [&](c::TraceContext& ctx,
                                                 const auto& a) {
    return EmitGroup(ctx, c::cf_test::While(2, cond, body), {a[0], a[1], a[2]});
  });
  for (int32_t trips : {0, 1, 4}) {
    for (const std::vector<int>& donate :
         {std::vector<int>{}, std::vector<int>{1}}) {
      ExpectMatchesReference(p,
                             {Literal::Scalar<int32_t>(0), Data(Shape{33}, 4),
                              Literal::Scalar<int32_t>(trips)},
                             {.donate = donate},
                             "trips " + std::to_string(trips));
    }
  }
}

// Carries and slices of other dtypes, and of no elements.
TEST(ControlFlowExecTest, ScanOverOtherDTypesAndEmptySlices) {
  for (int64_t width : {0, 3}) {
    const ValueType h = T({width}, DType::kFloat16);
    const ValueType k = T({width}, DType::kInt32);
    const ValueType b = T({width}, DType::kBool);
    auto body = Region({h, k, b, k}, [](c::TraceContext&, const auto& a) {
      Tracer nh =
          where(a[2], a[0] * 0.5f, a[0] + astype(a[3], DType::kFloat16));
      Tracer nk = a[1] * 3 + a[3];
      return std::vector<Tracer>{nh, nk, ~a[2], gt(nk, 4), nh};
    });
    for (int64_t length : {0, 1, 5}) {
      const Program p =
          Build({h, k, b, T({length, width}, DType::kInt32)},
                [&](c::TraceContext& ctx, const auto& a) {
                  return EmitGroup(ctx, c::cf_test::Scan(3, 1, length, body),
                                   {a[0], a[1], a[2], a[3]});
                });
      for (const std::vector<int>& donate :
           {std::vector<int>{}, std::vector<int>{0, 1, 2}}) {
        ExpectMatchesReference(
            p,
            {Data(Shape{width}, 1, DType::kFloat16),
             Data(Shape{width}, 2, DType::kInt32),
             Literal::FromDoubles(DType::kBool, Shape{width},
                                  std::vector<double>(width, 1.0)),
             Data(Shape{length, width}, 3, DType::kInt32)},
            {.donate = donate},
            "width " + std::to_string(width) + " length " +
                std::to_string(length));
      }
    }
  }
}

// The xs are the carry's initial value itself, or a view of it (a reshape
// shares its operand's buffer): the carry must not be written over them.
TEST(ControlFlowExecTest, ScanWhoseXsShareTheCarrysStorage) {
  const ValueType row = T({4});
  for (bool view : {false, true}) {
    const ValueType carry = view ? T({16}) : T({4, 4});
    auto body = Region({carry, row}, [](c::TraceContext&, const auto& a) {
      Tracer next = a[0] * 2 + sum(a[1]);
      return std::vector<Tracer>{next, a[1] + sum(a[0])};
    });
    const Program p =
        Build({T({4, 4})}, [&](c::TraceContext& ctx, const auto& a) {
          Tracer init = view ? reshape(a[0] * 1, {16}) : a[0] * 1;
          Tracer xs = view ? reshape(init, {4, 4}) : init;
          return EmitGroup(ctx, c::cf_test::Scan(1, 1, 4, body), {init, xs});
        });
    for (const std::vector<int>& donate :
         {std::vector<int>{}, std::vector<int>{0}}) {
      ExpectMatchesReference(p, {Data(Shape{4, 4}, 11)}, {.donate = donate},
                             view ? "a view" : "the same value");
    }
  }
}

// ---- while: memory ----

// x -> while (i < 10): x = x * 0.99 + 0.01, i from a constant 0.
Program DecayLoop(int64_t n, int32_t trips) {
  const ValueType x = T({n});
  auto cond = Region({I32(), x}, [trips](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{lt(a[0], trips)};
  });
  auto body = Region({I32(), x}, [](c::TraceContext&, const auto& a) {
    return std::vector<Tracer>{a[0] + 1, a[1] * 0.99f + 0.01f};
  });
  return Build({x}, [&](c::TraceContext& ctx, const auto& a) {
    Tracer i0 = c::full(ctx, Shape{}, 0, DType::kInt32);
    auto r = EmitGroup(ctx, c::cf_test::While(2, cond, body), {i0, a[0]});
    return std::vector<Tracer>{r[1]};
  });
}

TEST(ControlFlowExecTest, DonatedWhileCarryRunsInPlace) {
  const int64_t n = 4 * kMiB / 4;
  const Program p = DecayLoop(n, 10);
  Jitted f([&p](TraceScope& s,
                const std::vector<Tracer>& a) { return Replay(p, s, a); },
           {.name = "decay", .donate_argnums = {0}});
  auto exe = ValueOrThrow(f.Lower({Spec(Shape{n}, true)}, Dev()));
  const auto& m = exe->memory_analysis();
  EXPECT_EQ(m.alias_size_in_bytes, 4 * kMiB) << m.ToString();
  EXPECT_LT(m.temp_size_in_bytes, 64 * kKiB) << m.ToString();
  EXPECT_TRUE(exe->in_place_misses().empty())
      << MissesText(exe->in_place_misses());
  EXPECT_TRUE(exe->unusable_donations().empty());

  const Literal x0 = Data(Shape{n}, 42);
  Array x = ToArray(x0);
  x.BlockUntilReady();
  const int64_t before = Stats().bytes_in_use;
  Dev()->memory_space(MemoryKind::kDevice).ResetPeak();
  Array y = f({x})[0];
  EXPECT_TRUE(x.IsDeleted());
  const Literal got = ToLiteral(y);
  EXPECT_LE(Stats().peak_bytes_in_use - before, 64 * kKiB);
  EXPECT_EQ(Stats().bytes_in_use, before);  // y is x's storage
  const Literal want = c::Interpret(p, {x0}).value()[0];
  EXPECT_EQ(Mismatch(want, got, 0), "");
}

TEST(ControlFlowExecTest, UndonatedWhileCarryStartsFromACopy) {
  const int64_t n = 4 * kMiB / 4;
  const Program p = DecayLoop(n, 10);
  Jitted f([&p](TraceScope& s,
                const std::vector<Tracer>& a) { return Replay(p, s, a); },
           {.name = "decay", .donate_argnums = {}});
  auto exe = ValueOrThrow(f.Lower({Spec(Shape{n})}, Dev()));
  const auto& m = exe->memory_analysis();
  EXPECT_EQ(m.alias_size_in_bytes, 0) << m.ToString();
  EXPECT_LT(m.temp_size_in_bytes, 64 * kKiB) << m.ToString();
  const std::string misses = MissesText(exe->in_place_misses());
  EXPECT_THAT(misses, HasSubstr("loop carry 1 of while")) << misses;
  EXPECT_THAT(misses, HasSubstr("not donated")) << misses;

  const Literal x0 = Data(Shape{n}, 43);
  Array x = ToArray(x0);
  x.BlockUntilReady();
  const int64_t before = Stats().bytes_in_use;
  Dev()->memory_space(MemoryKind::kDevice).ResetPeak();
  Array y = f({x})[0];
  const Literal got = ToLiteral(y);
  EXPECT_FALSE(x.IsDeleted());
  EXPECT_EQ(ToLiteral(x), x0);  // the initial value is read only
  EXPECT_LE(Stats().peak_bytes_in_use - before, 4 * kMiB + 64 * kKiB);
  EXPECT_EQ(Stats().bytes_in_use - before, 4 * kMiB);
  const Literal want = c::Interpret(p, {x0}).value()[0];
  EXPECT_EQ(Mismatch(want, got, 0), "");
  // Sanity: ten steps of x * 0.99 + 0.01 in float32.
  float e = x0.Get<float>(123);
  for (int k = 0; k < 10; ++k) e = e * 0.99f + 0.01f;
  EXPECT_NEAR(got.Get<float>(123), e, 1e-6f);
}

}  // namespace
}  // namespace baton
