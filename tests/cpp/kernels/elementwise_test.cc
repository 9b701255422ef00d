// Elementwise kernels against naive loops over scalar_math.h: bitwise equal
// for every op and dtype, with IEEE specials, scalar operands, in place, and
// sizes large enough to take the parallel path.
#include "baton/backend/cpu/kernels/elementwise.h"

#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <thread>
#include <vector>

#include "baton/backend/cpu/kernels/isa.h"
#include "baton/core/scalar_math.h"
#include "kernel_test_util.h"

namespace baton::cpu {
namespace {

using testing::AllDTypes;
using testing::BitEqual;
using testing::FillOptions;
using testing::HostArray;
using testing::RandomArray;

constexpr UnaryOp kUnaryOps[] = {
    UnaryOp::kNeg,   UnaryOp::kAbs,      UnaryOp::kExp,  UnaryOp::kLog,
    UnaryOp::kTanh,  UnaryOp::kLogistic, UnaryOp::kSqrt, UnaryOp::kRsqrt,
    UnaryOp::kSin,   UnaryOp::kCos,      UnaryOp::kNot,  UnaryOp::kSign,
    UnaryOp::kFloor, UnaryOp::kCeil,     UnaryOp::kRound, UnaryOp::kLog1p,
    UnaryOp::kExpm1, UnaryOp::kTan,      UnaryOp::kAtan, UnaryOp::kReal,
    UnaryOp::kImag,  UnaryOp::kConj};
constexpr BinaryOp kBinaryOps[] = {
    BinaryOp::kAdd,       BinaryOp::kSub,
    BinaryOp::kMul,       BinaryOp::kDiv,
    BinaryOp::kPow,       BinaryOp::kMax,
    BinaryOp::kMin,       BinaryOp::kAnd,
    BinaryOp::kOr,        BinaryOp::kRem,
    BinaryOp::kAtan2,     BinaryOp::kXor,
    BinaryOp::kShiftLeft, BinaryOp::kShiftRightArithmetic,
    BinaryOp::kShiftRightLogical};
// kComplex changes the type (complex_kernels_test.cc tests it, and the
// complex forms of the other ops).
static_assert(std::size(kUnaryOps) == kNumUnaryOps, "a unary op is untested");
static_assert(std::size(kBinaryOps) + 1 == kNumBinaryOps,
              "a binary op is untested");
constexpr CompareOp kCompareOps[] = {CompareOp::kEq, CompareOp::kNe,
                                     CompareOp::kLt, CompareOp::kLe,
                                     CompareOp::kGt, CompareOp::kGe};

// Sizes: empty, one, a ragged tail, several vector blocks; and one over 1M
// (parallel path) for a representative subset of dtypes.
std::vector<int64_t> SizesFor(DType t) {
  std::vector<int64_t> sizes = {0, 1, 31, 4099};
  if (t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kInt32) {
    sizes.push_back((1 << 20) + 5);
  }
  return sizes;
}

// Half the values are IEEE specials or extremes; integers use their full
// range (so wrapping and INT_MIN / -1 show up) or a small one (so pow and
// division see interesting exponents and zero divisors).
FillOptions OptionsFor(uint64_t seed) {
  FillOptions opt;
  opt.specials = true;
  opt.int_range = seed % 2 ? 0 : 5;
  return opt;
}

HostArray RefUnary(UnaryOp op, const HostArray& in) {
  HostArray out(in.dtype(), in.shape());
  VisitDType(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    VisitUnaryOp(op, [&](auto op_c) {
      for (int64_t i = 0; i < in.size(); ++i) {
        out.as<T>()[i] = FromCompute<T>(
            scalar::Unary<decltype(op_c)::value, C>(ToCompute(in.as<T>()[i])));
      }
    });
  });
  return out;
}

HostArray RefBinary(BinaryOp op, const HostArray& a, const HostArray& b,
                    int64_t n, ScalarOperand s) {
  HostArray out(a.dtype(), Shape{n});
  VisitDType(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    VisitBinaryOp(op, [&](auto op_c) {
      for (int64_t i = 0; i < n; ++i) {
        const T x = a.as<T>()[s == ScalarOperand::kLhs ? 0 : i];
        const T y = b.as<T>()[s == ScalarOperand::kRhs ? 0 : i];
        out.as<T>()[i] =
            FromCompute<T>(scalar::Binary<decltype(op_c)::value, C>(
                ToCompute(x), ToCompute(y)));
      }
    });
  });
  return out;
}

