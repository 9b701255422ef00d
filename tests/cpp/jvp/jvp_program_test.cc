// Program-level behaviour of Jvp (jvp.h): the calling convention, zero
// tangents (symbolic while transforming, materialized only for outputs),
// errors, and nesting (the JVP of a JVP program is a second derivative).
#include <gtest/gtest.h>

#include "jvp/jvp_test_util.h"

namespace baton::compiler::jvp_test {
namespace {

TEST(JvpProgramTest, CallingConvention) {
  const Program p = Trace({F64(Shape{2}), F64(Shape{3}), F64(Shape{})},
                          [](TraceContext&, auto& x) {
                            return std::vector<Tracer>{x[0] * x[2], sum(x[1])};
                          });
  const Program jvp = JvpOf(p, {true, false, true});
  // (params..., tangents of params 0 and 2) -> (outputs..., tangents...)
  ASSERT_EQ(jvp.num_parameters(), 5);
  EXPECT_EQ(jvp.parameter_type(3), p.parameter_type(0));
  EXPECT_EQ(jvp.parameter_type(4), p.parameter_type(2));
  const std::vector<ValueType> out = jvp.output_types();
  EXPECT_EQ(out[0], out[2]);
  EXPECT_EQ(out[1], out[3]);
}

TEST(JvpProgramTest, OutputsThatAreParametersOrRepeat) {
  const Program p =
      Trace({F64(Shape{2}), F64(Shape{2})}, [](TraceContext&, auto& x) {
        return std::vector<Tracer>{x[0], x[1], x[0]};
      });
  const Literal tx = Doubles(Shape{2}, {3, 4});
  const JvpValues v =
      RunJvp(JvpOf(p, {true, false}),
             {Doubles(Shape{2}, {1, 2}), Doubles(Shape{2}, {5, 6})}, {tx});
  ExpectBitwiseEqual(v.tangents[0], tx, "x");
  ExpectAllZero(v.tangents[1], "y");
  ExpectBitwiseEqual(v.tangents[2], tx, "x again");
}

TEST(JvpProgramTest, IntegerAndBoolOutputsGetZerosOfTheirDType) {
  const Program p = Trace({F64(Shape{3})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{astype(x[0], DType::kInt32), gt(x[0], 0),
                               astype(x[0], DType::kUInt8)};
  });
  const JvpValues v = RunJvp(JvpOf(p, {true}), {Doubles(Shape{3}, {1, -2, 3})},
                             {Doubles(Shape{3}, {1, 1, 1})});
  EXPECT_EQ(v.tangents[0].dtype(), DType::kInt32);
  EXPECT_EQ(v.tangents[1].dtype(), DType::kBool);
  EXPECT_EQ(v.tangents[2].dtype(), DType::kUInt8);
  for (const Literal& t : v.tangents) ExpectAllZero(t, t.ToString());
}

TEST(JvpProgramTest, NoTangentsAtAll) {
  const Program p = Trace({F64(Shape{2})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{exp(x[0])};
  });
  const Program jvp = JvpOf(p, {false});
  EXPECT_EQ(jvp.num_parameters(), 1);
  const std::vector<Literal> out = Interp(jvp, {Doubles(Shape{2}, {1, 2})});
  ASSERT_EQ(out.size(), 2u);
  ExpectAllZero(out[1], "tangent");
}

TEST(JvpProgramTest, SymbolicZerosEmitNothing) {
  // c has no tangent, so nothing is emitted for sin(c) * cos(c) + c: no cos
  // for d sin, no sin for d cos, and no multiplication by zeros.
  const Program p =
      Trace({F64(Shape{4}), F64(Shape{4})}, [](TraceContext&, auto& x) {
        return std::vector<Tracer>{exp(x[0]) * 2, sin(x[1]) * cos(x[1]) + x[1]};
      });
  const Program jvp = JvpOf(p, {true, false});
  auto count_unary = [&](UnaryOp op) {
    return Count(jvp, [&](const Instruction& i) {
      const auto* u = i.attrs_if<UnaryAttrs>();
      return u && u->op == op;
    });
  };
  EXPECT_EQ(count_unary(UnaryOp::kSin), 1);
  EXPECT_EQ(count_unary(UnaryOp::kCos), 1);
  const int muls = Count(jvp, [](const Instruction& i) {
    const auto* b = i.attrs_if<BinaryAttrs>();
    return b && b->op == BinaryOp::kMul;
  });
  EXPECT_EQ(muls, 4);  // two primal, t * exp(x) and its * 2
  ExpectMatchesFiniteDifferences(
      p, {Doubles(Shape{4}, {1, 2, 3, 4}), Doubles(Shape{4}, {1, 2, 3, 4})},
      {true, false});
}

TEST(JvpProgramTest, ZeroTangentOutputsKeepTheirMemoryKind) {
  const ValueType pinned{Shape{2}, kF64, MemoryKind::kPinnedHost};
  const Program p = Trace({pinned, F64(Shape{2})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{x[0], x[1] * 2};
  });
  const Program jvp = JvpOf(p, {false, true});
  EXPECT_EQ(jvp.output_types()[2], pinned);
  const Program with = JvpOf(p, {true, true});
  EXPECT_EQ(with.parameter_type(2), pinned);
  EXPECT_EQ(with.output_types()[2], pinned);
}

TEST(JvpProgramTest, IntegerParameterWithATangentIsAnError) {
  const Program p =
      Trace({F64(Shape{2}), ValueType{Shape{2}, DType::kInt32}},
            [](TraceContext&, auto& x) {
              return std::vector<Tracer>{x[0] * astype(x[1], kF64)};
            });
  Result<Program> jvp = transforms::Jvp(p, {true, true});
  ASSERT_FALSE(jvp.ok());
  EXPECT_EQ(jvp.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(jvp.status().message().find("parameter 1"), std::string::npos)
      << jvp.status().message();
  EXPECT_NE(jvp.status().message().find("int32"), std::string::npos);
}

TEST(JvpProgramTest, WrongNumberOfFlagsIsAnError) {
  const Program p = Trace({F64(Shape{2})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{x[0]};
  });
  Result<Program> jvp = transforms::Jvp(p, {true, true});
  ASSERT_FALSE(jvp.ok());
  EXPECT_EQ(jvp.status().code(), ErrorCode::kInvalidArgument);
}

TEST(JvpProgramTest, JvpOfJvpIsTheSecondDerivative) {
  // f = x sin x; f' = sin x + x cos x; f'' = 2 cos x - x sin x.
  const Program f = Trace({F64(Shape{3})}, [](TraceContext&, auto& x) {
    return std::vector<Tracer>{x[0] * sin(x[0])};
  });
  const Program j1 = JvpOf(f, {true});          // (x, t) -> (f, f' t)
  const Program j2 = JvpOf(j1, {true, false});  // + tangent s of x
  const std::vector<double> x = {0.3, -1.2, 2.0}, t = {1, 2, -0.5},
                            s = {0.5, 1, 3};
  const JvpValues v = RunJvp(j2, {Doubles(Shape{3}, x), Doubles(Shape{3}, t)},
                             {Doubles(Shape{3}, s)});
  ASSERT_EQ(v.tangents.size(), 2u);
  for (int i = 0; i < 3; ++i) {
    const double d1 = std::sin(x[i]) + x[i] * std::cos(x[i]);
    const double d2 = 2 * std::cos(x[i]) - x[i] * std::sin(x[i]);
    EXPECT_NEAR(v.tangents[0].GetAsDouble(i), d1 * s[i], 1e-12);
    EXPECT_NEAR(v.tangents[1].GetAsDouble(i), d2 * t[i] * s[i], 1e-12);
  }
}

// A program using most op families, in any float dtype.
Program MixedProgram(DType dtype) {
  const ValueType type{Shape{3, 2}, dtype};
  return Trace({type, type}, [](TraceContext& ctx, auto& x) {
    const Tracer idx = constant(ctx, Literal::FromVector<int32_t>({0, 2, 0}));
    const Tracer a = x[0] * x[1] / (abs(x[1]) + 1);
    const Tracer b = scatter(x[0], idx, x[1] * 0.5, 0, ScatterMode::kMul);
    const Tracer c = scatter(a, idx, x[1], 0, ScatterMode::kMax);
    const Tracer d = prod(x[0], {0}) + max(x[1], {0}) + min(a, {0});
    const Tracer e = pow(abs(x[0]) + 0.5, x[1]) + logistic(a) * tanh(b);
    const Tracer f = maximum(rsqrt(abs(c) + 1), sqrt(abs(b) + 0.1));
    const Tracer g = matmul(transpose(e), f);
    return std::vector<Tracer>{sum(g) + sum(d), take(a, idx, 0)};
  });
}

const std::vector<double> kMixedX = {0.7, -1.3, 1.1, 0.45, -0.9, 1.6};
const std::vector<double> kMixedY = {1.25, 0.35, -0.6, 2.1, 0.8, -1.45};

// Every rule emits only differentiable ops: the JVP program of a program
// using each op family matches finite differences itself.
TEST(JvpProgramTest, JvpProgramsAreDifferentiable) {
  const Program p = MixedProgram(kF64);
  const std::vector<Literal> args = {Doubles(Shape{3, 2}, kMixedX),
                                     Doubles(Shape{3, 2}, kMixedY)};
  ExpectMatchesFiniteDifferences(p, args, {true, true});
  const Program j1 = JvpOf(p, {true, true});
  std::vector<Literal> j1_args = args;
  j1_args.push_back(Uniform(Shape{3, 2}, -1, 1, 11));
  j1_args.push_back(Uniform(Shape{3, 2}, -1, 1, 12));
  ExpectMatchesFiniteDifferences(j1, j1_args, {true, true, true, true}, 1e-5);
}

// Low-precision programs get tangents of their own dtype (the rules' weak
// scalars and indicator converts do not promote), close to float64's.
TEST(JvpProgramTest, LowPrecisionTangentsKeepTheirDType) {
  const std::vector<double> tx = {1, -0.5, 0.25, 2, -1, 0.75};
  const std::vector<double> ty = {-0.25, 1, 0.5, -1.5, 0.125, 1};
  const JvpValues want =
      RunJvp(JvpOf(MixedProgram(kF64), {true, true}),
             {Doubles(Shape{3, 2}, kMixedX), Doubles(Shape{3, 2}, kMixedY)},
             {Doubles(Shape{3, 2}, tx), Doubles(Shape{3, 2}, ty)});
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    const double tol = dtype == DType::kFloat32 ? 1e-5 : 0.1;
    const JvpValues got = RunJvp(
        JvpOf(MixedProgram(dtype), {true, true}),
        {Doubles(Shape{3, 2}, kMixedX, dtype),
         Doubles(Shape{3, 2}, kMixedY, dtype)},
        {Doubles(Shape{3, 2}, tx, dtype), Doubles(Shape{3, 2}, ty, dtype)});
    ASSERT_EQ(got.tangents.size(), want.tangents.size());
    for (size_t o = 0; o < got.tangents.size(); ++o) {
      EXPECT_EQ(got.tangents[o].dtype(), dtype);
      for (int64_t e = 0; e < got.tangents[o].num_elements(); ++e) {
        const double w = want.tangents[o].GetAsDouble(e);
        EXPECT_NEAR(got.tangents[o].GetAsDouble(e), w,
                    tol * std::max(1.0, std::abs(w)))
            << dtype_name(dtype) << " output " << o << " element " << e;
      }
    }
  }
}

}  // namespace
}  // namespace baton::compiler::jvp_test
