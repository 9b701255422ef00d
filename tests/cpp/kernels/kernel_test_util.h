// Helpers shared by the kernel tests: a host array of any dtype, random
// fills (with IEEE specials where a test wants them), index arithmetic for
// naive reference loops, and comparisons (bitwise, or within a tolerance).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "baton/core/dtype.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/shape.h"

namespace baton::cpu::testing {

inline const std::vector<DType>& AllDTypes() {
  static const std::vector<DType> kAll = {
      DType::kBool,     DType::kInt8,    DType::kInt16,  DType::kInt32,
      DType::kInt64,    DType::kUInt8,   DType::kUInt32, DType::kFloat16,
      DType::kBFloat16, DType::kFloat32, DType::kFloat64};
  return kAll;
}

// Owns dense row-major storage for `shape` elements of `dtype` (at least one
// byte, so data() is never null even for an empty array).
class HostArray {
 public:
  HostArray(DType dtype, Shape shape)
      : dtype_(dtype),
        shape_(std::move(shape)),
        bytes_(std::max<size_t>(1, shape_.num_elements() * dtype_size(dtype))) {
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t size() const { return shape_.num_elements(); }
  size_t nbytes() const { return shape_.num_elements() * dtype_size(dtype_); }
  void* data() { return bytes_.data(); }
  const void* data() const { return bytes_.data(); }
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(bytes_.data());
  }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(bytes_.data());
  }

  // Element i converted to double (for tolerance checks and printing; the
  // real part of a complex element).
  double At(int64_t i) const {
    return VisitDType(dtype_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      return ConvertElement<double, T>(as<T>()[i]);
    });
  }
  // Copies element `src` of `from` (same dtype) into element `dst`.
  void CopyElement(int64_t dst, const HostArray& from, int64_t src) {
    const size_t es = dtype_size(dtype_);
    std::memcpy(bytes_.data() + dst * es, from.bytes_.data() + src * es, es);
  }

 private:
  DType dtype_;
  Shape shape_;
  std::vector<uint8_t> bytes_;
};

// How FillRandom chooses values.
struct FillOptions {
  double lo = -4, hi = 4;  // float range
  bool specials = false;   // sprinkle NaN, +-inf, +-0, huge, tiny
  int64_t int_range = 0;   // integers in [-r, r] ([0, r] unsigned); 0: any
};

inline void FillRandom(HostArray& a, std::mt19937_64& rng,
                       const FillOptions& opt = {}) {
  VisitDType(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = a.as<T>();
    std::uniform_real_distribution<double> real(opt.lo, opt.hi);
    for (int64_t i = 0; i < a.size(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = (rng() & 1) != 0;
      } else if constexpr (std::is_integral_v<T>) {
        if (opt.int_range > 0) {
          const int64_t lo = std::is_signed_v<T> ? -opt.int_range : 0;
          p[i] = static_cast<T>(
              std::uniform_int_distribution<int64_t>(lo, opt.int_range)(rng));
        } else {
          p[i] = static_cast<T>(rng());
        }
      } else {
        using C = ComputeType<T>;
        C v = static_cast<C>(real(rng));
        if (opt.specials && rng() % 8 == 0) {
          const C specials[] = {std::numeric_limits<C>::quiet_NaN(),
                                std::numeric_limits<C>::infinity(),
                                -std::numeric_limits<C>::infinity(),
                                C(0),
                                -C(0),
                                C(1e30),
                                C(-3e-39),
                                C(0.5),
                                C(-2.5),
                                C(65504),
                                C(1e5)};
          v = specials[rng() % std::size(specials)];
        }
        p[i] = FromCompute<T>(v);
      }
    }
  });
}

inline HostArray RandomArray(DType dtype, Shape shape, std::mt19937_64& rng,
                             const FillOptions& opt = {}) {
  HostArray a(dtype, std::move(shape));
  FillRandom(a, rng, opt);
  return a;
}

// Multi-index of flat position `flat` in row-major `dims`.
inline std::vector<int64_t> Unravel(int64_t flat,
                                    const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    idx[d] = flat % dims[d];
    flat /= dims[d];
  }
  return idx;
}
inline int64_t Ravel(const std::vector<int64_t>& idx,
                     const std::vector<int64_t>& dims) {
  int64_t flat = 0;
  for (size_t d = 0; d < dims.size(); ++d) flat = flat * dims[d] + idx[d];
  return flat;
}

// Bitwise equality, reporting the first mismatch.
inline ::testing::AssertionResult BitEqual(const HostArray& expected,
                                           const HostArray& actual) {
  if (expected.shape() != actual.shape() ||
      expected.dtype() != actual.dtype()) {
    return ::testing::AssertionFailure()
           << "shape/dtype differ: " << expected.shape().to_string() << " vs "
           << actual.shape().to_string();
  }
  const size_t es = dtype_size(expected.dtype());
  const auto* e = static_cast<const uint8_t*>(expected.data());
  const auto* a = static_cast<const uint8_t*>(actual.data());
  for (int64_t i = 0; i < expected.size(); ++i) {
    if (std::memcmp(e + i * es, a + i * es, es) != 0) {
      return ::testing::AssertionFailure()
             << "element " << i << " of " << expected.size() << " ("
             << dtype_name(expected.dtype()) << "): expected " << expected.At(i)
             << ", got " << actual.At(i);
    }
  }
  return ::testing::AssertionSuccess();
}

// |actual - expected[i]| <= abs_tol[i] elementwise; NaN must match NaN and
// infinities must match exactly.
inline ::testing::AssertionResult NearArray(const std::vector<double>& expected,
                                            const std::vector<double>& abs_tol,
                                            const HostArray& actual) {
  if (static_cast<int64_t>(expected.size()) != actual.size()) {
    return ::testing::AssertionFailure() << "size differs";
  }
  for (int64_t i = 0; i < actual.size(); ++i) {
    const double e = expected[i], a = actual.At(i);
    const bool ok = std::isnan(e)   ? std::isnan(a)
                    : std::isinf(e) ? a == e
                                    : std::abs(a - e) <= abs_tol[i];
    if (!ok) {
      return ::testing::AssertionFailure()
             << "element " << i << " of " << actual.size() << " ("
             << dtype_name(actual.dtype()) << "): expected " << e << " +- "
             << abs_tol[i] << ", got " << a;
    }
  }
  return ::testing::AssertionSuccess();
}

// Relative precision of a dtype's storage (half an ulp at 1.0).
inline double StorageEpsilon(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 1.0 / 2048;
    case DType::kBFloat16:
      return 1.0 / 256;
    case DType::kFloat32:
      return 1.0 / (1 << 24);
    case DType::kFloat64:
      return 1.0 / (1LL << 53);
    default:
      return 0;
  }
}

}  // namespace baton::cpu::testing
