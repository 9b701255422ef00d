// core/fast_math.h: error against a double-precision reference over the
// whole float range, IEEE specials, monotonicity, tanh's symmetry, and the
// kernels (baseline, AVX2 and AVX-512 variants, every tail length) equal to
// the scalar functions bitwise.
//
// The ulp sweep visits every 127th float bit pattern (about 34M inputs per
// function). BATON_FAST_MATH_EXHAUSTIVE=1 visits all 2^32 (minutes).
#include "baton/core/fast_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "baton/backend/cpu/kernels/elementwise.h"
#include "baton/backend/cpu/kernels/isa.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/scalar_math.h"

namespace baton::fast_math {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kDenormMin = std::numeric_limits<float>::denorm_min();

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }
float FromBits(uint32_t u) { return std::bit_cast<float>(u); }

// |got - ref| in units of the last place of the float nearest `ref` (the
// denormal ulp below FLT_MIN); inf counts as 2^128 so overflow thresholds
// measure like any other value. NaN must match NaN.
double UlpError(float got, double ref) {
  if (std::isnan(ref) || std::isnan(got)) {
    return std::isnan(ref) && std::isnan(got) ? 0 : 1e30;
  }
  const double big = std::ldexp(1.0, 128);
  const double g = std::isinf(got) ? std::copysign(big, got) : got;
  const double r = std::isinf(ref) ? std::copysign(big, ref) : ref;
  if (std::fabs(g) >= big && std::fabs(r) >= big && (g > 0) == (r > 0)) {
    return 0;
  }
  int exponent = 0;
  std::frexp(r, &exponent);  // r = m 2^exponent, 0.5 <= |m| < 1
  const int ulp_exp = r == 0 ? -149 : std::max(exponent - 24, -149);
  return std::fabs(g - r) / std::ldexp(1.0, ulp_exp);
}

struct Worst {
  double ulp = 0;
  float at = 0;
};

// Max error of f against ref over bit patterns 0, stride, 2 stride, ...
// (split over two threads).
template <typename F, typename R>
Worst Sweep(F f, R ref, uint64_t stride) {
  constexpr int kThreads = 2;
  Worst worst[kThreads];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t u = t * stride; u < (uint64_t{1} << 32);
           u += kThreads * stride) {
        const float x = FromBits(static_cast<uint32_t>(u));
        const double e = UlpError(f(x), ref(static_cast<double>(x)));
        if (e > worst[t].ulp) worst[t] = {e, x};
      }
    });
  }
  for (auto& th : threads) th.join();
  return worst[0].ulp >= worst[1].ulp ? worst[0] : worst[1];
}

uint64_t SweepStride() {
  const char* env = std::getenv("BATON_FAST_MATH_EXHAUSTIVE");
  return env != nullptr && env[0] == '1' ? 1 : 127;
}

double RefExp(double x) { return std::exp(x); }
double RefLog(double x) { return std::log(x); }
double RefTanh(double x) { return std::tanh(x); }
// Tanh's bound: its measured maximum (2.03 ulp) with a little room.
constexpr double kTanhUlp = 2.05;

double RefLogistic(double x) {
  return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
}

// Bounds: the measured maxima over all 2^32 inputs (header comment), with
// a little room; the goals were 2 ulp for exp/log, 3 for logistic and 2.5
// for tanh (the fma form, tools/fit_tanh.py: measured 2.03).
TEST(FastMathTest, ExpUlpError) {
  const Worst w = Sweep([](float x) { return Exp(x); }, RefExp, SweepStride());
  EXPECT_LE(w.ulp, 1.0) << "at x = " << w.at;
}
TEST(FastMathTest, LogUlpError) {
  const Worst w = Sweep([](float x) { return Log(x); }, RefLog, SweepStride());
  EXPECT_LE(w.ulp, 1.0) << "at x = " << w.at;
}
TEST(FastMathTest, TanhUlpError) {
  const Worst w =
      Sweep([](float x) { return Tanh(x); }, RefTanh, SweepStride());
  EXPECT_LE(w.ulp, kTanhUlp) << "at x = " << w.at;
}
TEST(FastMathTest, LogisticUlpError) {
  const Worst w = Sweep([](float x) { return Logistic(x); }, RefLogistic,
                        SweepStride());
  EXPECT_LE(w.ulp, 2.5) << "at x = " << w.at;
}

