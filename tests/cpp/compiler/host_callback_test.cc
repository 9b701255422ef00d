// Host callbacks in the compiler (op_attrs.h HostCallbackAttrs, effects.h):
// type inference, the reference interpreter calling them in program order,
// the passes keeping, never merging and never reordering them, and the
// transformations (JVP, VJP, vmap) carrying them into what they build.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "baton/compiler/effects.h"
#include "baton/compiler/host_callback.h"
#include "baton/compiler/memory_schedule.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/program_printer.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/shape_inference.h"
#include "baton/compiler/transforms/batching.h"
#include "baton/compiler/transforms/jvp.h"
#include "baton/compiler/transforms/vjp.h"
#include "compiler/recording_callback.h"

namespace baton::compiler {
namespace {

using test_util::Callback;
using test_util::Seen;

ValueType F32(Shape s) { return {std::move(s), DType::kFloat32}; }

Literal Floats(std::vector<float> v, Shape s) {
  return Literal::FromVector(v, std::move(s));
}

int Count(const Program& p, OpKind kind) {
  int n = 0;
  for (const Instruction& inst : p.instructions()) n += inst.kind() == kind;
  return n;
}

// Parameter x: f32[3]; prints x, then exp(x); returns x * 2.
struct PrintProgram {
  Program program;
  std::vector<Seen> log;
};

void BuildPrints(Program& p, std::vector<Seen>* log) {
  const ValueId x = p.AddParameter(F32({3})).value();
  ASSERT_TRUE(p.Add(Callback("x", log), {x}).ok());
  const ValueId e = p.Add(UnaryAttrs{UnaryOp::kExp}, {x}).value();
  ASSERT_TRUE(p.Add(Callback("exp", log), {e}).ok());
  const ValueId two = p.Add(ConstantAttrs{std::make_shared<const Literal>(
                                Literal::FromDoubles(DType::kFloat32, {3},
                                                     {2, 2, 2}))},
                            {})
                          .value();
  const ValueId y = p.Add(BinaryAttrs{BinaryOp::kMul}, {x, two}).value();
  ASSERT_TRUE(p.SetOutputs({y}).ok());
}

TEST(HostCallbackTest, InferenceTakesAnyOperandsAndGivesABoolToken) {
  std::vector<Seen> log;
  const ValueType f{Shape{2, 3}, DType::kFloat32};
  const ValueType i{Shape{}, DType::kInt32, MemoryKind::kPinnedHost};
  Result<ValueType> t = InferType(Callback("t", &log), std::vector{f, i});
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t.value(), (ValueType{Shape{}, DType::kBool}));
  EXPECT_TRUE(InferType(Callback("t", &log), {}).ok());  // no operands
  Result<ValueType> none = InferType(HostCallbackAttrs{}, {});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("host_callback: has no callback"),
            std::string::npos)
      << none.status().message();
}

TEST(HostCallbackTest, InterpreterCallsInProgramOrderWithTheValues) {
  std::vector<Seen> log;
  Program p;
  BuildPrints(p, &log);
  Result<std::vector<Literal>> out =
      Interpret(p, {Floats({0, 1, 2}, {3})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].tag, "x");
  EXPECT_EQ(log[0].operands, (std::vector<std::vector<double>>{{0, 1, 2}}));
  EXPECT_EQ(log[1].tag, "exp");
  EXPECT_NEAR(log[1].operands[0][2], 7.389056, 1e-5);
  EXPECT_EQ(out.value()[0], Floats({0, 2, 4}, {3}));
}

