// Reference interpreter: iota, convert, unary, binary, compare and select,
// with hand-computed expectations for every dtype the op supports.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "baton/core/fast_math.h"
#include "interpreter_test_util.h"

namespace baton::compiler {
namespace {

using test_util::D;
using test_util::kAllDTypes;
using test_util::L;
using test_util::RunOp;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Literal Unary(UnaryOp op, const Literal& x) {
  return RunOp(UnaryAttrs{op}, {x});
}
Literal Binary(BinaryOp op, const Literal& a, const Literal& b) {
  return RunOp(BinaryAttrs{op}, {a, b});
}
Literal Compare(CompareOp op, const Literal& a, const Literal& b) {
  return RunOp(CompareAttrs{op}, {a, b});
}

TEST(InterpreterIotaTest, EveryNumericDType) {
  for (DType dt : kAllDTypes) {
    if (dt == DType::kBool) continue;
    SCOPED_TRACE(dtype_name(dt));
    EXPECT_EQ(RunOp(IotaAttrs{Shape{2, 3}, dt, 1}, {}),
              D(dt, {2, 3}, {0, 1, 2, 0, 1, 2}));
    EXPECT_EQ(RunOp(IotaAttrs{Shape{2, 3}, dt, 0}, {}),
              D(dt, {2, 3}, {0, 0, 0, 1, 1, 1}));
    EXPECT_EQ(RunOp(IotaAttrs{Shape{0, 4}, dt, 1}, {}), D(dt, {0, 4}, {}));
  }
}

TEST(InterpreterConvertTest, FloatToIntegerTruncatesAndSaturates) {
  Literal x = L<float>({-1.7f, 2.9f, 3e9f, -3e9f, NAN, INFINITY});
  EXPECT_EQ(RunOp(ConvertAttrs{DType::kInt32}, {x}),
            L<int32_t>({-1, 2, INT32_MAX, INT32_MIN, 0, INT32_MAX}));
  EXPECT_EQ(RunOp(ConvertAttrs{DType::kUInt8}, {x}),
            L<uint8_t>({0, 2, 255, 0, 0, 255}));
}

TEST(InterpreterConvertTest, IntegerToIntegerWraps) {
  EXPECT_EQ(RunOp(ConvertAttrs{DType::kUInt8}, {L<int64_t>({257, -1, 128})}),
            L<uint8_t>({1, 255, 128}));
  EXPECT_EQ(RunOp(ConvertAttrs{DType::kInt32}, {L<uint32_t>({4294967295u, 7})}),
            L<int32_t>({-1, 7}));
  EXPECT_EQ(RunOp(ConvertAttrs{DType::kInt8}, {L<int16_t>({200, -129})}),
            L<int8_t>({-56, 127}));
}

TEST(InterpreterConvertTest, BoolAndFloats) {
  EXPECT_EQ(RunOp(ConvertAttrs{DType::kBool}, {L<int32_t>({0, 5, -1})}),
            L<bool>({false, true, true}));
  EXPECT_EQ(RunOp(ConvertAttrs{DType::kBool}, {L<float>({0.0f, -0.0f, 0.5f})}),
            L<bool>({false, false, true}));
  EXPECT_EQ(RunOp(ConvertAttrs{DType::kFloat32}, {L<bool>({true, false})}),
            L<float>({1, 0}));
  // float32 -> float16 rounds to nearest even and overflows to inf.
  Literal h = RunOp(ConvertAttrs{DType::kFloat16},
                    {L<float>({65520.0f, 65504.0f, 1.0f + 1.0f / 4096})});
  EXPECT_EQ(h.Get<float16>(0).bits, 0x7c00);  // inf
  EXPECT_EQ(h.Get<float16>(1).bits, 0x7bff);  // max finite
  EXPECT_EQ(h.Get<float16>(2).bits, 0x3c00);  // 1 (the tie rounds to even)
  // float32 -> bfloat16: 1 + 2^-8 is a tie, rounds to even (1.0).
  Literal b = RunOp(ConvertAttrs{DType::kBFloat16},
                    {L<float>({1.0f + 1.0f / 256, 1.0f + 3.0f / 256})});
  EXPECT_EQ(b.Get<bfloat16>(0).bits, 0x3f80);
  EXPECT_EQ(b.Get<bfloat16>(1).bits, 0x3f82);
  EXPECT_EQ(RunOp(ConvertAttrs{DType::kFloat64}, {h}),
            L<double>({kInf, 65504.0, 1.0}));
  EXPECT_EQ(RunOp(ConvertAttrs{DType::kFloat32}, {L<double>({0.1})}),
            L<float>({0.1f}));
}

TEST(InterpreterConvertTest, EveryPairOfDTypesRoundTripsSmallIntegers) {
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      SCOPED_TRACE(std::string(dtype_name(from)) + " -> " +
                   std::string(dtype_name(to)));
      Literal x = D(from, {3}, {0, 1, 5});
      // Through bool, 5 becomes true and then 1.
      const double five = from == DType::kBool ? 1 : 5;
      EXPECT_EQ(RunOp(ConvertAttrs{to}, {x}), D(to, {3}, {0, 1, five}));
    }
  }
}

