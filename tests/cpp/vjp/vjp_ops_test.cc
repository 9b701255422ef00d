// Per-op cotangent rules of transforms::Vjp against finite differences
// (float64) and exact values.
#include <gtest/gtest.h>

#include "vjp/vjp_test_util.h"

namespace baton::compiler::vjp_test {
namespace {

const Shape kS{2, 3};

Program Unary(std::function<Tracer(const Tracer&)> f) {
  return Build({F64(kS)}, [&](TraceContext&, const std::vector<Tracer>& p) {
    return std::vector<Tracer>{f(p[0])};
  });
}

TEST(VjpOpsTest, UnaryMath) {
  const Literal x = Random(F64(kS), 1, 0.2, 1.5);  // positive: log, sqrt
  const Literal xs = Random(F64(kS), 2, -1.5, 1.5);
  ExpectGradients(Unary([](const Tracer& t) { return -t; }), {true}, {xs});
  ExpectGradients(Unary([](const Tracer& t) { return abs(t); }), {true}, {xs});
  ExpectGradients(Unary([](const Tracer& t) { return exp(t); }), {true}, {xs});
  ExpectGradients(Unary([](const Tracer& t) { return log(t); }), {true}, {x});
  ExpectGradients(Unary([](const Tracer& t) { return tanh(t); }), {true}, {xs});
  ExpectGradients(Unary([](const Tracer& t) { return logistic(t); }), {true},
                  {xs});
  ExpectGradients(Unary([](const Tracer& t) { return sqrt(t); }), {true}, {x});
  ExpectGradients(Unary([](const Tracer& t) { return rsqrt(t); }), {true}, {x});
  ExpectGradients(Unary([](const Tracer& t) { return sin(t); }), {true}, {xs});
  ExpectGradients(Unary([](const Tracer& t) { return cos(t); }), {true}, {xs});
  ExpectGradients(Unary([](const Tracer& t) { return log1p(t); }), {true},
                  {Random(F64(kS), 7, -0.8, 1.5)});
  ExpectGradients(Unary([](const Tracer& t) { return expm1(t); }), {true},
                  {xs});
  ExpectGradients(Unary([](const Tracer& t) { return tan(t); }), {true}, {xs});
  ExpectGradients(Unary([](const Tracer& t) { return atan(t); }), {true},
                  {xs});
  // Piecewise-constant functions have zero derivatives.
  ExpectGradients(Unary([](const Tracer& t) { return floor(t) + sign(t) + t; }),
                  {true}, {xs});
}

TEST(VjpOpsTest, SaturatingOutputsSaveOnlyTheOutput) {
  for (auto f : {+[](const Tracer& t) { return tanh(t); },
                 +[](const Tracer& t) { return exp(t); },
                 +[](const Tracer& t) { return logistic(t); }}) {
    const VjpPrograms v = MustVjp(Unary(f), {true});
    ASSERT_EQ(v.residuals.size(), 1u);
    EXPECT_NE(v.residuals[0].what.find("output of"), std::string::npos)
        << v.residuals[0].what;
  }
}

Program BinaryProgram(std::function<Tracer(const Tracer&, const Tracer&)> f) {
  return Build({F64(kS), F64(kS)},
               [&](TraceContext&, const std::vector<Tracer>& p) {
                 return std::vector<Tracer>{f(p[0], p[1])};
               });
}

TEST(VjpOpsTest, BinaryMath) {
  const Literal a = Random(F64(kS), 3, 0.5, 2.0),
                b = Random(F64(kS), 4, 0.5, 2.0);
  const Literal c = Random(F64(kS), 5, -2.0, 2.0),
                d = Random(F64(kS), 6, -2.0, 2.0);
  for (auto f :
       {+[](const Tracer&x, const Tracer&y) { return x + y; },
        +[](const Tracer&x, const Tracer&y) { return x - y; },
        +[](const Tracer&x, const Tracer&y) { return x * y; },
        +[](const Tracer&x, const Tracer&y) { return x / y; },
        +[](const Tracer&x, const Tracer&y) { return maximum(x, y); },
        +[](const Tracer&x, const Tracer&y) { return minimum(x, y); }}) {
    ExpectGradients(BinaryProgram(f), {true, true}, {c, d});
    ExpectGradients(BinaryProgram(f), {true, false}, {c, d});
    ExpectGradients(BinaryProgram(f), {false, true}, {c, d});
  }
  ExpectGradients(
      BinaryProgram([](const Tracer& x, const Tracer& y) { return pow(x, y); }),
      {true, true}, {a, c});
  // atan2 in several quadrants, each point at least 0.5 from the origin.
  const auto atan2_program = BinaryProgram(
      [](const Tracer& y, const Tracer& x) { return atan2(y, x); });
  ExpectGradients(atan2_program, {true, true}, {a, b});
  ExpectGradients(atan2_program, {true, false}, {c, b});
  ExpectGradients(atan2_program, {false, true}, {a, d});
  // rem away from its jumps (|a / b| not near an integer).
  const Literal num =
      Values(DType::kFloat64, kS, {5.3, -5.3, 7.9, 2.2, -3.3, 9.1});
  const Literal den =
      Values(DType::kFloat64, kS, {2.0, 2.0, 3.0, -1.5, 2.5, 4.0});
  ExpectGradients(
      BinaryProgram([](const Tracer& x, const Tracer& y) {
        return x.context()->Emit(BinaryAttrs{BinaryOp::kRem}, {x, y});
      }),
      {true, true}, {num, den});
}

TEST(VjpOpsTest, MaxMinTiesSplitEvenly) {
  const Program p = BinaryProgram([](const Tracer& x, const Tracer& y) {
    return maximum(x, y) + minimum(x, y) * 3;
  });
  const VjpPrograms v = MustVjp(p, {true, true});
  const Literal x = Values(DType::kFloat64, kS, {1, 2, 3, 4, 5, 6});
  const Literal y = Values(DType::kFloat64, kS, {1, 0, 3, 9, 5, 0});
  const std::vector<Literal> g =
      RunVjp(p, v, {x, y}, {Values(DType::kFloat64, kS, {1, 1, 1, 1, 1, 1})});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].ToVector<double>(), (std::vector<double>{2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(g[1].ToVector<double>(), (std::vector<double>{2, 3, 2, 1, 2, 3}));
}

TEST(VjpOpsTest, PowAtZeroBase) {
  const Shape s{3};
  const Program p =
      Build({F64(s), F64(s)}, [](TraceContext&, const std::vector<Tracer>& q) {
        return std::vector<Tracer>{pow(q[0], q[1])};
      });
  const VjpPrograms v = MustVjp(p, {true, true});
  const Literal x = Values(DType::kFloat64, s, {0, 0, 2});
  const Literal y = Values(DType::kFloat64, s, {0, 2, 3});
  const std::vector<Literal> g =
      RunVjp(p, v, {x, y}, {Values(DType::kFloat64, s, {1, 1, 1})});
  ASSERT_EQ(g.size(), 2u);
  // d/dx: x^0 -> 0, x^2 at 0 -> 0, x^3 at 2 -> 12.
  EXPECT_EQ(g[0].ToVector<double>(), (std::vector<double>{0, 0, 12}));
  // d/dy: log(1) * ans = 0 at x == 0; 8 * log(2) at x == 2.
  EXPECT_EQ(g[1].Get<double>(0), 0);
  EXPECT_EQ(g[1].Get<double>(1), 0);
  EXPECT_NEAR(g[1].Get<double>(2), 8 * std::log(2.0), 1e-12);
}

TEST(VjpOpsTest, SelectAndComparisons) {
  const Program p = Build({F64(kS), F64(kS)}, [](TraceContext&,
                                                 const std::vector<Tracer>& q) {
    return std::vector<Tracer>{where(gt(q[0], q[1]), q[0] * q[1], q[0] + q[1])};
  });
  ExpectGradients(p, {true, true}, {Random(F64(kS), 8), Random(F64(kS), 9)});
}

TEST(VjpOpsTest, ConvertGoesBackToTheOperandDType) {
  const Program p =
      Build({F64(kS)}, [](TraceContext&, const std::vector<Tracer>& q) {
        const Tracer f32 = astype(q[0], DType::kFloat32) * 2;
        return std::vector<Tracer>{astype(f32, DType::kFloat64),
                                   astype(q[0], DType::kInt32)};
      });
  const VjpPrograms v = MustVjp(p, {true});
  const std::vector<Literal> g =
      RunVjp(p, v, {Random(F64(kS), 8)},
             {Values(DType::kFloat64, kS, {1.5, 1.5, 1.5, 1.5, 1.5, 1.5}),
              Literal(kS, DType::kInt32)});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].dtype(), DType::kFloat64);
  EXPECT_EQ(g[0].ToVector<double>(), (std::vector<double>{3, 3, 3, 3, 3, 3}));
}

TEST(VjpOpsTest, LayoutOps) {
  const Literal x = Random(F64(Shape{2, 1, 3}), 10);
  auto check = [&](Fn f) {
    ExpectGradients(Build({F64(Shape{2, 1, 3})}, f), {true}, {x});
  };
  // Broadcast with an added dim, an expanded size-1 dim and a transposition.
  check([](TraceContext&, const std::vector<Tracer>& p) {
    return std::vector<Tracer>{
        broadcast_in_dim(p[0], Shape{3, 4, 2, 5}, {2, 1, 0}) *
        broadcast_in_dim(p[0], Shape{3, 4, 2, 5}, {2, 1, 0})};
  });
  check([](TraceContext&, const std::vector<Tracer>& p) {
    return std::vector<Tracer>{sin(reshape(p[0], {3, 2}))};
  });
  check([](TraceContext&, const std::vector<Tracer>& p) {
    return std::vector<Tracer>{sin(transpose(p[0], {2, 0, 1}))};
  });
  check([](TraceContext&, const std::vector<Tracer>& p) {
    return std::vector<Tracer>{
        sin(slice(p[0], {0, 0, 1}, {2, 1, 3}, {1, 1, 2})),
        slice(p[0], {1, 0, 0}, {2, 1, 3})};
  });
  check([](TraceContext&, const std::vector<Tracer>& p) {
    return std::vector<Tracer>{sin(concatenate({p[0], p[0] * 2, p[0]}, 1))};
  });
}

TEST(VjpOpsTest, PadWithNegativeAndInteriorPadding) {
  const Shape s{3, 4};
  const Program p = Build({F64(s), F64(Shape{})}, [](TraceContext&,
                                                     const std::vector<Tracer>&
                                                         q) {
    return std::vector<Tracer>{sin(pad(q[0], q[1], {-1, 2}, {1, -2}, {1, 2}))};
  });
  ExpectGradients(p, {true, true},
                  {Random(F64(s), 11), Random(F64(Shape{}), 12)});
}

TEST(VjpOpsTest, DynamicSlicesClampStarts) {
  const Shape s{4, 5};
  for (int start : {1, 3, -2}) {  // 3 and -2 get clamped
    const Program p =
        Build({F64(s), I32(Shape{})},
              [](TraceContext& ctx, const std::vector<Tracer>& q) {
                const Tracer one = full(ctx, Shape{}, 1, DType::kInt32);
                const Tracer ds = dynamic_slice(q[0], {q[1], one}, {2, 3});
                return std::vector<Tracer>{sin(ds)};
              });
    ExpectGradients(p, {true, false},
                    {Random(F64(s), 13), Literal::Scalar<int32_t>(start)});
    const Program u =
        Build({F64(s), F64(Shape{2, 2}), I32(Shape{})},
              [](TraceContext& ctx, const std::vector<Tracer>& q) {
                const Tracer two = full(ctx, Shape{}, 2, DType::kInt32);
                return std::vector<Tracer>{
                    sin(dynamic_update_slice(q[0], q[1] * q[1], {q[2], two}))};
              });
    ExpectGradients(u, {true, true, false},
                    {Random(F64(s), 14), Random(F64(Shape{2, 2}), 15),
                     Literal::Scalar<int32_t>(start)});
  }
}

TEST(VjpOpsTest, GatherClampsIndices) {
  const Shape s{4, 3};
  const Literal idx = Values(DType::kInt32, Shape{2, 3}, {0, 2, 2, -1, 7, 1});
  const Program p = Build({F64(s), I32(Shape{2, 3})}, [](TraceContext&,
                                                         const std::vector<
                                                             Tracer>& q) {
    return std::vector<Tracer>{sin(take(q[0], q[1], 0)), take(q[0], q[1], 1)};
  });
  ExpectGradients(p, {true, false}, {Random(F64(s), 16), idx});
}

TEST(VjpOpsTest, ScatterModes) {
  const Shape s{5, 2};
  const Shape us{4, 2};
  // Repeated (1), out of range (7, -1): dropped updates get zero cotangents.
  const Literal idx = Values(DType::kInt32, Shape{4}, {1, 7, 1, -1});
  const Literal idx2 = Values(DType::kInt32, Shape{4}, {3, 0, 1, 8});
  for (ScatterMode mode :
       {ScatterMode::kAdd, ScatterMode::kSet, ScatterMode::kMul,
        ScatterMode::kMin, ScatterMode::kMax}) {
    SCOPED_TRACE(std::string(op_name(mode)));
    const Program p = Build(
        {F64(s), I32(Shape{4}), F64(us)},
        [mode](TraceContext&, const std::vector<Tracer>& q) {
          return std::vector<Tracer>{sin(scatter(q[0], q[1], q[2], 0, mode))};
        });
    // Distinct values (no ties for min/max).
    const Literal x = Random(F64(s), 17, -1, 1);
    const Literal u = Random(F64(us), 18, -1.2, 1.2);
    ExpectGradients(p, {true, false, true}, {x, idx, u});
    ExpectGradients(p, {true, false, true}, {x, idx2, u});
  }
}

TEST(VjpOpsTest, ScatterMulWithZeroUpdates) {
  const Shape s{3};
  const Program p = Build({F64(s), I32(Shape{4}), F64(Shape{4})},
                          [](TraceContext&, const std::vector<Tracer>& q) {
                            return std::vector<Tracer>{scatter(
                                q[0], q[1], q[2], 0, ScatterMode::kMul)};
                          });
  const VjpPrograms v = MustVjp(p, {true, false, true});
  const Literal x = Values(DType::kFloat64, s, {2, 3, 5});
  const Literal idx = Values(DType::kInt32, Shape{4}, {0, 0, 1, 1});
  const Literal u = Values(DType::kFloat64, Shape{4}, {0, 7, 0, 0});
  const std::vector<Literal> g =
      RunVjp(p, v, {x, idx, u}, {Values(DType::kFloat64, s, {1, 1, 1})});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].ToVector<double>(), (std::vector<double>{0, 0, 1}));
  // out[0] = 2 * u0 * u1: d/du0 = 14, d/du1 = 0; out[1] = 3 * u2 * u3: 0, 0.
  EXPECT_EQ(g[1].ToVector<double>(), (std::vector<double>{14, 0, 0, 0}));
}

