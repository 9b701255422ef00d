// Forward-mode rules of the elementwise ops: every UnaryOp and BinaryOp,
// convert, compare and select, against finite differences and the exact
// values JAX's rules give at kinks and ties.
#include <gtest/gtest.h>

#include "jvp/jvp_test_util.h"

namespace baton::compiler::jvp_test {
namespace {

// ---- Unary ----

struct UnaryCase {
  UnaryOp op;
  double lo, hi;  // a domain where the op is smooth
};

class JvpUnaryTest : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(JvpUnaryTest, MatchesFiniteDifferences) {
  const UnaryCase c = GetParam();
  const Program p = Trace({F64(Shape{2, 3})}, [&](TraceContext& ctx, auto& x) {
    return std::vector<Tracer>{ctx.Emit(UnaryAttrs{c.op}, {x[0]})};
  });
  ExpectMatchesFiniteDifferences(p, {Uniform(Shape{2, 3}, c.lo, c.hi, 1)},
                                 {true});
}

INSTANTIATE_TEST_SUITE_P(Smooth, JvpUnaryTest,
                         ::testing::Values(UnaryCase{UnaryOp::kNeg, -2, 2},
                                           UnaryCase{UnaryOp::kAbs, 0.1, 2},
                                           UnaryCase{UnaryOp::kAbs, -2, -0.1},
                                           UnaryCase{UnaryOp::kExp, -2, 2},
                                           UnaryCase{UnaryOp::kLog, 0.2, 3},
                                           UnaryCase{UnaryOp::kTanh, -2, 2},
                                           UnaryCase{UnaryOp::kLogistic, -3, 3},
                                           UnaryCase{UnaryOp::kSqrt, 0.2, 3},
                                           UnaryCase{UnaryOp::kRsqrt, 0.2, 3},
                                           UnaryCase{UnaryOp::kSin, -3, 3},
                                           UnaryCase{UnaryOp::kCos, -3, 3},
                                           UnaryCase{UnaryOp::kLog1p, -0.9, 3},
                                           UnaryCase{UnaryOp::kExpm1, -2, 2},
                                           UnaryCase{UnaryOp::kTan, -1.4, 1.4},
                                           UnaryCase{UnaryOp::kAtan, -3, 3}),
                         [](const auto& info) {
                           return std::string(op_name(info.param.op)) + "_" +
                                  std::to_string(info.index);
                         });

class JvpPiecewiseConstantUnaryTest : public ::testing::TestWithParam<UnaryOp> {
};

TEST_P(JvpPiecewiseConstantUnaryTest, HasZeroTangentAndNoRule) {
  const Program p = Trace({F64(Shape{4})}, [&](TraceContext& ctx, auto& x) {
    return std::vector<Tracer>{ctx.Emit(UnaryAttrs{GetParam()}, {x[0]})};
  });
  const Program jvp = JvpOf(p, {true});
  const JvpValues v = RunJvp(jvp, {Doubles(Shape{4}, {-1.5, -0.2, 0.7, 2.5})},
                             {Doubles(Shape{4}, {1, 2, 3, 4})});
  ExpectAllZero(v.tangents[0], "tangent");
  // Two parameters, the op, and the materialized zero output (a scalar
  // constant and its broadcast): nothing was emitted for the tangent.
  EXPECT_EQ(jvp.num_values(), 5);
}

INSTANTIATE_TEST_SUITE_P(All, JvpPiecewiseConstantUnaryTest,
                         ::testing::Values(UnaryOp::kSign, UnaryOp::kFloor,
                                           UnaryOp::kCeil, UnaryOp::kRound),
                         [](const auto& info) {
                           return std::string(op_name(info.param));
                         });

TEST(JvpUnaryTest, AbsAtZeroTakesThePositiveBranch) {
  const Program p = Trace({F64(Shape{2})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{abs(x[0])};
  });
  const JvpValues v = RunJvp(JvpOf(p, {true}), {Doubles(Shape{2}, {0.0, -0.0})},
                             {Doubles(Shape{2}, {3, 5})});
  ExpectBitwiseEqual(v.tangents[0], Doubles(Shape{2}, {3, 5}), "abs'(0)");
}

TEST(JvpUnaryTest, Float32MatchesFloat64Rule) {
  // The rules keep the tangent's dtype (weak scalars do not promote), and
  // float32 results agree with float64 ones to float32 precision.
  auto program = [](DType dtype) {
    return Trace({ValueType{Shape{3}, dtype}}, [](TraceContext&, auto& x) {
      return std::vector<Tracer>{tanh(x[0]) * sqrt(x[0]) / (x[0] + 1)};
    });
  };
  const std::vector<double> x = {0.5, 1, 1.5}, t = {1, -0.5, 2};
  const JvpValues v32 = RunJvp(JvpOf(program(DType::kFloat32), {true}),
                               {Doubles(Shape{3}, x, DType::kFloat32)},
                               {Doubles(Shape{3}, t, DType::kFloat32)});
  const JvpValues v64 = RunJvp(JvpOf(program(kF64), {true}),
                               {Doubles(Shape{3}, x)}, {Doubles(Shape{3}, t)});
  ASSERT_EQ(v32.tangents[0].dtype(), DType::kFloat32);
  for (int i = 0; i < 3; ++i) {
    const double want = v64.tangents[0].GetAsDouble(i);
    EXPECT_NEAR(v32.tangents[0].GetAsDouble(i), want, 1e-5 * std::abs(want));
  }
}

// ---- Binary ----

struct BinaryCase {
  BinaryOp op;
  double xlo, xhi, ylo, yhi;
};

class JvpBinaryTest : public ::testing::TestWithParam<BinaryCase> {};

Program BinaryProgram(BinaryOp op) {
  return Trace(
      {F64(Shape{3, 2}), F64(Shape{3, 2})}, [&](TraceContext& ctx, auto& x) {
        return std::vector<Tracer>{ctx.Emit(BinaryAttrs{op}, {x[0], x[1]})};
      });
}

TEST_P(JvpBinaryTest, MatchesFiniteDifferences) {
  const BinaryCase c = GetParam();
  const Program p = BinaryProgram(c.op);
  const std::vector<Literal> args = {Uniform(Shape{3, 2}, c.xlo, c.xhi, 2),
                                     Uniform(Shape{3, 2}, c.ylo, c.yhi, 3)};
  ExpectMatchesFiniteDifferences(p, args, {true, true});
  ExpectMatchesFiniteDifferences(p, args, {true, false});
  ExpectMatchesFiniteDifferences(p, args, {false, true});
}

INSTANTIATE_TEST_SUITE_P(
    Smooth, JvpBinaryTest,
    ::testing::Values(BinaryCase{BinaryOp::kAdd, -2, 2, -2, 2},
                      BinaryCase{BinaryOp::kSub, -2, 2, -2, 2},
                      BinaryCase{BinaryOp::kMul, -2, 2, -2, 2},
                      BinaryCase{BinaryOp::kDiv, -2, 2, 0.5, 2},
                      BinaryCase{BinaryOp::kPow, 0.3, 2, -1.5, 2.5},
                      // max/min: disjoint ranges, once each way round.
                      BinaryCase{BinaryOp::kMax, -2, -1, 1, 2},
                      BinaryCase{BinaryOp::kMax, 1, 2, -2, -1},
                      BinaryCase{BinaryOp::kMin, -2, -1, 1, 2},
                      BinaryCase{BinaryOp::kMin, 1, 2, -2, -1},
                      // rem: x / y within (2, 3), away from the jumps, and
                      // with negative operands (fmod truncates toward 0).
                      BinaryCase{BinaryOp::kRem, 4.7, 5.0, 1.8, 2.0},
                      BinaryCase{BinaryOp::kRem, -5.0, -4.7, 1.8, 2.0},
                      // atan2 in every quadrant, away from the origin.
                      BinaryCase{BinaryOp::kAtan2, 0.5, 2, 0.5, 2},
                      BinaryCase{BinaryOp::kAtan2, -2, -0.5, 0.5, 2},
                      BinaryCase{BinaryOp::kAtan2, 0.5, 2, -2, -0.5},
                      BinaryCase{BinaryOp::kAtan2, -2, -0.5, -2, -0.5}),
    [](const auto& info) {
      return std::string(op_name(info.param.op)) + "_" +
             std::to_string(info.index);
    });

TEST(JvpBinaryTest, LogicalOpsGiveZeroTangents) {
  // and, or and not take bool or integer operands (the IR has them on no
  // float), so only the float parts of this program carry tangents.
  const Program p =
      Trace({F64(Shape{3, 2}), F64(Shape{3, 2})}, [](TraceContext&, auto& x) {
        const Tracer a = lt(x[0], x[1]), b = gt(x[0], 0);
        return std::vector<Tracer>{astype((a & b) | ~a, kF64) * x[0], a & b,
                                   ~astype(x[1], DType::kInt32)};
      });
  ExpectMatchesFiniteDifferences(
      p, {Uniform(Shape{3, 2}, -1, 1, 1), Uniform(Shape{3, 2}, -1, 1, 2)},
      {true, true});
}

TEST(JvpBinaryTest, MaxAndMinSplitTiesEvenly) {
  for (BinaryOp op : {BinaryOp::kMax, BinaryOp::kMin}) {
    const Program p =
        Trace({F64(Shape{3}), F64(Shape{3})}, [&](TraceContext& ctx, auto& x) {
          return std::vector<Tracer>{ctx.Emit(BinaryAttrs{op}, {x[0], x[1]})};
        });
    const JvpValues v =
        RunJvp(JvpOf(p, {true, true}),
               {Doubles(Shape{3}, {1, 2, 3}), Doubles(Shape{3}, {1, 0, 5})},
               {Doubles(Shape{3}, {2, 4, 8}), Doubles(Shape{3}, {6, 16, 32})});
    const Literal want = op == BinaryOp::kMax ? Doubles(Shape{3}, {4, 4, 32})
                                              : Doubles(Shape{3}, {4, 16, 8});
    ExpectBitwiseEqual(v.tangents[0], want, std::string(op_name(op)));
  }
}

TEST(JvpBinaryTest, PowIsFiniteAtZeroBaseAndZeroExponent) {
  // JAX's values: d/dx x^y = 0 where y == 0; d/dy uses log(1) at x == 0.
  const Program p = BinaryProgram(BinaryOp::kPow);
  const Shape s{3, 2};
  const JvpValues v =
      RunJvp(JvpOf(p, {true, true}),
             {Doubles(s, {0, 0, 0, 2, 2, 3}), Doubles(s, {2, 0, 1, 0, 3, 2})},
             {Doubles(s, {1, 1, 1, 1, 0, 0}), Doubles(s, {0, 0, 0, 0, 1, 1})});
  const Literal& t = v.tangents[0];
  // 0^2: 2*0 = 0; 0^0: 0; 0^1: 1*0^0 = 1; 2^0: 0; d/dy 2^3 = 8 log 2;
  // d/dy 3^2 = 9 log 3.
  const std::vector<double> want = {
      0, 0, 1, 0, 8 * std::log(2.0), 9 * std::log(3.0)};
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(t.GetAsDouble(i), want[i], 1e-12) << "element " << i;
  }
}

TEST(JvpBinaryTest, IntegerArithmeticHasZeroTangent) {
  const Program p = Trace({F64(Shape{3})}, [](TraceContext&, auto& x) {
    const Tracer i = astype(x[0], DType::kInt32);
    return std::vector<Tracer>{i * i + 1, astype(i * 2, kF64)};
  });
  ExpectMatchesFiniteDifferences(p, {Doubles(Shape{3}, {1.5, 2.5, -3.5})},
                                 {true});
}

TEST(JvpUnaryTest, NewTranscendentalsHaveJaxsExactRules) {
  // log1p' = 1 / (1 + x), expm1' = expm1 + 1, tan' = 1 + tan^2,
  // atan' = 1 / (1 + x^2), evaluated at a few points.
  const std::vector<double> x = {0.0, 0.25, -0.5};
  const Literal t = Doubles(Shape{3}, {1, 2, 3});
  struct Case {
    UnaryOp op;
    double (*d)(double);
  };
  const Case cases[] = {
      {UnaryOp::kLog1p, [](double v) { return 1 / (1 + v); }},
      {UnaryOp::kExpm1, [](double v) { return std::expm1(v) + 1; }},
      {UnaryOp::kTan,
       [](double v) { return 1 + std::tan(v) * std::tan(v); }},
      {UnaryOp::kAtan, [](double v) { return 1 / (1 + v * v); }},
  };
  for (const Case& c : cases) {
    const Program p = Trace({F64(Shape{3})}, [&](TraceContext& ctx, auto& a) {
      return std::vector<Tracer>{ctx.Emit(UnaryAttrs{c.op}, {a[0]})};
    });
    const JvpValues v = RunJvp(JvpOf(p, {true}), {Doubles(Shape{3}, x)}, {t});
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(v.tangents[0].GetAsDouble(i), (i + 1) * c.d(x[i]), 1e-14)
          << op_name(c.op) << " at " << x[i];
    }
  }
}

