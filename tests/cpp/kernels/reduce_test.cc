// Reduce against a naive loop: exact for integers, bool and max/min; within
// a rounding bound for float sums and products (the kernel reassociates).
#include "baton/backend/cpu/kernels/reduce.h"

#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "baton/backend/cpu/kernels/isa.h"
#include "baton/core/scalar_math.h"
#include "kernel_test_util.h"
#include "sanitizer_build.h"

namespace baton::cpu {
namespace {

using testing::AllDTypes;
using testing::BitEqual;
using testing::FillOptions;
using testing::HostArray;
using testing::NearArray;
using testing::RandomArray;
using testing::Unravel;

constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax,
                             ReduceOp::kMin};

Shape ReducedShape(const Shape& in, const std::vector<int64_t>& axes) {
  std::vector<int64_t> dims;
  for (int d = 0; d < in.rank(); ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
      dims.push_back(in[d]);
    }
  }
  return Shape(dims);
}

// Output position of each input element (an odometer over the input).
std::vector<int64_t> OutputIndexOf(const Shape& in,
                                   const std::vector<int64_t>& axes) {
  const int rank = in.rank();
  std::vector<int64_t> out_stride(rank, 0);  // 0 along reduced axes
  for (int d = rank - 1, acc = 1; d >= 0; --d) {
    if (std::find(axes.begin(), axes.end(), d) != axes.end()) continue;
    out_stride[d] = acc;
    acc *= static_cast<int>(in[d]);
  }
  std::vector<int64_t> map(in.num_elements());
  std::vector<int64_t> idx(rank, 0);
  int64_t o = 0;
  for (int64_t f = 0; f < in.num_elements(); ++f) {
    map[f] = o;
    for (int d = rank - 1; d >= 0; --d) {
      o += out_stride[d];
      if (++idx[d] < in[d]) break;
      o -= in[d] * out_stride[d];
      idx[d] = 0;
    }
  }
  return map;
}

// Checks Reduce(op, in, axes) against a sequential reference.
::testing::AssertionResult CheckReduce(ReduceOp op, const HostArray& in,
                                       const std::vector<int64_t>& axes) {
  const DType t = in.dtype();
  const Shape out_shape = ReducedShape(in.shape(), axes);
  HostArray out(t, out_shape);
  Reduce(op, t, in.data(), in.shape(), axes, out.data());
  const std::vector<int64_t> map = OutputIndexOf(in.shape(), axes);
  const int64_t n_out = out_shape.num_elements();
  if (!is_floating(t)) {
    // Integers wrap and bool is or/and: exact in any order.
    HostArray expected(t, out_shape);
    VisitDType(t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T>) {
        VisitReduceOp(op, [&](auto op_c) {
          constexpr ReduceOp kOp = decltype(op_c)::value;
          T* e = expected.as<T>();
          for (int64_t o = 0; o < n_out; ++o)
            e[o] = scalar::ReduceInit<kOp, T>();
          for (int64_t f = 0; f < in.size(); ++f) {
            e[map[f]] = scalar::ReduceCombine<kOp, T>(e[map[f]], in.as<T>()[f]);
          }
        });
      }
    });
    return BitEqual(expected, out);
  }
  // Floats: reference in double; the tolerance allows the output's rounding
  // plus the accumulator's (float for 16-bit types, double for float32/64).
  std::vector<double> ref(n_out), scale(n_out, 0.0), tol(n_out);
  std::vector<int64_t> count(n_out, 0);
  for (int64_t o = 0; o < n_out; ++o) {
    ref[o] = op == ReduceOp::kSum    ? 0.0
             : op == ReduceOp::kProd ? 1.0
             : op == ReduceOp::kMax  ? -INFINITY
                                     : INFINITY;
  }
  for (int64_t f = 0; f < in.size(); ++f) {
    const int64_t o = map[f];
    const double x = in.At(f);
    ++count[o];
    switch (op) {
      case ReduceOp::kSum:
        ref[o] += x;
        scale[o] += std::abs(x);
        break;
      case ReduceOp::kProd:
        ref[o] *= x;
        break;
      case ReduceOp::kMax:
        ref[o] = scalar::Binary<BinaryOp::kMax, double>(ref[o], x);
        break;
      case ReduceOp::kMin:
        ref[o] = scalar::Binary<BinaryOp::kMin, double>(ref[o], x);
        break;
    }
  }
  // float32 sums accumulate in double, but outer-axis sums first add up to
  // 16 rows in float (15 roundings of at most 2^-24 each).
  const bool half = t == DType::kFloat16 || t == DType::kBFloat16;
  const double acc_eps = half ? 1e-4 : (t == DType::kFloat64 ? 1e-13 : 1e-6);
  const double out_eps = testing::StorageEpsilon(t);
  for (int64_t o = 0; o < n_out; ++o) {
    switch (op) {
      case ReduceOp::kSum:
        tol[o] = out_eps * std::abs(ref[o]) + acc_eps * scale[o] + 1e-300;
        break;
      case ReduceOp::kProd:
        tol[o] = (2 * out_eps + count[o] * (half ? 1.2e-7 : out_eps)) *
                     std::abs(ref[o]) +
                 1e-300;
        break;
      default:
        tol[o] = 0;  // max/min are exact (compared numerically: -0 == +0)
    }
  }
  return NearArray(ref, tol, out);
}

