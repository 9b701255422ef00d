// backend/cuda/codegen/device_prelude.inc, compiled on the host
// (BATON_HOST_EMULATION), against the host definitions it mirrors:
// core/scalar_math.h (Unary, Binary, Compare, ReduceInit/ReduceCombine, the
// scatter combine of the CPU kernels), core/dtype_dispatch.h's
// ConvertElement and core/half.h's conversions.
//
// Every op code, on every compute type, over special and random inputs (and
// all pairs of them for the binary ops) must give the same bits, except the
// float/double transcendentals: the prelude calls the C math library there
// (CUDA's on the device) while the CPU backend uses fast_math.h for float
// exp/log/tanh/logistic, so those must agree within kFloatUlps ulp or
// kFloatRel (float), kDoubleRel (double) relative error. Needs no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/core/dtype_dispatch.h"
#include "baton/core/half.h"
#include "baton/core/op_codes.h"
#include "baton/core/scalar_math.h"

#define BATON_HOST_EMULATION
#include "baton/backend/cuda/codegen/device_prelude.inc"

namespace baton {
namespace {

// Tolerances of the transcendentals. fast_math.h is within 2.4 ulp and
// glibc's float functions within ~2 ulp of the true value, so the two are
// within ~4.5 ulp of each other; 1e-6 relative (8 to 16 ulp) leaves room on
// the GPU too, where CUDA documents up to 4 ulp (powf: 4) for float.
constexpr uint64_t kFloatUlps = 4;
constexpr double kFloatRel = 1e-6;
constexpr double kDoubleRel = 1e-14;

// The op codes the code generator emits are the enums' values.
// clang-format off
#define BATON_SAME_CODE(NS, ENUM, NAME) \
  static_assert(bt::NS::NAME == static_cast<int>(ENUM::NAME), #NAME);
#define BATON_UNARY(NAME) BATON_SAME_CODE(unary_op, UnaryOp, NAME)
BATON_UNARY(kNeg) BATON_UNARY(kAbs) BATON_UNARY(kExp) BATON_UNARY(kLog)
BATON_UNARY(kTanh) BATON_UNARY(kLogistic) BATON_UNARY(kSqrt)
BATON_UNARY(kRsqrt) BATON_UNARY(kSin) BATON_UNARY(kCos) BATON_UNARY(kNot)
BATON_UNARY(kSign) BATON_UNARY(kFloor) BATON_UNARY(kCeil) BATON_UNARY(kRound)
BATON_UNARY(kLog1p) BATON_UNARY(kExpm1) BATON_UNARY(kTan) BATON_UNARY(kAtan)
#undef BATON_UNARY
#define BATON_BINARY(NAME) BATON_SAME_CODE(binary_op, BinaryOp, NAME)
BATON_BINARY(kAdd) BATON_BINARY(kSub) BATON_BINARY(kMul) BATON_BINARY(kDiv)
BATON_BINARY(kPow) BATON_BINARY(kMax) BATON_BINARY(kMin) BATON_BINARY(kAnd)
BATON_BINARY(kOr) BATON_BINARY(kRem) BATON_BINARY(kAtan2) BATON_BINARY(kXor)
BATON_BINARY(kShiftLeft) BATON_BINARY(kShiftRightArithmetic)
BATON_BINARY(kShiftRightLogical)
#undef BATON_BINARY
BATON_SAME_CODE(compare_op, CompareOp, kEq)
BATON_SAME_CODE(compare_op, CompareOp, kNe)
BATON_SAME_CODE(compare_op, CompareOp, kLt)
BATON_SAME_CODE(compare_op, CompareOp, kLe)
BATON_SAME_CODE(compare_op, CompareOp, kGt)
BATON_SAME_CODE(compare_op, CompareOp, kGe)
BATON_SAME_CODE(reduce_op, ReduceOp, kSum)
BATON_SAME_CODE(reduce_op, ReduceOp, kProd)
BATON_SAME_CODE(reduce_op, ReduceOp, kMax)
BATON_SAME_CODE(reduce_op, ReduceOp, kMin)
BATON_SAME_CODE(scatter_mode, ScatterMode, kSet)
BATON_SAME_CODE(scatter_mode, ScatterMode, kAdd)
BATON_SAME_CODE(scatter_mode, ScatterMode, kMul)
BATON_SAME_CODE(scatter_mode, ScatterMode, kMin)
BATON_SAME_CODE(scatter_mode, ScatterMode, kMax)
#undef BATON_SAME_CODE
// clang-format on
static_assert(bt::unary_op::kCount == kNumUnaryOps);
static_assert(bt::binary_op::kCount == kNumBinaryOps);
static_assert(bt::compare_op::kCount == static_cast<int>(CompareOp::kGe) + 1);
static_assert(bt::reduce_op::kCount == static_cast<int>(ReduceOp::kMin) + 1);
static_assert(bt::scatter_mode::kCount ==
              static_cast<int>(ScatterMode::kMax) + 1);

// ---- Types: baton's host type B and the prelude's type BtOf<B>. ----

template <typename B> struct BtOfT { using type = B; };  // bool, float, ...
template <> struct BtOfT<int8_t> { using type = bt::i8; };
template <> struct BtOfT<int16_t> { using type = bt::i16; };
template <> struct BtOfT<int32_t> { using type = bt::i32; };
template <> struct BtOfT<int64_t> { using type = bt::i64; };  // long long
template <> struct BtOfT<uint8_t> { using type = bt::u8; };
template <> struct BtOfT<uint16_t> { using type = bt::u16; };
template <> struct BtOfT<uint32_t> { using type = bt::u32; };
template <> struct BtOfT<uint64_t> { using type = bt::u64; };
template <> struct BtOfT<float16> { using type = bt::f16; };
template <> struct BtOfT<bfloat16> { using type = bt::bf16; };
template <typename B> using BtOf = typename BtOfT<B>::type;

template <typename B>
constexpr bool kIsHalf =
    std::is_same_v<B, float16> || std::is_same_v<B, bfloat16>;

template <typename B>
BtOf<B> ToBt(B x) {
  if constexpr (kIsHalf<B>) return BtOf<B>{x.bits};
  else return static_cast<BtOf<B>>(x);
}

// The bits of any value of either side, for bit-exact comparison.
template <typename T>
uint64_t Bits(T x) {
  if constexpr (std::is_same_v<T, bool>) {
    return x ? 1 : 0;
  } else if constexpr (std::is_class_v<T>) {  // a 16-bit float
    return x.bits;
  } else {
    uint64_t u = 0;
    std::memcpy(&u, &x, sizeof x);
    return u;
  }
}

template <typename B>
std::string TypeName() {
  if constexpr (std::is_same_v<B, float16>) return "float16";
  else if constexpr (std::is_same_v<B, bfloat16>) return "bfloat16";
  else if constexpr (std::is_same_v<B, uint16_t>) return "uint16";
  else if constexpr (std::is_same_v<B, uint64_t>) return "uint64";
  else return std::string(dtype_name(dtype_of<B>()));
}

template <typename T>
std::string Show(T x) {
  char buf[64];
  if constexpr (std::is_same_v<T, bool>) {
    return x ? "true" : "false";
  } else if constexpr (std::is_class_v<T>) {
    std::snprintf(buf, sizeof buf, "0x%04x", static_cast<unsigned>(x.bits));
  } else if constexpr (std::is_floating_point_v<T>) {
    std::snprintf(buf, sizeof buf, "%.17g (0x%llx)", static_cast<double>(x),
                  static_cast<unsigned long long>(Bits(x)));
  } else if constexpr (std::is_signed_v<T>) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(x));
  } else {
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(x));
  }
  return buf;
}

