// DotGeneral against a naive contraction: batch and contracting dims in
// unusual positions, transposed operands, degenerate sizes, every dtype.
#include "baton/backend/cpu/kernels/dot.h"

#include "baton/core/blas_symbols.h"
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "baton/core/dot_dimensions.h"
#include "baton/core/scalar_math.h"
#include "kernel_test_util.h"
#include "run_dot.h"

namespace baton::cpu {
namespace {

using testing::AllDTypes;
using testing::BitEqual;
using testing::FillOptions;
using testing::HostArray;
using testing::NearArray;
using testing::RandomArray;
using testing::Ravel;
using testing::RunDot;
using testing::Unravel;

// Naive contraction. Floats accumulate in double (and report sum |a*b| for
// the tolerance); integers and bool wrap / or-and exactly like the kernel.
struct Reference {
  HostArray exact;              // integers and bool
  std::vector<double> value;    // floats
  std::vector<double> abs_sum;  // floats
};

Reference RefDot(const HostArray& lhs, const HostArray& rhs,
                 const DotDimensions& dims) {
  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  const Shape out_shape = DotGeneralShape(ls, rs, dims);
  const auto lf = DotFreeDimensions(ls.rank(), dims.lhs_batch, dims.lhs_contracting);
  const auto rf = DotFreeDimensions(rs.rank(), dims.rhs_batch, dims.rhs_contracting);
  std::vector<int64_t> k_dims;
  for (int64_t d : dims.lhs_contracting) k_dims.push_back(ls[d]);
  int64_t k_total = 1;
  for (int64_t k : k_dims) k_total *= k;
  Reference ref{HostArray(lhs.dtype(), out_shape), {}, {}};
  const int64_t n_out = out_shape.num_elements();
  ref.value.assign(n_out, 0.0);
  ref.abs_sum.assign(n_out, 0.0);
  // Each contracted index's offset into lhs and rhs, made once (the
  // sanitizer builds spent most of this test in per-element index vectors).
  std::vector<int64_t> lk(k_total), rk(k_total);
  for (int64_t k = 0; k < k_total; ++k) {
    const std::vector<int64_t> ki = Unravel(k, k_dims);
    std::vector<int64_t> li(ls.rank(), 0), ri(rs.rank(), 0);
    for (size_t c = 0; c < ki.size(); ++c) {
      li[dims.lhs_contracting[c]] = ki[c];
      ri[dims.rhs_contracting[c]] = ki[c];
    }
    lk[k] = Ravel(li, ls.dims());
    rk[k] = Ravel(ri, rs.dims());
  }
  VisitDType(lhs.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t f = 0; f < n_out; ++f) {
      const std::vector<int64_t> oi = Unravel(f, out_shape.dims());
      std::vector<int64_t> li(ls.rank(), 0), ri(rs.rank(), 0);
      size_t p = 0;
      for (size_t b = 0; b < dims.lhs_batch.size(); ++b, ++p) {
        li[dims.lhs_batch[b]] = oi[p];
        ri[dims.rhs_batch[b]] = oi[p];
      }
      for (int64_t d : lf) li[d] = oi[p++];
      for (int64_t d : rf) ri[d] = oi[p++];
      // The element's offsets with every contracted index 0.
      const int64_t lbase = Ravel(li, ls.dims()), rbase = Ravel(ri, rs.dims());
      T acc{};  // value-initialized: zero (also for the half types' storage)
      for (int64_t k = 0; k < k_total; ++k) {
        const int64_t lflat = lbase + lk[k], rflat = rbase + rk[k];
        if constexpr (std::is_integral_v<T>) {
          acc = scalar::Binary<BinaryOp::kAdd, T>(
              acc, scalar::Binary<BinaryOp::kMul, T>(lhs.as<T>()[lflat],
                                                     rhs.as<T>()[rflat]));
        } else {
          const double prod = lhs.At(lflat) * rhs.At(rflat);
          ref.value[f] += prod;
          ref.abs_sum[f] += std::abs(prod);
        }
      }
      if constexpr (std::is_integral_v<T>) ref.exact.as<T>()[f] = acc;
    }
  });
  return ref;
}

::testing::AssertionResult CheckDot(const HostArray& lhs, const HostArray& rhs,
                                    const DotDimensions& dims) {
  const DType t = lhs.dtype();
  HostArray out(t, DotGeneralShape(lhs.shape(), rhs.shape(), dims));
  RunDot(t, lhs.data(), lhs.shape(), rhs.data(), rhs.shape(), dims,
         out.data());
  Reference ref = RefDot(lhs, rhs, dims);
  if (!is_floating(t)) return BitEqual(ref.exact, out);
  // BLAS reassociates (float32 accumulation for float32 and 16-bit types);
  // then the result is rounded to the output type.
  // Worst case for a length-K sum: K units of roundoff of sum |a*b|.
  int64_t k_total = 1;
  for (int64_t d : dims.lhs_contracting) k_total *= lhs.shape()[d];
  const double acc_eps =
      static_cast<double>(k_total) * (t == DType::kFloat64 ? 1.2e-16 : 6e-8);
  std::vector<double> tol(ref.value.size());
  for (size_t i = 0; i < tol.size(); ++i) {
    tol[i] = testing::StorageEpsilon(t) * std::abs(ref.value[i]) +
             acc_eps * ref.abs_sum[i] + 1e-300;
  }
  return NearArray(ref.value, tol, out);
}

