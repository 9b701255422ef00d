// transforms::Vjp as a whole: calling convention, wrt subsets, several
// outputs, accumulation, residual de-duplication and descriptions, custom
// rules, stop_gradient, second derivatives and errors.
#include <gtest/gtest.h>

#include <algorithm>

#include "baton/compiler/passes.h"
#include "vjp/vjp_test_util.h"

namespace baton::compiler::vjp_test {
namespace {

const Shape kS{2, 3};

TEST(VjpTest, WrtSubsetsAndZerosForUnusedParameters) {
  const Program p = Build({F64(kS), F64(kS), F64(kS)},
                          [](TraceContext&, const std::vector<Tracer>& q) {
                            return std::vector<Tracer>{sin(q[0]) * q[1]};
                          });
  const std::vector<Literal> args = {Random(F64(kS), 1), Random(F64(kS), 2),
                                     Random(F64(kS), 3)};
  ExpectGradients(p, {true, true, true}, args);
  ExpectGradients(p, {false, true, false}, args);
  const VjpPrograms v = MustVjp(p, {false, false, true});
  const std::vector<Literal> g = RunVjp(p, v, args, OutputCotangents(p, 4));
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0], Literal(kS, DType::kFloat64));  // unused: zeros
  EXPECT_TRUE(v.residuals.empty());
}