TEST(InterpreterUnaryTest, Float32) {
  Literal x = L<float>({0.0f, 1.0f, 4.0f});
  EXPECT_EQ(Unary(UnaryOp::kNeg, x), L<float>({-0.0f, -1.0f, -4.0f}));
  EXPECT_EQ(Unary(UnaryOp::kAbs, L<float>({-3.0f, 2.0f, -0.0f})),
            L<float>({3.0f, 2.0f, 0.0f}));
  // float32 exp, log and tanh are core/fast_math.h's approximations (within
  // 1-1.5 ulp of the true value, tests/cpp/kernels/fast_math_test.cc), not
  // libm's bits.
  EXPECT_EQ(Unary(UnaryOp::kExp, x),
            L<float>({1.0f, fast_math::Exp(1.0f), fast_math::Exp(4.0f)}));
  EXPECT_EQ(Unary(UnaryOp::kLog, x),
            L<float>({-INFINITY, 0.0f, fast_math::Log(4.0f)}));
  EXPECT_EQ(Unary(UnaryOp::kSqrt, x), L<float>({0.0f, 1.0f, 2.0f}));
  EXPECT_EQ(Unary(UnaryOp::kRsqrt, x), L<float>({INFINITY, 1.0f, 0.5f}));
  EXPECT_EQ(Unary(UnaryOp::kTanh, x),
            L<float>({0.0f, fast_math::Tanh(1.0f), fast_math::Tanh(4.0f)}));
  EXPECT_EQ(Unary(UnaryOp::kLogistic, L<float>({0.0f})), L<float>({0.5f}));
  EXPECT_EQ(Unary(UnaryOp::kSin, x),
            L<float>({0.0f, std::sin(1.0f), std::sin(4.0f)}));
  EXPECT_EQ(Unary(UnaryOp::kCos, x),
            L<float>({1.0f, std::cos(1.0f), std::cos(4.0f)}));
  Literal r = L<float>({-1.5f, 2.5f, 3.5f, -0.5f});
  EXPECT_EQ(Unary(UnaryOp::kFloor, r), L<float>({-2, 2, 3, -1}));
  EXPECT_EQ(Unary(UnaryOp::kCeil, r), L<float>({-1, 3, 4, -0.0f}));
  EXPECT_EQ(Unary(UnaryOp::kRound, r), L<float>({-2, 2, 4, -0.0f}));
  EXPECT_EQ(Unary(UnaryOp::kSign, L<float>({-2, 0, 3})), L<float>({-1, 0, 1}));
}