struct DotCase {
  std::string name;
  Shape lhs, rhs;
  DotDimensions dims;
};

std::vector<DotCase> Cases() {
  return {
      {"matmul", Shape{5, 7}, Shape{7, 3}, {{}, {}, {1}, {0}}},
      {"lhs transposed", Shape{7, 5}, Shape{7, 3}, {{}, {}, {0}, {0}}},
      {"rhs transposed", Shape{5, 7}, Shape{3, 7}, {{}, {}, {1}, {1}}},
      {"both transposed", Shape{7, 5}, Shape{3, 7}, {{}, {}, {0}, {1}}},
      {"batched", Shape{4, 5, 6}, Shape{4, 6, 3}, {{0}, {0}, {2}, {1}}},
      {"batch in the middle",
       Shape{5, 4, 6},
       Shape{6, 4, 3},
       {{1}, {1}, {2}, {0}}},
      {"two batch dims swapped",
       Shape{2, 3, 4, 5},
       Shape{3, 2, 5, 4},
       {{1, 0}, {0, 1}, {3}, {2}}},
      {"two contracting dims in odd order",
       Shape{3, 4, 5},
       Shape{5, 2, 3},
       {{}, {}, {0, 2}, {2, 0}}},
      {"outer product", Shape{4}, Shape{3}, {{}, {}, {}, {}}},
      {"vector dot", Shape{9}, Shape{9}, {{}, {}, {0}, {0}}},
      {"matrix vector", Shape{4, 9}, Shape{9}, {{}, {}, {1}, {0}}},
      {"vector matrix", Shape{9}, Shape{9, 4}, {{}, {}, {0}, {0}}},
      {"size-1 dims", Shape{1, 5, 1, 6}, Shape{6, 1, 2}, {{}, {}, {3}, {0}}},
      {"empty contraction", Shape{3, 0}, Shape{0, 4}, {{}, {}, {1}, {0}}},
      {"empty output", Shape{0, 5}, Shape{5, 4}, {{}, {}, {1}, {0}}},
      {"empty batch", Shape{0, 2, 3}, Shape{0, 3, 2}, {{0}, {0}, {2}, {1}}},
      {"batched, free dims last",
       Shape{6, 2, 5},
       Shape{2, 6, 3},
       {{1}, {0}, {0}, {1}}},
  };
}

TEST(DotGeneralTest, EveryLayoutAndDType) {
  std::mt19937_64 rng(40);
  for (const DotCase& c : Cases()) {
    for (DType t : AllDTypes()) {
      SCOPED_TRACE(c.name + " " + std::string(dtype_name(t)));
      FillOptions opt;
      opt.int_range = 50;
      const HostArray lhs = RandomArray(t, c.lhs, rng, opt);
      const HostArray rhs = RandomArray(t, c.rhs, rng, opt);
      ASSERT_TRUE(CheckDot(lhs, rhs, c.dims));
    }
  }
}

TEST(DotGeneralTest, IntegersWrap) {
  HostArray a(DType::kInt8, Shape{1, 2}), b(DType::kInt8, Shape{2, 1});
  a.as<int8_t>()[0] = 100;
  a.as<int8_t>()[1] = 100;
  b.as<int8_t>()[0] = 2;
  b.as<int8_t>()[1] = 1;
  HostArray out(DType::kInt8, Shape{1, 1});
  RunDot(DType::kInt8, a.data(), a.shape(), b.data(), b.shape(),
         {{}, {}, {1}, {0}}, out.data());
  EXPECT_EQ(out.as<int8_t>()[0], static_cast<int8_t>(300 & 0xff));
}

TEST(DotGeneralTest, LargerMatricesAndBatches) {
  std::mt19937_64 rng(41);
  const std::vector<DotCase> cases = {
      {"300x250x200", Shape{300, 250}, Shape{250, 200}, {{}, {}, {1}, {0}}},
      {"transposed 200x180x150",
       Shape{180, 200},
       Shape{150, 180},
       {{}, {}, {0}, {1}}},
      {"batched 8x40x50x60 with permuted dims",
       Shape{50, 8, 40},
       Shape{60, 50, 8},
       {{1}, {2}, {0}, {1}}},
  };
  for (const DotCase& c : cases) {
    for (DType t :
         {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kInt32}) {
      SCOPED_TRACE(c.name + " " + std::string(dtype_name(t)));
      FillOptions opt;
      opt.int_range = 1000;
      const HostArray lhs = RandomArray(t, c.lhs, rng, opt);
      const HostArray rhs = RandomArray(t, c.rhs, rng, opt);
      ASSERT_TRUE(CheckDot(lhs, rhs, c.dims));
    }
  }
}