template <typename... B> struct TypeList {};
// The compute types of the dtypes, and two more unsigned widths the prelude
// also defines (its integer code is generic over them).
using ComputeTypes = TypeList<bool, int8_t, int16_t, int32_t, int64_t,
                              uint8_t, uint16_t, uint32_t, uint64_t, float,
                              double>;
// Every dtype's storage type.
using StorageTypes = TypeList<bool, int8_t, int16_t, int32_t, int64_t,
                              uint8_t, uint32_t, float16, bfloat16, float,
                              double>;

template <typename... B, typename F>
void ForEachType(TypeList<B...>, F&& f) {
  (f(TypeTag<B>{}), ...);
}
template <int n, typename F>
void ForEachCode(F&& f) {
  [&]<int... i>(std::integer_sequence<int, i...>) {
    (f(std::integral_constant<int, i>{}), ...);
  }(std::make_integer_sequence<int, n>{});
}

// ---- Inputs. ----

template <typename T>
std::vector<T> IntInputs() {
  using L = std::numeric_limits<T>;
  constexpr int64_t kBits = sizeof(T) * 8;
  std::vector<T> v;
  // Wrapping conversions (C++20) fold out-of-range constants into range.
  for (int64_t c : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3},
                    int64_t{5}, int64_t{7}, int64_t{8}, int64_t{100},
                    kBits - 1, kBits, kBits + 1, int64_t{63}, int64_t{64},
                    int64_t{65}, int64_t{-1}, int64_t{-2}, int64_t{-3},
                    int64_t{-7}, int64_t{-8}, -kBits, int64_t{-100},
                    int64_t{19}, int64_t{20}, int64_t{37}, int64_t{1000}}) {
    v.push_back(static_cast<T>(c));
  }
  v.push_back(L::min());
  v.push_back(L::max());
  v.push_back(static_cast<T>(L::min() + 1));
  v.push_back(static_cast<T>(L::max() - 1));
  v.push_back(static_cast<T>(L::max() / 2));
  std::mt19937_64 rng(12345 + kBits);
  for (int i = 0; i < 24; ++i) v.push_back(static_cast<T>(rng()));
  for (int i = 0; i < 8; ++i) {
    v.push_back(static_cast<T>(static_cast<int64_t>(rng() % 41) - 20));
  }
  return v;
}