TEST(InterpreterUnaryTest, HalfTypesComputeInFloatAndRound) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    // e = 2.71828... is 2.71875 in both 16-bit formats.
    EXPECT_EQ(Unary(UnaryOp::kExp, D(dt, {2}, {0, 1})),
              D(dt, {2}, {1, 2.71875}));
    EXPECT_EQ(Unary(UnaryOp::kSqrt, D(dt, {2}, {4, 0.25})),
              D(dt, {2}, {2, 0.5}));
    EXPECT_EQ(Unary(UnaryOp::kNeg, D(dt, {1}, {1.5})), D(dt, {1}, {-1.5}));
  }
  EXPECT_EQ(Unary(UnaryOp::kLog, D(DType::kFloat64, {1}, {1})),
            D(DType::kFloat64, {1}, {0}));
}

TEST(InterpreterUnaryTest, IntegersWrap) {
  EXPECT_EQ(Unary(UnaryOp::kNeg, L<int8_t>({-128, 5, 0})),
            L<int8_t>({-128, -5, 0}));
  EXPECT_EQ(Unary(UnaryOp::kAbs, L<int8_t>({-128, -5, 3})),
            L<int8_t>({-128, 5, 3}));
  EXPECT_EQ(Unary(UnaryOp::kNot, L<int8_t>({0, -1, 5})),
            L<int8_t>({-1, 0, -6}));
  EXPECT_EQ(Unary(UnaryOp::kNot, L<uint8_t>({0, 255})), L<uint8_t>({255, 0}));
  EXPECT_EQ(Unary(UnaryOp::kNeg, L<uint32_t>({1, 0})),
            L<uint32_t>({4294967295u, 0}));
  EXPECT_EQ(Unary(UnaryOp::kSign, L<int16_t>({-7, 0, 9})),
            L<int16_t>({-1, 0, 1}));
  EXPECT_EQ(Unary(UnaryOp::kAbs, L<int64_t>({INT64_MIN + 1, -2})),
            L<int64_t>({INT64_MAX, 2}));
  EXPECT_EQ(Unary(UnaryOp::kNeg, L<int32_t>({INT32_MIN})),
            L<int32_t>({INT32_MIN}));
}

TEST(InterpreterUnaryTest, BoolNot) {
  EXPECT_EQ(Unary(UnaryOp::kNot, L<bool>({true, false})),
            L<bool>({false, true}));
}

TEST(InterpreterUnaryTest, ScalarAndEmpty) {
  EXPECT_EQ(Unary(UnaryOp::kNeg, Literal::Scalar(2.0f)),
            Literal::Scalar(-2.0f));
  EXPECT_EQ(Unary(UnaryOp::kExp, Literal(Shape{3, 0}, DType::kFloat32)),
            Literal(Shape{3, 0}, DType::kFloat32));
}