TEST(HostCallbackTest, InterpreterReturnsTheCallbacksError) {
  std::vector<Seen> log;
  Program p;
  const ValueId x = p.AddParameter(F32({1})).value();
  ASSERT_TRUE(p.Add(Callback("a", &log, Internal("boom")), {x}).ok());
  ASSERT_TRUE(p.Add(Callback("b", &log), {x}).ok());
  ASSERT_TRUE(p.SetOutputs({x}).ok());
  Result<std::vector<Literal>> out = Interpret(p, {Floats({1}, {1})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().message(), "boom");
  ASSERT_EQ(log.size(), 1u);  // the op after the failing one never ran
}

TEST(HostCallbackTest, EffectsAreFoundAtAnyDepth) {
  std::vector<Seen> log;
  auto body = std::make_shared<Program>();
  const ValueId b = body->AddParameter(F32({})).value();
  ASSERT_TRUE(body->Add(Callback("in", &log), {b}).ok());
  ASSERT_TRUE(body->SetOutputs({b}).ok());
  EXPECT_TRUE(HasSideEffect(*body));
  CallAttrs call{CallKind::kCheckpoint, 0, body};
  EXPECT_TRUE(HasSideEffect(OpAttrs(call)));
  CaseAttrs c{0, {body, body}};
  EXPECT_TRUE(HasSideEffect(OpAttrs(c)));
  EXPECT_FALSE(HasSideEffect(OpAttrs(UnaryAttrs{UnaryOp::kExp})));
  auto pure = std::make_shared<Program>();
  const ValueId q = pure->AddParameter(F32({})).value();
  ASSERT_TRUE(pure->SetOutputs({q}).ok());
  EXPECT_FALSE(HasSideEffect(OpAttrs(CaseAttrs{0, {pure, pure}})));
}

TEST(HostCallbackTest, DeadCodeEliminationKeepsThemUnlessAskedToDrop) {
  std::vector<Seen> log;
  Program p;
  BuildPrints(p, &log);
  const Program kept = EliminateDeadCode(p);
  EXPECT_EQ(Count(kept, OpKind::kHostCallback), 2);
  EXPECT_EQ(Count(kept, OpKind::kUnary), 1);  // exp feeds a callback
  const Program dropped = EliminateDeadCode(p, Effects::kDrop);
  EXPECT_EQ(Count(dropped, OpKind::kHostCallback), 0);
  EXPECT_EQ(Count(dropped, OpKind::kUnary), 0);
  // A case whose branches print stays though nothing reads it.
  auto branch = std::make_shared<Program>();
  const ValueId b = branch->AddParameter(F32({})).value();
  ASSERT_TRUE(branch->Add(Callback("branch", &log), {b}).ok());
  ASSERT_TRUE(branch->SetOutputs({b}).ok());
  Program q;
  const ValueId i = q.AddParameter({Shape{}, DType::kInt32}).value();
  const ValueId x = q.AddParameter(F32({})).value();
  ASSERT_TRUE(q.Add(CaseAttrs{0, {branch, branch}}, {i, x}).ok());
  ASSERT_TRUE(q.SetOutputs({x}).ok());
  EXPECT_EQ(Count(EliminateDeadCode(q), OpKind::kCase), 1);
  EXPECT_EQ(Count(EliminateDeadCode(q, Effects::kDrop), OpKind::kCase), 0);
}

TEST(HostCallbackTest, CommonSubexpressionEliminationNeverMergesThem) {
  std::vector<Seen> log;
  const HostCallbackAttrs cb = Callback("same", &log);
  Program p;
  const ValueId x = p.AddParameter(F32({2})).value();
  ASSERT_TRUE(p.Add(cb, {x}).ok());
  ASSERT_TRUE(p.Add(cb, {x}).ok());  // equal attributes and operands
  ASSERT_TRUE(p.SetOutputs({x}).ok());
  const Program q = Optimize(p);
  EXPECT_EQ(Count(q, OpKind::kHostCallback), 2) << ProgramToText(q);
  ASSERT_TRUE(Interpret(q, {Floats({1, 2}, {2})}).ok());
  EXPECT_EQ(log.size(), 2u);
}

TEST(HostCallbackTest, MemoryScheduleKeepsProgramOrder) {
  // The second callback is the last reader of a 4 MiB temporary: run
  // first, it would free that memory sooner, so the scheduler would pull it
  // ahead of the first callback (which frees nothing) -- but effects keep
  // their order.
  std::vector<Seen> log;
  Program p;
  const int64_t n = 1 << 20;
  const ValueId x = p.AddParameter(F32({n})).value();
  const ValueId s = p.AddParameter(F32({})).value();
  const ValueId big = p.Add(UnaryAttrs{UnaryOp::kExp}, {x}).value();
  const ValueId sum =
      p.Add(ReduceAttrs{ReduceOp::kSum, {0}}, {big}).value();
  ASSERT_TRUE(p.Add(Callback("first", &log), {s}).ok());
  ASSERT_TRUE(p.Add(Callback("second", &log), {big}).ok());
  ASSERT_TRUE(p.SetOutputs({sum}).ok());
  const Program q = ScheduleForMemory(p, {false, false});
  ASSERT_TRUE(q.Verify().ok());
  std::vector<std::string> order;
  for (const Instruction& inst : q.instructions()) {
    if (const auto* a = inst.attrs_if<HostCallbackAttrs>()) {
      order.push_back(a->callback->name());
    }
  }
  EXPECT_EQ(order, (std::vector<std::string>{"record first", "record second"}))
      << ProgramToText(q);
}

TEST(HostCallbackTest, PrinterNamesTheCallback) {
  std::vector<Seen> log;
  Program p;
  BuildPrints(p, &log);
  const std::string text = ProgramToText(p);
  EXPECT_NE(text.find("%1 = host_callback(%0), callback=record x :"),
            std::string::npos)
      << text;
}

TEST(HostCallbackTest, JvpCallsWithPrimalsOnly) {
  std::vector<Seen> log;
  Program p;
  BuildPrints(p, &log);
  Result<Program> jvp = transforms::Jvp(p, {true});
  ASSERT_TRUE(jvp.ok()) << jvp.status().to_string();
  EXPECT_EQ(Count(jvp.value(), OpKind::kHostCallback), 2);
  Result<std::vector<Literal>> out = Interpret(
      jvp.value(), {Floats({0, 1, 2}, {3}), Floats({1, 1, 1}, {3})});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].operands[0], (std::vector<double>{0, 1, 2}));  // primal
  EXPECT_EQ(out.value()[1], Floats({2, 2, 2}, {3}));  // d(2x) = 2 dx
}