template <typename F>
F FromBitsOf(uint64_t u) {
  if constexpr (sizeof(F) == 4) {
    return std::bit_cast<F>(static_cast<uint32_t>(u));
  } else {
    return std::bit_cast<F>(u);
  }
}

template <typename F>
std::vector<F> FloatInputs() {
  using L = std::numeric_limits<F>;
  const bool single = sizeof(F) == 4;
  std::vector<F> v = {
      F(0), -F(0), F(1), F(-1), F(2), F(-2), F(0.5), F(-0.5), F(1.5),
      F(-1.5), F(2.5), F(-2.5), F(3.5), F(3.7), F(-3.7), F(0.1), F(100),
      F(-100), F(1e10), F(-1e10), F(3.14159265358979), F(-1.5707963267949),
      F(88.5), F(-88.5), F(89), F(-89), F(-100.5), F(-104), F(20), F(-20),
      F(710), F(-745), F(65504), F(65520), F(-65519), F(1e-7), F(-3e-8),
      L::min(), -L::min(), L::denorm_min(), -L::denorm_min(),
      L::min() - L::denorm_min(),  // the largest denormal
      L::max(), L::lowest(), L::epsilon(), F(1) + L::epsilon(),
      L::infinity(), -L::infinity(), L::quiet_NaN(), -L::quiet_NaN(),
      // A NaN with a payload and a signaling NaN.
      FromBitsOf<F>(single ? 0x7fc12345u : 0x7ff8000012345678ull),
      FromBitsOf<F>(single ? 0xff800001u : 0xfff0000000000001ull),
      // Integer-range boundaries (the conversions saturate there).
      F(127.5), F(-128.5), F(255.5), F(2147483648.0), F(-2147483904.0),
      F(4294967296.0), F(9223372036854775808.0), F(-9223372036854775808.0),
      F(18446744073709551616.0)};
  std::mt19937_64 rng(777 + sizeof(F));
  for (int i = 0; i < 24; ++i) v.push_back(FromBitsOf<F>(rng()));
  std::uniform_real_distribution<double> wide(-10, 10), narrow(-1e-3, 1e-3);
  for (int i = 0; i < 24; ++i) v.push_back(static_cast<F>(wide(rng)));
  for (int i = 0; i < 8; ++i) v.push_back(static_cast<F>(narrow(rng)));
  return v;
}

