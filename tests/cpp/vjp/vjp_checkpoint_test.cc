// Checkpointed calls under transforms::Vjp: what each policy saves, that the
// backward program recomputes the rest (and CSE of the joint program keeps
// the recomputation), offloading, and nested checkpoints.
#include <gtest/gtest.h>

#include "baton/compiler/passes.h"
#include "vjp/vjp_test_util.h"

namespace baton::compiler::vjp_test {
namespace {

using Kind = CheckpointPolicy::Kind;

const Shape kX{4, 3};
const Shape kW{3, 3};

// Two tanh layers sharing W, the hidden one named "hidden"; a batched dot at
// the end (a batch dimension of size 4 over the rows).
std::shared_ptr<const Program> LayerBody() {
  return Body({F64(kX), F64(kW)}, [](TraceContext& ctx,
                                     const std::vector<Tracer>& q) {
    CallAttrs name;
    name.kind = CallKind::kName;
    name.name = "hidden";
    const Tracer h = EmitCall(ctx, name, {tanh(matmul(q[0], q[1]))})[0];
    const Tracer h2 = tanh(matmul(h, q[1]));
    const Tracer b = dot_general(h2, h, DotGeneralAttrs{{0}, {0}, {1}, {1}});
    return std::vector<Tracer>{sin(b), h2};
  });
}

Program Checkpointed(CheckpointPolicy policy) {
  const auto body = LayerBody();
  return Build(
      {F64(kX), F64(kW)}, [&](TraceContext& ctx, const std::vector<Tracer>& q) {
        CallAttrs c;
        c.kind = CallKind::kCheckpoint;
        c.body = body;
        c.policy = policy;
        // Linear in the call's outputs, so nothing outside the call needs
        // their values: every residual comes from the policy.
        const std::vector<Tracer> outs = EmitCall(ctx, c, {q[0] * 2, q[1]});
        return std::vector<Tracer>{sum(outs[0]) + sum(outs[1])};
      });
}

CheckpointPolicy Policy(Kind kind, std::vector<std::string> names = {}) {
  CheckpointPolicy p;
  p.kind = kind;
  p.names = std::move(names);
  return p;
}

std::vector<std::string> What(const VjpPrograms& v) {
  std::vector<std::string> w;
  for (const auto& r : v.residuals) w.push_back(r.what);
  std::sort(w.begin(), w.end());
  return w;
}

const std::vector<Literal>& Args() {
  static const std::vector<Literal> args = {Random(F64(kX), 1),
                                            Random(F64(kW), 2, -0.8, 0.8)};
  return args;
}

TEST(VjpCheckpointTest, EveryPolicyGivesTheSameGradients) {
  for (Kind kind :
       {Kind::kNothingSaveable, Kind::kEverythingSaveable, Kind::kDotsSaveable,
        Kind::kDotsWithNoBatchDimsSaveable, Kind::kSaveOnlyTheseNames,
        Kind::kOffloadDotsWithNoBatchDims}) {
    SCOPED_TRACE(static_cast<int>(kind));
    ExpectGradients(Checkpointed(Policy(kind, {"hidden"})), {true, true},
                    Args());
  }
}

TEST(VjpCheckpointTest, NothingSaveableKeepsOnlyTheCallOperands) {
  const VjpPrograms v =
      MustVjp(Checkpointed(Policy(Kind::kNothingSaveable)), {true, true});
  // The operands: x * 2 (computed outside the call) and W.
  EXPECT_EQ(What(v),
            (std::vector<std::string>{"argument 1", "output of multiply"}));
}

TEST(VjpCheckpointTest, DotsSaveableKeepsDotResults) {
  const VjpPrograms dots =
      MustVjp(Checkpointed(Policy(Kind::kDotsSaveable)), {true, true});
  const std::vector<std::string> w = What(dots);
  EXPECT_EQ(std::count(w.begin(), w.end(), "output of dot_general"), 3)
      << ::testing::PrintToString(w);
  EXPECT_EQ(std::count(w.begin(), w.end(), "output of tanh"), 0);
  // The batched dot is not saved when only dots without batch dims are.
  const VjpPrograms nb = MustVjp(
      Checkpointed(Policy(Kind::kDotsWithNoBatchDimsSaveable)), {true, true});
  const std::vector<std::string> w2 = What(nb);
  EXPECT_EQ(std::count(w2.begin(), w2.end(), "output of dot_general"), 2)
      << ::testing::PrintToString(w2);
}

TEST(VjpCheckpointTest, SaveOnlyTheseNames) {
  const VjpPrograms v =
      MustVjp(Checkpointed(Policy(Kind::kSaveOnlyTheseNames, {"hidden"})),
              {true, true});
  const std::vector<std::string> w = What(v);
  EXPECT_EQ(std::count(w.begin(), w.end(), "output of tanh named 'hidden'"), 1)
      << ::testing::PrintToString(w);
  EXPECT_EQ(std::count(w.begin(), w.end(), "output of dot_general"), 0);
  const VjpPrograms other = MustVjp(
      Checkpointed(Policy(Kind::kSaveOnlyTheseNames, {"other"})), {true, true});
  EXPECT_EQ(What(other),
            (std::vector<std::string>{"argument 1", "output of multiply"}));
}

TEST(VjpCheckpointTest, EverythingSaveableRecomputesNothing) {
  const VjpPrograms v =
      MustVjp(Checkpointed(Policy(Kind::kEverythingSaveable)), {true, true});
  EXPECT_EQ(
      CountOps(v.backward,
               [](const Instruction& i) { return IsUnary(i, UnaryOp::kTanh); }),
      0);
  EXPECT_EQ(CountOps(v.backward,
                     [](const Instruction& i) {
                       return i.kind() == OpKind::kTransfer;
                     }),
            0);
}

TEST(VjpCheckpointTest, OffloadedResidualsLiveInPinnedHost) {
  const VjpPrograms v = MustVjp(
      Checkpointed(Policy(Kind::kOffloadDotsWithNoBatchDims)), {true, true});
  int pinned = 0;
  for (const auto& r : v.residuals) {
    if (r.type.memory_kind == MemoryKind::kPinnedHost) {
      ++pinned;
      EXPECT_EQ(r.what, "output of dot_general");
    }
  }
  EXPECT_EQ(pinned, 2);
  // Each offload follows its dot at once, so the device copy can go early.
  const Program& f = v.forward;
  int transfers = 0;
  for (ValueId id = 0; id < f.num_values(); ++id) {
    if (f.instruction(id).kind() != OpKind::kTransfer) continue;
    ++transfers;
    const ValueId src = f.instruction(id).operands[0];
    EXPECT_EQ(f.instruction(src).kind(), OpKind::kDotGeneral);
    EXPECT_EQ(src, id - 1);
    EXPECT_EQ(f.type(id).memory_kind, MemoryKind::kPinnedHost);
  }
  EXPECT_EQ(transfers, 2);
}

TEST(VjpCheckpointTest, OptimizedJointProgramStillRecomputes) {
  const Program p = Checkpointed(Policy(Kind::kNothingSaveable));
  const VjpPrograms v = MustVjp(p, {true, true});
  // The recomputation sits behind same-kind transfers of the saved inputs.
  EXPECT_GT(CountOps(v.backward,
                     [](const Instruction& i) {
                       return i.kind() == OpKind::kTransfer;
                     }),
            0);
  const Program joint = JointProgram(p, v);
  const Program optimized = Optimize(joint);
  ASSERT_TRUE(optimized.Verify().ok());
  auto tanhs = [](const Program& q) {
    return CountOps(
        q, [](const Instruction& i) { return IsUnary(i, UnaryOp::kTanh); });
  };
  // Two in the forward pass, two recomputed: CSE did not merge them.
  EXPECT_EQ(tanhs(optimized), 4);
  // Without checkpointing the backward pass uses the forward's values.
  const Program plain = Build(
      {F64(kX), F64(kW)}, [&](TraceContext& ctx, const std::vector<Tracer>& q) {
        const std::vector<Tracer> outs =
            InlineProgram(ctx, *LayerBody(), {q[0] * 2, q[1]}, true);
        return std::vector<Tracer>{sum(outs[0]) + sum(outs[1])};
      });
  EXPECT_EQ(tanhs(Optimize(JointProgram(plain, MustVjp(plain, {true, true})))),
            2);
  // And the optimized joint program computes the same values.
  std::vector<Literal> args = Args();
  args.push_back(Values(DType::kFloat64, Shape{}, {1}));
  EXPECT_EQ(MustInterpret(optimized, args).size(), 3u);
  const std::vector<Literal> a = MustInterpret(optimized, args),
                             b = MustInterpret(joint, args);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i] == b[i]) << i;
}

