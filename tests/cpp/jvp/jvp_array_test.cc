// Forward-mode rules of the data-movement, indexing, reduction and
// contraction ops: exact checks where the op is linear, finite differences
// everywhere, and the exact values of JAX's tie rules.
#include <gtest/gtest.h>

#include "jvp/jvp_test_util.h"

namespace baton::compiler::jvp_test {
namespace {

Literal I32(Shape shape, const std::vector<double>& values) {
  return Doubles(std::move(shape), values, DType::kInt32);
}

// Checks a one-parameter program linear in x both ways.
void CheckLinear(const Program& p, const Literal& x) {
  ExpectExactlyLinear(p, {x});
  ExpectMatchesFiniteDifferences(p, {x}, {true});
}

TEST(JvpShapeOpsTest, BroadcastReshapeTransposeSlice) {
  const Program p = Trace({F64(Shape{2, 3})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{
        broadcast_in_dim(x[0], Shape{2, 4, 3}, {0, 2}),
        reshape(x[0], {3, 2}),
        transpose(x[0], {1, 0}),
        slice(x[0], {0, 1}, {2, 3}, {1, 2}),
    };
  });
  CheckLinear(p, Uniform(Shape{2, 3}, -2, 2, 1));
}

TEST(JvpShapeOpsTest, TransferKeepsTheTangentWithItsPrimal) {
  const Program p = Trace({F64(Shape{3})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{
        to_memory_kind(x[0] * x[0], MemoryKind::kPinnedHost)};
  });
  const Program jvp = JvpOf(p, {true});
  EXPECT_EQ(jvp.type(jvp.outputs()[1]).memory_kind, MemoryKind::kPinnedHost);
  ExpectMatchesFiniteDifferences(p, {Uniform(Shape{3}, -2, 2, 1)}, {true});
}

TEST(JvpShapeOpsTest, DynamicSliceWithTracedStarts) {
  const Program p = Trace(
      {F64(Shape{4, 5}), ValueType{Shape{}, DType::kInt32}},
      [](TraceContext& ctx, auto& x) {
        const Tracer one = constant(ctx, Literal::Scalar<int32_t>(1));
        return std::vector<Tracer>{dynamic_slice(x[0], {x[1], one}, {2, 3}),
                                   dynamic_slice(x[0], {x[1], x[1]}, {3, 3})};
      });
  const std::vector<Literal> args = {Uniform(Shape{4, 5}, -2, 2, 1),
                                     I32(Shape{}, {3})};  // clamped to 2
  ExpectMatchesFiniteDifferences(p, args, {true, false});
}

TEST(JvpShapeOpsTest, DynamicUpdateSlice) {
  const Program p = Trace(
      {F64(Shape{4, 3}), F64(Shape{2, 2}), ValueType{Shape{}, DType::kInt32}},
      [](TraceContext& ctx, auto& x) {
        const Tracer zero = constant(ctx, Literal::Scalar<int32_t>(0));
        return std::vector<Tracer>{
            dynamic_update_slice(x[0], x[1] * x[1], {x[2], zero}),
            dynamic_update_slice(x[0] * 2, zeros(ctx, Shape{2, 2}, kF64),
                                 {zero, x[2]})};
      });
  const std::vector<Literal> args = {Uniform(Shape{4, 3}, -2, 2, 1),
                                     Uniform(Shape{2, 2}, -2, 2, 2),
                                     I32(Shape{}, {1})};
  ExpectMatchesFiniteDifferences(p, args, {true, true, false});
  ExpectMatchesFiniteDifferences(p, args, {true, false, false});
  ExpectMatchesFiniteDifferences(p, args, {false, true, false});
}

TEST(JvpShapeOpsTest, ConcatenateWithAConstantOperand) {
  const Program p = Trace(
      {F64(Shape{2, 2}), F64(Shape{2, 1})}, [](TraceContext& ctx, auto& x) {
        return std::vector<Tracer>{
            concatenate({x[0], ones(ctx, Shape{2, 3}, kF64), exp(x[1])}, 1)};
      });
  const std::vector<Literal> args = {Uniform(Shape{2, 2}, -2, 2, 1),
                                     Uniform(Shape{2, 1}, -2, 2, 2)};
  ExpectMatchesFiniteDifferences(p, args, {true, true});
  ExpectMatchesFiniteDifferences(p, args, {false, true});
}

TEST(JvpShapeOpsTest, PadDifferentiatesThePaddingValue) {
  const Program p =
      Trace({F64(Shape{2, 3}), F64(Shape{})}, [](TraceContext&, auto& x) {
        return std::vector<Tracer>{pad(x[0], x[1], {1, -1}, {0, 2}, {1, 1}),
                                   pad(x[0], 0.0, {0, 1}, {1, 0})};
      });
  const std::vector<Literal> args = {Uniform(Shape{2, 3}, -2, 2, 1),
                                     Doubles(Shape{}, {0.5})};
  ExpectExactlyLinear(p, args);
  ExpectMatchesFiniteDifferences(p, args, {true, true});
  ExpectMatchesFiniteDifferences(p, args, {false, true});
}

TEST(JvpIndexingTest, GatherWithClampedIndices) {
  const Program p = Trace({F64(Shape{3, 4})}, [](TraceContext& ctx, auto& x) {
    const Tracer idx = constant(
        ctx, Literal::FromVector<int32_t>({2, -1, 7, 0, 2, 1}, Shape{2, 3}));
    return std::vector<Tracer>{take(x[0], idx, 1), take(x[0], idx, 0)};
  });
  CheckLinear(p, Uniform(Shape{3, 4}, -2, 2, 1));
}

// x.at[idx].<mode>(u) along axis 0 with a repeated and an out-of-range
// index; u's tangent and x's both matter.
Program ScatterProgram(ScatterMode mode, const std::vector<int32_t>& idx) {
  return Trace(
      {F64(Shape{4, 2}), F64(Shape{static_cast<int64_t>(idx.size()), 2})},
      [&](TraceContext& ctx, auto& x) {
        const Tracer i = constant(ctx, Literal::FromVector<int32_t>(idx));
        return std::vector<Tracer>{scatter(x[0], i, x[1], 0, mode)};
      });
}

class JvpScatterTest : public ::testing::TestWithParam<ScatterMode> {};

TEST_P(JvpScatterTest, MatchesFiniteDifferences) {
  const ScatterMode mode = GetParam();
  const Program p = ScatterProgram(mode, {2, 0, 2, 5, 3});
  // Distinct magnitudes, so min and max have no ties.
  const std::vector<Literal> args = {
      Doubles(Shape{4, 2}, {0.3, -1.1, 1.7, 0.9, -0.6, 1.3, 0.25, -2.2}),
      Doubles(Shape{5, 2},
              {1.2, -0.4, 0.7, 2.3, -1.9, 0.55, 3.1, 0.15, 1.45, -0.75})};
  ExpectMatchesFiniteDifferences(p, args, {true, true});
  ExpectMatchesFiniteDifferences(p, args, {true, false});
  ExpectMatchesFiniteDifferences(p, args, {false, true});
}

INSTANTIATE_TEST_SUITE_P(AllModes, JvpScatterTest,
                         ::testing::Values(ScatterMode::kSet, ScatterMode::kAdd,
                                           ScatterMode::kMul, ScatterMode::kMin,
                                           ScatterMode::kMax),
                         [](const auto& info) {
                           return std::string(op_name(info.param));
                         });

TEST(JvpScatterTest, SetAndAddAreExactlyLinearInTheirData) {
  for (ScatterMode mode : {ScatterMode::kSet, ScatterMode::kAdd}) {
    ExpectExactlyLinear(
        ScatterProgram(mode, {1, 1, 3, -1}),
        {Uniform(Shape{4, 2}, -1, 1, 1), Uniform(Shape{4, 2}, -1, 1, 2)});
  }
}

TEST(JvpScatterTest, MulWithZeroUpdatesAndRepeatedIndices) {
  // Slot 0 gets one zero update, slot 2 two zeros, slot 3 none; the
  // exclusive products must not divide by zero.
  const Program p = ScatterProgram(ScatterMode::kMul, {0, 0, 2, 2, 2, 1});
  const std::vector<Literal> args = {
      Doubles(Shape{4, 2}, {1.5, -2, 0.5, 3, -1.25, 2, 0.75, 1}),
      Doubles(Shape{6, 2}, {0, 1.5, -2, 0, 0, 0.5, 0, 1.25, 1.75, 0, 2, -3})};
  ExpectMatchesFiniteDifferences(p, args, {true, true});
  ExpectMatchesFiniteDifferences(p, args, {false, true});
}

TEST(JvpScatterTest, MinAndMaxShareTiedSlots) {
  // Slot 0: the operand and one update tie at the result; slot 1: two
  // updates tie; slot 2: the update loses.
  for (ScatterMode mode : {ScatterMode::kMin, ScatterMode::kMax}) {
    const Program p =
        Trace({F64(Shape{3}), F64(Shape{4})}, [&](TraceContext& ctx, auto& x) {
          const Tracer i =
              constant(ctx, Literal::FromVector<int32_t>({0, 1, 1, 2}));
          return std::vector<Tracer>{scatter(x[0], i, x[1], 0, mode)};
        });
    const bool is_max = mode == ScatterMode::kMax;
    const double loser = is_max ? -9 : 9, tied = is_max ? 4 : -4;
    const JvpValues v = RunJvp(
        JvpOf(p, {true, true}),
        {Doubles(Shape{3}, {1, is_max ? -5.0 : 5.0, 2}),
         Doubles(Shape{4}, {1, tied, tied, loser})},
        {Doubles(Shape{3}, {2, 100, 8}), Doubles(Shape{4}, {4, 1, 3, 50})});
    ExpectBitwiseEqual(v.tangents[0], Doubles(Shape{3}, {3, 2, 8}),
                       std::string(op_name(mode)));
  }
}

// ---- Reductions ----

struct ReduceCase {
  ReduceOp op;
  std::vector<int64_t> axes;
};

class JvpReduceTest : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(JvpReduceTest, MatchesFiniteDifferences) {
  const ReduceCase c = GetParam();
  const Program p =
      Trace({F64(Shape{2, 3, 2})}, [&](TraceContext& ctx, auto& x) {
        return std::vector<Tracer>{ctx.Emit(ReduceAttrs{c.op, c.axes}, {x[0]})};
      });
  // Distinct values (no ties for max/min), away from zero for prod.
  std::vector<double> v(12);
  for (int i = 0; i < 12; ++i) v[i] = (i % 2 ? -1 : 1) * (0.4 + 0.13 * i);
  ExpectMatchesFiniteDifferences(p, {Doubles(Shape{2, 3, 2}, v)}, {true});
}

INSTANTIATE_TEST_SUITE_P(
    AllOps, JvpReduceTest,
    ::testing::Values(
        ReduceCase{ReduceOp::kSum, {1}}, ReduceCase{ReduceOp::kSum, {0, 2}},
        ReduceCase{ReduceOp::kProd, {1}},
        ReduceCase{ReduceOp::kProd, {0, 1, 2}}, ReduceCase{ReduceOp::kProd, {}},
        ReduceCase{ReduceOp::kMax, {1}}, ReduceCase{ReduceOp::kMax, {0, 1, 2}},
        ReduceCase{ReduceOp::kMin, {2}}, ReduceCase{ReduceOp::kMin, {0, 1}}),
    [](const auto& info) {
      return std::string(op_name(info.param.op)) + "_" +
             std::to_string(info.index);
    });

TEST(JvpReduceTest, ProdWithZeros) {
  // Rows with no zero, one zero and two zeros: d prod is the product of
  // the others, which a division by x would get wrong.
  const Program p = Trace({F64(Shape{3, 3})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{prod(x[0], {1})};
  });
  const Literal x = Doubles(Shape{3, 3}, {1.5, -2, 0.5, 0, 3, -1.25, 0, 2, 0});
  ExpectMatchesFiniteDifferences(p, {x}, {true});
  const JvpValues v =
      RunJvp(JvpOf(p, {true}), {x},
             {Doubles(Shape{3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1})});
  // Row 0: -2*0.5 + 1.5*0.5 + 1.5*-2; row 1: only the zero's tangent
  // counts, times 3 * -1.25; row 2: two zeros, no first-order change.
  const std::vector<double> want = {-3.25, -3.75, 0};
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(v.tangents[0].GetAsDouble(i), want[i], 1e-15) << "row " << i;
  }
}

TEST(JvpReduceTest, MaxAndMinAverageTies) {
  for (ReduceOp op : {ReduceOp::kMax, ReduceOp::kMin}) {
    const Program p =
        Trace({F64(Shape{2, 3})}, [&](TraceContext& ctx, auto& x) {
          return std::vector<Tracer>{ctx.Emit(ReduceAttrs{op, {1}}, {x[0]})};
        });
    const double s = op == ReduceOp::kMax ? 1 : -1;
    const JvpValues v = RunJvp(
        JvpOf(p, {true}), {Doubles(Shape{2, 3}, {s * 2, s * 2, 0, 0, s, s})},
        {Doubles(Shape{2, 3}, {1, 3, 100, 100, 2, 6})});
    ExpectBitwiseEqual(v.tangents[0], Doubles(Shape{2}, {2, 4}),
                       std::string(op_name(op)));
  }
}

// ---- Contractions ----

TEST(JvpDotTest, MatmulAndBatchedDot) {
  const Program p = Trace(
      {F64(Shape{2, 3, 4}), F64(Shape{2, 4, 5})}, [](TraceContext&, auto& x) {
        return std::vector<Tracer>{
            matmul(x[0], x[1]),
            dot_general(x[0], x[1], {{}, {}, {0, 2}, {0, 1}})};
      });
  const std::vector<Literal> args = {Uniform(Shape{2, 3, 4}, -1, 1, 1),
                                     Uniform(Shape{2, 4, 5}, -1, 1, 2)};
  ExpectMatchesFiniteDifferences(p, args, {true, true});
  ExpectMatchesFiniteDifferences(p, args, {true, false});
  ExpectMatchesFiniteDifferences(p, args, {false, true});
}

TEST(JvpDotTest, SmallNetwork) {
  // sum(tanh(x @ w + b)^2) / n, as a loss would be.
  const Program p = Trace({F64(Shape{3, 4}), F64(Shape{4, 2}), F64(Shape{2})},
                          [](TraceContext&, auto& x) {
                            const Tracer h = tanh(matmul(x[0], x[1]) + x[2]);
                            return std::vector<Tracer>{sum(h * h) / 6};
                          });
  ExpectMatchesFiniteDifferences(
      p,
      {Uniform(Shape{3, 4}, -1, 1, 1), Uniform(Shape{4, 2}, -1, 1, 2),
       Uniform(Shape{2}, -1, 1, 3)},
      {false, true, true});
}

}  // namespace
}  // namespace baton::compiler::jvp_test