TEST(HostCallbackTest, VjpKeepsThemInTheForwardProgramOnly) {
  std::vector<Seen> log;
  Program p;
  BuildPrints(p, &log);
  Result<transforms::VjpPrograms> vjp = transforms::Vjp(p, {true});
  ASSERT_TRUE(vjp.ok()) << vjp.status().to_string();
  EXPECT_EQ(Count(vjp.value().forward, OpKind::kHostCallback), 2);
  EXPECT_EQ(Count(vjp.value().backward, OpKind::kHostCallback), 0);
  ASSERT_TRUE(Interpret(vjp.value().forward, {Floats({3, 4, 5}, {3})}).ok());
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].operands[0], (std::vector<double>{3, 4, 5}));
}

TEST(HostCallbackTest, VmapCallsOncePerExampleInOrder) {
  // x: f32[4, 3] batched at 1 (three examples of f32[4]); s: f32[]
  // unbatched. The callback sees each example's column, then s.
  std::vector<Seen> log;
  Program p;
  const ValueId x = p.AddParameter(F32({4})).value();
  const ValueId s = p.AddParameter(F32({})).value();
  ASSERT_TRUE(p.Add(Callback("v", &log), {x, s}).ok());
  ASSERT_TRUE(p.SetOutputs({x}).ok());
  Result<transforms::BatchedProgram> b = transforms::Vmap(p, {1, -1}, 3);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(Count(b.value().program, OpKind::kHostCallback), 3);
  std::vector<float> xs(12);
  for (int i = 0; i < 12; ++i) xs[i] = static_cast<float>(i);  // [4, 3]
  ASSERT_TRUE(Interpret(b.value().program,
                        {Floats(xs, {4, 3}), Floats({9}, {})})
                  .ok());
  ASSERT_EQ(log.size(), 3u);
  for (int e = 0; e < 3; ++e) {
    EXPECT_EQ(log[e].operands[0],
              (std::vector<double>{double(e), double(e + 3), double(e + 6),
                                   double(e + 9)}))
        << e;
    EXPECT_EQ(log[e].operands[1], (std::vector<double>{9}));
  }
  // A callback whose operands are all unbatched runs once, as it is.
  log.clear();
  Program q;
  const ValueId y = q.AddParameter(F32({2})).value();
  const ValueId t = q.AddParameter(F32({})).value();
  ASSERT_TRUE(q.Add(Callback("u", &log), {t}).ok());
  ASSERT_TRUE(q.SetOutputs({y}).ok());
  Result<transforms::BatchedProgram> u = transforms::Vmap(q, {0, -1}, 5);
  ASSERT_TRUE(u.ok()) << u.status().to_string();
  EXPECT_EQ(Count(u.value().program, OpKind::kHostCallback), 1);
}

}  // namespace
}  // namespace baton::compiler