std::vector<std::vector<int64_t>> AllSubsets(int rank) {
  std::vector<std::vector<int64_t>> out;
  for (int mask = 0; mask < (1 << rank); ++mask) {
    std::vector<int64_t> axes;
    for (int d = 0; d < rank; ++d) {
      if (mask & (1 << d)) axes.push_back(d);
    }
    out.push_back(axes);
  }
  return out;
}

FillOptions OptionsFor(ReduceOp op) {
  FillOptions opt;
  opt.int_range = op == ReduceOp::kProd ? 3 : 0;
  if (op == ReduceOp::kProd) {  // products of long runs stay in range
    opt.lo = 0.9;
    opt.hi = 1.1;
  }
  return opt;
}

TEST(ReduceTest, EveryAxisSubsetOpAndDType) {
  const std::vector<Shape> shapes = {
      Shape{},           Shape{7},       Shape{3, 5},       Shape{2, 3, 4},
      Shape{2, 3, 4, 5}, Shape{3, 0, 2}, Shape{1, 6, 1, 4}, Shape{0}};
  std::mt19937_64 rng(30);
  for (const Shape& s : shapes) {
    for (const std::vector<int64_t>& axes : AllSubsets(s.rank())) {
      for (ReduceOp op : kOps) {
        for (DType t : AllDTypes()) {
          std::string ax;
          for (int64_t a : axes) ax += std::to_string(a) + ",";
          SCOPED_TRACE(s.to_string() + " axes={" + ax + "} " +
                       std::string(op_name(op)) + " " +
                       std::string(dtype_name(t)));
          const HostArray in = RandomArray(t, s, rng, OptionsFor(op));
          ASSERT_TRUE(CheckReduce(op, in, axes));
        }
      }
    }
  }
}

TEST(ReduceTest, AxesInAnyOrder) {
  std::mt19937_64 rng(31);
  const HostArray in = RandomArray(DType::kInt32, Shape{3, 4, 5}, rng);
  HostArray a(DType::kInt32, Shape{4}), b(DType::kInt32, Shape{4});
  const int64_t ab[] = {0, 2}, ba[] = {2, 0};
  Reduce(ReduceOp::kSum, DType::kInt32, in.data(), in.shape(), ab, a.data());
  Reduce(ReduceOp::kSum, DType::kInt32, in.data(), in.shape(), ba, b.data());
  EXPECT_TRUE(BitEqual(a, b));
  EXPECT_TRUE(CheckReduce(ReduceOp::kSum, in, {2, 0}));
}