template <typename B>
std::vector<B> Inputs() {
  if constexpr (std::is_same_v<B, bool>) return {false, true};
  else if constexpr (std::is_floating_point_v<B>) return FloatInputs<B>();
  else return IntInputs<B>();
}

// Storage-type inputs: every bit pattern of the 16-bit floats.
template <typename B>
std::vector<B> StorageInputs() {
  if constexpr (kIsHalf<B>) {
    std::vector<B> v;
    for (uint32_t u = 0; u <= 0xffff; ++u) {
      v.push_back(B{static_cast<uint16_t>(u)});
    }
    return v;
  } else {
    return Inputs<B>();
  }
}

// ---- Comparison. ----

// Distance of two same-type floats in units in the last place (adjacent
// floats are 1 apart, +0 and -0 are 0 apart).
template <typename F>
uint64_t UlpDistance(F a, F b) {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  constexpr U kSign = U(1) << (sizeof(F) * 8 - 1);
  const U ua = std::bit_cast<U>(a), ub = std::bit_cast<U>(b);
  const uint64_t ma = ua & ~kSign, mb = ub & ~kSign;
  if ((ua & kSign) == (ub & kSign)) return ma > mb ? ma - mb : mb - ma;
  return ma + mb;  // through zero (no overflow: both below 2^63)
}

// Whether the prelude's `got` matches baton's `want`: the same bits, or for
// an approximate (transcendental) op: both NaN, or close.
template <typename T, typename B>
bool Matches(T got, B want, bool approx) {
  if (Bits(got) == Bits(want)) return true;
  if constexpr (std::is_floating_point_v<B>) {
    static_assert(std::is_same_v<T, B>);
    if (!approx) return false;
    if (std::isnan(got) || std::isnan(want)) {
      return std::isnan(got) && std::isnan(want);
    }
    if (std::isinf(got) || std::isinf(want)) return false;  // not the same inf
    const double diff = std::fabs(static_cast<double>(got) - want);
    const double mag = std::max(std::fabs(static_cast<double>(got)),
                                std::fabs(static_cast<double>(want)));
    if (sizeof(B) == 4) {
      return UlpDistance(got, want) <= kFloatUlps || diff <= kFloatRel * mag;
    }
    return diff <= kDoubleRel * mag;
  }
  return false;
}

// Counts the mismatches of one (op, type) and reports the first few, so a
// broken op gives one readable failure rather than thousands.
class Mismatches {
 public:
  explicit Mismatches(std::string what) : what_(std::move(what)) {}
  Mismatches(const Mismatches&) = delete;
  Mismatches& operator=(const Mismatches&) = delete;
  ~Mismatches() {
    EXPECT_GT(checks_, 0) << what_ << ": nothing was checked";
    if (count_ > 0) {
      ADD_FAILURE() << what_ << ": " << count_ << " of " << checks_
                    << " mismatch" << first_;
    }
  }
  template <typename T, typename B, typename Describe>
  void Check(T got, B want, bool approx, Describe&& describe) {
    ++checks_;
    if (Matches(got, want, approx)) return;
    if (++count_ <= 5) {
      first_ += "\n  " + describe() + ": got " + Show(got) + ", want " +
                Show(want);
    }
  }

 private:
  std::string what_;
  int64_t checks_ = 0;
  int64_t count_ = 0;
  std::string first_;
};