HostArray RefCompare(CompareOp op, const HostArray& a, const HostArray& b,
                     int64_t n, ScalarOperand s) {
  HostArray out(DType::kBool, Shape{n});
  VisitDType(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    VisitCompareOp(op, [&](auto op_c) {
      for (int64_t i = 0; i < n; ++i) {
        const T x = a.as<T>()[s == ScalarOperand::kLhs ? 0 : i];
        const T y = b.as<T>()[s == ScalarOperand::kRhs ? 0 : i];
        out.as<bool>()[i] = scalar::Compare<decltype(op_c)::value, C>(
            ToCompute(x), ToCompute(y));
      }
    });
  });
  return out;
}

TEST(UnaryTest, MatchesScalarMathForEveryOpAndDType) {
  std::mt19937_64 rng(1);
  for (DType t : AllDTypes()) {
    for (UnaryOp op : kUnaryOps) {
      for (int64_t n : SizesFor(t)) {
        SCOPED_TRACE(std::string(dtype_name(t)) + " " +
                     std::string(op_name(op)) + " n=" + std::to_string(n));
        const HostArray in = RandomArray(t, Shape{n}, rng, OptionsFor(rng()));
        const HostArray expected = RefUnary(op, in);
        HostArray out(t, Shape{n});
        Unary(op, t, in.data(), out.data(), n);
        ASSERT_TRUE(BitEqual(expected, out));
        // In place: out is the input buffer.
        HostArray inplace = in;
        Unary(op, t, inplace.data(), inplace.data(), n);
        ASSERT_TRUE(BitEqual(expected, inplace));
      }
    }
  }
}

TEST(BinaryTest, MatchesScalarMathForEveryOpDTypeAndScalarSide) {
  std::mt19937_64 rng(2);
  const ScalarOperand sides[] = {ScalarOperand::kNone, ScalarOperand::kLhs,
                                 ScalarOperand::kRhs};
  for (DType t : AllDTypes()) {
    for (BinaryOp op : kBinaryOps) {
      for (int64_t n : SizesFor(t)) {
        for (ScalarOperand s : sides) {
          SCOPED_TRACE(std::string(dtype_name(t)) + " " +
                       std::string(op_name(op)) + " n=" + std::to_string(n) +
                       " scalar=" + std::to_string(static_cast<int>(s)));
          const FillOptions opt = OptionsFor(rng());
          const int64_t na = s == ScalarOperand::kLhs ? 1 : n;
          const int64_t nb = s == ScalarOperand::kRhs ? 1 : n;
          const HostArray a = RandomArray(t, Shape{na}, rng, opt);
          const HostArray b = RandomArray(t, Shape{nb}, rng, opt);
          const HostArray expected = RefBinary(op, a, b, n, s);
          HostArray out(t, Shape{n});
          Binary(op, t, a.data(), b.data(), out.data(), n, s);
          ASSERT_TRUE(BitEqual(expected, out));
          // In place over whichever operand is a full array.
          if (s != ScalarOperand::kLhs) {
            HostArray inplace = a;
            Binary(op, t, inplace.data(), b.data(), inplace.data(), n, s);
            ASSERT_TRUE(BitEqual(expected, inplace)) << "out == lhs";
          }
          if (s != ScalarOperand::kRhs) {
            HostArray inplace = b;
            Binary(op, t, a.data(), inplace.data(), inplace.data(), n, s);
            ASSERT_TRUE(BitEqual(expected, inplace)) << "out == rhs";
          }
        }
      }
    }
  }
}

TEST(BinaryTest, BothOperandsAndOutputTheSameBuffer) {
  std::mt19937_64 rng(3);
  const int64_t n = (1 << 20) + 1;
  HostArray x = RandomArray(DType::kFloat32, Shape{n}, rng);
  const HostArray expected =
      RefBinary(BinaryOp::kMul, x, x, n, ScalarOperand::kNone);
  Binary(BinaryOp::kMul, DType::kFloat32, x.data(), x.data(), x.data(), n);
  EXPECT_TRUE(BitEqual(expected, x));
}

