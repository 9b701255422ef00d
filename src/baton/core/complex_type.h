// kIsComplex<T>: whether T is a std::complex (baton's complex64 and
// complex128 elements are std::complex<float> and std::complex<double>).
// One trait for the kernels' dtype dispatch (dtype_dispatch.h) and the
// scalar semantics (scalar_math.h).
#pragma once

#include <complex>
#include <type_traits>

namespace baton {

template <typename T>
struct IsComplexType : std::false_type {};
template <typename R>
struct IsComplexType<std::complex<R>> : std::true_type {};

template <typename T>
inline constexpr bool kIsComplex = IsComplexType<T>::value;

}  // namespace baton
