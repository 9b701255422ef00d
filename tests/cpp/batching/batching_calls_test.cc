// Vmap of calls: every kind keeps its kind, bodies and rules are batched
// with all values at dimension 0, and values match the per-example oracle.
#include <gtest/gtest.h>

#include <memory>

#include "batching/batching_test_util.h"
#include "baton/compiler/transforms/call_group.h"

namespace baton::compiler::batching_test {
namespace {

using V = std::vector<Tracer>;
using P = std::vector<Param>;
constexpr DType F32 = DType::kFloat32;

std::shared_ptr<const Program> Body(
    const P& params, const std::function<V(TraceContext&, const V&)>& fn) {
  return std::make_shared<const Program>(Trace(params, fn));
}

V EmitGroup(TraceContext& ctx, CallAttrs attrs, const V& operands) {
  V outs;
  const int n = attrs.body ? static_cast<int>(attrs.body->outputs().size()) : 1;
  for (int i = 0; i < n; ++i) {
    attrs.output_index = i;
    outs.push_back(ctx.Emit(attrs, operands));
  }
  return outs;
}

// The call instructions of a program (by kind) with their attributes.
std::vector<const CallAttrs*> Calls(const Program& p, CallKind kind) {
  std::vector<const CallAttrs*> calls;
  for (const Instruction& inst : p.instructions()) {
    if (const auto* c = inst.attrs_if<CallAttrs>(); c && c->kind == kind) {
      calls.push_back(c);
    }
  }
  return calls;
}

TEST(BatchingCallsTest, CheckpointWithTwoOutputsAndNames) {
  const P body_params{{T(F32, {3})}, {T(F32, {3})}};
  auto body = Body(body_params, [](TraceContext& ctx, const V& a) {
    CallAttrs name{CallKind::kName};
    name.name = "hidden";
    Tracer h = EmitGroup(ctx, name, {sin(a[0]) * a[1]})[0];
    return V{h, sum(h + a[1])};
  });
  CallAttrs attrs{CallKind::kCheckpoint};
  attrs.body = body;
  attrs.policy.kind = CheckpointPolicy::Kind::kSaveOnlyTheseNames;
  attrs.policy.names = {"hidden"};
  attrs.name = "block";
  P params{{T(F32, {3})}, {T(F32, {3})}};
  Program f = Trace(params, [&](TraceContext& ctx, const V& a) {
    V outs = EmitGroup(ctx, attrs, {a[0] * 2, a[1]});
    return V{outs[0] + 1, outs[1]};
  });
  ExpectVmapMatchesEverywhere(f, params);

  BatchedProgram bp = ExpectVmapMatches(f, params, {1, -1}, 3);
  std::vector<const CallAttrs*> calls =
      Calls(bp.program, CallKind::kCheckpoint);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0]->policy, attrs.policy);
  EXPECT_EQ(calls[0]->name, "block");
  EXPECT_EQ(calls[0]->body, calls[1]->body);
  EXPECT_EQ(calls[0]->output_index, 0);
  EXPECT_EQ(calls[1]->output_index, 1);
  // The names survive inside the batched body, for the policy.
  EXPECT_EQ(Calls(*calls[0]->body, CallKind::kName).size(), 1u);
  ExpectAllBatchedMatches(*calls[0]->body, *body, 3);
  // Found as one group.
  for (ValueId id = 0; id < bp.program.num_values(); ++id) {
    if (bp.program.instruction(id).kind() == OpKind::kCall) {
      EXPECT_EQ(transforms::CallGroupOf(bp.program, id).size(), 2u);
    }
  }
}

TEST(BatchingCallsTest, StopGradientAndNameStayIdentityCalls) {
  P params{{T(F32, {2, 3})}};
  Program f = Trace(params, [](TraceContext& ctx, const V& a) {
    CallAttrs name{CallKind::kName};
    name.name = "x";
    Tracer s = EmitGroup(ctx, CallAttrs{CallKind::kStopGradient}, {a[0]})[0];
    Tracer n = EmitGroup(ctx, name, {a[0] * 3})[0];
    return V{s * n, transpose(s)};
  });
  ExpectVmapMatchesEverywhere(f, params);
  BatchedProgram bp = ExpectVmapMatches(f, params, {2}, 3);
  EXPECT_EQ(Calls(bp.program, CallKind::kStopGradient).size(), 1u);
  ASSERT_EQ(Calls(bp.program, CallKind::kName).size(), 1u);
  EXPECT_EQ(Calls(bp.program, CallKind::kName)[0]->name, "x");
  // The batch dimension is kept where it was: the call takes the batched
  // parameter as it is, with no transpose before it.
  for (const Instruction& inst : bp.program.instructions()) {
    const auto* call = inst.attrs_if<CallAttrs>();
    if (call && call->kind == CallKind::kStopGradient) {
      EXPECT_EQ(inst.operands[0], bp.program.parameter(0));
    }
  }
}