TEST(CompareTest, MatchesScalarMath) {
  std::mt19937_64 rng(4);
  const ScalarOperand sides[] = {ScalarOperand::kNone, ScalarOperand::kLhs,
                                 ScalarOperand::kRhs};
  for (DType t : AllDTypes()) {
    for (CompareOp op : kCompareOps) {
      for (int64_t n : SizesFor(t)) {
        for (ScalarOperand s : sides) {
          SCOPED_TRACE(std::string(dtype_name(t)) + " " +
                       std::string(op_name(op)) + " n=" + std::to_string(n));
          FillOptions opt = OptionsFor(rng());
          opt.int_range = 3;  // plenty of equal pairs
          const HostArray a =
              RandomArray(t, Shape{s == ScalarOperand::kLhs ? 1 : n}, rng, opt);
          const HostArray b =
              RandomArray(t, Shape{s == ScalarOperand::kRhs ? 1 : n}, rng, opt);
          HostArray out(DType::kBool, Shape{n});
          Compare(op, t, a.data(), b.data(), out.as<bool>(), n, s);
          ASSERT_TRUE(BitEqual(RefCompare(op, a, b, n, s), out));
        }
      }
    }
  }
}

TEST(CompareTest, InPlaceOnBoolOperand) {
  std::mt19937_64 rng(5);
  const int64_t n = 1000;
  HostArray a = RandomArray(DType::kBool, Shape{n}, rng);
  const HostArray b = RandomArray(DType::kBool, Shape{n}, rng);
  const HostArray expected =
      RefCompare(CompareOp::kNe, a, b, n, ScalarOperand::kNone);
  Compare(CompareOp::kNe, DType::kBool, a.data(), b.data(), a.as<bool>(), n);
  EXPECT_TRUE(BitEqual(expected, a));
}

TEST(SelectTest, EveryScalarCombinationAndElementSize) {
  std::mt19937_64 rng(6);
  for (DType t : AllDTypes()) {
    for (int key = 0; key < 8; ++key) {
      for (int64_t n :
           {int64_t{0}, int64_t{1}, int64_t{37}, int64_t{(1 << 20) + 3}}) {
        SCOPED_TRACE(std::string(dtype_name(t)) +
                     " key=" + std::to_string(key) + " n=" + std::to_string(n));
        const SelectScalars s{(key & 4) != 0, (key & 2) != 0, (key & 1) != 0};
        const HostArray pred =
            RandomArray(DType::kBool, Shape{s.pred ? 1 : n}, rng);
        FillOptions opt;
        opt.specials = true;
        const HostArray on_true =
            RandomArray(t, Shape{s.on_true ? 1 : n}, rng, opt);
        const HostArray on_false =
            RandomArray(t, Shape{s.on_false ? 1 : n}, rng, opt);
        HostArray expected(t, Shape{n});
        for (int64_t i = 0; i < n; ++i) {
          const bool p = pred.as<bool>()[s.pred ? 0 : i];
          if (p) {
            expected.CopyElement(i, on_true, s.on_true ? 0 : i);
          } else {
            expected.CopyElement(i, on_false, s.on_false ? 0 : i);
          }
        }
        HostArray out(t, Shape{n});
        Select(t, pred.as<bool>(), on_true.data(), on_false.data(), out.data(),
               n, s);
        ASSERT_TRUE(BitEqual(expected, out));
        if (!s.on_false) {  // in place over on_false
          HostArray inplace = on_false;
          Select(t, pred.as<bool>(), on_true.data(), inplace.data(),
                 inplace.data(), n, s);
          ASSERT_TRUE(BitEqual(expected, inplace));
        }
      }
    }
  }
}