TEST(InterpreterBinaryTest, SignedIntegers) {
  Literal a = L<int32_t>({INT32_MAX, -7, -7, 7, INT32_MIN, 2, 2});
  Literal b = L<int32_t>({1, 2, 0, -2, -1, 10, -1});
  EXPECT_EQ(Binary(BinaryOp::kAdd, a, b),
            L<int32_t>({INT32_MIN, -5, -7, 5, INT32_MAX, 12, 1}));
  EXPECT_EQ(Binary(BinaryOp::kSub, a, b),
            L<int32_t>({INT32_MAX - 1, -9, -7, 9, INT32_MIN + 1, -8, 3}));
  EXPECT_EQ(Binary(BinaryOp::kMul, a, b),
            L<int32_t>({INT32_MAX, -14, 0, -14, INT32_MIN, 20, -2}));
  // Truncating division; x/0 == -1; INT_MIN/-1 == INT_MIN.
  EXPECT_EQ(Binary(BinaryOp::kDiv, a, b),
            L<int32_t>({INT32_MAX, -3, -1, -3, INT32_MIN, 0, -2}));
  // x%0 == x; INT_MIN % -1 == 0.
  EXPECT_EQ(Binary(BinaryOp::kRem, a, b), L<int32_t>({0, -1, -7, 1, 0, 2, 0}));
  EXPECT_EQ(Binary(BinaryOp::kPow, L<int32_t>({2, 2, -1, 1, 3}),
                   L<int32_t>({10, -1, -3, -5, 0})),
            L<int32_t>({1024, 0, -1, 1, 1}));
  EXPECT_EQ(Binary(BinaryOp::kMax, a, b),
            L<int32_t>({INT32_MAX, 2, 0, 7, -1, 10, 2}));
  EXPECT_EQ(Binary(BinaryOp::kMin, a, b),
            L<int32_t>({1, -7, -7, -2, INT32_MIN, 2, -1}));
  EXPECT_EQ(Binary(BinaryOp::kAnd, L<int8_t>({12, -1}), L<int8_t>({10, 5})),
            L<int8_t>({8, 5}));
  EXPECT_EQ(Binary(BinaryOp::kOr, L<int16_t>({12, 0}), L<int16_t>({10, 0})),
            L<int16_t>({14, 0}));
  EXPECT_EQ(Binary(BinaryOp::kMul, L<int64_t>({INT64_MAX}), L<int64_t>({2})),
            L<int64_t>({-2}));
  EXPECT_EQ(Binary(BinaryOp::kAdd, L<int8_t>({127}), L<int8_t>({1})),
            L<int8_t>({-128}));
}

TEST(InterpreterBinaryTest, UnsignedIntegers) {
  EXPECT_EQ(Binary(BinaryOp::kAdd, L<uint8_t>({250, 1}), L<uint8_t>({10, 2})),
            L<uint8_t>({4, 3}));
  EXPECT_EQ(Binary(BinaryOp::kSub, L<uint8_t>({3}), L<uint8_t>({5})),
            L<uint8_t>({254}));
  EXPECT_EQ(Binary(BinaryOp::kMul, L<uint8_t>({16}), L<uint8_t>({16})),
            L<uint8_t>({0}));
  EXPECT_EQ(Binary(BinaryOp::kDiv, L<uint8_t>({7, 7}), L<uint8_t>({0, 2})),
            L<uint8_t>({255, 3}));
  EXPECT_EQ(Binary(BinaryOp::kSub, L<uint32_t>({0}), L<uint32_t>({1})),
            L<uint32_t>({4294967295u}));
  EXPECT_EQ(
      Binary(BinaryOp::kMax, L<uint32_t>({4000000000u}), L<uint32_t>({1})),
      L<uint32_t>({4000000000u}));
  EXPECT_EQ(Binary(BinaryOp::kMul, L<uint32_t>({65536}), L<uint32_t>({65536})),
            L<uint32_t>({0}));
}

TEST(InterpreterBinaryTest, Bool) {
  Literal a = L<bool>({false, false, true, true});
  Literal b = L<bool>({false, true, false, true});
  EXPECT_EQ(Binary(BinaryOp::kAdd, a, b), L<bool>({false, true, true, true}));
  EXPECT_EQ(Binary(BinaryOp::kMul, a, b), L<bool>({false, false, false, true}));
  EXPECT_EQ(Binary(BinaryOp::kMax, a, b), L<bool>({false, true, true, true}));
  EXPECT_EQ(Binary(BinaryOp::kMin, a, b), L<bool>({false, false, false, true}));
  EXPECT_EQ(Binary(BinaryOp::kAnd, a, b), L<bool>({false, false, false, true}));
  EXPECT_EQ(Binary(BinaryOp::kOr, a, b), L<bool>({false, true, true, true}));
}