TEST(JvpBinaryTest, Atan2PartialsAtAxes) {
  // d atan2(y, x) = (x dy - y dx) / (x^2 + y^2).
  const Program p = BinaryProgram(BinaryOp::kAtan2);
  const Shape s{3, 2};
  const JvpValues v = RunJvp(
      JvpOf(p, {true, true}),
      {Doubles(s, {0, 1, 0, -1, 2, 3}), Doubles(s, {1, 0, -1, 0, 2, -4})},
      {Doubles(s, {1, 0, 1, 0, 1, 1}), Doubles(s, {0, 1, 0, 1, 1, 1})});
  const std::vector<double> want = {1, -1, -1, 1, 0, (-4.0 - 3.0) / 25};
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(v.tangents[0].GetAsDouble(i), want[i], 1e-15) << i;
  }
}

TEST(JvpBinaryTest, XorAndShiftsOfIntegersHaveZeroTangents) {
  const Program p = Trace({F64(Shape{3})}, [](TraceContext&, auto& x) {
    const Tracer i = astype(x[0], DType::kInt32);
    const Tracer b = gt(x[0], 1);
    const Tracer bits = shift_left(i, 2) ^ shift_right_arithmetic(i, 1);
    return std::vector<Tracer>{
        astype(bits ^ shift_right_logical(i, 1), kF64) * x[0],
        astype(b ^ true, kF64) + x[0]};
  });
  ExpectMatchesFiniteDifferences(p, {Doubles(Shape{3}, {1.5, 2.5, -3.5})},
                                 {true});
}