TEST(ConvertTest, EveryPairMatchesConvertElement) {
  std::mt19937_64 rng(7);
  for (DType from : AllDTypes()) {
    for (DType to : AllDTypes()) {
      for (int64_t n : {int64_t{0}, int64_t{33}, int64_t{(1 << 20) + 1}}) {
        if (n > 1000 && from != DType::kFloat32 && to != DType::kFloat32) {
          continue;  // the parallel path once per dtype is enough
        }
        SCOPED_TRACE(std::string(dtype_name(from)) + " -> " +
                     std::string(dtype_name(to)) + " n=" + std::to_string(n));
        FillOptions opt;
        opt.specials = true;  // NaN -> 0, inf saturates, -0 stays
        opt.lo = -70000;      // beyond int8/int16/float16 ranges
        opt.hi = 70000;
        const HostArray in = RandomArray(from, Shape{n}, rng, opt);
        HostArray expected(to, Shape{n});
        VisitDType(from, [&](auto ft) {
          using F = typename decltype(ft)::type;
          VisitDType(to, [&](auto tt) {
            using T = typename decltype(tt)::type;
            for (int64_t i = 0; i < n; ++i) {
              expected.as<T>()[i] = ConvertElement<T, F>(in.as<F>()[i]);
            }
          });
        });
        HostArray out(to, Shape{n});
        Convert(from, to, in.data(), out.data(), n);
        ASSERT_TRUE(BitEqual(expected, out));
        if (dtype_size(from) == dtype_size(to) && n > 0) {
          HostArray inplace = in;
          Convert(from, to, inplace.data(), inplace.data(), n);
          HostArray view(to, Shape{n});
          std::memcpy(view.data(), inplace.data(), view.nbytes());
          ASSERT_TRUE(BitEqual(expected, view)) << "in place";
        }
      }
    }
  }
}

// Every float16 and bfloat16 bit pattern through the Convert kernel, whose
// loops are vectorized (half.h's conversions select rather than branch so
// that they are): widened to float32, checked against a decoding written
// out here, and narrowed back (a NaN becomes the quiet NaN the scalar
// conversion makes). Then float32 values on every float16 rounding
// boundary (just below, at and above each halfway point) narrowed by the
// kernel and by the scalar conversion, bit for bit.
TEST(ConvertTest, SixteenBitFloatsEveryBitPatternThroughTheVectorLoops) {
  constexpr int64_t n = 1 << 16;
  HostArray f16(DType::kFloat16, Shape{n}), bf16(DType::kBFloat16, Shape{n});
  for (int64_t i = 0; i < n; ++i) {
    f16.as<float16>()[i].bits = static_cast<uint16_t>(i);
    bf16.as<bfloat16>()[i].bits = static_cast<uint16_t>(i);
  }
  HostArray wide16(DType::kFloat32, Shape{n}), wide_bf(DType::kFloat32, Shape{n});
  Convert(DType::kFloat16, DType::kFloat32, f16.data(), wide16.data(), n);
  Convert(DType::kBFloat16, DType::kFloat32, bf16.data(), wide_bf.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t sign = static_cast<uint32_t>(i & 0x8000) << 16;
    const int exp = static_cast<int>((i >> 10) & 0x1f);
    const int man = static_cast<int>(i & 0x3ff);
    uint32_t want;
    if (exp == 31) {  // infinity or NaN: payload kept
      want = sign | 0x7f800000u | (static_cast<uint32_t>(man) << 13);
    } else {  // subnormal (exp 0) or normal: exact in float32
      const float m = std::ldexp(static_cast<float>(exp == 0 ? man : 1024 + man),
                                 (exp == 0 ? 1 : exp) - 25);
      want = sign | std::bit_cast<uint32_t>(m);
    }
    ASSERT_EQ(std::bit_cast<uint32_t>(wide16.as<float>()[i]), want)
        << "float16 bits " << std::hex << i;
    ASSERT_EQ(std::bit_cast<uint32_t>(wide_bf.as<float>()[i]),
              static_cast<uint32_t>(i) << 16)
        << "bfloat16 bits " << std::hex << i;
  }
  HostArray back16(DType::kFloat16, Shape{n}), back_bf(DType::kBFloat16, Shape{n});
  Convert(DType::kFloat32, DType::kFloat16, wide16.data(), back16.data(), n);
  Convert(DType::kFloat32, DType::kBFloat16, wide_bf.data(), back_bf.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const bool nan16 = ((i >> 10) & 0x1f) == 31 && (i & 0x3ff) != 0;
    const bool nan_bf = ((i >> 7) & 0xff) == 255 && (i & 0x7f) != 0;
    ASSERT_EQ(back16.as<float16>()[i].bits,
              nan16 ? ((i & 0x8000) | 0x7e00) : i)
        << "float16 bits " << std::hex << i;
    ASSERT_EQ(back_bf.as<bfloat16>()[i].bits, nan_bf ? (i | 0x40) : i)
        << "bfloat16 bits " << std::hex << i;
  }
  // Rounding boundaries: float16's kept bits are a float32's top 19 (13
  // dropped); its halfway point between two neighbours is 0x1000 above.
  std::vector<float> boundaries;
  for (uint32_t top = 0; top < (1u << 19); top += 3) {  // a third of them
    for (uint32_t below : {0x0fffu, 0x1000u, 0x1001u}) {
      boundaries.push_back(std::bit_cast<float>((top << 13) | below));
    }
  }
  const int64_t m = static_cast<int64_t>(boundaries.size());
  HostArray narrowed(DType::kFloat16, Shape{m});
  Convert(DType::kFloat32, DType::kFloat16, boundaries.data(), narrowed.data(),
          m);
  for (int64_t i = 0; i < m; ++i) {
    ASSERT_EQ(narrowed.as<float16>()[i].bits, float_to_f16(boundaries[i]).bits)
        << "float32 bits " << std::hex << std::bit_cast<uint32_t>(boundaries[i]);
  }
}