TEST(InterpreterBinaryTest, Floats) {
  Literal a = L<float>({1, NAN, 5.5f, 2, -1});
  Literal b = L<float>({0, 1, 2, 0.5f, 0});
  EXPECT_EQ(Binary(BinaryOp::kDiv, a, b),
            L<float>({INFINITY, NAN, 2.75f, 4, -INFINITY}));
  Literal mx = Binary(BinaryOp::kMax, a, b);
  EXPECT_EQ(mx.Get<float>(0), 1.0f);
  EXPECT_TRUE(std::isnan(mx.Get<float>(1)));  // NaN propagates
  EXPECT_TRUE(std::isnan(Binary(BinaryOp::kMin, a, b).Get<float>(1)));
  EXPECT_EQ(Binary(BinaryOp::kRem, a, b).Get<float>(2), 1.5f);
  EXPECT_EQ(Binary(BinaryOp::kPow, L<float>({2, 4}), L<float>({0.5f, -1})),
            L<float>({std::sqrt(2.0f), 0.25f}));
  EXPECT_EQ(Binary(BinaryOp::kAdd, L<double>({0.1}), L<double>({0.2})),
            L<double>({0.30000000000000004}));
  EXPECT_EQ(Binary(BinaryOp::kSub, L<double>({1e308}), L<double>({-1e308})),
            L<double>({kInf}));
}

TEST(InterpreterBinaryTest, HalfTypesRoundEveryResult) {
  // float16 spacing at 1 is 2^-10: 1 + 0.0004 rounds back to 1.
  EXPECT_EQ(Binary(BinaryOp::kAdd, D(DType::kFloat16, {2}, {1, 1000}),
                   D(DType::kFloat16, {2}, {0.0004, 0.5})),
            D(DType::kFloat16, {2}, {1, 1000.5}));
  // bfloat16 spacing at 256 is 2: 256 + 1 is a tie and rounds to even.
  EXPECT_EQ(Binary(BinaryOp::kAdd, D(DType::kBFloat16, {2}, {256, 258}),
                   D(DType::kBFloat16, {2}, {1, 1})),
            D(DType::kBFloat16, {2}, {256, 260}));
  EXPECT_EQ(Binary(BinaryOp::kMul, D(DType::kFloat16, {1}, {300}),
                   D(DType::kFloat16, {1}, {300})),
            D(DType::kFloat16, {1}, {kInf}));
}

TEST(InterpreterBinaryTest, EveryDTypeAddsSmallNumbers) {
  for (DType dt : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dt));
    if (dt == DType::kBool) continue;
    EXPECT_EQ(Binary(BinaryOp::kAdd, D(dt, {2, 2}, {1, 2, 3, 4}),
                     D(dt, {2, 2}, {10, 20, 30, 40})),
              D(dt, {2, 2}, {11, 22, 33, 44}));
    EXPECT_EQ(
        Binary(BinaryOp::kMax, D(dt, {3}, {1, 9, 3}), D(dt, {3}, {4, 2, 3})),
        D(dt, {3}, {4, 9, 3}));
    EXPECT_EQ(
        Binary(BinaryOp::kMul, Literal(Shape{0}, dt), Literal(Shape{0}, dt)),
        Literal(Shape{0}, dt));
  }
}