TEST(VjpCheckpointTest, OnlyWhatTheBackwardPassReadsIsRecomputed) {
  // Each recomputed value is recomputed once, however many rules read it.
  const VjpPrograms v =
      MustVjp(Checkpointed(Policy(Kind::kNothingSaveable)), {false, true});
  EXPECT_EQ(
      CountOps(v.backward,
               [](const Instruction& i) { return IsUnary(i, UnaryOp::kTanh); }),
      2);
  ExpectGradients(Checkpointed(Policy(Kind::kNothingSaveable)), {false, true},
                  Args());
}

TEST(VjpCheckpointTest, NestedCheckpoints) {
  const auto inner = LayerBody();
  const auto outer = Body(
      {F64(kX), F64(kW)}, [&](TraceContext& ctx, const std::vector<Tracer>& q) {
        CallAttrs c;
        c.kind = CallKind::kCheckpoint;
        c.body = inner;
        c.policy = Policy(Kind::kSaveOnlyTheseNames, {"hidden"});
        const std::vector<Tracer> o = EmitCall(ctx, c, {sin(q[0]), q[1]});
        return std::vector<Tracer>{o[0] * 3, tanh(o[1])};
      });
  for (Kind kind : {Kind::kNothingSaveable, Kind::kEverythingSaveable}) {
    const Program p =
        Build({F64(kX), F64(kW)},
              [&](TraceContext& ctx, const std::vector<Tracer>& q) {
                CallAttrs c;
                c.kind = CallKind::kCheckpoint;
                c.body = outer;
                c.policy = Policy(kind);
                const std::vector<Tracer> o = EmitCall(ctx, c, {q[0], q[1]});
                return std::vector<Tracer>{sum(o[0]) + sum(o[1])};
              });
    ExpectGradients(p, {true, true}, Args());
    const VjpPrograms v = MustVjp(p, {true, true});
    if (kind == Kind::kNothingSaveable) {
      EXPECT_EQ(What(v),
                (std::vector<std::string>{"argument 0", "argument 1"}));
    }
  }
}