// Every float in windows around the range-reduction and branch boundaries,
// where approximations most often slip.
TEST(FastMathTest, BoundaryWindowsWithinBounds) {
  auto window = [](float center, int half_width, auto f, auto ref,
                   double bound) {
    float x = center;
    for (int i = 0; i < half_width; ++i) x = std::nextafter(x, -kInf);
    for (int i = 0; i < 2 * half_width; ++i) {
      EXPECT_LE(UlpError(f(x), ref(static_cast<double>(x))), bound)
          << "x = " << x;
      x = std::nextafter(x, kInf);
    }
  };
  auto exp = [](float x) { return Exp(x); };
  auto log = [](float x) { return Log(x); };
  auto tanh = [](float x) { return Tanh(x); };
  auto logistic = [](float x) { return Logistic(x); };
  // exp: overflow, denormal and underflow edges, n changes at odd ln2/2.
  for (float c : {88.72283935546875f, -87.33654475f, -103.278929903f,
                  -103.972077083f, 0.34657359f, -0.34657359f, 0.f,
                  1.03972077f, 44.3614195f, -44.3614195f}) {
    window(c, 4096, exp, RefExp, 1.0);
  }
  // log: around 1, sqrt(2)/2 and sqrt(2) (mantissa split), FLT_MIN,
  // the least denormal, FLT_MAX.
  for (float c : {1.f, 0.70710678f, 1.41421356f, 2.f, 0.5f,
                  std::numeric_limits<float>::min(), 1e-45f, 3.4e38f}) {
    window(c, 4096, log, RefLog, 1.0);
  }
  // tanh: the 0.55 branch, tiny x, where n of the exp branch's range
  // reduction (2|x| = n ln2 + 2r) goes 2 -> 3 -> 4, saturation near 9, the
  // 9.1 clamp.
  for (float c : {0.55f, -0.55f, 1e-4f, 2.44e-4f, 0.866434f, 1.213008f,
                  9.01f, -9.01f, 9.1f}) {
    window(c, 4096, tanh, RefTanh, kTanhUlp);
  }
  // logistic: 0, the denormal range, saturation.
  for (float c : {0.f, -87.33654475f, -88.7228394f, -103.27893f, 16.6355f,
                  17.32868f}) {
    window(c, 4096, logistic, RefLogistic, 2.5);
  }
}

TEST(FastMathTest, ExpSpecials) {
  EXPECT_EQ(Exp(0.f), 1.f);
  EXPECT_EQ(Exp(-0.f), 1.f);
  EXPECT_EQ(Exp(kInf), kInf);
  EXPECT_EQ(Bits(Exp(-kInf)), 0u);
  EXPECT_TRUE(std::isnan(Exp(kNaN)));
  EXPECT_TRUE(std::isnan(Exp(-kNaN)));
  EXPECT_TRUE(std::isfinite(Exp(88.7f)));
  EXPECT_TRUE(std::isfinite(Exp(88.72283f)));
  EXPECT_EQ(Exp(88.7229f), kInf);
  EXPECT_EQ(Exp(89.f), kInf);
  EXPECT_EQ(Exp(1e30f), kInf);
  EXPECT_EQ(Exp(std::numeric_limits<float>::max()), kInf);
  // Denormal results, down to the least one; then +0 like libm.
  EXPECT_EQ(Exp(-100.f), std::exp(-100.f));
  EXPECT_EQ(Exp(-103.2789f), kDenormMin);
  EXPECT_EQ(Bits(Exp(-104.f)), 0u);
  EXPECT_EQ(Bits(Exp(-1e30f)), 0u);
  EXPECT_EQ(Bits(Exp(std::numeric_limits<float>::lowest())), 0u);
  // Tiny x: exp(x) rounds to 1.
  EXPECT_EQ(Exp(1e-10f), 1.f);
  EXPECT_EQ(Exp(kDenormMin), 1.f);
}