TEST(VjpOpsTest, Reductions) {
  const Shape s{3, 4};
  for (ReduceOp op :
       {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kProd}) {
    SCOPED_TRACE(std::string(op_name(op)));
    for (std::vector<int64_t> axes : {std::vector<int64_t>{0}, {1}, {0, 1}}) {
      const Program p =
          Build({F64(s)}, [&](TraceContext& ctx, const std::vector<Tracer>& q) {
            return std::vector<Tracer>{
                ctx.Emit(ReduceAttrs{op, axes}, {sin(q[0])})};
          });
      ExpectGradients(p, {true}, {Random(F64(s), 19, -1.5, 1.5)});
    }
  }
}

TEST(VjpOpsTest, ReductionTiesAndZeros) {
  const Shape s{4};
  auto grad = [&](ReduceOp op, std::vector<double> x) {
    const Program p =
        Build({F64(s)}, [&](TraceContext& ctx, const std::vector<Tracer>& q) {
          return std::vector<Tracer>{ctx.Emit(ReduceAttrs{op, {0}}, {q[0]})};
        });
    const VjpPrograms v = MustVjp(p, {true});
    return RunVjp(p, v, {Values(DType::kFloat64, s, x)},
                  {Values(DType::kFloat64, Shape{}, {1})})[0]
        .ToVector<double>();
  };
  EXPECT_EQ(grad(ReduceOp::kMax, {1, 3, 3, 0}),
            (std::vector<double>{0, 0.5, 0.5, 0}));
  EXPECT_EQ(grad(ReduceOp::kMin, {1, 3, 3, 0}),
            (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(grad(ReduceOp::kProd, {2, 0, 3, 4}),
            (std::vector<double>{0, 24, 0, 0}));
  EXPECT_EQ(grad(ReduceOp::kProd, {2, 0, 3, 0}),
            (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(grad(ReduceOp::kProd, {2, 1, 3, 4}),
            (std::vector<double>{12, 24, 8, 6}));
}

TEST(VjpOpsTest, DotGeneral) {
  // matmul, a batch dim, and contracting dims in crossed order.
  const Program mm = Build({F64(Shape{3, 4}), F64(Shape{4, 2})},
                           [](TraceContext&, const std::vector<Tracer>& q) {
                             return std::vector<Tracer>{matmul(q[0], q[1])};
                           });
  ExpectGradients(mm, {true, true},
                  {Random(F64(Shape{3, 4}), 20), Random(F64(Shape{4, 2}), 21)});
  const Program bd =
      Build({F64(Shape{2, 3, 4, 5}), F64(Shape{5, 2, 6, 4})},
            [](TraceContext&, const std::vector<Tracer>& q) {
              return std::vector<Tracer>{dot_general(
                  q[0], q[1], DotGeneralAttrs{{0}, {1}, {3, 2}, {0, 3}})};
            });
  ExpectGradients(
      bd, {true, true},
      {Random(F64(Shape{2, 3, 4, 5}), 22), Random(F64(Shape{5, 2, 6, 4}), 23)});
  // The right operand of a matmul needs no transpose: x^T @ ct directly.
  const VjpPrograms v = MustVjp(mm, {false, true});
  EXPECT_EQ(CountOps(v.backward,
                     [](const Instruction& i) {
                       return i.kind() == OpKind::kTranspose;
                     }),
            0);
}

TEST(VjpOpsTest, TransferMovesCotangentBack) {
  const Shape s{3};
  const ValueType pinned{s, DType::kFloat64, MemoryKind::kPinnedHost};
  const Program p = Build({pinned}, [](TraceContext&,
                                       const std::vector<Tracer>& q) {
    const Tracer d = to_memory_kind(q[0], MemoryKind::kDevice);
    return std::vector<Tracer>{to_memory_kind(sin(d), MemoryKind::kPinnedHost)};
  });
  ExpectGradients(p, {true}, {Random(pinned, 24)});
  const VjpPrograms v = MustVjp(p, {true});
  EXPECT_EQ(v.backward.output_types()[0].memory_kind, MemoryKind::kPinnedHost);
}

TEST(VjpOpsTest, Float32Program) {
  const ValueType t{kS, DType::kFloat32};
  const Program p = Build({t}, [](TraceContext&, const std::vector<Tracer>& q) {
    return std::vector<Tracer>{sum(tanh(q[0]) * q[0])};
  });
  const VjpPrograms v = MustVjp(p, {true});
  const Literal x = Random(t, 25);
  const std::vector<Literal> g =
      RunVjp(p, v, {x}, {Values(DType::kFloat32, Shape{}, {1})});
  ASSERT_EQ(g.size(), 1u);
  for (int64_t e = 0; e < x.num_elements(); ++e) {
    const double xv = x.GetAsDouble(e), th = std::tanh(xv);
    EXPECT_NEAR(g[0].GetAsDouble(e), th + xv * (1 - th * th), 1e-5);
  }
}

TEST(VjpOpsTest, BFloat16Program) {
  const ValueType t{kS, DType::kBFloat16};
  const Program p = Build({t}, [](TraceContext&, const std::vector<Tracer>& q) {
    return std::vector<Tracer>{
        sum(maximum(q[0], 0) * logistic(q[0]) + pow(q[0] * q[0], 1.5))};
  });
  const VjpPrograms v = MustVjp(p, {true});
  const Literal x = Values(DType::kBFloat16, kS, {-1, -0.5, 0.25, 0.5, 1, 2});
  const std::vector<Literal> g =
      RunVjp(p, v, {x}, {Values(DType::kBFloat16, Shape{}, {1})});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].dtype(), DType::kBFloat16);
  for (int64_t e = 0; e < x.num_elements(); ++e) {
    const double xv = x.GetAsDouble(e), s = 1 / (1 + std::exp(-xv));
    const double relu = xv > 0 ? s + xv * s * (1 - s) : 0;
    EXPECT_NEAR(g[0].GetAsDouble(e), relu + 3 * xv * std::abs(xv),
                0.05 * (1 + std::abs(xv)));
  }
}

}  // namespace
}  // namespace baton::compiler::vjp_test
