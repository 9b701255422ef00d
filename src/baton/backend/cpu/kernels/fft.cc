#include "baton/backend/cpu/kernels/fft.h"

#include <complex>
#include <cstddef>

#include "baton/backend/cpu/kernels/parallel.h"
// pocketfft_hdronly (BSD-3-Clause), from the pythran wheel; this is the only
// source that includes it (src/CMakeLists.txt).
#include "pocketfft.hpp"

namespace baton::cpu {
namespace {

namespace pf = pocketfft;

// Row-major byte strides of `shape` with elements of `size` bytes.
pf::stride_t ByteStrides(const pf::shape_t& shape, size_t size) {
  pf::stride_t strides(shape.size());
  ptrdiff_t s = static_cast<ptrdiff_t>(size);
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= static_cast<ptrdiff_t>(shape[i]);
  }
  return strides;
}

// Transforms [lo, hi) of the batch with one pocketfft call: the batch is a
// leading dimension of the call's shape, so each axis's plan is built once
// per range, not once per transform.
template <typename T>
void FftRange(FftMode mode, const void* operand, void* out,
              const std::vector<int64_t>& lengths, int64_t in_per,
              int64_t out_per, int64_t lo, int64_t hi, T scale) {
  using C = std::complex<T>;
  const size_t k = lengths.size();
  pf::shape_t full(k + 1);  // the real (full-length) shape of the range
  full[0] = static_cast<size_t>(hi - lo);
  for (size_t i = 0; i < k; ++i) full[i + 1] = static_cast<size_t>(lengths[i]);
  pf::shape_t half = full;  // the complex half spectrum's shape
  half[k] = full[k] / 2 + 1;
  pf::shape_t axes(k);
  for (size_t i = 0; i < k; ++i) axes[i] = i + 1;
  switch (mode) {
    case FftMode::kForward:
    case FftMode::kInverse: {
      const pf::stride_t st = ByteStrides(full, sizeof(C));
      pf::c2c(full, st, st, axes, mode == FftMode::kForward,
              static_cast<const C*>(operand) + lo * in_per,
              static_cast<C*>(out) + lo * out_per, scale, 1);
      return;
    }
    case FftMode::kRealForward:
      pf::r2c(full, ByteStrides(full, sizeof(T)), ByteStrides(half, sizeof(C)),
              axes, /*forward=*/true,
              static_cast<const T*>(operand) + lo * in_per,
              static_cast<C*>(out) + lo * out_per, scale, 1);
      return;
    case FftMode::kRealInverse:
      pf::c2r(full, ByteStrides(half, sizeof(C)), ByteStrides(full, sizeof(T)),
              axes, /*forward=*/false,
              static_cast<const C*>(operand) + lo * in_per,
              static_cast<T*>(out) + lo * out_per, scale, 1);
      return;
  }
}

template <typename T>
void FftTyped(FftMode mode, const void* operand, const Shape& shape,
              const std::vector<int64_t>& lengths, void* out) {
  const int k = static_cast<int>(lengths.size());
  int64_t batch = 1;
  for (int i = 0; i < shape.rank() - k; ++i) batch *= shape[i];
  int64_t n = 1;
  for (int64_t l : lengths) n *= l;
  if (batch == 0 || n == 0) return;
  const int64_t half = n / lengths.back() * (lengths.back() / 2 + 1);
  const int64_t in_per = mode == FftMode::kRealInverse ? half : n;
  const int64_t out_per = mode == FftMode::kRealForward ? half : n;
  const bool inverse =
      mode == FftMode::kInverse || mode == FftMode::kRealInverse;
  const T scale = inverse ? T(1) / static_cast<T>(n) : T(1);
  // An FFT of n points costs ~5 n log2(n) flops: ranges of at least ~64K
  // points' work, so short batches stay on the calling thread.
  const int64_t grain = std::max<int64_t>(1, (int64_t{64} * 1024) / n);
  ParallelRanges(
      batch, grain,
      [&](int64_t lo, int64_t hi) {
        FftRange<T>(mode, operand, out, lengths, in_per, out_per, lo, hi,
                    scale);
      },
      /*align=*/1);
}

}  // namespace

void Fft(FftMode mode, DType dtype, const void* operand, const Shape& shape,
         const std::vector<int64_t>& lengths, void* out) {
  if (real_dtype(dtype) == DType::kFloat64) {
    FftTyped<double>(mode, operand, shape, lengths, out);
  } else {
    FftTyped<float>(mode, operand, shape, lengths, out);
  }
}

}  // namespace baton::cpu