constexpr bool IsTranscendental(UnaryOp op) {
  switch (op) {
    case UnaryOp::kExp: case UnaryOp::kLog: case UnaryOp::kTanh:
    case UnaryOp::kLogistic: case UnaryOp::kSin: case UnaryOp::kCos:
    case UnaryOp::kLog1p: case UnaryOp::kExpm1: case UnaryOp::kTan:
    case UnaryOp::kAtan:
      return true;
    default:
      return false;
  }
}
constexpr bool IsTranscendental(BinaryOp op) {
  return op == BinaryOp::kPow || op == BinaryOp::kAtan2;
}
// The float32 functions the prelude takes from core/fast_math.h, as the CPU
// does: bit-equal, not approximate.
constexpr bool IsFastMath(UnaryOp op) {
  return op == UnaryOp::kExp || op == UnaryOp::kLog || op == UnaryOp::kTanh ||
         op == UnaryOp::kLogistic;
}
// Whether `op` on B may differ from the CPU by a few ulp (libm against
// CUDA's math library).
template <typename B>
constexpr bool Approximate(UnaryOp op) {
  return std::is_floating_point_v<B> && IsTranscendental(op) &&
         !(std::is_same_v<B, float> && IsFastMath(op));
}

// ---- Tests. ----

TEST(DevicePreludeTest, UnaryMatchesScalarMath) {
  ForEachType(ComputeTypes{}, [](auto tag) {
    using B = typename decltype(tag)::type;
    using T = BtOf<B>;
    const std::vector<B> inputs = Inputs<B>();
    ForEachCode<kNumUnaryOps>([&](auto code) {
      constexpr int op = decltype(code)::value;
      constexpr UnaryOp bop = static_cast<UnaryOp>(op);
      // Only the float results of libm functions are approximate; the
      // integer and bool fallbacks through double must still truncate to
      // the same value.
      const bool approx = Approximate<B>(bop);
      Mismatches m(std::string(op_name(bop)) + " on " + TypeName<B>());
      for (const B x : inputs) {
        m.Check(bt::unary<op, T>(ToBt(x)), scalar::Unary<bop, B>(x), approx,
                [&] {
                  return std::string(op_name(bop)) + "(" + Show(x) + ")";
                });
      }
    });
  });
}

TEST(DevicePreludeTest, BinaryMatchesScalarMath) {
  ForEachType(ComputeTypes{}, [](auto tag) {
    using B = typename decltype(tag)::type;
    using T = BtOf<B>;
    const std::vector<B> inputs = Inputs<B>();
    ForEachCode<kNumBinaryOps>([&](auto code) {
      constexpr int op = decltype(code)::value;
      constexpr BinaryOp bop = static_cast<BinaryOp>(op);
      // complex(re, im) makes a complex value, which the emitter refuses
      // before any kernel is written.
      if constexpr (bop == BinaryOp::kComplex) return;
      const bool approx = std::is_floating_point_v<B> && IsTranscendental(bop);
      Mismatches m(std::string(op_name(bop)) + " on " + TypeName<B>());
      for (const B a : inputs) {
        for (const B b : inputs) {
          m.Check(bt::binary<op, T>(ToBt(a), ToBt(b)),
                  scalar::Binary<bop, B>(a, b), approx, [&] {
                    return std::string(op_name(bop)) + "(" + Show(a) + ", " +
                           Show(b) + ")";
                  });
        }
      }
    });
  });
}

TEST(DevicePreludeTest, CompareMatchesScalarMath) {
  ForEachType(ComputeTypes{}, [](auto tag) {
    using B = typename decltype(tag)::type;
    using T = BtOf<B>;
    const std::vector<B> inputs = Inputs<B>();
    ForEachCode<bt::compare_op::kCount>([&](auto code) {
      constexpr int op = decltype(code)::value;
      constexpr CompareOp bop = static_cast<CompareOp>(op);
      Mismatches m(std::string(op_name(bop)) + " on " + TypeName<B>());
      for (const B a : inputs) {
        for (const B b : inputs) {
          m.Check(bt::compare<op, T>(ToBt(a), ToBt(b)),
                  scalar::Compare<bop, B>(a, b), false,
                  [&] { return Show(a) + " vs " + Show(b); });
        }
      }
    });
  });
}

