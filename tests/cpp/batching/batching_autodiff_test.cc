// Vmap composed with the autodiff transformations (jvp.h, vjp.h): vmap of
// the programs they produce (jacfwd, per-example gradients) and vjp of a
// vmapped program (grad of vmap).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>

#include "batching/batching_test_util.h"
#include "baton/compiler/transforms/jvp.h"
#include "baton/compiler/transforms/vjp.h"

namespace baton::compiler::batching_test {
namespace {

using V = std::vector<Tracer>;
using P = std::vector<Param>;
constexpr DType F32 = DType::kFloat32;

// A small function with a contraction, elementwise math, indexing and a
// reduction: the ops autodiff rules emit most.
Program Model(const P& params) {
  return Trace(params, [](TraceContext& ctx, const V& a) {
    Tracer h = tanh(matmul(a[0], a[1]));
    Tracer idx = constant(ctx, std::vector<int32_t>{2, 0, 2}, Shape{3});
    Tracer picked = take(h, idx, 1);
    return V{sum(picked * picked, {1}), h};
  });
}

P ModelParams() { return {{T(F32, {2, 3}), -1, 1}, {T(F32, {3, 3}), -1, 1}}; }

P ParamsOf(const Program& p) {
  P params;
  for (int i = 0; i < p.num_parameters(); ++i) {
    params.push_back({p.parameter_type(i), -1, 1});
  }
  return params;
}

TEST(BatchingAutodiffTest, VmapOfJvp) {
  Program f = Model(ModelParams());
  Result<Program> jvp = transforms::Jvp(f, {true, true});
  if (!jvp.ok() && jvp.status().code() == ErrorCode::kUnimplemented) {
    GTEST_SKIP() << jvp.status().to_string();
  }
  ASSERT_TRUE(jvp.ok()) << jvp.status().to_string();
  ExpectVmapMatchesEverywhere(jvp.value(), ParamsOf(jvp.value()));
}

TEST(BatchingAutodiffTest, VmapOfVjpPrograms) {
  Program f = Model(ModelParams());
  Result<transforms::VjpPrograms> vjp = transforms::Vjp(f, {true, true});
  if (!vjp.ok() && vjp.status().code() == ErrorCode::kUnimplemented) {
    GTEST_SKIP() << vjp.status().to_string();
  }
  ASSERT_TRUE(vjp.ok()) << vjp.status().to_string();
  ExpectVmapMatchesEverywhere(vjp->forward, ParamsOf(vjp->forward));
  ExpectVmapMatchesEverywhere(vjp->backward, ParamsOf(vjp->backward));
}

void ExpectNear(const Literal& got, const Literal& want) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    EXPECT_NEAR(got.GetAsDouble(i), want.GetAsDouble(i),
                1e-5 * (1 + std::abs(want.GetAsDouble(i))))
        << "element " << i;
  }
}

// Per-example gradients of x and the summed gradient of the shared w.
TEST(BatchingAutodiffTest, VjpOfVmap) {
  const P params = ModelParams();
  Program f = Model(params);
  constexpr int64_t kBatch = 3;
  Result<BatchedProgram> g = transforms::Vmap(f, {1, -1}, kBatch);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  Result<transforms::VjpPrograms> vjp =
      transforms::Vjp(g->program, {true, true});
  if (!vjp.ok() && vjp.status().code() == ErrorCode::kUnimplemented) {
    GTEST_SKIP() << vjp.status().to_string();
  }
  ASSERT_TRUE(vjp.ok()) << vjp.status().to_string();
  Result<transforms::VjpPrograms> ex_vjp = transforms::Vjp(f, {true, true});
  ASSERT_TRUE(ex_vjp.ok()) << ex_vjp.status().to_string();

  uint64_t state = 3;
  const Literal x = RandomLiteral(params[0], Shape{2, kBatch, 3}, state);
  const Literal w = RandomLiteral(params[1], Shape{3, 3}, state);
  // Cotangents: ones on the first output, zeros on the second.
  auto run = [](const transforms::VjpPrograms& p, std::vector<Literal> args,
                const std::vector<Literal>& cts) {
    Result<std::vector<Literal>> fwd = Interpret(p.forward, args);
    EXPECT_TRUE(fwd.ok()) << fwd.status().to_string();
    std::vector<Literal> bargs(fwd.value().begin() + cts.size(),
                               fwd.value().end());
    bargs.insert(bargs.end(), cts.begin(), cts.end());
    Result<std::vector<Literal>> bwd = Interpret(p.backward, bargs);
    EXPECT_TRUE(bwd.ok()) << bwd.status().to_string();
    return bwd.value();
  };
  auto filled = [](const Shape& s, double v) {
    return Literal::FromDoubles(F32, s,
                                std::vector<double>(s.num_elements(), v));
  };
  std::vector<Literal> grads = run(
      vjp.value(), {x, w}, {filled({kBatch, 2}, 1), filled({kBatch, 2, 3}, 0)});
  std::vector<double> w_sum(9, 0);
  for (int64_t b = 0; b < kBatch; ++b) {
    std::vector<Literal> ex = run(ex_vjp.value(), {TakeExample(x, 1, b), w},
                                  {filled({2}, 1), filled({2, 3}, 0)});
    ExpectNear(TakeExample(grads[0], 1, b), ex[0]);
    for (int i = 0; i < 9; ++i) w_sum[i] += ex[1].GetAsDouble(i);
  }
  ExpectNear(grads[1], Literal::FromDoubles(F32, Shape{3, 3}, w_sum));
}