// A canonical float32 matmul is exactly one sgemm: bit-identical to calling
// BLAS directly (no extra copies or rounding on the way).
TEST(DotGeneralTest, CanonicalFloat32IsExactlySgemm) {
  std::mt19937_64 rng(42);
  const int m = 256, k = 192, n = 160;
  const HostArray a = RandomArray(DType::kFloat32, Shape{m, k}, rng);
  const HostArray b = RandomArray(DType::kFloat32, Shape{n, k}, rng);
  HostArray direct(DType::kFloat32, Shape{m, n});
  BATON_BLAS(cblas_sgemm)(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f,
              a.as<float>(), k, b.as<float>(), k, 0.0f, direct.as<float>(), n);
  HostArray out(DType::kFloat32, Shape{m, n});
  RunDot(DType::kFloat32, a.data(), a.shape(), b.data(), b.shape(),
         {{}, {}, {1}, {1}}, out.data());
  EXPECT_TRUE(BitEqual(direct, out));
}

// The kernels allocate nothing: DotGeneralScratchBytes names what the
// caller provides. (Every case of EveryLayoutAndDType runs with exactly that
// much, in a vector of its own: a kernel that took more would abort, and
// one that wrote past it would fail under ASan.)
TEST(DotGeneralTest, ScratchIsWhatTheLayoutNeeds) {
  const DotDimensions matmul{{}, {}, {1}, {0}};
  // Row-major and BLAS-transposed operands are read in place.
  EXPECT_EQ(DotGeneralScratchBytes(DType::kFloat32, Shape{4, 3}, Shape{3, 5},
                                   matmul),
            0);
  EXPECT_EQ(DotGeneralScratchBytes(DType::kFloat32, Shape{3, 4}, Shape{5, 3},
                                   {{}, {}, {0}, {1}}),
            0);
  // The integer loops take no transposed operand: a copy of lhs (3*4 int32,
  // 48 bytes, one 64-byte piece).
  EXPECT_EQ(DotGeneralScratchBytes(DType::kInt32, Shape{3, 4}, Shape{3, 5},
                                   {{}, {}, {0}, {0}}),
            64);
  // A batch dimension between free and contracting ones: lhs [4, 2, 3]
  // batched on 1 is copied whatever the type (24 floats, 96 -> 128 bytes).
  EXPECT_EQ(DotGeneralScratchBytes(DType::kFloat32, Shape{4, 2, 3},
                                   Shape{2, 3, 5}, {{1}, {0}, {2}, {1}}),
            128);
  // 16-bit floats: both operands and the result in float32 (12, 15 and 20
  // floats: 64 + 64 + 128 bytes), plus the float32 product's own copies.
  EXPECT_EQ(DotGeneralScratchBytes(DType::kBFloat16, Shape{4, 3}, Shape{3, 5},
                                   matmul),
            256);
  EXPECT_EQ(DotGeneralScratchBytes(DType::kFloat16, Shape{4, 2, 3},
                                   Shape{2, 3, 5}, {{1}, {0}, {2}, {1}}),
            128 + 128 + 192 + 128);
  // Nothing is multiplied: no scratch.
  EXPECT_EQ(DotGeneralScratchBytes(DType::kBFloat16, Shape{3, 0}, Shape{0, 4},
                                   matmul),
            0);
  EXPECT_EQ(DotGeneralScratchBytes(DType::kFloat16, Shape{0, 5}, Shape{5, 4},
                                   matmul),
            0);
}

TEST(DotGeneralDeathTest, TooLittleScratchAborts) {
  std::mt19937_64 rng(44);
  const HostArray a = RandomArray(DType::kBFloat16, Shape{4, 3}, rng);
  const HostArray b = RandomArray(DType::kBFloat16, Shape{3, 5}, rng);
  HostArray out(DType::kBFloat16, Shape{4, 5});
  std::vector<std::byte> scratch(128);  // 256 needed
  EXPECT_DEATH(DotGeneral(DType::kBFloat16, a.data(), a.shape(), b.data(),
                          b.shape(), {{}, {}, {1}, {0}}, out.data(), scratch),
               "DotGeneral's scratch ran out: 0 bytes left where the next "
               "piece needs 128");
}

// Executors may run kernels from several threads at once: concurrent calls
// (each using BLAS's threads) must not interfere.
TEST(DotGeneralTest, ConcurrentCallsAgree) {
  std::mt19937_64 rng(43);
  const HostArray a = RandomArray(DType::kFloat32, Shape{4, 96, 80}, rng);
  const HostArray b = RandomArray(DType::kFloat32, Shape{4, 80, 72}, rng);
  const DotDimensions dims{{0}, {0}, {2}, {1}};
  HostArray expected(DType::kFloat32,
                     DotGeneralShape(a.shape(), b.shape(), dims));
  RunDot(DType::kFloat32, a.data(), a.shape(), b.data(), b.shape(), dims,
         expected.data());
  std::vector<HostArray> outs(4, HostArray(DType::kFloat32, expected.shape()));
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        RunDot(DType::kFloat32, a.data(), a.shape(), b.data(), b.shape(),
               dims, outs[t].data());
        if (!BitEqual(expected, outs[t])) ++mismatches;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace baton::cpu