TEST(DevicePreludeTest, ReduceMatchesScalarMath) {
  ForEachType(ComputeTypes{}, [](auto tag) {
    using B = typename decltype(tag)::type;
    using T = BtOf<B>;
    const std::vector<B> inputs = Inputs<B>();
    ForEachCode<bt::reduce_op::kCount>([&](auto code) {
      constexpr int op = decltype(code)::value;
      constexpr ReduceOp bop = static_cast<ReduceOp>(op);
      Mismatches m(std::string(op_name(bop)) + " on " + TypeName<B>());
      m.Check(bt::reduce_init<op, T>(), scalar::ReduceInit<bop, B>(), false,
              [] { return std::string("init"); });
      for (const B a : inputs) {
        for (const B b : inputs) {
          m.Check(bt::reduce_combine<op, T>(ToBt(a), ToBt(b)),
                  scalar::ReduceCombine<bop, B>(a, b), false,
                  [&] { return Show(a) + " with " + Show(b); });
        }
      }
      // A whole reduction from the identity, in order.
      T acc = bt::reduce_init<op, T>();
      B want = scalar::ReduceInit<bop, B>();
      for (const B x : inputs) {
        acc = bt::reduce_combine<op, T>(acc, ToBt(x));
        want = scalar::ReduceCombine<bop, B>(want, x);
        m.Check(acc, want, false, [&] { return "running, at " + Show(x); });
      }
    });
  });
}

// The float transcendentals over the whole range (every 4093rd bit pattern,
// about a million inputs each): where the two sides are different functions
// (libm, CUDA's math library) the tolerance must hold everywhere, not just
// at the specials; fast_math.h's are the same bits everywhere.
TEST(DevicePreludeTest, FloatTranscendentalsWithinToleranceEverywhere) {
  ForEachCode<kNumUnaryOps>([](auto code) {
    constexpr int op = decltype(code)::value;
    constexpr UnaryOp bop = static_cast<UnaryOp>(op);
    if constexpr (IsTranscendental(bop)) {
      Mismatches m(std::string(op_name(bop)) + " on float32, swept");
      for (uint64_t u = 0; u <= 0xffffffffu; u += 4093) {
        const float x = std::bit_cast<float>(static_cast<uint32_t>(u));
        m.Check(bt::unary<op, float>(x), scalar::Unary<bop, float>(x),
                Approximate<float>(bop), [&] { return Show(x); });
      }
    }
  });
}

// The CPU scatter kernel (backend/cpu/kernels/indexing.cc) and the
// interpreter: kSet writes the update, the others combine with
// scalar::Binary (add, mul, min, max).
template <ScatterMode mode, typename B>
B CpuScatterCombine(B old, B update) {
  if constexpr (mode == ScatterMode::kSet) {
    return update;
  } else {
    constexpr BinaryOp op = mode == ScatterMode::kAdd   ? BinaryOp::kAdd
                            : mode == ScatterMode::kMul ? BinaryOp::kMul
                            : mode == ScatterMode::kMin ? BinaryOp::kMin
                                                        : BinaryOp::kMax;
    return scalar::Binary<op, B>(old, update);
  }
}

TEST(DevicePreludeTest, ScatterCombineMatchesCpu) {
  ForEachType(ComputeTypes{}, [](auto tag) {
    using B = typename decltype(tag)::type;
    using T = BtOf<B>;
    const std::vector<B> inputs = Inputs<B>();
    ForEachCode<bt::scatter_mode::kCount>([&](auto code) {
      constexpr int mode = decltype(code)::value;
      constexpr ScatterMode bmode = static_cast<ScatterMode>(mode);
      Mismatches m(std::string(op_name(bmode)) + " on " + TypeName<B>());
      for (const B old : inputs) {
        for (const B update : inputs) {
          m.Check(bt::scatter_combine<mode, T>(ToBt(old), ToBt(update)),
                  CpuScatterCombine<bmode, B>(old, update), false,
                  [&] { return Show(update) + " onto " + Show(old); });
        }
      }
    });
  });
}

TEST(DevicePreludeTest, ConvertMatchesConvertElement) {
  ForEachType(StorageTypes{}, [](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    const std::vector<From> inputs = StorageInputs<From>();
    ForEachType(StorageTypes{}, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      Mismatches m(TypeName<From>() + " -> " + TypeName<To>());
      for (const From x : inputs) {
        m.Check(bt::convert<BtOf<To>, BtOf<From>>(ToBt(x)),
                ConvertElement<To, From>(x), false, [&] { return Show(x); });
      }
    });
  });
}

