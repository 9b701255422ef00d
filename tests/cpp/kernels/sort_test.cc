// The CPU sort kernel against the reference interpreter, bit for bit: every
// dtype, every dimension of several shapes, ties, IEEE specials (NaNs of
// both signs, signed zeros, infinities), empty and one-element dimensions,
// and rows enough to be split across threads.
#include "baton/backend/cpu/kernels/sort.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "baton/compiler/ir.h"
#include "baton/compiler/literal.h"
#include "baton/compiler/reference_interpreter.h"
#include "baton/core/dtype_dispatch.h"
#include "interpreted_op.h"
#include "kernel_test_util.h"

namespace baton::cpu {
namespace {

using compiler::Literal;
using compiler::SortAttrs;

compiler::Literal Interpreted(const Literal& x, const SortAttrs& a) {
  return testing::InterpretedOp(a, {x});
}

Literal Kernel(const Literal& x, const SortAttrs& a) {
  Literal out(x.shape(), a.indices ? DType::kInt32 : x.dtype());
  Sort(x.dtype(), x.untyped_data(), x.shape(), static_cast<int>(a.dimension),
       a.descending, a.indices, out.untyped_mutable_data());
  return out;
}

// Few distinct values (many ties); floats also get the specials.
Literal RandomLiteral(DType dtype, const Shape& shape, std::mt19937_64& rng) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> specials = {nan, -nan, 0.0, -0.0, inf, -inf};
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (double& x : v) {
    const int r = static_cast<int>(rng() % 16);
    if (dtype == DType::kBool) {
      x = r % 2;
    } else if (is_floating(dtype) && r < 4) {
      x = specials[rng() % specials.size()];
    } else if (dtype == DType::kUInt8 || dtype == DType::kUInt32) {
      x = static_cast<double>(rng() % 9);
    } else {
      x = static_cast<double>(static_cast<int>(rng() % 9) - 4) *
          (is_floating(dtype) ? 0.5 : 1.0);
    }
  }
  return Literal::FromDoubles(dtype, shape, v);
}

void ExpectKernelMatches(const Literal& x) {
  for (int d = 0; d < x.shape().rank(); ++d) {
    for (bool desc : {false, true}) {
      for (bool idx : {false, true}) {
        const SortAttrs a{d, desc, idx};
        SCOPED_TRACE(std::string(dtype_name(x.dtype())) + " " +
                     x.shape().to_string() + " dim " + std::to_string(d) +
                     (desc ? " descending" : "") + (idx ? " indices" : ""));
        const Literal want = Interpreted(x, a);
        const Literal got = Kernel(x, a);
        EXPECT_TRUE(got == want)
            << got.ToString() << "\nwant " << want.ToString();
      }
    }
  }
}

TEST(SortKernelTest, MatchesInterpreterForEveryDType) {
  std::mt19937_64 rng(3);
  for (DType dt : testing::AllDTypes()) {
    for (const Shape& s :
         {Shape{1}, Shape{7}, Shape{3, 5}, Shape{2, 1, 6}, Shape{4, 3, 2},
          Shape{0, 3}, Shape{3, 0}, Shape{1, 1}}) {
      ExpectKernelMatches(RandomLiteral(dt, s, rng));
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(SortKernelTest, ManyRowsAcrossThreads) {
  std::mt19937_64 rng(5);
  for (DType dt : {DType::kFloat32, DType::kInt16, DType::kBFloat16}) {
    ExpectKernelMatches(RandomLiteral(dt, Shape{300, 40}, rng));
  }
}

TEST(SortKernelTest, LongRowIsStable) {
  // A long row with two keys: the permutation lists each key's positions
  // in increasing order.
  const int64_t n = 5000;
  std::vector<int32_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>((i * 7) % 2);
  const Literal x = Literal::FromVector(v);
  const Literal p = Kernel(x, SortAttrs{0, false, true});
  const int32_t* q = p.data<int32_t>();
  for (int64_t k = 1; k < n; ++k) {
    if (v[q[k]] == v[q[k - 1]]) {
      ASSERT_LT(q[k - 1], q[k]) << k;
    }
    ASSERT_LE(v[q[k - 1]], v[q[k]]) << k;
  }
}

}  // namespace
}  // namespace baton::cpu
