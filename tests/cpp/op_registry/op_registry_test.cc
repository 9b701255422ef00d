// The op registry check (issue 39): every OpKind has every rule a pass
// needs -- type inference, the reference interpreter, the CPU backend, JVP,
// VJP, batching and the CUDA kernel emitter -- or is listed below as
// exempt, with the reason.
//
// Nothing here restates the passes' tables. For each kind, ExampleOf builds a
// small program whose one interesting instruction is of that kind (float
// operands where the op differentiates), and the test runs each pass on it:
//
//   shape     Program::Add (type inference) accepts the op, Verify holds
//             and the op is in the program;
//   interp    Interpret gives outputs of the program's output types (an op
//             the interpreter does not know yields an empty literal);
//   cpu       the jit compiles and runs it on the CPU device, matching the
//             interpreter;
//   jvp       transforms::Jvp with a tangent for every float parameter;
//   vjp       transforms::Vjp with respect to every float parameter;
//   vmap      transforms::Vmap with every parameter batched;
//   cuda      cuda::codegen::EmitProgram over the optimized, scheduled and
//             planned program (host emulation needs no GPU).
//
// A pass "lacks the rule" when it answers Unimplemented (each pass's
// documented answer for an op it has no rule for); any other error fails
// the test, since it means the example itself is wrong. A lacking rule must
// be exempted below, and an exempted rule that works fails the test too, so
// the list stays true. Iterating 0 .. kNumOpKinds - 1 covers a new OpKind
// (op_attrs.h ties kNumOpKinds to OpAttrs), and ExampleOf's switch has no
// default, so the compiler asks for its example.
#include <gtest/gtest.h>

#include <cctype>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/compiler/fft_ops.h"
#include "baton/compiler/linalg_ops.h"
#include "baton/compiler/memory_schedule.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/program_printer.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/sort_ops.h"
#include "baton/compiler/step_plan.h"
#include "baton/compiler/transforms/batching.h"
#include "baton/compiler/transforms/jvp.h"
#include "baton/compiler/transforms/vjp.h"
#include "compiler/recording_callback.h"
#include "control_flow/control_flow_test_util.h"
#include "jit/jit_test_util.h"