TEST(VjpCheckpointTest, LongRecomputedChain) {
  // A body of thousands of ops, all recomputed from the call's operand.
  const int kLength = 2000;
  const auto body =
      Body({F64(Shape{3})}, [&](TraceContext&, const std::vector<Tracer>& q) {
        Tracer t = q[0];
        for (int i = 0; i < kLength; ++i) t = sin(t) + q[0] * 0.5;
        return std::vector<Tracer>{t};
      });
  const Program p = Build(
      {F64(Shape{3})}, [&](TraceContext& ctx, const std::vector<Tracer>& q) {
        CallAttrs c;
        c.kind = CallKind::kCheckpoint;
        c.body = body;
        return std::vector<Tracer>{EmitCall(ctx, c, {q[0]})[0]};
      });
  const VjpPrograms v = MustVjp(p, {true});
  EXPECT_EQ(What(v), (std::vector<std::string>{"argument 0"}));
  // Every sin but the last is recomputed (sin's rule reads its input).
  EXPECT_EQ(
      CountOps(v.backward,
               [](const Instruction& i) { return IsUnary(i, UnaryOp::kSin); }),
      kLength - 1);
}

TEST(VjpCheckpointTest, SecondDerivativeThroughACheckpoint) {
  const Program p = Checkpointed(Policy(Kind::kNothingSaveable));
  const VjpPrograms v = MustVjp(p, {true, true});
  const Program g =
      Build(p.parameter_types(),
            [&](TraceContext& ctx, const std::vector<Tracer>& q) {
              std::vector<Tracer> fwd = InlineProgram(ctx, v.forward, q);
              std::vector<Tracer> bargs(fwd.begin() + 1, fwd.end());
              bargs.push_back(full(ctx, Shape{}, 1.0, DType::kFloat64));
              return InlineProgram(ctx, v.backward, bargs);
            });
  ExpectGradients(g, {true, true}, Args(), 1e-5);
}

TEST(VjpCheckpointTest, CustomVjpInsideACheckpoint) {
  const auto fbody =
      Body({F64(kX)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{exp(q[0])};
      });
  const auto fwd =
      Body({F64(kX)}, [](TraceContext&, const std::vector<Tracer>& q) {
        const Tracer y = exp(q[0]);
        return std::vector<Tracer>{y, y};
      });
  const auto bwd =
      Body({F64(kX), F64(kX)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{q[0] * q[1]};
      });
  const auto body =
      Body({F64(kX)}, [&](TraceContext& ctx, const std::vector<Tracer>& q) {
        CallAttrs c;
        c.kind = CallKind::kCustomVjp;
        c.body = fbody;
        c.rule = fwd;
        c.rule2 = bwd;
        return std::vector<Tracer>{tanh(EmitCall(ctx, c, {sin(q[0])})[0])};
      });
  const Program p =
      Build({F64(kX)}, [&](TraceContext& ctx, const std::vector<Tracer>& q) {
        CallAttrs c;
        c.kind = CallKind::kCheckpoint;
        c.body = body;
        return std::vector<Tracer>{EmitCall(ctx, c, {q[0]})[0]};
      });
  ExpectGradients(p, {true}, {Args()[0]});
  EXPECT_EQ(What(MustVjp(p, {true})), (std::vector<std::string>{"argument 0"}));
}

}  // namespace
}  // namespace baton::compiler::vjp_test
