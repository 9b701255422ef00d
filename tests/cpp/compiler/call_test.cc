// The call op (op_attrs.h CallAttrs): type inference, call groups, inlining
// (inline_program.h, passes.h InlineCalls), the reference interpreter and the
// printer.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "baton/compiler/inline_program.h"
#include "baton/compiler/passes.h"
#include "baton/compiler/program_printer.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/transforms/call_group.h"
#include "baton/core/error.h"

namespace baton::compiler {
namespace {

using transforms::AddCallGroup;
using transforms::CallGroupOf;
using transforms::IsCallGroupLeader;

ValueType F32(Shape shape) {
  return ValueType{std::move(shape), DType::kFloat32};
}

int CountKind(const Program& p, OpKind kind) {
  int n = 0;
  for (const Instruction& inst : p.instructions()) n += inst.kind() == kind;
  return n;
}

// body(a, b) = (a * b, exp(a))
std::shared_ptr<const Program> TwoOutputBody() {
  Program b;
  const ValueId a = b.AddParameter(F32({3})).value();
  const ValueId c = b.AddParameter(F32({3})).value();
  const ValueId m = b.Add(BinaryAttrs{BinaryOp::kMul}, {a, c}).value();
  const ValueId e = b.Add(UnaryAttrs{UnaryOp::kExp}, {a}).value();
  EXPECT_TRUE(b.SetOutputs({m, e}).ok());
  return std::make_shared<const Program>(std::move(b));
}

CallAttrs Call(CallKind kind, std::shared_ptr<const Program> body = nullptr,
               std::string name = "") {
  CallAttrs a;
  a.kind = kind;
  a.body = std::move(body);
  a.name = std::move(name);
  return a;
}

Literal Vec(std::vector<float> v) { return Literal::FromVector(v, Shape{3}); }

TEST(CallTest, GroupInfersTypesAndIsFoundFromAnyMember) {
  Program p;
  const ValueId x = p.AddParameter(F32({3})).value();
  const ValueId y = p.AddParameter(F32({3})).value();
  CallAttrs attrs = Call(CallKind::kCheckpoint, TwoOutputBody());
  auto outs = AddCallGroup(p, attrs, {x, y});
  ASSERT_TRUE(outs.ok()) << outs.status().to_string();
  ASSERT_EQ(outs.value().size(), 2u);
  EXPECT_EQ(p.type(outs.value()[0]), F32({3}));
  EXPECT_EQ(CallGroupOf(p, outs.value()[1]), outs.value());
  EXPECT_TRUE(IsCallGroupLeader(p, outs.value()[0]));
  EXPECT_FALSE(IsCallGroupLeader(p, outs.value()[1]));
  EXPECT_TRUE(CallGroupOf(p, x).empty());
  ASSERT_TRUE(p.SetOutputs(outs.value()).ok());
  EXPECT_TRUE(p.Verify().ok());
}

TEST(CallTest, MismatchedOperandsAreRejectedNamingTheCall) {
  Program p;
  const ValueId x = p.AddParameter(F32({4})).value();
  CallAttrs attrs = Call(CallKind::kCheckpoint, TwoOutputBody(), "layer");
  auto r = p.Add(attrs, {x, x});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("call checkpoint 'layer'"),
            std::string::npos)
      << r.status().to_string();
  EXPECT_NE(r.status().message().find("float32[3]"), std::string::npos);
  attrs.output_index = 5;
  const ValueId z = p.AddParameter(F32({3})).value();
  EXPECT_FALSE(p.Add(attrs, {z, z}).ok());
}

TEST(CallTest, InlineCallsExpandsEachGroupOnceAndKeepsValues) {
  Program p;
  const ValueId x = p.AddParameter(F32({3})).value();
  const ValueId y = p.AddParameter(F32({3})).value();
  auto outs =
      AddCallGroup(p, Call(CallKind::kCheckpoint, TwoOutputBody()), {x, y});
  ASSERT_TRUE(outs.ok());
  const ValueId sg =
      p.Add(Call(CallKind::kStopGradient), {outs.value()[1]}).value();
  const ValueId sum =
      p.Add(BinaryAttrs{BinaryOp::kAdd}, {outs.value()[0], sg}).value();
  ASSERT_TRUE(p.SetOutputs({sum, outs.value()[0]}).ok());

  Program q = InlineCalls(p);
  ASSERT_TRUE(q.Verify().ok()) << ProgramToText(q);
  EXPECT_EQ(CountKind(q, OpKind::kCall), 0);
  EXPECT_EQ(CountKind(q, OpKind::kUnary), 1);  // the body once, not per output
  EXPECT_EQ(CountKind(q, OpKind::kBinary), 2);

  std::vector<Literal> args{Vec({1, 2, 3}), Vec({4, 5, 6})};
  auto a = Interpret(p, args);  // the interpreter runs calls directly
  auto b = Interpret(q, args);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value(), b.value());
  const Literal& s = a.value()[0];
  EXPECT_FLOAT_EQ(s.data<float>()[1], 2.f * 5.f + std::exp(2.f));
  // Optimize (what jit runs) inlines too.
  EXPECT_EQ(CountKind(Optimize(p), OpKind::kCall), 0);
}

TEST(CallTest, InlineProgramIntoATrace) {
  TraceContext ctx;
  Tracer x = ctx.AddParameter(F32({3}));
  std::vector<Tracer> outs = InlineProgram(ctx, *TwoOutputBody(), {x, x + 1});
  ASSERT_EQ(outs.size(), 2u);
  Program p = ctx.Finish({outs[0] - outs[1]});
  ASSERT_TRUE(p.Verify().ok());
  auto r = Interpret(p, {Vec({0, 1, 2})});
  ASSERT_TRUE(r.ok());
  EXPECT_FLOAT_EQ(r.value()[0].data<float>()[2], 2.f * 3.f - std::exp(2.f));
  // A wrong argument type is an error at the inlining site.
  TraceContext ctx2;
  Tracer z = ctx2.AddParameter(F32({2}));
  EXPECT_THROW(InlineProgram(ctx2, *TwoOutputBody(), {z, z}),
               baton::InvalidArgumentError);
}

TEST(CallTest, PrinterShowsKindNameAndBodyOnce) {
  Program p;
  const ValueId x = p.AddParameter(F32({3})).value();
  auto outs = AddCallGroup(
      p, Call(CallKind::kCheckpoint, TwoOutputBody(), "block"), {x, x});
  const ValueId named =
      p.Add(Call(CallKind::kName, nullptr, "h"), {outs.value()[0]}).value();
  ASSERT_TRUE(p.SetOutputs({named, outs.value()[1]}).ok());
  const std::string text = ProgramToText(p);
  EXPECT_NE(
      text.find("call(%0, %0), kind=checkpoint, name=\"block\", output=0, "
                "body=func("),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("kind=checkpoint_name, name=\"h\""), std::string::npos)
      << text;
  // The body is printed once for the group.
  EXPECT_EQ(text.find("body=", text.find("body=") + 1), std::string::npos)
      << text;
}

}  // namespace
}  // namespace baton::compiler