// Every 16-bit pattern to float, both spellings of to_compute, and back.
template <typename H, typename BH, typename ToFloat, typename FromFloat>
void CheckAllHalfBits(const char* name, ToFloat to_float,
                      FromFloat from_float) {
  Mismatches m(std::string(name) + " to and from float");
  for (uint32_t u = 0; u <= 0xffff; ++u) {
    const H h{static_cast<bt::u16>(u)};
    const BH bh{static_cast<uint16_t>(u)};
    const float want = to_float(bh);
    auto describe = [&] { return Show(h); };
    m.Check(bt::to_compute(h), want, false, describe);
    m.Check(bt::to_compute<H>(h), want, false, describe);
    m.Check(bt::from_compute<H>(bt::to_compute(h)), from_float(want), false,
            describe);
  }
}

TEST(DevicePreludeTest, HalfToFloatAllBitPatterns) {
  CheckAllHalfBits<bt::f16, float16>("float16", f16_to_float, float_to_f16);
  CheckAllHalfBits<bt::bf16, bfloat16>("bfloat16", bf16_to_float,
                                       float_to_bf16);
}

// Float -> 16-bit float on every rounding boundary: for each value of the
// bits the result keeps (the top 19 for float16's normals, the top 16 for
// bfloat16), the patterns just below, at and above the halfway point and
// the ends. That covers ties (even and odd), overflow to inf, the
// subnormals and NaNs; a million random floats fill in between.
TEST(DevicePreludeTest, FloatToHalfRounding) {
  std::vector<uint32_t> patterns;
  for (uint32_t top = 0; top < (1u << 19); ++top) {
    for (uint32_t low : {0x0u, 0x1u, 0xfffu, 0x1000u, 0x1001u, 0x1fffu}) {
      patterns.push_back(top << 13 | low);
    }
  }
  for (uint32_t top = 0; top < (1u << 16); ++top) {
    for (uint32_t low : {0x0u, 0x1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      patterns.push_back(top << 16 | low);
    }
  }
  std::mt19937 rng(4242);
  for (int i = 0; i < (1 << 20); ++i) patterns.push_back(rng());
  Mismatches f16("float -> float16"), bf16("float -> bfloat16");
  for (const uint32_t u : patterns) {
    const float f = std::bit_cast<float>(u);
    auto describe = [&] { return Show(f); };
    f16.Check(bt::from_compute<bt::f16>(f), float_to_f16(f), false, describe);
    bf16.Check(bt::from_compute<bt::bf16>(f), float_to_bf16(f), false,
               describe);
  }
}

TEST(DevicePreludeTest, IdentityConversionsOfOtherTypes) {
  EXPECT_EQ(bt::to_compute(bt::i64{-5}), -5);
  EXPECT_EQ(bt::from_compute<bt::u8>(bt::u8{200}), 200);
  EXPECT_TRUE(bt::to_compute(true));
  EXPECT_EQ(Bits(bt::from_compute<double>(-0.0)), Bits(-0.0));
  static_assert(std::is_same_v<decltype(bt::to_compute(bt::f16{})), float>);
  static_assert(std::is_same_v<decltype(bt::to_compute(bt::bf16{})), float>);
  static_assert(std::is_same_v<decltype(bt::to_compute(bt::i16{})), bt::i16>);
  static_assert(std::is_same_v<bt::compute_of<bt::bf16>::type, float>);
  static_assert(std::is_same_v<bt::compute_of<double>::type, double>);
}

TEST(DevicePreludeTest, BitCasts) {
  for (const float f : FloatInputs<float>()) {
    EXPECT_EQ(bt::bits_of(f), std::bit_cast<uint32_t>(f));
    EXPECT_EQ(Bits(bt::from_bits(bt::bits_of(f))), Bits(f));
  }
  for (const double d : FloatInputs<double>()) {
    EXPECT_EQ(bt::bits_of(d), std::bit_cast<uint64_t>(d));
    EXPECT_EQ(Bits(bt::from_bits(bt::bits_of(d))), Bits(d));
  }
}

TEST(DevicePreludeTest, ClampIndex) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t values[] = {kMin, -100, -1, 0, 1, 5, 9, 10, 11, 1000, kMax};
  for (const int64_t lo : {int64_t{0}, int64_t{-3}, int64_t{4}}) {
    for (const int64_t hi : {int64_t{0}, int64_t{9}, int64_t{10}}) {
      for (const int64_t i : values) {
        EXPECT_EQ(bt::clamp_index(i, lo, hi), std::min(std::max(i, lo), hi))
            << i << " in [" << lo << ", " << hi << "]";
      }
    }
  }
}