TEST(InterpreterUnaryTest, Log1pExpm1TanAtanAreLibm) {
  const std::vector<double> xs = {0.0, -0.0, 1e-10, -0.5, 0.75, 3.0, -3.0,
                                  kInf, -kInf, kNaN};
  Literal f = L<double>(xs);
  Literal g = L<float>({0.0f, -0.0f, 1e-10f, -0.5f, 0.75f, 3.0f, -3.0f,
                        INFINITY, -INFINITY, NAN});
  struct Case {
    UnaryOp op;
    double (*d)(double);
    float (*s)(float);
  };
  const Case cases[] = {
      {UnaryOp::kLog1p, [](double x) { return std::log1p(x); },
       [](float x) { return std::log1p(x); }},
      {UnaryOp::kExpm1, [](double x) { return std::expm1(x); },
       [](float x) { return std::expm1(x); }},
      {UnaryOp::kTan, [](double x) { return std::tan(x); },
       [](float x) { return std::tan(x); }},
      {UnaryOp::kAtan, [](double x) { return std::atan(x); },
       [](float x) { return std::atan(x); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(op_name(c.op)));
    const Literal rd = Unary(c.op, f), rf = Unary(c.op, g);
    for (size_t i = 0; i < xs.size(); ++i) {
      const double wd = c.d(xs[i]);
      const float wf = c.s(g.Get<float>(static_cast<int64_t>(i)));
      const int64_t k = static_cast<int64_t>(i);
      if (std::isnan(wd)) {
        EXPECT_TRUE(std::isnan(rd.Get<double>(k)));
        EXPECT_TRUE(std::isnan(rf.Get<float>(k)));
        continue;
      }
      EXPECT_EQ(rd.Get<double>(k), wd);
      EXPECT_EQ(std::signbit(rd.Get<double>(k)), std::signbit(wd));
      EXPECT_EQ(rf.Get<float>(k), wf);
    }
  }
  // log1p(-1) = -inf, expm1(-inf) = -1, atan(+-inf) = +-pi/2.
  EXPECT_EQ(Unary(UnaryOp::kLog1p, L<float>({-1.0f})), L<float>({-INFINITY}));
  EXPECT_EQ(Unary(UnaryOp::kExpm1, L<double>({-kInf})), L<double>({-1.0}));
  EXPECT_EQ(Unary(UnaryOp::kAtan, L<double>({kInf})).Get<double>(0),
            M_PI / 2);
  // Half types compute in float32 and round once.
  const float h = f16_to_float(float_to_f16(1e-3f));
  EXPECT_EQ(Unary(UnaryOp::kLog1p, D(DType::kFloat16, {1}, {1e-3})),
            D(DType::kFloat16, {1}, {std::log1p(h)}));
  EXPECT_EQ(Unary(UnaryOp::kExpm1, D(DType::kBFloat16, {1}, {0.5})),
            D(DType::kBFloat16, {1}, {std::expm1(0.5f)}));
}

TEST(InterpreterBinaryTest, Atan2) {
  Literal y = L<double>({1, 1, -1, 0.0, -0.0, 0.0, -0.0, kInf, kNaN});
  Literal x = L<double>({1, -1, -1, 1, 1, -1, -1, kInf, 1});
  const Literal r = Binary(BinaryOp::kAtan2, y, x);
  for (int64_t i = 0; i < 9; ++i) {
    const double want = std::atan2(y.Get<double>(i), x.Get<double>(i));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(r.Get<double>(i)));
    } else {
      EXPECT_EQ(r.Get<double>(i), want) << i;
      EXPECT_EQ(std::signbit(r.Get<double>(i)), std::signbit(want)) << i;
    }
  }
  EXPECT_EQ(Binary(BinaryOp::kAtan2, L<float>({3}), L<float>({4})),
            L<float>({std::atan2(3.0f, 4.0f)}));
}

