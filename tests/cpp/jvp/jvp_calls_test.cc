// Forward mode through calls: stop_gradient, checkpoint_name, checkpoint,
// custom_jvp and custom_vjp (jvp.h).
#include <gtest/gtest.h>

#include <memory>

#include "jvp/jvp_test_util.h"

namespace baton::compiler::jvp_test {
namespace {

std::shared_ptr<const Program> Body(
    const std::vector<ValueType>& types,
    const std::function<std::vector<Tracer>(TraceContext&,
                                            const std::vector<Tracer>&)>& fn) {
  return std::make_shared<const Program>(Trace(types, fn));
}

// A call's attributes (output_index is set by Call).
CallAttrs Attrs(CallKind kind, std::shared_ptr<const Program> body = nullptr,
                std::shared_ptr<const Program> rule = nullptr,
                std::shared_ptr<const Program> rule2 = nullptr,
                std::string name = "") {
  CallAttrs a;
  a.kind = kind;
  a.body = std::move(body);
  a.rule = std::move(rule);
  a.rule2 = std::move(rule2);
  a.name = std::move(name);
  return a;
}

// One call instruction per body output (a call group).
std::vector<Tracer> Call(TraceContext& ctx, CallAttrs attrs,
                         const std::vector<Tracer>& operands) {
  std::vector<Tracer> outs;
  const size_t n = attrs.body ? attrs.body->outputs().size() : 1;
  for (size_t i = 0; i < n; ++i) {
    attrs.output_index = static_cast<int>(i);
    outs.push_back(ctx.Emit(attrs, operands));
  }
  return outs;
}

int CountCalls(const Program& p, CallKind kind) {
  return Count(p, [&](const Instruction& inst) {
    const auto* c = inst.attrs_if<CallAttrs>();
    return c && c->kind == kind;
  });
}

TEST(JvpCallTest, StopGradientHasZeroTangent) {
  const Program p = Trace({F64(Shape{3})}, [](TraceContext& ctx, auto& x) {
    const CallAttrs stop = Attrs(CallKind::kStopGradient);
    const Tracer s = Call(ctx, stop, {x[0]})[0];
    return std::vector<Tracer>{x[0] * s, exp(s)};
  });
  const Literal x = Doubles(Shape{3}, {1, -2, 3}),
                t = Doubles(Shape{3}, {2, 1, 0.5});
  const Program jvp = JvpOf(p, {true});
  const JvpValues v = RunJvp(jvp, {x}, {t});
  // d(x * stop(x)) = t * x; exp(stop(x)) does not move.
  ExpectBitwiseEqual(v.tangents[0], Doubles(Shape{3}, {2, -2, 1.5}), "x*stop");
  ExpectAllZero(v.tangents[1], "exp(stop(x))");
  EXPECT_EQ(
      Count(jvp,
            [](const Instruction& i) { return i.kind() == OpKind::kUnary; }),
      1);  // the primal exp only
}

TEST(JvpCallTest, NamePassesTheTangentAndNamesIt) {
  const Program p = Trace({F64(Shape{3})}, [](TraceContext& ctx, auto& x) {
    const CallAttrs name =
        Attrs(CallKind::kName, nullptr, nullptr, nullptr, "hidden");
    return std::vector<Tracer>{Call(ctx, name, {sin(x[0])})[0] * x[0]};
  });
  ExpectMatchesFiniteDifferences(p, {Doubles(Shape{3}, {1, -2, 3})}, {true});
  const Program jvp = JvpOf(p, {true});
  EXPECT_EQ(CountCalls(jvp, CallKind::kName), 2);  // the value and its tangent
}

// A checkpointed body with three outputs, one of them integer.
Program CheckpointProgram(CheckpointPolicy policy) {
  auto body = Body({F64(Shape{2}), F64(Shape{2})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{sin(x[0]) * x[1], x[0] + x[1],
                               astype(x[0] * 3, DType::kInt32)};
  });
  return Trace({F64(Shape{2}), F64(Shape{2})}, [&](TraceContext& ctx, auto& x) {
    CallAttrs call =
        Attrs(CallKind::kCheckpoint, body, nullptr, nullptr, "block");
    call.policy = policy;
    const std::vector<Tracer> out = Call(ctx, call, {x[0], x[1]});
    return std::vector<Tracer>{exp(out[0]), out[1] * out[0], out[2]};
  });
}

TEST(JvpCallTest, CheckpointDifferentiatesItsBodyInsideACheckpoint) {
  CheckpointPolicy policy;
  policy.kind = CheckpointPolicy::Kind::kDotsSaveable;
  const Program p = CheckpointProgram(policy);
  const std::vector<Literal> args = {Doubles(Shape{2}, {0.5, 1.5}),
                                     Doubles(Shape{2}, {-1, 2})};
  ExpectMatchesFiniteDifferences(p, args, {true, true});
  ExpectMatchesFiniteDifferences(p, args, {true, false});
  ExpectMatchesFiniteDifferences(p, args, {false, true});

  const Program jvp = JvpOf(p, {true, false});
  // One call group over the body's JVP: (x, y, tx) -> (3 outputs, the 2
  // nonzero float tangents); the integer output's tangent stays symbolic.
  EXPECT_EQ(CountCalls(jvp, CallKind::kCheckpoint), 5);
  for (const Instruction& inst : jvp.instructions()) {
    if (const auto* c = inst.attrs_if<CallAttrs>()) {
      EXPECT_EQ(c->policy, policy);
      EXPECT_EQ(c->name, "block");
      EXPECT_EQ(c->body->num_parameters(), 3);
      EXPECT_EQ(c->body->outputs().size(), 5u);
      EXPECT_TRUE(c->body->Verify().ok());
    }
  }
}

TEST(JvpCallTest, CheckpointWithoutTangentsIsCopied) {
  const Program p = CheckpointProgram({});
  const Program jvp = JvpOf(p, {false, false});
  EXPECT_EQ(CountCalls(jvp, CallKind::kCheckpoint), 3);
  const Instruction* first = nullptr;
  for (const Instruction& inst : jvp.instructions()) {
    if (inst.kind() == OpKind::kCall) {
      first = &inst;
      break;
    }
  }
  ASSERT_NE(first, nullptr);
  const Instruction* orig = nullptr;
  for (const Instruction& inst : p.instructions()) {
    if (inst.kind() == OpKind::kCall) {
      orig = &inst;
      break;
    }
  }
  EXPECT_EQ(first->attrs_as<CallAttrs>().body,
            orig->attrs_as<CallAttrs>().body);
}

TEST(JvpCallTest, CustomJvpUsesTheRule) {
  // The rule says d sin = 3 t (deliberately not cos) so that the test sees
  // which one was used.
  auto body = Body({F64(Shape{2})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{sin(x[0])};
  });
  auto rule = Body({F64(Shape{2}), F64(Shape{2})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{sin(x[0]), x[1] * 3};
  });
  const Program p =
      Trace({F64(Shape{2}), F64(Shape{2})}, [&](TraceContext& ctx, auto& x) {
        const CallAttrs call =
            Attrs(CallKind::kCustomJvp, body, rule, nullptr, "f");
        return std::vector<Tracer>{Call(ctx, call, {x[0]})[0] + x[1]};
      });
  const Literal x = Doubles(Shape{2}, {0.5, 1}), y = Doubles(Shape{2}, {2, 3});
  const Literal tx = Doubles(Shape{2}, {1, -2}),
                ty = Doubles(Shape{2}, {0.25, 4});
  const Program both = JvpOf(p, {true, true});
  EXPECT_EQ(CountCalls(both, CallKind::kCustomJvp), 0);  // the rule, inlined
  ExpectBitwiseEqual(RunJvp(both, {x, y}, {tx, ty}).tangents[0],
                     Doubles(Shape{2}, {3.25, -2}), "3 tx + ty");
  // Without a tangent into the call, the call stays as it was.
  const Program only_y = JvpOf(p, {false, true});
  EXPECT_EQ(CountCalls(only_y, CallKind::kCustomJvp), 1);
  ExpectBitwiseEqual(RunJvp(only_y, {x, y}, {ty}).tangents[0], ty, "ty");
}

// As in JAX, a custom_jvp function's primal outputs under jvp are what its
// rule returns; neither checks them against the function's own (a rule that
// disagrees is the user's to fix). The fuzzers build rules that agree
// (tests/fuzz/fuzz_program_builder.cc, RuleCallingBody).
TEST(JvpCallTest, CustomJvpPrimalOutputsAreTheRules) {
  auto body = Body({F64(Shape{2})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{sin(x[0])};
  });
  auto rule = Body({F64(Shape{2}), F64(Shape{2})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{x[1] * 2, x[1]};
  });
  const Program p = Trace({F64(Shape{2})}, [&](TraceContext& ctx, auto& x) {
    return Call(ctx, Attrs(CallKind::kCustomJvp, body, rule, nullptr, "f"),
                {x[0]});
  });
  const JvpValues r =
      RunJvp(JvpOf(p, {true}), {Doubles(Shape{2}, {0.5, 1})},
             {Doubles(Shape{2}, {1, -2})});
  ExpectBitwiseEqual(r.primals[0], Doubles(Shape{2}, {2, -4}), "2 t");
  ExpectBitwiseEqual(r.tangents[0], Doubles(Shape{2}, {1, -2}), "t");
}

TEST(JvpCallTest, CustomJvpWithSeveralOutputsGetsZerosForMissingTangents) {
  auto body = Body({F64(Shape{2}), F64(Shape{2})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{x[0] * x[1], x[0] + x[1]};
  });
  auto rule =
      Body({F64(Shape{2}), F64(Shape{2}), F64(Shape{2}), F64(Shape{2})},
           [](TraceContext&, auto& x) {
             return std::vector<Tracer>{x[0] * x[1], x[0] + x[1],
                                        x[2] * x[1] + x[0] * x[3], x[2] + x[3]};
           });
  const Program p =
      Trace({F64(Shape{2}), F64(Shape{2})}, [&](TraceContext& ctx, auto& x) {
        const CallAttrs call = Attrs(CallKind::kCustomJvp, body, rule);
        const std::vector<Tracer> out = Call(ctx, call, {x[0], x[1]});
        return std::vector<Tracer>{sin(out[0]), out[1]};
      });
  const std::vector<Literal> args = {Doubles(Shape{2}, {0.5, 1}),
                                     Doubles(Shape{2}, {2, -3})};
  ExpectMatchesFiniteDifferences(p, args, {true, false});
  ExpectMatchesFiniteDifferences(p, args, {false, true});
  ExpectMatchesFiniteDifferences(p, args, {true, true});
}

Program CustomVjpProgram() {
  auto body = Body({F64(Shape{2})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{sin(x[0])};
  });
  auto fwd = Body({F64(Shape{2})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{sin(x[0]), cos(x[0])};
  });
  auto bwd = Body({F64(Shape{2}), F64(Shape{2})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{x[0] * x[1]};
  });
  return Trace({F64(Shape{2}), F64(Shape{2})}, [&](TraceContext& ctx, auto& x) {
    const CallAttrs call = Attrs(CallKind::kCustomVjp, body, fwd, bwd, "g");
    return std::vector<Tracer>{Call(ctx, call, {x[0]})[0] * x[1]};
  });
}

TEST(JvpCallTest, CustomVjpCannotBeDifferentiatedInForwardMode) {
  Result<Program> jvp = transforms::Jvp(CustomVjpProgram(), {true, false});
  ASSERT_FALSE(jvp.ok());
  EXPECT_EQ(jvp.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(jvp.status().message().find("custom_vjp"), std::string::npos)
      << jvp.status().message();
  EXPECT_NE(jvp.status().message().find("custom_jvp"), std::string::npos);
}

TEST(JvpCallTest, CustomVjpWithoutTangentsIsFine) {
  const Program p = CustomVjpProgram();
  const Program jvp = JvpOf(p, {false, true});
  EXPECT_EQ(CountCalls(jvp, CallKind::kCustomVjp), 1);
  ExpectMatchesFiniteDifferences(
      p, {Doubles(Shape{2}, {0.5, 1}), Doubles(Shape{2}, {2, -3})},
      {false, true});
}

TEST(JvpCallTest, NestedJvpThroughACheckpoint) {
  // The JVP program's own JVP: second derivatives through the call.
  const Program p = CheckpointProgram({});
  const Program jvp = JvpOf(p, {true, true});
  ExpectMatchesFiniteDifferences(
      jvp,
      {Doubles(Shape{2}, {0.5, 1.5}), Doubles(Shape{2}, {-1, 2}),
       Doubles(Shape{2}, {0.3, -0.7}), Doubles(Shape{2}, {1.1, 0.4})},
      {true, true, true, true});
}

}  // namespace
}  // namespace baton::compiler::jvp_test