TEST(FastMathTest, LogSpecials) {
  EXPECT_EQ(Log(1.f), 0.f);
  EXPECT_FALSE(std::signbit(Log(1.f)));
  EXPECT_EQ(Log(0.f), -kInf);
  EXPECT_EQ(Log(-0.f), -kInf);
  EXPECT_EQ(Log(kInf), kInf);
  EXPECT_TRUE(std::isnan(Log(-kInf)));
  EXPECT_TRUE(std::isnan(Log(-1.f)));
  EXPECT_TRUE(std::isnan(Log(-kDenormMin)));
  EXPECT_TRUE(std::isnan(Log(kNaN)));
  EXPECT_TRUE(std::isnan(Log(-kNaN)));
  // Denormals and the extremes, within 1 ulp of the true value.
  for (float x : {kDenormMin, 2 * kDenormMin, 1e-40f,
                  std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::max()}) {
    EXPECT_LE(UlpError(Log(x), std::log(static_cast<double>(x))), 1.0) << x;
  }
  EXPECT_EQ(Log(2.f), std::log(2.f));
}

TEST(FastMathTest, TanhSpecials) {
  EXPECT_EQ(Bits(Tanh(0.f)), Bits(0.f));
  EXPECT_EQ(Bits(Tanh(-0.f)), Bits(-0.f));
  EXPECT_EQ(Tanh(kInf), 1.f);
  EXPECT_EQ(Tanh(-kInf), -1.f);
  EXPECT_TRUE(std::isnan(Tanh(kNaN)));
  EXPECT_TRUE(std::isnan(Tanh(-kNaN)));
  // A NaN comes out as x + x (quieted, payload and sign kept), also a
  // signaling one: Tanh runs it through the small-|x| polynomial.
  for (uint32_t nan : {0x7f800001u, 0xff800001u, 0x7fc12345u, 0xffbfffffu}) {
    const float x = FromBits(nan);
    EXPECT_EQ(Bits(Tanh(x)), Bits(x + x)) << std::hex << nan;
  }
  EXPECT_EQ(Tanh(9.02f), 1.f);
  EXPECT_EQ(Tanh(9.1f), 1.f);  // the clamp of the large-|x| branch
  EXPECT_EQ(Tanh(std::nextafter(9.1f, 0.f)), 1.f);
  EXPECT_EQ(Tanh(std::nextafter(9.1f, kInf)), 1.f);
  EXPECT_EQ(Tanh(10.f), 1.f);
  EXPECT_EQ(Tanh(-44.6f), -1.f);
  EXPECT_EQ(Tanh(-20.f), -1.f);
  EXPECT_EQ(Tanh(1e30f), 1.f);
  EXPECT_LT(Tanh(8.f), 1.f);
  // Small x: tanh(x) == x (denormals included).
  for (float x : {kDenormMin, -kDenormMin, 1e-38f, 1e-20f, -1e-8f, 1e-4f}) {
    EXPECT_EQ(Tanh(x), x) << x;
  }
}

TEST(FastMathTest, LogisticSpecials) {
  EXPECT_EQ(Logistic(0.f), 0.5f);
  EXPECT_EQ(Logistic(-0.f), 0.5f);
  EXPECT_EQ(Logistic(kInf), 1.f);
  EXPECT_EQ(Bits(Logistic(-kInf)), 0u);
  EXPECT_TRUE(std::isnan(Logistic(kNaN)));
  EXPECT_EQ(Logistic(20.f), 1.f);
  EXPECT_EQ(Logistic(-100.f), std::exp(-100.f));  // denormal, not 0
  EXPECT_EQ(Bits(Logistic(-110.f)), 0u);
}