// float16 and bfloat16 add, sub, mul and div run as explicit AVX2 code
// where the CPU has it (elementwise_binary.cc HalfArithAvx2: F16C for
// float16): every 16-bit pattern as the lhs against a spread of rhs
// patterns, and against scalars that are NaNs (quiet, signalling,
// negative), infinities, zeros, subnormals and ordinary values, bitwise what
// half.h's conversions and float arithmetic give -- with the AVX2 kernels on
// and off (the portable loop).
template <typename T>
void CheckHalfArithmeticEveryPattern(DType dtype,
                                     std::initializer_list<uint16_t> scalars) {
  constexpr int64_t n = 1 << 16;
  HostArray a(dtype, Shape{n}), b(dtype, Shape{n});
  for (int64_t i = 0; i < n; ++i) {
    a.as<T>()[i].bits = static_cast<uint16_t>(i);
    b.as<T>()[i].bits = static_cast<uint16_t>((i * 40503) & 0xffff);
  }
  const bool avx2_before = SetAvx2KernelsForTesting(true);
  for (bool avx2 : {true, false}) {
    SetAvx2KernelsForTesting(avx2);
    for (BinaryOp op :
         {BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv}) {
      auto expect = [&](T x, T y) {
        float r = 0;
        VisitBinaryOp(op, [&](auto op_c) {
          r = scalar::Binary<decltype(op_c)::value, float>(ToCompute<T>(x),
                                                           ToCompute<T>(y));
        });
        return FromCompute<T>(r).bits;
      };
      HostArray out(dtype, Shape{n});
      Binary(op, dtype, a.data(), b.data(), out.data(), n, ScalarOperand::kNone);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(out.as<T>()[i].bits, expect(a.as<T>()[i], b.as<T>()[i]))
            << dtype_name(dtype) << " avx2 " << avx2 << " op "
            << static_cast<int>(op) << " lhs " << std::hex << i;
      }
      for (uint16_t bits : scalars) {
        const T sc{bits};
        Binary(op, dtype, a.data(), &sc, out.data(), n, ScalarOperand::kRhs);
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(out.as<T>()[i].bits, expect(a.as<T>()[i], sc))
              << dtype_name(dtype) << " avx2 " << avx2 << " rhs scalar "
              << std::hex << bits;
        }
        Binary(op, dtype, &sc, a.data(), out.data(), n, ScalarOperand::kLhs);
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(out.as<T>()[i].bits, expect(sc, a.as<T>()[i]))
              << dtype_name(dtype) << " avx2 " << avx2 << " lhs scalar "
              << std::hex << bits;
        }
      }
    }
  }
  SetAvx2KernelsForTesting(avx2_before);
}

