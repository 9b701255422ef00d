// Elementwise kernels against naive loops over scalar_math.h: bitwise equal
// for every op and dtype, with IEEE specials, scalar operands, in place, and
// sizes large enough to take the parallel path.
#include "baton/backend/cpu/kernels/elementwise.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

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
    UnaryOp::kFloor, UnaryOp::kCeil,     UnaryOp::kRound};
constexpr BinaryOp kBinaryOps[] = {
    BinaryOp::kAdd, BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kDiv,
    BinaryOp::kPow, BinaryOp::kMax, BinaryOp::kMin, BinaryOp::kAnd,
    BinaryOp::kOr,  BinaryOp::kRem};
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
