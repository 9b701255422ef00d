// Reference interpreter: fft (FftAttrs). Independent of the CPU kernel
// (pocketfft there): the plain definition of the DFT, in double precision
// whatever the dtype, applied one dimension at a time (a multi-dimensional
// DFT is separable), O(N * sum(lengths)) per transform. irfft first undoes
// the complex transforms of the leading lengths, then sums the last
// dimension's Hermitian extension X[m] = conj(X[n - m]) and keeps the real
// part, which ignores the imaginary parts of the self-conjugate bins as
// numpy and pocketfft do.
#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "baton/compiler/interpreter_ops.h"
#include "baton/core/dtype_dispatch.h"

namespace baton::compiler::interpreter {
namespace {

using Cd = std::complex<double>;

// exp(sign * 2 pi i * m / n) for 0 <= m < n; exact at quarter turns (so
// cos(pi/2) is 0, not 6e-17, and transforms of exact data stay exact there).
Cd Twiddle(int64_t m, int64_t n, double sign) {
  if ((4 * m) % n == 0) {
    switch ((4 * m) / n) {
      case 0:
        return Cd(1, 0);
      case 1:
        return Cd(0, sign);
      case 2:
        return Cd(-1, 0);
      default:
        return Cd(0, -sign);
    }
  }
  const double angle = sign * 2.0 * std::numbers::pi * static_cast<double>(m) /
                       static_cast<double>(n);
  return Cd(std::cos(angle), std::sin(angle));
}

// In-place DFT of a[base + j * stride], j < n (sign -1 forward, +1 inverse;
// unscaled).
void Dft1d(std::vector<Cd>& a, int64_t base, int64_t stride, int64_t n,
           double sign, std::vector<Cd>& tmp) {
  tmp.assign(static_cast<size_t>(n), Cd(0, 0));
  for (int64_t k = 0; k < n; ++k) {
    Cd sum(0, 0);
    for (int64_t j = 0; j < n; ++j) {
      // (j * k) mod n keeps the angle small and accurate.
      sum += a[base + j * stride] * Twiddle((j * k) % n, n, sign);
    }
    tmp[k] = sum;
  }
  for (int64_t k = 0; k < n; ++k) a[base + k * stride] = tmp[k];
}

// The DFT of a row-major block of shape `dims` along dimension `d`.
void DftAlong(std::vector<Cd>& a, const std::vector<int64_t>& dims, int d,
              double sign) {
  int64_t inner = 1;
  for (size_t i = d + 1; i < dims.size(); ++i) inner *= dims[i];
  int64_t outer = 1;
  for (int i = 0; i < d; ++i) outer *= dims[i];
  const int64_t n = dims[d];
  std::vector<Cd> tmp;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      Dft1d(a, o * n * inner + i, inner, n, sign, tmp);
    }
  }
}

}  // namespace

Literal EvalFft(const Instruction& inst, const Operands& in) {
  const auto& a = inst.attrs_as<FftAttrs>();
  const Literal& x = *in[0];
  Literal out = NewResult(inst);
  const int k = static_cast<int>(a.lengths.size());
  const Shape& in_shape = x.shape();
  int64_t batch = 1;
  for (int i = 0; i < in_shape.rank() - k; ++i) batch *= in_shape[i];
  int64_t n_total = 1;
  for (int64_t l : a.lengths) n_total *= l;
  const int64_t last = a.lengths.back();
  const int64_t half_last = last / 2 + 1;
  // The operand's and result's per-transform dimensions.
  std::vector<int64_t> in_dims = a.lengths, out_dims = a.lengths;
  if (a.type == FftType::kIrfft) in_dims.back() = half_last;
  if (a.type == FftType::kRfft) out_dims.back() = half_last;
  int64_t in_per = 1, out_per = 1;
  for (int64_t d : in_dims) in_per *= d;
  for (int64_t d : out_dims) out_per *= d;
  const bool inverse = a.type == FftType::kIfft || a.type == FftType::kIrfft;
  const double sign = inverse ? 1.0 : -1.0;
  const double scale = inverse ? 1.0 / static_cast<double>(n_total) : 1.0;

  // The operand's elements as complex<double>, transform by transform.
  std::vector<Cd> values(static_cast<size_t>(batch * in_per));
  VisitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = x.data<T>();
    for (int64_t i = 0; i < batch * in_per; ++i) {
      if constexpr (std::is_same_v<T, complex64> ||
                    std::is_same_v<T, complex128>) {
        values[i] = Cd(src[i].real(), src[i].imag());
      } else {
        values[i] = Cd(static_cast<double>(ToCompute(src[i])), 0.0);
      }
    }
  });

  std::vector<Cd> result(static_cast<size_t>(batch * out_per));
  std::vector<Cd> block;
  for (int64_t b = 0; b < batch; ++b) {
    block.assign(values.begin() + b * in_per,
                 values.begin() + (b + 1) * in_per);
    if (a.type != FftType::kIrfft) {
      for (int d = 0; d < k; ++d) DftAlong(block, in_dims, d, sign);
      // rfft keeps the first n/2 + 1 bins of the last dimension.
      const int64_t rows = in_per / last;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < out_dims.back(); ++j) {
          result[b * out_per + r * out_dims.back() + j] =
              block[r * last + j] * scale;
        }
      }
      continue;
    }
    for (int d = 0; d < k - 1; ++d) DftAlong(block, in_dims, d, sign);
    const int64_t rows = in_per / half_last;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < last; ++j) {
        double sum = 0.0;
        for (int64_t m = 0; m < last; ++m) {
          const Cd xm = m < half_last
                            ? block[r * half_last + m]
                            : std::conj(block[r * half_last + last - m]);
          sum += (xm * Twiddle((j * m) % last, last, 1.0)).real();
        }
        result[b * out_per + r * last + j] = Cd(sum * scale, 0.0);
      }
    }
  }

  VisitDType(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = out.mutable_data<T>();
    for (int64_t i = 0; i < batch * out_per; ++i) {
      if constexpr (std::is_same_v<T, complex64>) {
        dst[i] = complex64(static_cast<float>(result[i].real()),
                           static_cast<float>(result[i].imag()));
      } else if constexpr (std::is_same_v<T, complex128>) {
        dst[i] = result[i];
      } else if constexpr (std::is_same_v<T, float> ||
                           std::is_same_v<T, double>) {
        dst[i] = static_cast<T>(result[i].real());
      }
    }
  });
  return out;
}

}  // namespace baton::compiler::interpreter