TEST(BinaryTest, Float16ArithmeticEveryPatternBothPaths) {
  CheckHalfArithmeticEveryPattern<float16>(
      DType::kFloat16, {0x7e00, 0x7c01, 0xfe13, 0x7c00, 0xfc00, 0x0000, 0x8000,
                        0x0001, 0x83ff, 0x3c00, 0x7bff, 0xc500});
}

TEST(BinaryTest, BFloat16ArithmeticEveryPatternBothPaths) {
  CheckHalfArithmeticEveryPattern<bfloat16>(
      DType::kBFloat16, {0x7fc0, 0x7f81, 0xffc3, 0x7f80, 0xff80, 0x0000, 0x8000,
                         0x0001, 0x807f, 0x3f80, 0x7f7f, 0xc0a0});
}

// Distance in units in the last place between two finite floats of one sign
// (or both zero); NaN only matches NaN.
int64_t UlpDistance(double a, double b, bool f32) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b) ? 0 : 1 << 30;
  }
  if (a == b) return 0;
  if (std::isinf(a) || std::isinf(b)) return 1 << 30;
  auto ordered = [&](double v) -> int64_t {
    if (f32) {
      const int32_t i = std::bit_cast<int32_t>(static_cast<float>(v));
      return i < 0 ? int64_t{INT32_MIN} - i : i;
    }
    const int64_t i = std::bit_cast<int64_t>(v);
    return i < 0 ? INT64_MIN - i : i;
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

double LibmUnary(UnaryOp op, double x) {
  switch (op) {
    case UnaryOp::kLog1p: return std::log1p(x);
    case UnaryOp::kExpm1: return std::expm1(x);
    case UnaryOp::kTan: return std::tan(x);
    default: return std::atan(x);
  }
}

// log1p, expm1, tan and atan (libm at every precision): float32 within 2
// ulp of the double result, float64 libm's bits, 16-bit floats the float32
// result rounded once; IEEE specials as in libm.
TEST(UnaryTest, NewTranscendentalsMatchLibm) {
  std::mt19937_64 rng(9);
  const std::vector<double> specials = {
      0.0, -0.0, 1e-30, -1e-30, 1e-8, -1e-8, 0.5, -0.5, -1.0, -1.5, 1.0,
      88.0, 100.0, -100.0, 1e30, -1e30, INFINITY, -INFINITY, NAN};
  std::uniform_real_distribution<double> dist(-20, 20);
  for (UnaryOp op : {UnaryOp::kLog1p, UnaryOp::kExpm1, UnaryOp::kTan,
                     UnaryOp::kAtan}) {
    SCOPED_TRACE(std::string(op_name(op)));
    std::vector<double> xs = specials;
    for (int i = 0; i < 4000; ++i) {
      const double v = dist(rng);
      xs.push_back(i % 2 ? v : v * 1e-4);
    }
    const int64_t n = static_cast<int64_t>(xs.size());
    HostArray f32(DType::kFloat32, Shape{n}), f64(DType::kFloat64, Shape{n});
    HostArray f16(DType::kFloat16, Shape{n});
    for (int64_t i = 0; i < n; ++i) {
      f32.as<float>()[i] = static_cast<float>(xs[i]);
      f64.as<double>()[i] = xs[i];
      f16.as<float16>()[i] = float_to_f16(static_cast<float>(xs[i]));
    }
    HostArray o32(DType::kFloat32, Shape{n}), o64(DType::kFloat64, Shape{n});
    HostArray o16(DType::kFloat16, Shape{n});
    Unary(op, DType::kFloat32, f32.data(), o32.data(), n);
    Unary(op, DType::kFloat64, f64.data(), o64.data(), n);
    Unary(op, DType::kFloat16, f16.data(), o16.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const float x = f32.as<float>()[i];
      const double want32 = LibmUnary(op, static_cast<double>(x));
      const double got32 = o32.as<float>()[i];
      if (std::abs(want32) < 1e38) {
        EXPECT_LE(UlpDistance(got32, want32, true), 2)
            << "x=" << x << " got " << got32 << " want " << want32;
      }
      const double want64 = LibmUnary(op, xs[i]);
      const double got64 = o64.as<double>()[i];
      EXPECT_TRUE(std::bit_cast<uint64_t>(got64) ==
                      std::bit_cast<uint64_t>(want64) ||
                  (std::isnan(got64) && std::isnan(want64)))
          << "x=" << xs[i] << " got " << got64 << " want " << want64;
      const float h = f16_to_float(f16.as<float16>()[i]);
      const float want16 = f16_to_float(
          float_to_f16(static_cast<float>(LibmUnary(op, h))));
      const float got16 = f16_to_float(o16.as<float16>()[i]);
      if (got16 == want16 || (std::isnan(got16) && std::isnan(want16))) {
        continue;
      }
      // Within one float16 ulp (double rounding through float32).
      EXPECT_NEAR(got16, want16, std::abs(want16) * 1e-3 + 1e-7) << "x=" << h;
    }
  }
}

TEST(BinaryTest, Atan2MatchesLibm) {
  const double vals[] = {0.0, -0.0, 1.0, -1.0, 3.5, -2e-3, 1e300,
                         INFINITY, -INFINITY, NAN};
  std::vector<double> ys, xs;
  for (double y : vals) {
    for (double x : vals) {
      ys.push_back(y);
      xs.push_back(x);
    }
  }
  const int64_t n = static_cast<int64_t>(ys.size());
  HostArray y32(DType::kFloat32, Shape{n}), x32(DType::kFloat32, Shape{n});
  HostArray y64(DType::kFloat64, Shape{n}), x64(DType::kFloat64, Shape{n});
  for (int64_t i = 0; i < n; ++i) {
    y32.as<float>()[i] = static_cast<float>(ys[i]);
    x32.as<float>()[i] = static_cast<float>(xs[i]);
    y64.as<double>()[i] = ys[i];
    x64.as<double>()[i] = xs[i];
  }
  HostArray o32(DType::kFloat32, Shape{n}), o64(DType::kFloat64, Shape{n});
  Binary(BinaryOp::kAtan2, DType::kFloat32, y32.data(), x32.data(), o32.data(),
         n);
  Binary(BinaryOp::kAtan2, DType::kFloat64, y64.data(), x64.data(), o64.data(),
         n);
  for (int64_t i = 0; i < n; ++i) {
    SCOPED_TRACE("atan2(" + std::to_string(ys[i]) + ", " +
                 std::to_string(xs[i]) + ")");
    const double want64 = std::atan2(ys[i], xs[i]);
    const double want32 = std::atan2(static_cast<double>(y32.as<float>()[i]),
                                     static_cast<double>(x32.as<float>()[i]));
    EXPECT_LE(UlpDistance(o64.as<double>()[i], want64, false), 0);
    EXPECT_LE(UlpDistance(o32.as<float>()[i], want32, true), 2);
    // Signed zeros: atan2(+-0, +0) = +-0, atan2(+-0, -0) = +-pi.
    if (!std::isnan(want64)) {
      EXPECT_EQ(std::signbit(o64.as<double>()[i]), std::signbit(want64));
    }
  }
}

// XLA's shift semantics, written out: the amount read as unsigned, out of
// range gives 0 or the sign fill.
template <typename T>
void CheckShifts() {
  using U = std::make_unsigned_t<T>;
  using S = std::make_signed_t<T>;
  constexpr int kBits = sizeof(T) * 8;
  std::vector<T> xs = {T(0), T(1), T(5), std::numeric_limits<T>::max(),
                       std::numeric_limits<T>::min(), static_cast<T>(-1),
                       static_cast<T>(-100)};
  std::vector<T> as;
  for (int s = -2; s <= kBits + 2; ++s) as.push_back(static_cast<T>(s));
  as.push_back(std::numeric_limits<T>::max());
  as.push_back(std::numeric_limits<T>::min());
  const int64_t n = static_cast<int64_t>(xs.size() * as.size());
  HostArray a(dtype_of<T>(), Shape{n}), b(dtype_of<T>(), Shape{n});
  int64_t k = 0;
  for (T x : xs) {
    for (T s : as) {
      a.as<T>()[k] = x;
      b.as<T>()[k++] = s;
    }
  }
  HostArray l(a.dtype(), Shape{n}), ra(a.dtype(), Shape{n}),
      rl(a.dtype(), Shape{n});
  Binary(BinaryOp::kShiftLeft, a.dtype(), a.data(), b.data(), l.data(), n);
  Binary(BinaryOp::kShiftRightArithmetic, a.dtype(), a.data(), b.data(),
         ra.data(), n);
  Binary(BinaryOp::kShiftRightLogical, a.dtype(), a.data(), b.data(),
         rl.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const T x = a.as<T>()[i];
    const uint64_t s = static_cast<U>(b.as<T>()[i]);
    const uint64_t ux = static_cast<U>(x);
    const bool neg = static_cast<S>(x) < 0;
    T want_l = 0, want_rl = 0, want_ra = neg ? static_cast<T>(-1) : T(0);
    if (s < kBits) {
      want_l = static_cast<T>(static_cast<U>(ux << s));
      want_rl = static_cast<T>(static_cast<U>(ux >> s));
      // Arithmetic: the logical shift with the vacated top bits set.
      uint64_t r = ux >> s;
      if (neg && s > 0) r |= ~uint64_t{0} << (kBits - s);
      want_ra = static_cast<T>(static_cast<U>(r));
    }
    SCOPED_TRACE(std::string(dtype_name(a.dtype())) + " x=" +
                 std::to_string(static_cast<int64_t>(x)) +
                 " s=" + std::to_string(static_cast<int64_t>(b.as<T>()[i])));
    EXPECT_EQ(l.as<T>()[i], want_l);
    EXPECT_EQ(ra.as<T>()[i], want_ra);
    EXPECT_EQ(rl.as<T>()[i], want_rl);
  }
}

TEST(BinaryTest, ShiftsFollowXla) {
  CheckShifts<int8_t>();
  CheckShifts<int16_t>();
  CheckShifts<int32_t>();
  CheckShifts<int64_t>();
  CheckShifts<uint8_t>();
  CheckShifts<uint32_t>();
}

TEST(BinaryTest, XorIsBitwiseForIntegersAndLogicalForBool) {
  HostArray a(DType::kInt32, Shape{3}), b(DType::kInt32, Shape{3});
  const int32_t av[] = {0b1100, -1, 7}, bv[] = {0b1010, 5, 7};
  for (int i = 0; i < 3; ++i) {
    a.as<int32_t>()[i] = av[i];
    b.as<int32_t>()[i] = bv[i];
  }
  HostArray o(DType::kInt32, Shape{3});
  Binary(BinaryOp::kXor, DType::kInt32, a.data(), b.data(), o.data(), 3);
  EXPECT_EQ(o.as<int32_t>()[0], 0b0110);
  EXPECT_EQ(o.as<int32_t>()[1], ~5);
  EXPECT_EQ(o.as<int32_t>()[2], 0);
  HostArray p(DType::kBool, Shape{4}), q(DType::kBool, Shape{4});
  const bool pv[] = {false, false, true, true};
  const bool qv[] = {false, true, false, true};
  for (int i = 0; i < 4; ++i) {
    p.as<bool>()[i] = pv[i];
    q.as<bool>()[i] = qv[i];
  }
  HostArray r(DType::kBool, Shape{4});
  Binary(BinaryOp::kXor, DType::kBool, p.data(), q.data(), r.data(), 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r.as<bool>()[i], pv[i] != qv[i]);
}

// Several threads (executors) splitting large kernels over the one global
// pool at the same time.
TEST(BinaryTest, ConcurrentCallersShareThePool) {
  std::mt19937_64 rng(8);
  const int64_t n = (1 << 20) + 11;
  const HostArray a = RandomArray(DType::kFloat32, Shape{n}, rng);
  const HostArray b = RandomArray(DType::kFloat32, Shape{n}, rng);
  const HostArray expected =
      RefBinary(BinaryOp::kSub, a, b, n, ScalarOperand::kNone);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      HostArray out(DType::kFloat32, Shape{n});
      for (int rep = 0; rep < 10; ++rep) {
        Binary(BinaryOp::kSub, DType::kFloat32, a.data(), b.data(), out.data(),
               n);
        if (!BitEqual(expected, out)) ++mismatches;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace baton::cpu
