#include "baton/compiler/tracer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "baton/compiler/program_printer.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/core/error.h"

namespace baton::compiler {
namespace {

using ::testing::HasSubstr;

ValueType T(DType dtype, Shape shape, MemoryKind kind = MemoryKind::kDevice) {
  return ValueType{std::move(shape), dtype, kind};
}

// The message of the InvalidArgumentError `fn` throws.
template <typename F>
std::string ThrownMessage(F&& fn) {
  try {
    fn();
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InvalidArgumentError thrown";
  return "";
}

TEST(TracerTest, TracesTheExampleFromTheIssue) {
  TraceContext ctx;
  Tracer x = ctx.AddParameter(T(DType::kFloat32, {16}));
  Tracer y = tanh(exp(x) * 2 + 1);
  EXPECT_EQ(y.type(), T(DType::kFloat32, {16}));
  Program p = ctx.Finish({y});
  EXPECT_EQ(ProgramToText(p),
            "func(%0: f32[16]) -> (%8) {\n"
            "  %1 = exponential(%0) : f32[16]\n"
            "  %2 = constant(2) : f32[]\n"
            "  %3 = broadcast_in_dim(%2), dims=[] : f32[16]\n"
            "  %4 = multiply(%1, %3) : f32[16]\n"
            "  %5 = constant(1) : f32[]\n"
            "  %6 = broadcast_in_dim(%5), dims=[] : f32[16]\n"
            "  %7 = add(%4, %6) : f32[16]\n"
            "  %8 = tanh(%7) : f32[16]\n"
            "}\n");
  EXPECT_TRUE(p.Verify().ok());
}

TEST(TracerTest, NumpyBroadcasting) {
  TraceContext ctx;
  Tracer a = ctx.AddParameter(T(DType::kFloat32, {2, 1}));
  Tracer b = ctx.AddParameter(T(DType::kFloat32, {3}));
  Tracer c = a * b;
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  const Program& p = ctx.program();
  // a: (2, 1) -> (2, 3) keeps both dims; b: (3,) -> (2, 3) maps to dim 1.
  EXPECT_EQ(p.instruction(2).attrs_as<BroadcastInDimAttrs>(),
            (BroadcastInDimAttrs{Shape{2, 3}, {0, 1}}));
  EXPECT_EQ(p.instruction(3).attrs_as<BroadcastInDimAttrs>(),
            (BroadcastInDimAttrs{Shape{2, 3}, {1}}));
  // Equal shapes insert nothing; a 0-size dimension broadcasts with 1.
  Tracer e = ctx.AddParameter(T(DType::kFloat32, {0, 3}));
  const int before = ctx.program().num_values();
  EXPECT_EQ((e + e).shape(), (Shape{0, 3}));
  EXPECT_EQ(ctx.program().num_values(), before + 1);
  Tracer one = ctx.AddParameter(T(DType::kFloat32, {1, 1}));
  EXPECT_EQ((one + e).shape(), (Shape{0, 3}));
  EXPECT_EQ(ThrownMessage([&] { a + e; }),
            "add: shapes (2, 1) and (0, 3) cannot be broadcast together");
  EXPECT_EQ(
      ThrownMessage([&] { e + ctx.AddParameter(T(DType::kFloat32, {4})); }),
      "add: shapes (0, 3) and (4,) cannot be broadcast together");
}

TEST(TracerTest, DTypePromotionInsertsConverts) {
  TraceContext ctx;
  Tracer i = ctx.AddParameter(T(DType::kInt32, {4}));
  Tracer f = ctx.AddParameter(T(DType::kFloat32, {4}));
  Tracer h = ctx.AddParameter(T(DType::kFloat16, {4}));
  Tracer bf = ctx.AddParameter(T(DType::kBFloat16, {4}));
  Tracer u8 = ctx.AddParameter(T(DType::kUInt8, {4}));
  Tracer s8 = ctx.AddParameter(T(DType::kInt8, {4}));
  Tracer pred = ctx.AddParameter(T(DType::kBool, {4}));
  Tracer sum = i + f;
  EXPECT_EQ(sum.dtype(), DType::kFloat32);
  const Instruction& add = ctx.program().instruction(sum.id());
  EXPECT_EQ(ctx.program().instruction(add.operands[0]).kind(),
            OpKind::kConvert);
  EXPECT_EQ(add.operands[1], f.id());
  EXPECT_EQ((h + bf).dtype(), DType::kFloat32);
  EXPECT_EQ((u8 + s8).dtype(), DType::kInt16);
  EXPECT_EQ((pred + s8).dtype(), DType::kInt8);
  EXPECT_EQ((h * f).dtype(), DType::kFloat32);
  EXPECT_EQ(maximum(i, h).dtype(), DType::kFloat16);
  EXPECT_EQ(lt(i, f).dtype(), DType::kBool);
}

TEST(TracerTest, WeakScalarsTakeTheArraysDType) {
  TraceContext ctx;
  Tracer bf = ctx.AddParameter(T(DType::kBFloat16, {4}));
  Tracer i8 = ctx.AddParameter(T(DType::kInt8, {4}));
  Tracer u8 = ctx.AddParameter(T(DType::kUInt8, {4}));
  Tracer pred = ctx.AddParameter(T(DType::kBool, {4}));
  EXPECT_EQ((bf * 2).dtype(), DType::kBFloat16);
  EXPECT_EQ((bf * 2.5).dtype(), DType::kBFloat16);
  EXPECT_EQ((2.5f + bf).dtype(), DType::kBFloat16);
  EXPECT_EQ((i8 + 3).dtype(), DType::kInt8);
  EXPECT_EQ((i8 * 2.5).dtype(), DType::kFloat32);  // float scalar, int array
  EXPECT_EQ((pred + 1).dtype(), DType::kInt32);
  EXPECT_EQ((pred | true).dtype(), DType::kBool);
  EXPECT_EQ((i8 + true).dtype(), DType::kInt8);
  EXPECT_EQ(gt(u8, 3).dtype(), DType::kBool);
  EXPECT_EQ((i8 / 2).dtype(), DType::kFloat32);  // true division

  // The scalar becomes a constant of that dtype, on the correct side.
  Tracer d = 1 - bf;
  const Program& p = ctx.program();
  const Instruction& sub = p.instruction(d.id());
  ASSERT_EQ(sub.attrs_as<BinaryAttrs>().op, BinaryOp::kSub);
  const Instruction& lhs = p.instruction(sub.operands[0]);
  ASSERT_EQ(lhs.kind(), OpKind::kBroadcastInDim);
  const Literal& one =
      *p.instruction(lhs.operands[0]).attrs_as<ConstantAttrs>().literal;
  EXPECT_EQ(one, Literal::FromDoubles(DType::kBFloat16, Shape{}, {1.0}));
  EXPECT_EQ(sub.operands[1], bf.id());

  EXPECT_EQ(ThrownMessage([&] { i8 + 300; }),
            "add: the scalar 300 does not fit int8; convert the array to a "
            "wider type first");
  EXPECT_THAT(ThrownMessage([&] { u8 - (-1); }),
              HasSubstr("the scalar -1 does not fit uint8"));
}

TEST(TracerTest, UnaryFunctionsPromoteIntegersToFloat) {
  TraceContext ctx;
  Tracer i = ctx.AddParameter(T(DType::kInt32, {3}));
  Tracer h = ctx.AddParameter(T(DType::kFloat16, {3}));
  EXPECT_EQ(exp(i).dtype(), DType::kFloat32);
  EXPECT_EQ(sqrt(h).dtype(), DType::kFloat16);
  EXPECT_EQ(abs(i).dtype(), DType::kInt32);
  EXPECT_EQ((-i).dtype(), DType::kInt32);
  EXPECT_EQ((~i).dtype(), DType::kInt32);
  EXPECT_EQ(round(i).dtype(), DType::kFloat32);
  Tracer pred = ctx.AddParameter(T(DType::kBool, {3}));
  EXPECT_THAT(ThrownMessage([&] { -pred; }),
              HasSubstr("negate: is not defined for bool operands"));
  EXPECT_THAT(ThrownMessage([&] { ~h; }),
              HasSubstr("not: needs a bool or integer operand, got "
                        "float16[3]"));
}

TEST(TracerTest, WhereConvertsThePredicateAndBroadcasts) {
  TraceContext ctx;
  Tracer c = ctx.AddParameter(T(DType::kInt32, {2, 1}));
  Tracer x = ctx.AddParameter(T(DType::kFloat32, {3}));
  Tracer w = where(c, x, 0);
  EXPECT_EQ(w.type(), T(DType::kFloat32, {2, 3}));
  const Instruction& sel = ctx.program().instruction(w.id());
  EXPECT_EQ(sel.kind(), OpKind::kSelect);
  EXPECT_EQ(ctx.program().type(sel.operands[0]).dtype, DType::kBool);
  EXPECT_EQ(where(lt(x, 0), 1, x).dtype(), DType::kFloat32);
}

TEST(TracerTest, ConversionsAndTransfersAreElidedWhenNoOps) {
  TraceContext ctx;
  Tracer x = ctx.AddParameter(T(DType::kFloat32, {2}, MemoryKind::kPinnedHost));
  EXPECT_EQ(astype(x, DType::kFloat32).id(), x.id());
  EXPECT_EQ(to_memory_kind(x, MemoryKind::kPinnedHost).id(), x.id());
  Tracer d = to_memory_kind(x, MemoryKind::kDevice);
  EXPECT_EQ(d.type(), T(DType::kFloat32, {2}));
  Tracer y = x * 2;  // computed values live in device memory
  EXPECT_EQ(y.memory_kind(), MemoryKind::kDevice);
  Tracer back = to_memory_kind(y, MemoryKind::kUnpinnedHost);
  EXPECT_EQ(back.memory_kind(), MemoryKind::kUnpinnedHost);
  EXPECT_EQ(ctx.program().instruction(back.id()).kind(), OpKind::kTransfer);
  EXPECT_EQ(reshape(x, {2}).id(), x.id());
  EXPECT_EQ(transpose(x).id(), x.id());
}

TEST(TracerTest, CapturedConstantsAreSnapshots) {
  TraceContext ctx;
  std::vector<float> host = {1, 2, 3};
  Tracer c = constant(ctx, host, Shape{3});
  Literal lit = Literal::FromVector<float>({4, 5});
  Tracer d = constant(ctx, lit);
  host[0] = 100;  // mutate the sources after capture
  lit.Set<float>(0, 100);
  Program p = ctx.Finish({c, d});
  EXPECT_EQ(*p.instruction(c.id()).attrs_as<ConstantAttrs>().literal,
            Literal::FromVector<float>({1, 2, 3}));
  EXPECT_EQ(*p.instruction(d.id()).attrs_as<ConstantAttrs>().literal,
            Literal::FromVector<float>({4, 5}));
}

TEST(TracerTest, SharedConstantIsNotCopied) {
  TraceContext ctx;
  auto lit = std::make_shared<const Literal>(Literal::FromVector<int32_t>({1}));
  Tracer c = constant(ctx, lit);
  EXPECT_EQ(ctx.program().instruction(c.id()).attrs_as<ConstantAttrs>().literal,
            lit);
}

TEST(TracerTest, CreationFunctions) {
  TraceContext ctx;
  Tracer f = full(ctx, Shape{2, 2}, 1.5);
  EXPECT_EQ(f.type(), T(DType::kFloat32, {2, 2}));
  EXPECT_EQ(full(ctx, Shape{3}, 7).dtype(), DType::kInt32);
  EXPECT_EQ(full(ctx, Shape{}, true).type(), T(DType::kBool, {}));
  EXPECT_EQ(zeros(ctx, Shape{4}, DType::kBFloat16).dtype(), DType::kBFloat16);
  EXPECT_EQ(ones(ctx, Shape{0}).shape(), (Shape{0}));
  EXPECT_EQ(iota(ctx, DType::kInt32, Shape{2, 3}, 1).shape(), (Shape{2, 3}));
  EXPECT_THAT(ThrownMessage([&] { iota(ctx, DType::kInt32, Shape{2}, 1); }),
              HasSubstr("iota: dimension 1 is out of range for shape (2,)"));
  // full never materialises a large constant: one scalar and a broadcast.
  Tracer big = full(ctx, Shape{1 << 20}, 0.0);
  const Instruction& b = ctx.program().instruction(big.id());
  EXPECT_EQ(b.kind(), OpKind::kBroadcastInDim);
  EXPECT_EQ(ctx.program().type(b.operands[0]).num_elements(), 1);
}

TEST(TracerTest, ShapeFunctions) {
  TraceContext ctx;
  Tracer x = ctx.AddParameter(T(DType::kFloat32, {2, 3, 4}));
  EXPECT_EQ(reshape(x, {4, -1}).shape(), (Shape{4, 6}));
  EXPECT_EQ(transpose(x).shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(transpose(x, {0, -1, 1}).shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(broadcast_to(x, Shape{5, 2, 3, 4}).shape(), (Shape{5, 2, 3, 4}));
  EXPECT_EQ(slice(x, {0, 0, 1}, {2, 3, 4}, {1, 2, 2}).shape(),
            (Shape{2, 2, 2}));
  Tracer i = ctx.AddParameter(T(DType::kInt32, {}));
  EXPECT_EQ(dynamic_slice(x, {i, i, i}, {1, 2, 3}).shape(), (Shape{1, 2, 3}));
  Tracer upd = ctx.AddParameter(T(DType::kInt32, {1, 3, 4}));
  Tracer dus = dynamic_update_slice(x, upd, {i, i, i});
  EXPECT_EQ(dus.type(), x.type());
  Tracer h = ctx.AddParameter(T(DType::kFloat16, {2, 1, 4}));
  EXPECT_EQ(concatenate({x, h}, -2).type(), T(DType::kFloat32, {2, 4, 4}));
  EXPECT_EQ(pad(x, 0, {1, 0, 0}, {1, 0, -1}).shape(), (Shape{4, 3, 3}));
  EXPECT_EQ(pad(x, 0, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}).shape(),
            (Shape{3, 5, 7}));

  EXPECT_EQ(ThrownMessage([&] {
              reshape(x, {5, -1});
            }),
            "reshape: cannot reshape float32[2,3,4] (24 elements) to [5, -1]");
  EXPECT_EQ(ThrownMessage([&] {
              reshape(x, {5, 5});
            }),
            "reshape: cannot reshape float32[2,3,4] (24 elements) to (5, 5) "
            "(25 elements)");
  EXPECT_THAT(ThrownMessage([&] {
                reshape(x, {-1, -1});
              }),
              HasSubstr("only one dimension can be -1"));
  EXPECT_EQ(ThrownMessage([&] {
              broadcast_to(x, Shape{3, 4});
            }),
            "broadcast_to: cannot broadcast float32[2,3,4] to shape (3, 4)");
  EXPECT_THAT(ThrownMessage([&] {
                slice(x, {0, 0, 0}, {3, 3, 4});
              }),
              HasSubstr("slice: dimension 0 of float32[2,3,4]: start 0, "
                        "limit 3, stride 1 do not fit"));
  EXPECT_THAT(ThrownMessage([&] {
                concatenate({x, x}, 3);
              }),
              HasSubstr("concatenate: axis 3 is out of range for rank 3"));
  EXPECT_THAT(ThrownMessage([&] { concatenate({}); }),
              HasSubstr("concatenate: needs at least one operand"));
  EXPECT_THAT(ThrownMessage([&] {
                dynamic_slice(x, {i, i}, {1, 1, 1});
              }),
              HasSubstr("dynamic_slice: expects the operand and 3 start "
                        "indices"));
}

TEST(TracerTest, IndexingFunctions) {
  TraceContext ctx;
  Tracer x = ctx.AddParameter(T(DType::kFloat32, {4, 5}));
  Tracer idx = ctx.AddParameter(T(DType::kInt32, {2, 3}));
  EXPECT_EQ(take(x, idx, 0).shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(take(x, idx, -1).shape(), (Shape{4, 2, 3}));
  Tracer upd = ctx.AddParameter(T(DType::kInt32, {3, 5}));
  // Updates broadcast to take's shape and convert to x's dtype.
  Tracer s = scatter(x, idx, upd, 0, ScatterMode::kAdd);
  EXPECT_EQ(s.type(), x.type());
  const Instruction& sc = ctx.program().instruction(s.id());
  EXPECT_EQ(sc.attrs_as<ScatterAttrs>(), (ScatterAttrs{0, ScatterMode::kAdd}));
  EXPECT_EQ(ctx.program().type(sc.operands[2]), T(DType::kFloat32, {2, 3, 5}));
  EXPECT_EQ(scatter(x, idx, 1.0, 1).type(), x.type());
  Tracer fidx = ctx.AddParameter(T(DType::kFloat32, {2}));
  EXPECT_EQ(ThrownMessage([&] { take(x, fidx); }),
            "gather: indices must be integers, got float32[2]");
  EXPECT_THAT(ThrownMessage([&] {
                scatter(x, idx, ctx.AddParameter(T(DType::kFloat32, {4})));
              }),
              HasSubstr("scatter set updates: cannot broadcast float32[4] to "
                        "shape (2, 3, 5)"));
}

TEST(TracerTest, Reductions) {
  TraceContext ctx;
  Tracer x = ctx.AddParameter(T(DType::kFloat32, {2, 3, 4}));
  EXPECT_EQ(sum(x).shape(), Shape{});
  EXPECT_EQ(sum(x, {0, 2}).shape(), (Shape{3}));
  EXPECT_EQ(max(x, {-1}, /*keepdims=*/true).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(min(x, {}).id(), x.id());  // reduces nothing
  Tracer b = ctx.AddParameter(T(DType::kBool, {5}));
  EXPECT_EQ(sum(b).dtype(), DType::kInt32);
  EXPECT_EQ(max(b).dtype(), DType::kBool);
  Tracer u = ctx.AddParameter(T(DType::kUInt8, {5}));
  EXPECT_EQ(prod(u).dtype(), DType::kUInt32);
  EXPECT_EQ(ThrownMessage([&] { sum(x, {3}); }),
            "sum: axis 3 is out of range for rank 3");
  EXPECT_THAT(ThrownMessage([&] {
                sum(x, {1, -2});
              }),
              HasSubstr("reduce sum: axes [1, 1] repeats dimension 1"));
}

TEST(TracerTest, IntegerPowerOfAFloatIsAChainOfMultiplies) {
  TraceContext ctx;
  Tracer x = ctx.AddParameter(T(DType::kFloat32, {5}));
  const int before = ctx.program().num_values();
  Tracer cube = pow(x, 3);  // x * (x * x), no pow per element
  EXPECT_EQ(ctx.program().num_values(), before + 2);
  EXPECT_EQ(ctx.program().instruction(cube.id()).attrs_as<BinaryAttrs>().op,
            BinaryOp::kMul);
  Tracer inv = pow(x, -2);  // 1 / (x * x)
  EXPECT_EQ(ctx.program().instruction(inv.id()).attrs_as<BinaryAttrs>().op,
            BinaryOp::kDiv);
  Tracer one = pow(x, 0);
  EXPECT_EQ(one.shape(), x.shape());
  Tracer real = pow(x, 3.0);  // a float exponent stays a pow
  EXPECT_EQ(ctx.program().instruction(real.id()).attrs_as<BinaryAttrs>().op,
            BinaryOp::kPow);
  // Integers to a non-negative power multiply too (wrapping, as the integer
  // pow does); a negative power keeps the pow op (0 unless |x| == 1).
  Tracer i = ctx.AddParameter(T(DType::kInt32, {5}));
  Tracer ipow = pow(i, 3);
  EXPECT_EQ(ctx.program().instruction(ipow.id()).attrs_as<BinaryAttrs>().op,
            BinaryOp::kMul);
  Tracer ineg = pow(i, -2);
  EXPECT_EQ(ctx.program().instruction(ineg.id()).attrs_as<BinaryAttrs>().op,
            BinaryOp::kPow);
  Program p = ctx.Finish({cube, inv, one, ipow});
  auto r = Interpret(
      p, {Literal::FromVector(std::vector<float>{1, 2, -3, 0.5f, 4}, Shape{5}),
          Literal::FromVector(std::vector<int32_t>{1, 2, 3, 4, 5}, Shape{5})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[3].data<int32_t>()[4], 125);
  EXPECT_EQ(r.value()[0].data<float>()[2], -27.f);
  EXPECT_EQ(r.value()[1].data<float>()[1], 0.25f);
  EXPECT_EQ(r.value()[2].data<float>()[4], 1.f);
}

TEST(TracerTest, Matmul) {
  TraceContext ctx;
  Tracer a = ctx.AddParameter(T(DType::kFloat32, {2, 3}));
  Tracer b = ctx.AddParameter(T(DType::kFloat32, {3, 4}));
  Tracer v = ctx.AddParameter(T(DType::kFloat32, {3}));
  Tracer ba = ctx.AddParameter(T(DType::kFloat32, {5, 1, 2, 3}));
  Tracer bb = ctx.AddParameter(T(DType::kFloat32, {6, 3, 4}));
  EXPECT_EQ(matmul(a, b).shape(), (Shape{2, 4}));
  EXPECT_EQ(matmul(a, v).shape(), (Shape{2}));
  EXPECT_EQ(matmul(v, b).shape(), (Shape{4}));
  EXPECT_EQ(matmul(v, v).shape(), Shape{});
  EXPECT_EQ(matmul(v, bb).shape(), (Shape{6, 4}));
  Tracer batched = matmul(ba, bb);
  EXPECT_EQ(batched.shape(), (Shape{5, 6, 2, 4}));
  EXPECT_EQ(ctx.program().instruction(batched.id()).attrs_as<DotGeneralAttrs>(),
            (DotGeneralAttrs{{0, 1}, {0, 1}, {3}, {2}}));
  // A matrix on the right: one unbatched dot_general, no broadcast of b.
  const int before = ctx.program().num_values();
  Tracer hw = matmul(ba, b);
  EXPECT_EQ(hw.shape(), (Shape{5, 1, 2, 4}));
  EXPECT_EQ(ctx.program().num_values(), before + 1);
  EXPECT_EQ(ctx.program().instruction(hw.id()).attrs_as<DotGeneralAttrs>(),
            (DotGeneralAttrs{{}, {}, {3}, {0}}));
  Tracer h = ctx.AddParameter(T(DType::kInt8, {3, 4}));
  EXPECT_EQ(matmul(a, h).dtype(), DType::kFloat32);
  EXPECT_EQ(ThrownMessage([&] { matmul(a, a); }),
            "matmul: contracting dimensions differ (3 vs 2) in float32[2,3] "
            "@ float32[2,3]");
  EXPECT_THAT(ThrownMessage([&] {
                dot_general(a, a, DotGeneralAttrs{{}, {}, {1}, {0}});
              }),
              HasSubstr("dot_general: contracting dimension 1 of lhs has size "
                        "3 but contracting dimension 0 of rhs has size 2"));
}

TEST(TracerTest, MisuseIsReportedClearly) {
  TraceContext ctx, other;
  Tracer x = ctx.AddParameter(T(DType::kFloat32, {2}));
  Tracer y = other.AddParameter(T(DType::kFloat32, {2}));
  EXPECT_THAT(ThrownMessage([&] { x + y; }),
              HasSubstr("add: operand 1 belongs to another trace"));
  EXPECT_THAT(ThrownMessage([&] { Tracer() * x; }),
              HasSubstr("multiply: operand 0 is an empty Tracer"));
  EXPECT_THAT(ThrownMessage([&] { ctx.Finish({y}); }),
              HasSubstr("Finish: operand 0 belongs to another trace"));
  Program p = ctx.Finish({x, x});
  EXPECT_EQ(p.outputs(), (std::vector<ValueId>{0, 0}));
  EXPECT_THROW(x + 1, Error);  // the trace is over
  EXPECT_THROW(ctx.AddParameter(T(DType::kFloat32, {})), Error);
}

TEST(TracerTest, PublicNamesInBatonNamespace) {
  baton::TraceContext ctx;
  baton::Tracer x = ctx.AddParameter(T(DType::kFloat32, {2}));
  EXPECT_EQ(sum(x * x).shape(), Shape{});  // found by argument lookup
}

}  // namespace
}  // namespace baton::compiler
