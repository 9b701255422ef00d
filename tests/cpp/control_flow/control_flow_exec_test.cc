// Control flow on the CPU executor (backend/cpu/region_step.h): while, scan
// and case groups compiled through the jit layer (Optimize, then
// CompileExecutable, which builds a CpuExecutable) against the reference
// interpreter on many inputs, carries kept in place, and memory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>

#include "baton/backend/cpu/cost_model.h"
#include "baton/compiler/program_printer.h"
#include "baton/compiler/reference_interpreter.h"
#include "control_flow/control_flow_test_util.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;
namespace c = compiler;
using c::Literal;
using c::Program;
using c::ValueId;
using c::ValueType;
using c::cf_test::EmitGroup;
using c::cf_test::I32;
using c::cf_test::Region;
using c::cf_test::T;
using ::testing::HasSubstr;

constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kKiB = 1 << 10;

// Replays a program inside a jit trace (same instructions, the jit's
// parameters).
std::vector<Tracer> Replay(const Program& p, TraceScope& scope,
                           const std::vector<Tracer>& params) {
  std::vector<Tracer> v(p.num_values());
  for (ValueId id = 0; id < p.num_values(); ++id) {
    const c::Instruction& inst = p.instruction(id);
    if (const auto* a = inst.attrs_if<c::ParameterAttrs>()) {
      v[id] = params[a->index];
      continue;
    }
    std::vector<Tracer> ops;
    for (ValueId o : inst.operands) ops.push_back(v[o]);
    v[id] = scope.context().Emit(inst.attrs, ops);
  }
  std::vector<Tracer> outs;
  for (ValueId o : p.outputs()) outs.push_back(v[o]);
  return outs;
}

Array ToArray(const Literal& l) {
  return ValueOrThrow(
      DevicePut(HostBuffer{l.untyped_data(), l.shape(), l.dtype()}, Dev(),
                MemoryKind::kDevice));
}

Literal ToLiteral(const Array& a) {
  Literal host(a.shape(), a.dtype());
  ThrowIfError(CopyToHost(a, host.untyped_mutable_data(),
                          static_cast<size_t>(host.byte_size())));
  return host;
}

// A program traced from `fn` over parameters of `types`.
Program Build(const std::vector<ValueType>& types,
              const c::cf_test::RegionFn& fn) {
  return *Region(types, fn);
}

// A literal of `shape` and `dtype` with small varied values (exact in every
// float type), different per `seed`.
Literal Data(Shape shape, uint32_t seed, DType dtype = DType::kFloat32) {
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  uint32_t s = seed * 2654435761u + 12345u;
  for (double& x : v) {
    s = s * 1664525u + 1013904223u;
    const int r = static_cast<int>((s >> 16) % 17) - 8;
    x = dtype == DType::kInt32 ? r : r / 8.0;
  }
  return Literal::FromDoubles(dtype, std::move(shape), v);
}

std::vector<ArgSpec> SpecsOf(const std::vector<Literal>& args,
                             const std::vector<int>& donate) {
  std::vector<ArgSpec> specs;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool d = std::find(donate.begin(), donate.end(),
                             static_cast<int>(i)) != donate.end();
    specs.push_back(
        ArgSpec{args[i].shape(), args[i].dtype(), MemoryKind::kDevice, d});
  }
  return specs;
}

// "" when `got` equals `want` (bitwise, NaNs alike) or, with rtol > 0, is
// within rtol of it relative to want's largest magnitude.
std::string Mismatch(const Literal& want, const Literal& got, double rtol) {
  if (want.shape() != got.shape() || want.dtype() != got.dtype()) {
    return "type " + got.ToString() + " vs reference " + want.ToString();
  }
  double scale = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    scale = std::max(scale, std::fabs(want.GetAsDouble(i)));
  }
  const size_t elem = dtype_size(want.dtype());
  const auto* w = static_cast<const uint8_t*>(want.untyped_data());
  const auto* g = static_cast<const uint8_t*>(got.untyped_data());
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    if (std::memcmp(w + i * elem, g + i * elem, elem) == 0) continue;
    const double a = want.GetAsDouble(i), b = got.GetAsDouble(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (rtol > 0 && std::fabs(a - b) <= rtol * std::max(scale, 1e-30)) continue;
    return "element " + std::to_string(i) + ": got " + got.ElementToString(i) +
           ", reference " + want.ElementToString(i);
  }
  return "";
}