namespace baton {
namespace {

using namespace baton::testing;
namespace c = compiler;
using c::Literal;
using c::OpKind;
using c::Program;
using c::ValueType;
using c::cf_test::EmitGroup;
using c::cf_test::I32;
using c::cf_test::Region;
using c::cf_test::T;

enum class Pass { kShape, kInterp, kCpu, kJvp, kVjp, kVmap, kCuda };
constexpr Pass kPasses[] = {Pass::kShape, Pass::kInterp, Pass::kCpu, Pass::kJvp,
                            Pass::kVjp,   Pass::kVmap,   Pass::kCuda};

const char* PassName(Pass p) {
  switch (p) {
    case Pass::kShape:
      return "shape inference";
    case Pass::kInterp:
      return "reference interpreter";
    case Pass::kCpu:
      return "CPU backend";
    case Pass::kJvp:
      return "JVP";
    case Pass::kVjp:
      return "VJP";
    case Pass::kVmap:
      return "batching";
    case Pass::kCuda:
      return "CUDA kernel emitter";
  }
  return "?";
}

// Rules that do not exist, on purpose or not yet. Each entry says why; the
// test fails when the rule appears (delete the entry then).
struct Exemption {
  OpKind kind;
  Pass pass;
  const char* reason;
};
const Exemption kExemptions[] = {
    // As in JAX: a while loop's trip count is known only when it runs, so
    // reverse mode cannot size the saved values. The front end traces
    // fori_loop with static bounds as a scan, which has a VJP. Vjp answers
    // FailedPrecondition with that advice (counted here as no rule).
    {OpKind::kWhile, Pass::kVjp, "trip count unknown before it runs"},
    // Issue 33 part III: the CUDA emitter does not emit these yet
    // (kernel_emitter.h, "Sort, linalg, host callbacks and control-flow
    // regions are not emitted"). Whoever teaches it one deletes its entry.
    {OpKind::kSort, Pass::kCuda, "not emitted yet (kernel_emitter.h)"},
    {OpKind::kLinalg, Pass::kCuda,
     "LAPACK-backed; no device solver yet (kernel_emitter.h)"},
    {OpKind::kFft, Pass::kCuda,
     "pocketfft runs on the CPU only; no device FFT (cuFFT) yet"},
    {OpKind::kHostCallback, Pass::kCuda,
     "needs a device-to-host round trip the emitter has no action for"},
    {OpKind::kWhile, Pass::kCuda, "regions are not emitted yet"},
    {OpKind::kScan, Pass::kCuda, "regions are not emitted yet"},
    {OpKind::kCase, Pass::kCuda, "regions are not emitted yet"},
};

std::optional<std::string> ExemptionOf(OpKind kind, Pass pass) {
  for (const Exemption& e : kExemptions) {
    if (e.kind == kind && e.pass == pass) return e.reason;
  }
  return std::nullopt;
}

// Parameters and a body that emits the op under test (and what it needs).
struct Example {
  std::vector<ValueType> params;
  c::cf_test::RegionFn fn;
};

ValueType F32(Shape s) { return T(std::move(s)); }
ValueType Idx(Shape s) { return T(std::move(s), DType::kInt32); }
using Args = const std::vector<Tracer>&;

// The callback's log must outlive every run of the host-callback example.
std::vector<c::test_util::Seen>& CallbackLog() {
  static auto* log = new std::vector<c::test_util::Seen>();
  return *log;
}

Example ExampleOf(OpKind kind) {
  using V = std::vector<Tracer>;
  switch (kind) {
    case OpKind::kParameter:
      return {{F32({3})}, [](TraceContext&, Args a) { return V{a[0]}; }};
    case OpKind::kConstant:
      return {{F32({3})}, [](TraceContext& ctx, Args a) {
                return V{a[0] * c::constant(ctx, std::vector<float>{1, 2, 3},
                                            Shape{3})};
              }};
    case OpKind::kIota:
      return {{F32({3})}, [](TraceContext& ctx, Args a) {
                return V{a[0] + c::iota(ctx, DType::kFloat32, Shape{3})};
              }};
    case OpKind::kConvert:
      return {{F32({3})}, [](TraceContext&, Args a) {
                return V{c::astype(a[0], DType::kFloat64)};
              }};
    case OpKind::kUnary:
      return {{F32({3})},
              [](TraceContext&, Args a) { return V{c::sin(a[0])}; }};
    case OpKind::kBinary:
      return {{F32({3}), F32({3})},
              [](TraceContext&, Args a) { return V{a[0] * a[1]}; }};
    case OpKind::kCompare:
      return {{F32({3}), F32({3})},
              [](TraceContext&, Args a) { return V{c::lt(a[0], a[1])}; }};
    case OpKind::kSelect:
      return {{F32({3}), F32({3})}, [](TraceContext&, Args a) {
                return V{c::where(c::lt(a[0], a[1]), a[0], a[1])};
              }};
    case OpKind::kBroadcastInDim:
      return {{F32({3})}, [](TraceContext&, Args a) {
                return V{c::broadcast_in_dim(a[0], Shape{2, 3}, {1})};
              }};
    case OpKind::kReshape:
      return {{F32({2, 3})},
              [](TraceContext&, Args a) { return V{c::reshape(a[0], {6})}; }};
    case OpKind::kTranspose:
      return {{F32({2, 3})},
              [](TraceContext&, Args a) { return V{c::transpose(a[0])}; }};
    case OpKind::kSlice:
      return {{F32({4})}, [](TraceContext&, Args a) {
                return V{c::slice(a[0], {1}, {3})};
              }};
    case OpKind::kDynamicSlice:
      return {{F32({4}), I32()}, [](TraceContext&, Args a) {
                return V{c::dynamic_slice(a[0], {a[1]}, {2})};
              }};
    case OpKind::kDynamicUpdateSlice:
      return {{F32({4}), F32({2}), I32()}, [](TraceContext&, Args a) {
                return V{c::dynamic_update_slice(a[0], a[1], {a[2]})};
              }};
    case OpKind::kConcatenate:
      return {{F32({2}), F32({3})}, [](TraceContext&, Args a) {
                return V{c::concatenate({a[0], a[1]})};
              }};
    case OpKind::kPad:
      return {{F32({3}), F32({})}, [](TraceContext&, Args a) {
                return V{c::pad(a[0], a[1], {1}, {2}, {1})};
              }};
    case OpKind::kGather:
      return {{F32({4}), Idx({3})},
              [](TraceContext&, Args a) { return V{c::take(a[0], a[1])}; }};
    case OpKind::kScatter:
      return {{F32({4}), Idx({3}), F32({3})}, [](TraceContext&, Args a) {
                return V{c::scatter(a[0], a[1], a[2], 0, ScatterMode::kAdd)};
              }};
    case OpKind::kReduce:
      return {{F32({2, 3})},
              [](TraceContext&, Args a) { return V{c::sum(a[0], {1})}; }};
    case OpKind::kDotGeneral:
      return {{F32({2, 3}), F32({3, 2})},
              [](TraceContext&, Args a) { return V{c::matmul(a[0], a[1])}; }};
    case OpKind::kTransfer:
      return {{F32({3})}, [](TraceContext&, Args a) {
                return V{c::to_memory_kind(a[0], MemoryKind::kPinnedHost)};
              }};
    case OpKind::kSort:
      return {{F32({4})},
              [](TraceContext&, Args a) { return V{c::sort(a[0])}; }};
    case OpKind::kLinalg:
      return {{F32({2, 2}), F32({2, 1})}, [](TraceContext&, Args a) {
                return V{c::triangular_solve(a[0], a[1], /*left_side=*/true,
                                             /*lower=*/true,
                                             /*transpose_a=*/false,
                                             /*unit_diagonal=*/true)};
              }};
    case OpKind::kHostCallback:
      return {{F32({3})}, [](TraceContext& ctx, Args a) {
                Tracer token = ctx.Emit(
                    c::test_util::Callback("registry", &CallbackLog()), {a[0]});
                return V{token, c::sin(a[0])};
              }};
    case OpKind::kCall:
      return {{F32({3})}, [](TraceContext& ctx, Args a) {
                c::CallAttrs call;
                call.kind = c::CallKind::kCheckpoint;
                call.body = Region({F32({3})}, [](TraceContext&, Args b) {
                  return V{c::sin(b[0])};
                });
                return V{ctx.Emit(call, {a[0]})};
              }};
    case OpKind::kWhile:
      // (i, x) -> (i + 1, x * 2) from i = 0 while i < 3.
      return {
          {F32({3})}, [](TraceContext& ctx, Args a) {
            auto cond = Region({I32(), F32({3})}, [](TraceContext&, Args r) {
              return V{c::lt(r[0], 3)};
            });
            auto body = Region({I32(), F32({3})}, [](TraceContext&, Args r) {
              return V{r[0] + 1, r[1] * 2};
            });
            Tracer start = c::full(ctx, Shape{}, 0, DType::kInt32);
            return EmitGroup(ctx, c::cf_test::While(2, cond, body),
                             {start, a[0]});
          }};
    case OpKind::kScan:
      // carry + x over the rows of xs, stacking carry * x.
      return {{F32({}), F32({3})}, [](TraceContext& ctx, Args a) {
                auto body =
                    Region({F32({}), F32({})}, [](TraceContext&, Args r) {
                      return V{r[0] + r[1], r[0] * r[1]};
                    });
                return EmitGroup(ctx, c::cf_test::Scan(1, 1, 3, body),
                                 {a[0], a[1]});
              }};
    case OpKind::kCase:
      return {{I32(), F32({3})}, [](TraceContext& ctx, Args a) {
                auto sin_branch = Region({F32({3})}, [](TraceContext&, Args r) {
                  return V{c::sin(r[0])};
                });
                auto cos_branch = Region({F32({3})}, [](TraceContext&, Args r) {
                  return V{c::cos(r[0])};
                });
                return EmitGroup(ctx,
                                 c::cf_test::Case({sin_branch, cos_branch}),
                                 {a[0], a[1]});
              }};
    case OpKind::kFft:
      // rfft (real in, so the registry's float data feeds it), seen through
      // its real part so every pass compares float results.
      return {{F32({2, 4})}, [](TraceContext&, Args a) {
                return V{c::real(c::fft(a[0], c::FftType::kRfft, {4}))};
              }};
  }
  ADD_FAILURE() << "no example for op kind " << static_cast<int>(kind);
  return {};
}

// Small exact values; index parameters in range.
Literal Data(const ValueType& t, int seed) {
  std::vector<double> v(static_cast<size_t>(t.shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = t.dtype == DType::kInt32
               ? static_cast<double>((i + seed) % 2)
               : 1.0 + 0.25 * static_cast<double>(i + seed);
  }
  return Literal::FromDoubles(t.dtype, t.shape, v);
}

bool IsFloat(const ValueType& t) {
  return t.dtype == DType::kFloat32 || t.dtype == DType::kFloat64;
}

// The outcome of one pass on one example: ok, Unimplemented (no rule), or
// another error (a broken example or pass: fails the test).
struct Outcome {
  Status status;
  bool has_rule() const { return status.ok(); }
  bool lacks_rule() const {
    return status.code() == ErrorCode::kUnimplemented || DeclinedWhile();
  }
  // Vjp's documented refusal of while loops (control_flow_vjp.cc).
  bool DeclinedWhile() const {
    return status.code() == ErrorCode::kFailedPrecondition &&
           status.message().find("while_loop") != std::string::npos;
  }
};

// Runs each pass on one example program.
class PassRunner {
 public:
  PassRunner(OpKind kind, Program program)
      : kind_(kind), program_(std::move(program)) {
    for (int i = 0; i < program_.num_parameters(); ++i) {
      const ValueType& t = program_.parameter_type(i);
      args_.push_back(Data(t, i));
      differentiable_.push_back(IsFloat(t));
    }
  }

  Outcome Run(Pass pass) {
    try {
      return {RunOrThrow(pass)};
    } catch (const Error& e) {
      return {Status(e.code(), e.what())};
    }
  }

 private:
  Status RunOrThrow(Pass pass) {
    switch (pass) {
      case Pass::kShape:
        return InProgram();
      case Pass::kInterp:
        return Interp();
      case Pass::kCpu:
        return Cpu();
      case Pass::kJvp:
        return c::transforms::Jvp(program_, differentiable_).status();
      case Pass::kVjp:
        return c::transforms::Vjp(program_, differentiable_).status();
      case Pass::kVmap: {
        std::vector<int> in_dims(args_.size(), 0);
        return c::transforms::Vmap(program_, in_dims, 2).status();
      }
      case Pass::kCuda:
        return Cuda();
    }
    return Internal("unknown pass");
  }

  // Type inference accepted it while the example was built.
  Status InProgram() const {
    BATON_RETURN_IF_ERROR(program_.Verify());
    for (const c::Instruction& inst : program_.instructions()) {
      if (inst.kind() == kind_) return OkStatus();
    }
    return Internal("the example has no " +
                    std::string(c::op_kind_name(kind_)) + " instruction");
  }

  Status Interp() {
    Result<std::vector<Literal>> out = c::Interpret(program_, args_);
    BATON_RETURN_IF_ERROR(out.status());
    const std::vector<ValueType> types = program_.output_types();
    for (size_t i = 0; i < types.size(); ++i) {
      const Literal& l = out.value()[i];
      if (l.shape() != types[i].shape || l.dtype() != types[i].dtype) {
        return Unimplemented("output " + std::to_string(i) + " is " +
                             l.ToString() + ", not of the output's type");
      }
    }
    reference_ = std::move(out).value();
    return OkStatus();
  }

  Status Cpu() {
    if (reference_.empty()) BATON_RETURN_IF_ERROR(Interp());
    const Program& p = program_;
    Jitted f([&p](TraceScope& s,
                  const std::vector<Tracer>& a) { return Replay(p, s, a); },
             {.name = std::string(c::op_kind_name(kind_))});
    std::vector<Arg> call;
    for (const Literal& l : args_) call.emplace_back(ToArray(l));
    Result<std::vector<Array>> got = f.Call(std::move(call));
    BATON_RETURN_IF_ERROR(got.status());
    for (size_t i = 0; i < got.value().size(); ++i) {
      if (!(ToLiteral(got.value()[i]) == reference_[i])) {
        return Internal("output " + std::to_string(i) +
                        " differs from the "
                        "reference interpreter's");
      }
    }
    return OkStatus();
  }

  Status Cuda() const {
    const Program planned = c::ScheduleForMemory(c::Optimize(program_), {});
    return cuda::codegen::EmitProgram(planned, c::PlanSteps(planned),
                                      cuda::codegen::EmitOptions{},
                                      std::string(c::op_kind_name(kind_)))
        .status();
  }

  OpKind kind_;
  Program program_;
  std::vector<Literal> args_;
  std::vector<bool> differentiable_;
  std::vector<Literal> reference_;
};

class OpRegistryTest : public ::testing::TestWithParam<int> {};

TEST_P(OpRegistryTest, HasEveryRuleOrAnExemption) {
  const auto kind = static_cast<OpKind>(GetParam());
  const Example example = ExampleOf(kind);
  ASSERT_TRUE(example.fn) << "no example";
  std::optional<Program> program;
  Outcome built;
  try {
    program = *Region(example.params, example.fn);
  } catch (const Error& e) {
    built.status = Status(e.code(), e.what());
  }
  ASSERT_TRUE(program.has_value())
      << "the example does not build: " << built.status.to_string();
  PassRunner runner(kind, *program);
  for (Pass pass : kPasses) {
    SCOPED_TRACE(PassName(pass));
    const Outcome o = runner.Run(pass);
    const std::optional<std::string> exempt = ExemptionOf(kind, pass);
    if (o.lacks_rule()) {
      EXPECT_TRUE(exempt.has_value())
          << c::op_kind_name(kind) << " has no " << PassName(pass)
          << " rule: add one (docs/architecture.md, \"Adding an op\"), or an "
             "exemption with the reason in op_registry_test.cc\n"
          << o.status.to_string() << "\n"
          << c::ProgramToText(*program);
    } else if (exempt.has_value()) {
      EXPECT_FALSE(o.has_rule())
          << c::op_kind_name(kind) << " now has a " << PassName(pass)
          << " rule: delete its stale exemption (\"" << *exempt
          << "\") from op_registry_test.cc";
      EXPECT_TRUE(o.has_rule() || o.lacks_rule()) << o.status.to_string();
    } else {
      EXPECT_TRUE(o.has_rule()) << o.status.to_string() << "\n"
                                << c::ProgramToText(*program);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryOpKind, OpRegistryTest,
                         ::testing::Range(0, c::kNumOpKinds),
                         [](const ::testing::TestParamInfo<int>& info) {
                           std::string name(c::op_kind_name(
                               static_cast<OpKind>(info.param)));
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           }
                           return name;
                         });

// Every exemption names a real kind, once per pass.
TEST(OpRegistryExemptions, AreDistinct) {
  for (size_t i = 0; i < std::size(kExemptions); ++i) {
    EXPECT_LT(static_cast<int>(kExemptions[i].kind), c::kNumOpKinds);
    EXPECT_STRNE(kExemptions[i].reason, "");
    for (size_t j = 0; j < i; ++j) {
      EXPECT_FALSE(kExemptions[i].kind == kExemptions[j].kind &&
                   kExemptions[i].pass == kExemptions[j].pass)
          << "exemption " << i << " repeats " << j;
    }
  }
}

}  // namespace
}  // namespace baton
