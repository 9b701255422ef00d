// Reference interpreter: argument checking, whole traced programs, and the
// ops with no family of their own (parameter, constant, transfer).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "baton/compiler/reference_interpreter.h"
#include "baton/compiler/tracer.h"
#include "baton/core/fast_math.h"
#include "interpreter_test_util.h"

namespace baton::compiler {
namespace {

using test_util::D;
using test_util::L;
using ::testing::HasSubstr;

ValueType T(DType dtype, Shape shape, MemoryKind kind = MemoryKind::kDevice) {
  return ValueType{std::move(shape), dtype, kind};
}

std::vector<Literal> Execute(const Program& p,
                             const std::vector<Literal>& args) {
  Result<std::vector<Literal>> r = Interpret(p, args);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? r.value() : std::vector<Literal>{};
}

TEST(InterpreterTest, ChecksArguments) {
  TraceContext ctx;
  Tracer x = ctx.AddParameter(T(DType::kFloat32, {4}));
  Program p = ctx.Finish({x});
  Result<std::vector<Literal>> r = Interpret(p, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "Interpret: the program takes 1 arguments, got 0");
  r = Interpret(p, {L<float>({1, 2, 3})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "Interpret: argument 0 is float32[3] but parameter 0 is "
            "float32[4]");
  r = Interpret(p, {L<int32_t>({1, 2, 3, 4})});
  EXPECT_THAT(r.status().message(), HasSubstr("argument 0 is int32[4]"));
}

TEST(InterpreterTest, OutputsMayRepeatAndBeParameters) {
  TraceContext ctx;
  Tracer x = ctx.AddParameter(T(DType::kInt32, {2}, MemoryKind::kPinnedHost));
  Tracer y = x + 1;
  Program p = ctx.Finish({y, x, y});
  std::vector<Literal> out = Execute(p, {L<int32_t>({1, 2})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], L<int32_t>({2, 3}));
  EXPECT_EQ(out[1], L<int32_t>({1, 2}));
  EXPECT_EQ(out[2], L<int32_t>({2, 3}));
}

TEST(InterpreterTest, ConstantsAndTransfers) {
  TraceContext ctx;
  Tracer c = constant(ctx, L<float>({1, 2, 3}));
  Tracer h = to_memory_kind(c, MemoryKind::kPinnedHost);
  Tracer back = to_memory_kind(h * 2, MemoryKind::kUnpinnedHost);
  Program p = ctx.Finish({h, back});
  std::vector<Literal> out = Execute(p, {});
  EXPECT_EQ(out[0], L<float>({1, 2, 3}));
  EXPECT_EQ(out[1], L<float>({2, 4, 6}));
}

TEST(InterpreterTest, TracedElementwiseChainIsBitwiseTheScalarMath) {
  TraceContext ctx;
  Tracer x = ctx.AddParameter(T(DType::kFloat32, {5}));
  Program p = ctx.Finish({tanh(exp(x) * 2 + 1)});
  const std::vector<float> xs = {-3.0f, -0.5f, 0.0f, 0.25f, 1.5f};
  std::vector<float> expected;
  for (float v : xs) {
    expected.push_back(fast_math::Tanh(fast_math::Exp(v) * 2.0f + 1.0f));
  }
  EXPECT_EQ(Execute(p, {L<float>(xs)})[0], L<float>(expected));
}

TEST(InterpreterTest, TracedBroadcastingAndPromotion) {
  TraceContext ctx;
  Tracer a = ctx.AddParameter(T(DType::kInt32, {2, 1}));
  Tracer b = ctx.AddParameter(T(DType::kFloat32, {3}));
  Tracer bf = ctx.AddParameter(T(DType::kBFloat16, {3}));
  Program p = ctx.Finish({a + b, a / 2, bf * 2.5, where(gt(b, 1), b, 0)});
  std::vector<Literal> out =
      Execute(p, {L<int32_t>({1, 2}, Shape{2, 1}), L<float>({0.5f, 1.5f, 2.5f}),
                  D(DType::kBFloat16, {3}, {1, 2, 3})});
  EXPECT_EQ(out[0],
            L<float>({1.5f, 2.5f, 3.5f, 2.5f, 3.5f, 4.5f}, Shape{2, 3}));
  EXPECT_EQ(out[1], L<float>({0.5f, 1.0f}, Shape{2, 1}));
  EXPECT_EQ(out[2], D(DType::kBFloat16, {3}, {2.5, 5, 7.5}));
  EXPECT_EQ(out[3], L<float>({0, 1.5f, 2.5f}));
}

TEST(InterpreterTest, TracedIndexingUpdateAndReductions) {
  TraceContext ctx;
  Tracer x = ctx.AddParameter(T(DType::kFloat32, {2, 3}));
  Tracer idx = ctx.AddParameter(T(DType::kInt32, {3}));
  Tracer i = ctx.AddParameter(T(DType::kInt32, {}));
  // x.at[:, idx].add(10), then a running set of reductions and slices.
  Tracer updated = scatter(x, idx, 10.0, 1, ScatterMode::kAdd);
  Tracer row =
      dynamic_slice(updated, {i, zeros(ctx, Shape{}, DType::kInt32)}, {1, 3});
  Program p =
      ctx.Finish({updated, sum(updated, {1}), max(updated), take(x, idx, 1),
                  row, matmul(updated, transpose(updated))});
  std::vector<Literal> out =
      Execute(p, {L<float>({0, 1, 2, 3, 4, 5}, Shape{2, 3}),
                  L<int32_t>({2, 2, 7}), Literal::Scalar<int32_t>(5)});
  const Literal expected_updated = L<float>({0, 1, 22, 3, 4, 25}, Shape{2, 3});
  EXPECT_EQ(out[0], expected_updated);
  EXPECT_EQ(out[1], L<float>({23, 32}));
  EXPECT_EQ(out[2], Literal::Scalar(25.0f));
  EXPECT_EQ(out[3], L<float>({2, 2, 2, 5, 5, 5}, Shape{2, 3}));
  EXPECT_EQ(out[4], L<float>({3, 4, 25}, Shape{1, 3}));  // row 5 clamps to 1
  EXPECT_EQ(out[5], L<float>({485, 554, 554, 650}, Shape{2, 2}));
}

TEST(InterpreterTest, TracedBatchedMatmulBroadcastsBatchDimensions) {
  TraceContext ctx;
  Tracer a = ctx.AddParameter(T(DType::kInt32, {2, 1, 2}));
  Tracer b = ctx.AddParameter(T(DType::kInt32, {2, 1}));
  Tracer v = ctx.AddParameter(T(DType::kInt32, {2}));
  Program p = ctx.Finish({matmul(a, b), matmul(v, b), matmul(a, v)});
  std::vector<Literal> out =
      Execute(p, {L<int32_t>({1, 2, 3, 4}, Shape{2, 1, 2}),
                  L<int32_t>({10, 100}, Shape{2, 1}), L<int32_t>({1, 1})});
  EXPECT_EQ(out[0], L<int32_t>({210, 430}, Shape{2, 1, 1}));
  EXPECT_EQ(out[1], L<int32_t>({110}));
  EXPECT_EQ(out[2], L<int32_t>({3, 7}, Shape{2, 1}));
}

TEST(InterpreterTest, TracedPadConcatenateAndIota) {
  TraceContext ctx;
  Tracer x = ctx.AddParameter(T(DType::kUInt8, {3}));
  Program p = ctx.Finish({pad(x, 9, {-1}, {2}, {1}),
                          concatenate({x, iota(ctx, DType::kUInt8, Shape{2})}),
                          reshape(x, {-1, 1})});
  std::vector<Literal> out = Execute(p, {L<uint8_t>({1, 2, 3})});
  EXPECT_EQ(out[0], L<uint8_t>({9, 2, 9, 3, 9, 9}));
  EXPECT_EQ(out[1], L<uint8_t>({1, 2, 3, 0, 1}));
  EXPECT_EQ(out[2], L<uint8_t>({1, 2, 3}, Shape{3, 1}));
}

}  // namespace
}  // namespace baton::compiler