TEST(BatchingCallsTest, CustomJvpBatchesBodyAndRule) {
  const P one{{T(F32, {2})}};
  auto body = Body(one, [](TraceContext&, const V& a) { return V{sin(a[0])}; });
  const P two{{T(F32, {2})}, {T(F32, {2})}};
  auto rule = Body(two, [](TraceContext&, const V& a) {
    return V{sin(a[0]), cos(a[0]) * a[1]};
  });
  CallAttrs attrs{CallKind::kCustomJvp};
  attrs.body = body;
  attrs.rule = rule;
  attrs.name = "my_sin";
  Program f = Trace(one, [&](TraceContext& ctx, const V& a) {
    return V{EmitGroup(ctx, attrs, {a[0]})[0] * 2};
  });
  ExpectVmapMatchesEverywhere(f, one);
  BatchedProgram bp = ExpectVmapMatches(f, one, {0}, 3);
  std::vector<const CallAttrs*> calls = Calls(bp.program, CallKind::kCustomJvp);
  ASSERT_EQ(calls.size(), 1u);
  ExpectAllBatchedMatches(*calls[0]->body, *body, 3);
  ExpectAllBatchedMatches(*calls[0]->rule, *rule, 3);
}

TEST(BatchingCallsTest, CustomVjpRulesStayConsistent) {
  const P one{{T(F32, {2})}};
  auto body =
      Body(one, [](TraceContext&, const V& a) { return V{a[0] * a[0]}; });
  // The forward rule's second residual does not depend on the input: it
  // is still batched, so the backward rule's parameters match.
  auto fwd = Body(one, [](TraceContext& ctx, const V& a) {
    return V{a[0] * a[0], a[0], full(ctx, {2}, 2.0f)};
  });
  const P three{{T(F32, {2})}, {T(F32, {2})}, {T(F32, {2})}};
  auto bwd = Body(
      three, [](TraceContext&, const V& a) { return V{a[1] * a[0] * a[2]}; });
  CallAttrs attrs{CallKind::kCustomVjp};
  attrs.body = body;
  attrs.rule = fwd;
  attrs.rule2 = bwd;
  Program f = Trace(one, [&](TraceContext& ctx, const V& a) {
    return V{EmitGroup(ctx, attrs, {a[0] + 1})[0]};
  });
  ExpectVmapMatchesEverywhere(f, one);
  BatchedProgram bp = ExpectVmapMatches(f, one, {1}, 3);
  std::vector<const CallAttrs*> calls = Calls(bp.program, CallKind::kCustomVjp);
  ASSERT_EQ(calls.size(), 1u);
  const Program& bfwd = *calls[0]->rule;
  const Program& bbwd = *calls[0]->rule2;
  ExpectAllBatchedMatches(*calls[0]->body, *body, 3);
  ExpectAllBatchedMatches(bfwd, *fwd, 3);
  ExpectAllBatchedMatches(bbwd, *bwd, 3);
  // Residuals (forward outputs after the primal one) feed the backward rule.
  ASSERT_EQ(bfwd.outputs().size(), 3u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(bfwd.type(bfwd.outputs()[1 + i]).shape,
              bbwd.parameter_type(i).shape);
  }
}

TEST(BatchingCallsTest, UnbatchedCallIsCopiedAndBodiesAreShared) {
  const P one{{T(F32, {2})}};
  auto body = Body(one, [](TraceContext&, const V& a) { return V{exp(a[0])}; });
  CallAttrs attrs{CallKind::kCheckpoint};
  attrs.body = body;
  const P two{{T(F32, {2})}, {T(F32, {2})}};
  Program f = Trace(two, [&](TraceContext& ctx, const V& a) {
    Tracer u = EmitGroup(ctx, attrs, {a[1]})[0];   // unbatched
    Tracer b1 = EmitGroup(ctx, attrs, {a[0]})[0];  // batched
    Tracer b2 = EmitGroup(ctx, attrs, {a[0] * 2})[0];
    return V{u, b1 + b2};
  });
  BatchedProgram bp = ExpectVmapMatches(f, two, {0, -1}, 3);
  std::vector<const CallAttrs*> calls =
      Calls(bp.program, CallKind::kCheckpoint);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0]->body, body);  // the unbatched call, as it was
  EXPECT_NE(calls[1]->body, body);
  EXPECT_EQ(calls[1]->body, calls[2]->body);  // batched once
  EXPECT_EQ(bp.output_batched, (std::vector<bool>{false, true}));
}

TEST(BatchingCallsTest, NestedCallsAndNestedVmap) {
  const P one{{T(F32, {2})}};
  auto inner =
      Body(one, [](TraceContext&, const V& a) { return V{tanh(a[0])}; });
  CallAttrs inner_attrs{CallKind::kCheckpoint};
  inner_attrs.body = inner;
  auto outer = Body(one, [&](TraceContext& ctx, const V& a) {
    return V{EmitGroup(ctx, inner_attrs, {a[0] * a[0]})[0], a[0]};
  });
  CallAttrs outer_attrs{CallKind::kCheckpoint};
  outer_attrs.body = outer;
  Program f = Trace(one, [&](TraceContext& ctx, const V& a) {
    V outs = EmitGroup(ctx, outer_attrs, {a[0]});
    return V{outs[0] - outs[1]};
  });
  Result<BatchedProgram> once = transforms::Vmap(f, {0}, 3);
  ASSERT_TRUE(once.ok()) << once.status().to_string();
  P batched_params{{once->program.parameter_type(0)}};
  ExpectVmapMatchesEverywhere(once->program, batched_params);
}

}  // namespace
}  // namespace baton::compiler::batching_test