// Shapes that take each parallel path: many rows (inner reduced / kept),
// few rows split over the reduced elements, and the full reduction.
TEST(ReduceTest, LargeShapesTakeTheParallelPaths) {
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
  };
  const std::vector<Case> cases = {
      {Shape{1 << 21}, {0}},         {Shape{2048, 1024}, {1}},
      {Shape{2048, 1024}, {0}},      {Shape{3, 1 << 20}, {1}},
      {Shape{1 << 20, 3}, {0}},      {Shape{64, 1 << 15}, {0}},
      {Shape{4, 512, 1024}, {0, 2}}, {Shape{512, 4, 1024}, {1}},
      {Shape{2048, 1024}, {0, 1}},
  };
  std::mt19937_64 rng(32);
  for (const Case& c : cases) {
    // Every op on float32 and int32 (float products of millions of
    // elements overflow, so none); one op on each other dtype. Under TSan,
    // which looks for races in the parallel split (the same for every op
    // and dtype), one float and one integer op per shape: that sweep was
    // 116 s of the TSan run. Under ASan, which looks for reads and writes
    // out of bounds (they depend on the element size, not the op), one op
    // per dtype: the whole sweep was 84 s of the ASan run.
    using Plan = std::vector<std::pair<DType, std::vector<ReduceOp>>>;
    const Plan plan =
        baton::testing::kThreadSanitizer
            ? Plan{{DType::kFloat32, {ReduceOp::kSum}}, {DType::kInt32, {ReduceOp::kMax}}}
        : baton::testing::kAddressSanitizer
            ? Plan{{DType::kFloat32, {ReduceOp::kSum}},
                   {DType::kInt32, {ReduceOp::kProd}},
                   {DType::kFloat16, {ReduceOp::kSum}},
                   {DType::kBFloat16, {ReduceOp::kMax}},
                   {DType::kFloat64, {ReduceOp::kSum}},
                   {DType::kUInt8, {ReduceOp::kMin}}}
            : Plan{{DType::kFloat32, {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}},
                   {DType::kInt32,
                    {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin}},
                   {DType::kFloat16, {ReduceOp::kSum}},
                   {DType::kBFloat16, {ReduceOp::kMax}},
                   {DType::kFloat64, {ReduceOp::kSum}},
                   {DType::kUInt8, {ReduceOp::kSum}}};
    for (const auto& [t, ops] : plan) {
      for (ReduceOp op : ops) {
        SCOPED_TRACE(c.shape.to_string() + " " + std::string(op_name(op)) +
                     " " + std::string(dtype_name(t)));
        const HostArray in = RandomArray(t, c.shape, rng, OptionsFor(op));
        ASSERT_TRUE(CheckReduce(op, in, c.axes));
      }
    }
  }
}

TEST(ReduceTest, NaNAndInfinityPropagate) {
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kFloat64}) {
    for (ReduceOp op : kOps) {
      for (int64_t n : {int64_t{5}, int64_t{100000}}) {
        SCOPED_TRACE(std::string(op_name(op)) + " " +
                     std::string(dtype_name(t)));
        HostArray in(t, Shape{n});
        std::mt19937_64 rng(33);
        testing::FillOptions opt;
        opt.lo = 0.5;
        opt.hi = 1.0;
        testing::FillRandom(in, rng, opt);
        VisitDType(t, [&](auto tag) {
          using T = typename decltype(tag)::type;
          if constexpr (!std::is_integral_v<T>) {
            in.as<T>()[n / 2] =
                FromCompute<T>(std::numeric_limits<float>::quiet_NaN());
          }
        });
        HostArray out(t, Shape{});
        const int64_t axes[] = {0};
        Reduce(op, t, in.data(), in.shape(), axes, out.data());
        EXPECT_TRUE(std::isnan(out.At(0)));
        VisitDType(t, [&](auto tag) {
          using T = typename decltype(tag)::type;
          if constexpr (!std::is_integral_v<T>) {
            in.as<T>()[n / 2] =
                FromCompute<T>(std::numeric_limits<float>::infinity());
          }
        });
        Reduce(op, t, in.data(), in.shape(), axes, out.data());
        // (A long product underflows to 0 first, and 0 * inf is NaN.)
        if (op == ReduceOp::kSum || op == ReduceOp::kMax ||
            (op == ReduceOp::kProd && n < 10)) {
          EXPECT_EQ(out.At(0), INFINITY);
        }
      }
    }
  }
}