TEST(FastMathTest, Monotonic) {
  // Consecutive floats around the boundaries, then a coarse walk over the
  // whole range.
  auto window = [](auto f, float center) {
    float x = center;
    for (int i = 0; i < 8192; ++i) x = std::nextafter(x, -kInf);
    float prev = f(x);
    for (int i = 0; i < 16384; ++i) {
      x = std::nextafter(x, kInf);
      const float y = f(x);
      ASSERT_GE(y, prev) << "x = " << x;
      prev = y;
    }
  };
  auto exp = [](float x) { return Exp(x); };
  auto log = [](float x) { return Log(x); };
  auto tanh = [](float x) { return Tanh(x); };
  auto logistic = [](float x) { return Logistic(x); };
  for (float c : {0.f, 0.34657359f, -0.34657359f, 1.03972077f, 88.7228394f,
                  -103.278929f, -87.3365448f}) {
    window(exp, c);
  }
  for (float c : {1.f, 0.70710678f, 1.41421356f, 2.f, 2e-41f,
                  std::numeric_limits<float>::min()}) {
    window(log, c);
  }
  for (float c : {0.f, 0.55f, -0.55f, 0.866434f, 9.01f, -9.01f, 9.1f}) {
    window(tanh, c);
  }
  for (float c : {0.f, -87.3365448f, -103.278929f, 16.6355f}) {
    window(logistic, c);
  }
  // Every 4096th float from lo to hi.
  auto coarse = [](auto f, float lo, float hi) {
    float prev = f(lo);
    for (float x = lo; x <= hi;) {
      const float y = f(x);
      ASSERT_GE(y, prev) << "x = " << x;
      prev = y;
      const uint32_t b = Bits(x);
      x = x < 0 ? (b > 0x80001000u ? FromBits(b - 4096) : 0.f)
                : FromBits(b + 4096);
    }
  };
  coarse(exp, -110.f, 100.f);
  coarse(tanh, -100.f, 100.f);
  coarse(logistic, -110.f, 100.f);
  coarse(log, 0.f, 3e38f);
}

TEST(FastMathTest, TanhIsOddBitwise) {
  for (uint32_t u = 0; u < 0x7f800000u; u += 997) {
    const float x = FromBits(u);
    ASSERT_EQ(Bits(Tanh(-x)), Bits(Tanh(x)) ^ 0x80000000u) << x;
  }
}

// The kernels (whichever ISA variant) against the scalar function called
// here, in this baseline-compiled file: bitwise, for every tail length.
// Lengths around every vector width and thread split.
constexpr int64_t kTailLengths[] = {0,  1,  3,  7,  8,    15,   16,
                                    17, 23, 24, 31, 33,   47,   1000,
                                    4099, (1 << 15) + 5, (1 << 17) + 3};

// The kernel variant a KernelTest runs (isa.h's levels).
enum class Isa { kBaseline, kAvx2, kAvx512 };

class KernelTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    const Isa isa = GetParam();
    previous_avx2_ = cpu::SetAvx2KernelsForTesting(isa != Isa::kBaseline);
    previous_avx512_ = cpu::SetAvx512KernelsForTesting(isa == Isa::kAvx512);
    if (isa == Isa::kAvx2 && !cpu::UseAvx2Kernels()) {
      GTEST_SKIP() << "no AVX2 on this CPU";
    }
    if (isa == Isa::kAvx512 && !cpu::UseAvx512Kernels()) {
      GTEST_SKIP() << "no AVX-512 (F, DQ, BW, VL) on this CPU";
    }
    // The level asked for is the one the kernels take.
    ASSERT_EQ(cpu::UseAvx512Kernels(), isa == Isa::kAvx512);
    ASSERT_EQ(cpu::UseAvx2Kernels(), isa != Isa::kBaseline);
  }
  void TearDown() override {
    cpu::SetAvx512KernelsForTesting(previous_avx512_);
    cpu::SetAvx2KernelsForTesting(previous_avx2_);
  }
  bool previous_avx2_ = true;
  bool previous_avx512_ = true;
};