// The semantics the prelude must carry regardless of the host comparison
// (so that a change to both sides at once still fails here).
TEST(DevicePreludeTest, XlaSemanticsSpotChecks) {
  using namespace bt::binary_op;  // NOLINT: op codes
  constexpr bt::i32 kIntMin = std::numeric_limits<int32_t>::min();
  EXPECT_EQ((bt::binary<kDiv, bt::i32>(7, 0)), -1);
  EXPECT_EQ((bt::binary<kRem, bt::i32>(7, 0)), 7);
  EXPECT_EQ((bt::binary<kDiv, bt::i32>(kIntMin, -1)), kIntMin);
  EXPECT_EQ((bt::binary<kRem, bt::i32>(kIntMin, -1)), 0);
  EXPECT_EQ((bt::binary<kAdd, bt::i8>(127, 1)), -128);
  EXPECT_EQ((bt::binary<kMul, bt::u8>(16, 16)), 0);
  EXPECT_EQ((bt::binary<kPow, bt::i32>(2, 10)), 1024);
  EXPECT_EQ((bt::binary<kPow, bt::i32>(2, -1)), 0);
  EXPECT_EQ((bt::binary<kPow, bt::i32>(-1, -3)), -1);
  EXPECT_EQ((bt::binary<kShiftLeft, bt::i32>(1, 32)), 0);
  EXPECT_EQ((bt::binary<kShiftRightArithmetic, bt::i32>(-8, 40)), -1);
  EXPECT_EQ((bt::binary<kShiftRightArithmetic, bt::u8>(0x80, 1)), 0xc0);
  EXPECT_EQ((bt::binary<kShiftRightLogical, bt::i8>(-1, -1)), 0);
  EXPECT_TRUE((bt::binary<kAdd, bool>(true, true)));
  EXPECT_FALSE((bt::binary<kSub, bool>(true, true)));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(bt::bits_of(bt::binary<kMax, float>(1.f, nan)), 0x7fc00000u);
  EXPECT_EQ(bt::bits_of(bt::binary<kAdd, float>(
                bt::from_bits(0xffc00001u), 1.f)),
            0x7fc00000u);
  EXPECT_EQ((bt::unary<bt::unary_op::kRound, float>(2.5f)), 2.f);
  EXPECT_EQ((bt::unary<bt::unary_op::kRound, float>(-3.5f)), -4.f);
  EXPECT_EQ((bt::convert<bt::i32, float>(nan)), 0);
  EXPECT_EQ((bt::convert<bt::i32, float>(3e9f)), 2147483647);
  EXPECT_EQ((bt::convert<bt::u8, float>(-1.f)), 0);
  EXPECT_EQ((bt::convert<bt::i8, bt::i32>(200)), -56);
  EXPECT_EQ(bt::convert<bt::f16>(65520.f).bits, 0x7c00);  // rounds to inf
  EXPECT_EQ(bt::convert<bt::bf16>(1.00390625f).bits, 0x3f80);  // tie: even
  EXPECT_EQ((bt::reduce_init<bt::reduce_op::kMax, bt::i16>()), -32768);
  EXPECT_EQ(bt::bits_of(bt::reduce_init<bt::reduce_op::kMin, double>()),
            0x7ff0000000000000ull);
}

}  // namespace
}  // namespace baton