V EmitGroup(TraceContext& ctx, CallAttrs attrs, const V& operands) {
  V outs;
  for (int i = 0; i < static_cast<int>(attrs.body->outputs().size()); ++i) {
    attrs.output_index = i;
    outs.push_back(ctx.Emit(attrs, operands));
  }
  return outs;
}

std::shared_ptr<const Program> Body(
    const P& params, const std::function<V(TraceContext&, const V&)>& fn) {
  return std::make_shared<const Program>(Trace(params, fn));
}

// jvp of vmap through a custom_jvp call: the batched rule is what Jvp
// inlines, so it must take and give batched primals and tangents.
TEST(BatchingAutodiffTest, JvpOfVmapThroughCustomJvp) {
  const P one{{T(F32, {2}), -1, 1}};
  CallAttrs attrs{CallKind::kCustomJvp};
  attrs.body =
      Body(one, [](TraceContext&, const V& a) { return V{sin(a[0])}; });
  // A deliberately "wrong" rule (3*t instead of cos(x)*t) proves it is used.
  attrs.rule = Body({one[0], one[0]}, [](TraceContext&, const V& a) {
    return V{sin(a[0]), a[1] * 3};
  });
  Program f = Trace(one, [&](TraceContext& ctx, const V& a) {
    return V{EmitGroup(ctx, attrs, {a[0] * 2})[0]};
  });
  Result<BatchedProgram> g = transforms::Vmap(f, {0}, 3);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  Result<Program> jvp = transforms::Jvp(g->program, {true});
  if (!jvp.ok() && jvp.status().code() == ErrorCode::kUnimplemented) {
    GTEST_SKIP() << jvp.status().to_string();
  }
  ASSERT_TRUE(jvp.ok()) << jvp.status().to_string();
  const Literal x =
      Literal::FromVector(std::vector<float>{0, 1, 2, 3, 4, 5}, Shape{3, 2});
  const Literal t =
      Literal::FromVector(std::vector<float>{1, 1, 1, 2, 2, 2}, Shape{3, 2});
  Result<std::vector<Literal>> out = Interpret(jvp.value(), {x, t});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // d/dx rule(2x) . t = 3 * (2 t).
  EXPECT_EQ(out.value()[1],
            Literal::FromVector(std::vector<float>{6, 6, 6, 12, 12, 12},
                                Shape{3, 2}));
}

// grad of vmap through a custom_vjp call: the batched forward rule's
// residuals feed the batched backward rule.
TEST(BatchingAutodiffTest, VjpOfVmapThroughCustomVjp) {
  const P one{{T(F32, {2}), -1, 1}};
  CallAttrs attrs{CallKind::kCustomVjp};
  attrs.body =
      Body(one, [](TraceContext&, const V& a) { return V{a[0] * a[0]}; });
  attrs.rule = Body(one, [](TraceContext& ctx, const V& a) {
    return V{a[0] * a[0], a[0], full(ctx, {2}, 5.0f)};
  });
  // Backward: ct * x * 5 (not the true 2x, to prove the rule is used).
  attrs.rule2 = Body({one[0], one[0], one[0]}, [](TraceContext&, const V& a) {
    return V{a[2] * a[0] * a[1]};
  });
  Program f = Trace(one, [&](TraceContext& ctx, const V& a) {
    return V{EmitGroup(ctx, attrs, {a[0]})[0]};
  });
  Result<BatchedProgram> g = transforms::Vmap(f, {1}, 3);
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  Result<transforms::VjpPrograms> vjp = transforms::Vjp(g->program, {true});
  if (!vjp.ok() && vjp.status().code() == ErrorCode::kUnimplemented) {
    GTEST_SKIP() << vjp.status().to_string();
  }
  ASSERT_TRUE(vjp.ok()) << vjp.status().to_string();
  const Literal x =
      Literal::FromVector(std::vector<float>{0, 1, 2, 3, 4, 5}, Shape{2, 3});
  Result<std::vector<Literal>> fwd = Interpret(vjp->forward, {x});
  ASSERT_TRUE(fwd.ok()) << fwd.status().to_string();
  std::vector<Literal> bargs(fwd.value().begin() + 1, fwd.value().end());
  bargs.push_back(Literal::FromVector(std::vector<float>(6, 1), Shape{3, 2}));
  Result<std::vector<Literal>> bwd = Interpret(vjp->backward, bargs);
  ASSERT_TRUE(bwd.ok()) << bwd.status().to_string();
  EXPECT_EQ(bwd.value()[0],
            Literal::FromVector(std::vector<float>{0, 5, 10, 15, 20, 25},
                                Shape{2, 3}));
}

}  // namespace
}  // namespace baton::compiler::batching_test