std::vector<float> Inputs(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> wide(-120.f, 120.f);
  std::uniform_real_distribution<float> narrow(-3.f, 3.f);
  const float specials[] = {0.f,     -0.f,       kInf,      -kInf,
                            kNaN,    -kNaN,      kDenormMin, -kDenormMin,
                            1e-40f,  89.f,       -104.f,    88.7228f,
                            0.625f,  -0.625f,    1.f,       3e38f,
                            // tanh's clamp of |x| at 9.1, its branch at
                            // 0.55, where it rounds to 1; NaNs with
                            // payloads, signaling and negative ones
                            // (quieted, sign kept)
                            9.1f,    -9.1f,      9.01f,     -44.6f,
                            0.55f,   -0.55f,     10.f,      -10.f,
                            FromBits(0x7f800001u), FromBits(0xff812345u),
                            FromBits(0x7fc54321u), FromBits(0xffffffffu)};
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t pick = rng() % 8;
    v[i] = pick == 0   ? specials[rng() % std::size(specials)]
           : pick == 1 ? FromBits(static_cast<uint32_t>(rng()))
           : pick < 5  ? wide(rng)
                       : narrow(rng);
  }
  return v;
}

template <UnaryOp op>
void CheckFloat32(int64_t n, std::mt19937& rng) {
  const std::vector<float> in = Inputs(n, rng);
  std::vector<float> out(n + 1, 12345.f), inplace = in;
  cpu::Unary(op, DType::kFloat32, in.data(), out.data(), n);
  cpu::Unary(op, DType::kFloat32, inplace.data(), inplace.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t want = Bits(scalar::Unary<op, float>(in[i]));
    ASSERT_EQ(Bits(out[i]), want) << op_name(op) << " n=" << n
                                  << " i=" << i << " x=" << in[i];
    ASSERT_EQ(Bits(inplace[i]), want) << "in place";
  }
  EXPECT_EQ(out[n], 12345.f) << "wrote past the end";
}

template <UnaryOp op, typename T>
void CheckHalf(int64_t n, std::mt19937& rng) {
  const std::vector<float> f = Inputs(n, rng);
  std::vector<T> in(n), out(n);
  for (int64_t i = 0; i < n; ++i) in[i] = FromCompute<T>(f[i]);
  cpu::Unary(op, dtype_of<T>(), in.data(), out.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const T want = FromCompute<T>(scalar::Unary<op, float>(ToCompute(in[i])));
    ASSERT_EQ(std::bit_cast<uint16_t>(out[i]), std::bit_cast<uint16_t>(want))
        << op_name(op) << " " << dtype_name(dtype_of<T>()) << " n=" << n
        << " i=" << i;
  }
}

TEST_P(KernelTest, EqualsScalarBitwiseForEveryTail) {
  std::mt19937 rng(7);
  for (int64_t n : kTailLengths) {
    CheckFloat32<UnaryOp::kExp>(n, rng);
    CheckFloat32<UnaryOp::kLog>(n, rng);
    CheckFloat32<UnaryOp::kTanh>(n, rng);
    CheckFloat32<UnaryOp::kLogistic>(n, rng);
    CheckHalf<UnaryOp::kExp, float16>(n, rng);
    CheckHalf<UnaryOp::kTanh, bfloat16>(n, rng);
    CheckHalf<UnaryOp::kLog, bfloat16>(n, rng);
    CheckHalf<UnaryOp::kLogistic, float16>(n, rng);
  }
}

// float32 add/sub/mul/div have AVX2 variants too (elementwise_binary.cc):
// bitwise equal to scalar::Binary, with either operand a broadcast scalar,
// NaNs of both signs included.
template <BinaryOp op>
void CheckBinaryFloat32(int64_t n, std::mt19937& rng) {
  using cpu::ScalarOperand;
  const std::vector<float> a = Inputs(n, rng), b = Inputs(n, rng);
  const float one_a = a.empty() ? 1.f : a[0], one_b = b.empty() ? -kNaN : b[0];
  std::vector<float> out(n + 1, 12345.f);
  for (ScalarOperand s : {ScalarOperand::kNone, ScalarOperand::kLhs,
                          ScalarOperand::kRhs}) {
    const float* lhs = s == ScalarOperand::kLhs ? &one_a : a.data();
    const float* rhs = s == ScalarOperand::kRhs ? &one_b : b.data();
    cpu::Binary(op, DType::kFloat32, lhs, rhs, out.data(), n, s);
    for (int64_t i = 0; i < n; ++i) {
      const float x = s == ScalarOperand::kLhs ? one_a : a[i];
      const float y = s == ScalarOperand::kRhs ? one_b : b[i];
      ASSERT_EQ(Bits(out[i]), Bits(scalar::Binary<op, float>(x, y)))
          << op_name(op) << " n=" << n << " i=" << i << " x=" << x
          << " y=" << y << " scalar=" << static_cast<int>(s);
    }
    EXPECT_EQ(out[n], 12345.f) << "wrote past the end";
  }
}