TEST(InterpreterBinaryTest, XorAndShifts) {
  EXPECT_EQ(Binary(BinaryOp::kXor, L<int8_t>({12, -1, 0}),
                   L<int8_t>({10, 5, 0})),
            L<int8_t>({6, -6, 0}));
  EXPECT_EQ(Binary(BinaryOp::kXor, L<bool>({false, false, true, true}),
                   L<bool>({false, true, false, true})),
            L<bool>({false, true, true, false}));
  Literal x = L<int8_t>({-100, -100, -100, -100, -100, 5, 5, 5});
  Literal s = L<int8_t>({0, 1, 7, 8, -1, 2, 8, 100});
  EXPECT_EQ(Binary(BinaryOp::kShiftLeft, x, s),
            L<int8_t>({-100, 56, 0, 0, 0, 20, 0, 0}));
  EXPECT_EQ(Binary(BinaryOp::kShiftRightArithmetic, x, s),
            L<int8_t>({-100, -50, -1, -1, -1, 1, 0, 0}));
  EXPECT_EQ(Binary(BinaryOp::kShiftRightLogical, x, s),
            L<int8_t>({-100, 78, 1, 0, 0, 1, 0, 0}));
  // Unsigned: the arithmetic shift copies the top bit; amounts >= 8 are
  // out of range.
  Literal u = L<uint8_t>({200, 200, 200, 1});
  Literal us = L<uint8_t>({1, 7, 9, 200});
  EXPECT_EQ(Binary(BinaryOp::kShiftRightArithmetic, u, us),
            L<uint8_t>({228, 255, 255, 0}));
  EXPECT_EQ(Binary(BinaryOp::kShiftRightLogical, u, us),
            L<uint8_t>({100, 1, 0, 0}));
  EXPECT_EQ(Binary(BinaryOp::kShiftLeft, u, us), L<uint8_t>({144, 0, 0, 0}));
  EXPECT_EQ(Binary(BinaryOp::kShiftLeft, L<int64_t>({1, 1}),
                   L<int64_t>({63, 64})),
            L<int64_t>({INT64_MIN, 0}));
  EXPECT_EQ(Binary(BinaryOp::kShiftRightArithmetic, L<int32_t>({INT32_MIN}),
                   L<int32_t>({31})),
            L<int32_t>({-1}));
  EXPECT_EQ(Binary(BinaryOp::kShiftRightLogical, L<uint32_t>({0x80000000u}),
                   L<uint32_t>({31})),
            L<uint32_t>({1}));
}

TEST(InterpreterCompareTest, FloatsWithNaN) {
  Literal a = L<float>({1, 2, NAN, -0.0f});
  Literal b = L<float>({2, 2, NAN, 0.0f});
  EXPECT_EQ(Compare(CompareOp::kEq, a, b), L<bool>({false, true, false, true}));
  EXPECT_EQ(Compare(CompareOp::kNe, a, b), L<bool>({true, false, true, false}));
  EXPECT_EQ(Compare(CompareOp::kLt, a, b),
            L<bool>({true, false, false, false}));
  EXPECT_EQ(Compare(CompareOp::kLe, a, b), L<bool>({true, true, false, true}));
  EXPECT_EQ(Compare(CompareOp::kGt, a, b),
            L<bool>({false, false, false, false}));
  EXPECT_EQ(Compare(CompareOp::kGe, a, b), L<bool>({false, true, false, true}));
}

TEST(InterpreterCompareTest, EveryDType) {
  for (DType dt : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dt));
    Literal a = D(dt, {3}, {0, 1, 1});
    Literal b = D(dt, {3}, {1, 1, 0});
    EXPECT_EQ(Compare(CompareOp::kLt, a, b), L<bool>({true, false, false}));
    EXPECT_EQ(Compare(CompareOp::kEq, a, b), L<bool>({false, true, false}));
    EXPECT_EQ(Compare(CompareOp::kGe, a, b), L<bool>({false, true, true}));
  }
  // Unsigned and wide values compare by value.
  EXPECT_EQ(Compare(CompareOp::kGt, L<uint8_t>({200}), L<uint8_t>({100})),
            L<bool>({true}));
  EXPECT_EQ(Compare(CompareOp::kLt, L<int64_t>({INT64_MIN}), L<int64_t>({0})),
            L<bool>({true}));
}

TEST(InterpreterSelectTest, EveryDType) {
  Literal pred = L<bool>({true, false, true, false}, Shape{2, 2});
  for (DType dt : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dt));
    EXPECT_EQ(RunOp(SelectAttrs{}, {pred, D(dt, {2, 2}, {1, 2, 3, 4}),
                                    D(dt, {2, 2}, {0, 5, 0, 6})}),
              D(dt, {2, 2}, {1, 5, 3, 6}));
  }
  EXPECT_EQ(RunOp(SelectAttrs{}, {Literal::Scalar(false), Literal::Scalar(1.0),
                                  Literal::Scalar(kNaN)})
                .shape(),
            Shape{});
}

}  // namespace
}  // namespace baton::compiler