// ---- Convert, compare, select ----

TEST(JvpConvertTest, FloatToFloatConvertsTheTangent) {
  const Program p =
      Trace({F64(Shape{3}), ValueType{Shape{2}, DType::kFloat32}},
            [](TraceContext&, auto& x) {
              return std::vector<Tracer>{astype(x[0], DType::kFloat32),
                                         astype(x[1], kF64),
                                         astype(x[0], DType::kFloat16)};
            });
  const Literal t0 = Doubles(Shape{3}, {0.1, -2.7, 1e-3});
  const Literal t1 = Doubles(Shape{2}, {0.25, 3.5}, DType::kFloat32);
  const JvpValues v = RunJvp(JvpOf(p, {true, true}),
                             {Doubles(Shape{3}, {1, 2, 3}),
                              Doubles(Shape{2}, {1, 2}, DType::kFloat32)},
                             {t0, t1});
  ExpectBitwiseEqual(v.tangents[0], Interp(p, {t0, t1})[0], "f64 -> f32");
  ExpectBitwiseEqual(v.tangents[1], Interp(p, {t0, t1})[1], "f32 -> f64");
  ExpectBitwiseEqual(v.tangents[2], Interp(p, {t0, t1})[2], "f64 -> f16");
}

TEST(JvpConvertTest, ThroughIntegersGivesZero) {
  const Program p = Trace({F64(Shape{3}), ValueType{Shape{3}, DType::kInt32}},
                          [](TraceContext&, auto& x) {
                            return std::vector<Tracer>{
                                astype(x[0], DType::kInt32),
                                astype(astype(x[0], DType::kInt32), kF64),
                                astype(x[1], kF64) * x[0]};
                          });
  ExpectMatchesFiniteDifferences(p,
                                 {Doubles(Shape{3}, {0.5, 1.5, 2.5}),
                                  Doubles(Shape{3}, {1, -2, 3}, DType::kInt32)},
                                 {true, false});
}