TEST(ReduceTest, EmptyAxisGivesTheIdentity) {
  HostArray in(DType::kFloat32, Shape{3, 0});
  HostArray out(DType::kFloat32, Shape{3});
  const int64_t axes[] = {1};
  Reduce(ReduceOp::kMax, DType::kFloat32, in.data(), in.shape(), axes,
         out.data());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out.as<float>()[i], -INFINITY);
  Reduce(ReduceOp::kProd, DType::kFloat32, in.data(), in.shape(), axes,
         out.data());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out.as<float>()[i], 1.0f);
  HostArray iout(DType::kInt8, Shape{3});
  HostArray iin(DType::kInt8, Shape{3, 0});
  Reduce(ReduceOp::kMin, DType::kInt8, iin.data(), iin.shape(), axes,
         iout.data());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(iout.as<int8_t>()[i], 127);
}

}  // namespace
}  // namespace baton::cpu

namespace baton::cpu {
namespace {

// The AVX2 variant of a contiguous run adds the same lanes in the same
// order: every op and dtype gives bitwise the baseline's result.
TEST(ReduceTest, Avx2RunsAreBitwiseTheBaseline) {
  std::mt19937_64 rng(33);
  for (ReduceOp op : kOps) {
    for (DType t : AllDTypes()) {
      for (int64_t n : {int64_t{255}, int64_t{256}, int64_t{4099},
                        int64_t{70001}}) {
        SCOPED_TRACE(std::string(op_name(op)) + " " +
                     std::string(dtype_name(t)) + " n=" + std::to_string(n));
        const HostArray in = RandomArray(t, Shape{n}, rng, OptionsFor(op));
        HostArray base(t, Shape{}), avx2(t, Shape{});
        const int64_t axes[] = {0};
        const bool previous = SetAvx2KernelsForTesting(false);
        Reduce(op, t, in.data(), in.shape(), axes, base.data());
        SetAvx2KernelsForTesting(true);
        Reduce(op, t, in.data(), in.shape(), axes, avx2.data());
        SetAvx2KernelsForTesting(previous);
        EXPECT_TRUE(BitEqual(base, avx2));
      }
    }
  }
}


// float32 sums add each of 64 lanes 16 elements at a time in float, then in
// double (reduce_run.h): at every length -- short runs, partial rounds of
// 1024, partial blocks of 4096, several blocks -- the result is within those
// 16 float roundings of sum |x| (plus the final rounding to float) of the
// exact sum, with AVX2 and without.
TEST(ReduceTest, Float32SumsStayWithinTheirErrorBound) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 3.f);
  for (int64_t n : {int64_t{1}, int64_t{31}, int64_t{64}, int64_t{65},
                    int64_t{1023}, int64_t{1024}, int64_t{1089},
                    int64_t{4095}, int64_t{4096}, int64_t{4097},
                    int64_t{12345}, int64_t{(1 << 20) + 3}}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = dist(rng);
    long double exact = 0, magnitude = 0;
    for (float v : x) {
      exact += v;
      magnitude += std::fabs(v);
    }
    const double eps = std::ldexp(1.0, -24);
    const double bound = 16 * eps * static_cast<double>(magnitude) +
                         eps * std::fabs(static_cast<double>(exact));
    for (bool avx2 : {false, true}) {
      SCOPED_TRACE("n=" + std::to_string(n) + (avx2 ? " avx2" : " baseline"));
      const bool previous = SetAvx2KernelsForTesting(avx2);
      float out = 0;
      const int64_t axes[] = {0};
      Reduce(ReduceOp::kSum, DType::kFloat32, x.data(), Shape{n}, axes, &out);
      SetAvx2KernelsForTesting(previous);
      EXPECT_LE(std::fabs(static_cast<double>(out) - static_cast<double>(exact)),
                bound);
    }
  }
}

}  // namespace
}  // namespace baton::cpu