TEST_P(KernelTest, FloatArithmeticEqualsScalarBitwise) {
  std::mt19937 rng(11);
  for (int64_t n : kTailLengths) {
    CheckBinaryFloat32<BinaryOp::kAdd>(n, rng);
    CheckBinaryFloat32<BinaryOp::kSub>(n, rng);
    CheckBinaryFloat32<BinaryOp::kMul>(n, rng);
    CheckBinaryFloat32<BinaryOp::kDiv>(n, rng);
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, KernelTest,
                         ::testing::Values(Isa::kBaseline, Isa::kAvx2,
                                           Isa::kAvx512),
                         [](const auto& info) {
                           switch (info.param) {
                             case Isa::kAvx2:
                               return std::string("Avx2");
                             case Isa::kAvx512:
                               return std::string("Avx512");
                             default:
                               return std::string("Baseline");
                           }
                         });

// The AVX-512 level sits above AVX2: turning AVX2 off selects the baseline
// even where AVX-512 is enabled, and the AVX-512 switch alone drops to AVX2.
TEST(IsaTest, Avx512SwitchesStackOnAvx2) {
  const bool avx2 = cpu::SetAvx2KernelsForTesting(true);
  const bool avx512 = cpu::SetAvx512KernelsForTesting(true);
  if (!cpu::UseAvx512Kernels()) {
    cpu::SetAvx512KernelsForTesting(avx512);
    cpu::SetAvx2KernelsForTesting(avx2);
    GTEST_SKIP() << "no AVX-512 (F, DQ, BW, VL) on this CPU";
  }
  EXPECT_TRUE(cpu::SetAvx512KernelsForTesting(false));
  EXPECT_FALSE(cpu::UseAvx512Kernels());
  EXPECT_TRUE(cpu::UseAvx2Kernels());
  EXPECT_FALSE(cpu::SetAvx512KernelsForTesting(true));
  EXPECT_TRUE(cpu::UseAvx512Kernels());
  cpu::SetAvx2KernelsForTesting(false);
  EXPECT_FALSE(cpu::UseAvx512Kernels());
  EXPECT_FALSE(cpu::UseAvx2Kernels());
  cpu::SetAvx2KernelsForTesting(true);
  EXPECT_TRUE(cpu::UseAvx512Kernels());
  cpu::SetAvx512KernelsForTesting(avx512);
  cpu::SetAvx2KernelsForTesting(avx2);
}

// The AVX2 level (and so AVX-512's) is taken only where the CPU has FMA too:
// those variants are compiled with it (isa.h), for Tanh's std::fma.
TEST(IsaTest, Avx2LevelRequiresFma) {
  const bool avx2 = cpu::SetAvx2KernelsForTesting(true);
  if (!cpu::UseAvx2Kernels()) {
    cpu::SetAvx2KernelsForTesting(avx2);
    GTEST_SKIP() << "no AVX2 and FMA on this CPU";
  }
#if BATON_KERNELS_HAVE_AVX2
  __builtin_cpu_init();
  EXPECT_TRUE(__builtin_cpu_supports("fma"));
  EXPECT_TRUE(__builtin_cpu_supports("avx2"));
#endif
  cpu::SetAvx2KernelsForTesting(avx2);
}

}  // namespace
}  // namespace baton::fast_math
