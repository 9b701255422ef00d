// Full() of complex elements: complex64 fills as one 8-byte pattern;
// complex128 (16 bytes, wider than a fill pattern) fills its equal halves as
// twice as many 8-byte elements, and unequal halves through a host snapshot
// -- every element right, and nothing written outside the array.
#include <gtest/gtest.h>

#include <complex>
#include <vector>

#include "baton/runtime/client.h"
#include "baton/runtime/transfer.h"

namespace baton {
namespace {

template <typename C>
std::vector<C> FilledWith(C value, int64_t n, DType dtype) {
  Device* device = Client::Default().devices()[0];
  Result<Array> a = Full(Shape{n}, dtype, &value, device, MemoryKind::kDevice);
  EXPECT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->shape(), Shape{n});
  EXPECT_EQ(a->dtype(), dtype);
  std::vector<C> host(static_cast<size_t>(n) + 1, C(-7, -7));  // a sentinel
  EXPECT_TRUE(CopyToHost(*a, host.data(), static_cast<size_t>(n) * sizeof(C)).ok());
  EXPECT_EQ(host.back(), C(-7, -7));
  host.pop_back();
  return host;
}

TEST(ComplexFullTest, EveryElementHoldsTheValue) {
  for (int64_t n : {1, 7, 4099}) {
    for (const std::complex<double> v :
         {std::complex<double>(0, 0), std::complex<double>(1.5, 1.5),
          std::complex<double>(1, -2), std::complex<double>(-0.0, 3)}) {
      for (const auto& x : FilledWith(v, n, DType::kComplex128)) {
        ASSERT_EQ(x, v) << n;
      }
    }
    const std::complex<float> f(2.5f, -1.f);
    for (const auto& x : FilledWith(f, n, DType::kComplex64)) ASSERT_EQ(x, f);
  }
}

}  // namespace
}  // namespace baton