TEST(JvpCompareTest, BoolOutputGetsZeroTangent) {
  const Program p =
      Trace({F64(Shape{3}), F64(Shape{3})}, [](TraceContext&, auto& x) {
        return std::vector<Tracer>{lt(x[0], x[1])};
      });
  const Program jvp = JvpOf(p, {true, true});
  const JvpValues v =
      RunJvp(jvp, {Doubles(Shape{3}, {1, 2, 3}), Doubles(Shape{3}, {3, 2, 1})},
             {Doubles(Shape{3}, {1, 1, 1}), Doubles(Shape{3}, {1, 1, 1})});
  EXPECT_EQ(v.tangents[0].dtype(), DType::kBool);
  ExpectAllZero(v.tangents[0], "compare");
}

TEST(JvpSelectTest, MatchesFiniteDifferences) {
  const Program p =
      Trace({F64(Shape{2, 3}), F64(Shape{2, 3})}, [](TraceContext&, auto& x) {
        return std::vector<Tracer>{
            where(gt(x[0], x[1]), x[0] * x[0], sin(x[1])),
            where(gt(x[0], 0), x[1], 2.5)};
      });
  const std::vector<Literal> args = {
      Doubles(Shape{2, 3}, {1, -1, 2, 0.5, -2, 3}),
      Doubles(Shape{2, 3}, {0.5, 0.5, -1, 1, -3, 4})};
  ExpectMatchesFiniteDifferences(p, args, {true, true});
  ExpectMatchesFiniteDifferences(p, args, {false, true});
  ExpectMatchesFiniteDifferences(p, args, {true, false});
}

}  // namespace
}  // namespace baton::compiler::jvp_test