struct RunOptions {
  std::vector<int> donate;  // by position
  double rtol = 0;          // 0: bitwise
};

// Runs `p` on `args` through the jit with `donate`d arguments and expects
// the reference interpreter's outputs; undonated arguments must be left as
// they were, donated ones consumed, and device memory back at its level
// once everything is dropped. Returns the executable's in-place misses.
std::vector<c::InPlaceMiss> ExpectMatchesReference(
    const Program& p, const std::vector<Literal>& args,
    const RunOptions& opt = {}, const std::string& what = "") {
  SCOPED_TRACE(what);
  Result<std::vector<Literal>> want = c::Interpret(p, args);
  EXPECT_TRUE(want.ok()) << want.status().to_string() << ProgramToText(p);
  if (!want.ok()) return {};
  EXPECT_TRUE(Dev()->Synchronize().ok());
  const int64_t base = Stats().bytes_in_use;
  std::vector<c::InPlaceMiss> misses;
  {
    Jitted f([&p](TraceScope& s,
                  const std::vector<Tracer>& a) { return Replay(p, s, a); },
             {.name = "control_flow", .donate_argnums = opt.donate});
    std::vector<Array> arrays;
    std::vector<Arg> call;
    for (const Literal& l : args) {
      arrays.push_back(ToArray(l));
      call.emplace_back(arrays.back());
    }
    Result<std::vector<Array>> got = f.Call(std::move(call));
    EXPECT_TRUE(got.ok()) << got.status().to_string() << ProgramToText(p);
    if (!got.ok()) return {};
    auto exe = ValueOrThrow(f.Lower(SpecsOf(args, opt.donate), Dev()));
    misses = exe->in_place_misses();
    // The loops run as region steps: the optimizer keeps them (and inlining
    // a call may bring more).
    int loops = 0, compiled_loops = 0;
    for (c::OpKind k :
         {c::OpKind::kWhile, c::OpKind::kScan, c::OpKind::kCase}) {
      loops += c::cf_test::CountKind(p, k);
      compiled_loops += c::cf_test::CountKind(exe->program(), k);
    }
    EXPECT_GE(compiled_loops, loops) << exe->as_text();
    EXPECT_EQ(got.value().size(), want.value().size());
    for (size_t i = 0; i < got.value().size() && i < want.value().size(); ++i) {
      const Literal host = ToLiteral(got.value()[i]);
      const std::string m = Mismatch(want.value()[i], host, opt.rtol);
      EXPECT_EQ(m, "") << "output " << i << "\n  got " << host.ToString()
                       << "\n  reference " << want.value()[i].ToString() << "\n"
                       << exe->as_text();
    }
    for (size_t i = 0; i < arrays.size(); ++i) {
      const bool donated = std::find(opt.donate.begin(), opt.donate.end(),
                                     static_cast<int>(i)) != opt.donate.end();
      EXPECT_EQ(arrays[i].IsDeleted(), donated) << "argument " << i;
      if (!donated) {
        // The initial values are read only: the loop ran on copies.
        EXPECT_EQ(ToLiteral(arrays[i]), args[i]) << "argument " << i;
      }
    }
  }
  EXPECT_TRUE(Dev()->Synchronize().ok());
  EXPECT_EQ(Stats().bytes_in_use, base) << "device memory after the call";
  return misses;
}

std::string MissesText(const std::vector<c::InPlaceMiss>& misses) {
  std::string s;
  for (const auto& m : misses) s += m.what + ": " + m.why + "\n";
  return s;
}

// ---- while ----

// A while loop's trip count is known only when it runs, and it may never end:
// a program holding one is handed to the device's queue whatever its size, so
// the caller (in Python, the thread holding the GIL) returns at once instead
// of running the whole loop itself. A scan of a tiny body still runs inline.
c::WhileAttrs CounterWhile(const ValueType& x);
Program CounterProgram(int64_t n);

TEST(ControlFlowExecTest, AWhileLoopIsNeverRunOnTheCallersThread) {
  const Program p = CounterProgram(1);
  Jitted f([&p](TraceScope& s,
                const std::vector<Tracer>& a) { return Replay(p, s, a); },
           {.name = "tiny_while"});
  const std::vector<Literal> args{Literal::Scalar<int32_t>(0), Data(Shape{1}, 1),
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