TEST(VjpTest, MultipleOutputsRepeatedUseAndIntOutputs) {
  const Program p = Build(
      {F64(kS), I32(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        const Tracer y = sin(q[0]);
        // y used four times (accumulated), the input returned as it is, an
        // output repeated, an int output whose cotangent is ignored.
        return std::vector<Tracer>{y * y + y, q[0], y, q[1] + 1, y};
      });
  ExpectGradients(p, {true, false},
                  {Random(F64(kS), 5), Literal(kS, DType::kInt32)});
}

TEST(VjpTest, ResidualsAreDeduplicatedAndDescribed) {
  // x * x saves x once.
  const Program sq =
      Build({F64(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{q[0] * q[0] * 3};
      });
  const VjpPrograms v = MustVjp(sq, {true});
  ASSERT_EQ(v.residuals.size(), 1u);
  EXPECT_EQ(v.residuals[0].what, "argument 0");

  // A two-layer MLP: x (for W1's cotangent), the hidden activation (tanh's
  // rule and W2's cotangent share it) and W2; nothing else, and no
  // constant broadcast.
  const Program mlp = Build(
      {F64(Shape{4, 3}), F64(Shape{3, 5}), F64(Shape{5}), F64(Shape{5, 2})},
      [](TraceContext&, const std::vector<Tracer>& q) {
        const Tracer h = tanh(matmul(q[0], q[1]) + q[2]);
        const Tracer o = matmul(h, q[3]);
        return std::vector<Tracer>{sum(o * o) * 0.5};
      });
  const VjpPrograms m = MustVjp(mlp, {false, true, true, true});
  std::vector<std::string> what;
  for (const auto& r : m.residuals) what.push_back(r.what);
  EXPECT_EQ(what,
            (std::vector<std::string>{"output of dot_general", "argument 3",
                                      "output of tanh", "argument 0"}))
      << ::testing::PrintToString(what);
  ExpectGradients(mlp, {true, true, true, true},
                  {Random(F64(Shape{4, 3}), 6), Random(F64(Shape{3, 5}), 7),
                   Random(F64(Shape{5}), 8), Random(F64(Shape{5, 2}), 9)});
}

TEST(VjpTest, ConstantsAreRecomputedNotSaved) {
  const Program p =
      Build({F64(kS)}, [](TraceContext& ctx, const std::vector<Tracer>& q) {
        const Tracer c = broadcast_to(
            constant(ctx, std::vector<double>{1, 2, 3}, Shape{3}), kS);
        return std::vector<Tracer>{q[0] * c * 2};
      });
  const VjpPrograms v = MustVjp(p, {true});
  EXPECT_TRUE(v.residuals.empty());
  ExpectGradients(p, {true}, {Random(F64(kS), 10)});
}

TEST(VjpTest, CheapElementwiseValuesAreRecomputedNotSaved) {
  // GELU's tanh approximation on u = x W: the multiplies and adds around
  // tanh are cheap functions of residuals saved anyway (u, read by the
  // rule of pow, and tanh's output, read by its own rule), so the backward
  // program recomputes them: only u, tanh's output and the arguments the
  // dot's rule reads are saved.
  const Program gelu = Build(
      {F64(Shape{4, 3}), F64(Shape{3, 5})},
      [](TraceContext&, const std::vector<Tracer>& q) {
        const Tracer u = matmul(q[0], q[1]);
        const Tracer t = tanh((u + pow(u, 3.0) * 0.044715) * 0.7978845608);
        const Tracer y = u * 0.5 * (t + 1.0);
        return std::vector<Tracer>{sum(y * y)};
      });
  const VjpPrograms v = MustVjp(gelu, {true, true});
  std::vector<std::string> what;
  for (const auto& r : v.residuals) what.push_back(r.what);
  std::sort(what.begin(), what.end());
  EXPECT_EQ(what, (std::vector<std::string>{"argument 0", "argument 1",
                                            "output of dot_general",
                                            "output of tanh"}))
      << ::testing::PrintToString(what);
  ExpectGradients(gelu, {true, true},
                  {Random(F64(Shape{4, 3}), 11), Random(F64(Shape{3, 5}), 12)});
}

TEST(VjpTest, BroadcastOfAnArgumentIsRecomputedNotSaved) {
  // A layer norm's scale: h * broadcast(g). The rule for the product with
  // respect to h reads the broadcast; it is recomputed from g (an argument,
  // alive anyway) instead of keeping its full-size result.
  const Program p =
      Build({F64(Shape{6, 4}), F64(Shape{4})},
            [](TraceContext&, const std::vector<Tracer>& q) {
              const Tracer h = tanh(q[0]);
              const Tracer y = h * broadcast_in_dim(q[1], Shape{6, 4}, {1});
              return std::vector<Tracer>{sum(y * y)};
            });
  const VjpPrograms v = MustVjp(p, {true, true});
  for (const auto& r : v.residuals) {
    EXPECT_NE(r.what, "output of broadcast_in_dim") << r.what;
  }
  ExpectGradients(p, {true, true},
                  {Random(F64(Shape{6, 4}), 21), Random(F64(Shape{4}), 22)});
}

TEST(VjpTest, IntegerWrtIsAnError) {
  const Program p =
      Build({I32(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{q[0] * 2};
      });
  Result<VjpPrograms> r = Vjp(p, {true});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("parameter 0"), std::string::npos);
  EXPECT_NE(r.status().message().find("int32"), std::string::npos);
  Result<VjpPrograms> wrong_size = Vjp(p, {true, false});
  EXPECT_EQ(wrong_size.status().code(), ErrorCode::kInvalidArgument);
}

TEST(VjpTest, StopGradientAndCheckpointName) {
  const Program p =
      Build({F64(kS)}, [](TraceContext& ctx, const std::vector<Tracer>& q) {
        CallAttrs sg;
        sg.kind = CallKind::kStopGradient;
        CallAttrs name;
        name.kind = CallKind::kName;
        name.name = "h";
        const Tracer s = EmitCall(ctx, sg, {q[0]})[0];
        const Tracer h = EmitCall(ctx, name, {sin(q[0])})[0];
        return std::vector<Tracer>{q[0] * s + h};
      });
  const VjpPrograms v = MustVjp(p, {true});
  const Literal x = Random(F64(kS), 11);
  const std::vector<Literal> g =
      RunVjp(p, v, {x}, {Values(DType::kFloat64, kS, {1, 1, 1, 1, 1, 1})});
  ASSERT_EQ(g.size(), 1u);
  for (int64_t e = 0; e < x.num_elements(); ++e) {
    EXPECT_NEAR(g[0].Get<double>(e),
                x.Get<double>(e) + std::cos(x.Get<double>(e)), 1e-12);
  }
}

TEST(VjpTest, CustomVjpUsesTheRules) {
  // Body sin; forward rule keeps cos(x); backward rule returns 2 cos(x) ct
  // (deliberately not the true derivative, to see that it is used).
  const auto body =
      Body({F64(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{sin(q[0])};
      });
  const auto fwd =
      Body({F64(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{sin(q[0]), cos(q[0])};
      });
  const auto bwd =
      Body({F64(kS), F64(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{q[0] * q[1] * 2};
      });
  const Program p =
      Build({F64(kS)}, [&](TraceContext& ctx, const std::vector<Tracer>& q) {
        CallAttrs c;
        c.kind = CallKind::kCustomVjp;
        c.body = body;
        c.rule = fwd;
        c.rule2 = bwd;
        return std::vector<Tracer>{EmitCall(ctx, c, {q[0] * 3})[0]};
      });
  const VjpPrograms v = MustVjp(p, {true});
  ASSERT_EQ(v.residuals.size(), 1u);
  EXPECT_EQ(v.residuals[0].what, "output of cosine");
  const Literal x = Random(F64(kS), 12);
  const std::vector<Literal> g =
      RunVjp(p, v, {x}, {Values(DType::kFloat64, kS, {1, 1, 1, 1, 1, 1})});
  ASSERT_EQ(g.size(), 1u);
  for (int64_t e = 0; e < x.num_elements(); ++e) {
    EXPECT_NEAR(g[0].Get<double>(e), 6 * std::cos(3 * x.Get<double>(e)), 1e-12);
  }
}

TEST(VjpTest, CustomJvpIsTransposed) {
  // Rule: (x, t) -> (sin(x), 3 cos(x) t + t * t * 0): linear in t where it
  // matters; the VJP is 3 cos(x) ct.
  const auto body =
      Body({F64(kS), F64(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{sin(q[0]) * q[1]};
      });
  const auto rule = Body({F64(kS), F64(kS), F64(kS), F64(kS)},
                         [](TraceContext&, const std::vector<Tracer>& q) {
                           const Tracer y = sin(q[0]) * q[1];
                           const Tracer t = cos(q[0]) * q[1] * q[2] * 3 +
                                            sin(q[0]) * q[3] * 5;
                           return std::vector<Tracer>{y, t};
                         });
  const Program p = Build(
      {F64(kS), F64(kS)}, [&](TraceContext& ctx, const std::vector<Tracer>& q) {
        CallAttrs c;
        c.kind = CallKind::kCustomJvp;
        c.body = body;
        c.rule = rule;
        return std::vector<Tracer>{EmitCall(ctx, c, {q[0], q[1]})[0]};
      });
  const VjpPrograms v = MustVjp(p, {true, true});
  const Literal x = Random(F64(kS), 13), w = Random(F64(kS), 14);
  const std::vector<Literal> g =
      RunVjp(p, v, {x, w}, {Values(DType::kFloat64, kS, {1, 1, 1, 1, 1, 1})});
  ASSERT_EQ(g.size(), 2u);
  for (int64_t e = 0; e < x.num_elements(); ++e) {
    const double xv = x.Get<double>(e), wv = w.Get<double>(e);
    EXPECT_NEAR(g[0].Get<double>(e), 3 * std::cos(xv) * wv, 1e-12);
    EXPECT_NEAR(g[1].Get<double>(e), 5 * std::sin(xv), 1e-12);
  }
}

// The gradient program of p (one scalar output), as a program of p's
// parameters: forward and backward inlined, cotangent 1.
Program GradientProgram(const Program& p, const std::vector<bool>& wrt) {
  const VjpPrograms v = MustVjp(p, wrt);
  return Build(p.parameter_types(),
               [&](TraceContext& ctx, const std::vector<Tracer>& q) {
                 std::vector<Tracer> fwd = InlineProgram(ctx, v.forward, q);
                 std::vector<Tracer> bargs(fwd.begin() + 1, fwd.end());
                 bargs.push_back(full(ctx, Shape{}, 1.0, DType::kFloat64));
                 return InlineProgram(ctx, v.backward, bargs);
               });
}

TEST(VjpTest, SecondDerivatives) {
  const Program p = Build(
      {F64(kS), F64(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        const Tracer h = tanh(q[0] * q[1]);
        return std::vector<Tracer>{sum(h * exp(q[0]) / (q[1] * q[1] + 1))};
      });
  const Program g = GradientProgram(p, {true, true});
  ASSERT_TRUE(g.Verify().ok());
  ExpectGradients(g, {true, true}, {Random(F64(kS), 15), Random(F64(kS), 16)},
                  1e-5);
  // Through every rule family: max, pad, gather, scatter, reduce max, dot.
  const Program q = Build(
      {F64(Shape{3, 4}), F64(Shape{4, 2})},
      [](TraceContext& ctx, const std::vector<Tracer>& a) {
        const Tracer m = matmul(sin(a[0]), a[1]);
        const Tracer idx =
            constant(ctx, std::vector<int32_t>{2, 0, 2}, Shape{3});
        const Tracer t = take(m * m, idx, 0);
        const Tracer s = scatter(a[0], idx, a[0] * 2, 0, ScatterMode::kAdd);
        const Tracer r = max(maximum(a[0], s * 0.3), {1});
        return std::vector<Tracer>{sum(t * t) + sum(r * r) +
                                   sum(pad(m, 0.5, {1, 0}, {0, 1}))};
      });
  const Program qg = GradientProgram(q, {true, true});
  ExpectGradients(qg, {true, true},
                  {Random(F64(Shape{3, 4}), 17), Random(F64(Shape{4, 2}), 18)},
                  1e-5);
}

TEST(VjpTest, VjpOfAVjpBackwardProgram) {
  // The backward program itself is differentiable (in residuals and
  // cotangents): a linear function of the cotangent.
  const Program p =
      Build({F64(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{sin(q[0]) * q[0]};
      });
  const VjpPrograms v = MustVjp(p, {true});
  std::vector<bool> wrt(v.backward.num_parameters(), true);
  std::vector<Literal> args;
  for (int i = 0; i < v.backward.num_parameters(); ++i) {
    args.push_back(Random(v.backward.parameter_type(i), 20 + i));
  }
  ExpectGradients(v.backward, wrt, args);
}

TEST(VjpTest, CustomVjpWithTwoOutputsOneUnused) {
  const auto body =
      Body({F64(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{q[0] * 2, q[0] * 3};
      });
  const auto fwd =
      Body({F64(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{q[0] * 2, q[0] * 3};
      });
  // (ct0, ct1) -> 2 ct0 + 3 ct1; no residuals.
  const auto bwd =
      Body({F64(kS), F64(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{q[0] * 2 + q[1] * 3};
      });
  const Program p =
      Build({F64(kS)}, [&](TraceContext& ctx, const std::vector<Tracer>& q) {
        CallAttrs c;
        c.kind = CallKind::kCustomVjp;
        c.body = body;
        c.rule = fwd;
        c.rule2 = bwd;
        return std::vector<Tracer>{EmitCall(ctx, c, {q[0]})[1]};
      });
  ExpectGradients(p, {true}, {Random(F64(kS), 30)});
  EXPECT_TRUE(MustVjp(p, {true}).residuals.empty());
}

TEST(VjpTest, CustomVjpBackwardRuleOfTheWrongTypeIsAnError) {
  const auto body =
      Body({F64(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{q[0] * 2};
      });
  const auto bwd =
      Body({F64(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{sum(q[0])};
      });
  const Program p =
      Build({F64(kS)}, [&](TraceContext& ctx, const std::vector<Tracer>& q) {
        CallAttrs c;
        c.kind = CallKind::kCustomVjp;
        c.body = body;
        c.rule = body;
        c.rule2 = bwd;
        return std::vector<Tracer>{EmitCall(ctx, c, {q[0]})[0]};
      });
  Result<VjpPrograms> r = Vjp(p, {true});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("custom_vjp"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace baton::compiler::vjp_test
