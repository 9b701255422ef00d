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

// One-dimensional transforms along dimension `d` of a row-major block of
// complex `dims`, in place or from `in` to `out` (same layout), split
// across the pool over the positions before and after `d` (whichever are
// more). `scale` multiplies the result.
template <typename T>
void C2cAlong(const std::complex<T>* in, std::complex<T>* out,
              const std::vector<int64_t>& dims, size_t d, bool forward,
              T scale) {
  using C = std::complex<T>;
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < d; ++i) outer *= dims[i];
  for (size_t i = d + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t n = dims[d];
  const pf::stride_t st = {static_cast<ptrdiff_t>(n * inner * sizeof(C)),
                           static_cast<ptrdiff_t>(inner * sizeof(C)),
                           static_cast<ptrdiff_t>(sizeof(C))};
  const bool split_outer = outer >= inner;
  const int64_t lines = split_outer ? outer : inner;
  const int64_t grain = std::max<int64_t>(1, (int64_t{64} * 1024) / n);
  ParallelRanges(
      lines, grain,
      [&](int64_t lo, int64_t hi) {
        const pf::shape_t shape = {
            static_cast<size_t>(split_outer ? hi - lo : outer),
            static_cast<size_t>(n),
            static_cast<size_t>(split_outer ? inner : hi - lo)};
        const int64_t offset = split_outer ? lo * n * inner : lo;
        pf::c2c(shape, st, st, {1}, forward, in + offset, out + offset, scale,
                1);
      },
      /*align=*/1);
}

// One transform (no batch) of several dimensions, one dimension at a time
// with each pass split across the pool: the batch gives no parallelism
// here. irfft's intermediate complex array is scratch of this call.
template <typename T>
void FftOneByAxes(FftMode mode, const void* operand, void* out,
                  const std::vector<int64_t>& lengths, T scale) {
  using C = std::complex<T>;
  const size_t k = lengths.size();
  std::vector<int64_t> half_dims = lengths;
  half_dims.back() = lengths.back() / 2 + 1;
  int64_t rows = 1;  // the positions before the last dimension
  for (size_t i = 0; i + 1 < k; ++i) rows *= lengths[i];
  const int64_t last = lengths.back(), half = half_dims.back();
  const int64_t grain = std::max<int64_t>(1, (int64_t{64} * 1024) / last);
  switch (mode) {
    case FftMode::kForward:
    case FftMode::kInverse: {
      const bool forward = mode == FftMode::kForward;
      C* y = static_cast<C*>(out);
      C2cAlong<T>(static_cast<const C*>(operand), y, lengths, k - 1, forward,
                  scale);
      for (size_t d = 0; d + 1 < k; ++d) {
        C2cAlong<T>(y, y, lengths, d, forward, T(1));
      }
      return;
    }
    case FftMode::kRealForward: {
      const T* x = static_cast<const T*>(operand);
      C* y = static_cast<C*>(out);
      ParallelRanges(
          rows, grain,
          [&](int64_t lo, int64_t hi) {
            const pf::shape_t shape = {static_cast<size_t>(hi - lo),
                                       static_cast<size_t>(last)};
            pf::r2c(shape,
                    {static_cast<ptrdiff_t>(last * sizeof(T)), sizeof(T)},
                    {static_cast<ptrdiff_t>(half * sizeof(C)), sizeof(C)}, 1,
                    true, x + lo * last, y + lo * half, scale, 1);
          },
          /*align=*/1);
      for (size_t d = 0; d + 1 < k; ++d) {
        C2cAlong<T>(y, y, half_dims, d, true, T(1));
      }
      return;
    }
    case FftMode::kRealInverse: {
      std::vector<C> tmp(static_cast<size_t>(rows * half));
      C2cAlong<T>(static_cast<const C*>(operand), tmp.data(), half_dims, 0,
                  false, T(1));
      for (size_t d = 1; d + 1 < k; ++d) {
        C2cAlong<T>(tmp.data(), tmp.data(), half_dims, d, false, T(1));
      }
      T* y = static_cast<T*>(out);
      ParallelRanges(
          rows, grain,
          [&](int64_t lo, int64_t hi) {
            const pf::shape_t shape = {static_cast<size_t>(hi - lo),
                                       static_cast<size_t>(last)};
            pf::c2r(shape,
                    {static_cast<ptrdiff_t>(half * sizeof(C)), sizeof(C)},
                    {static_cast<ptrdiff_t>(last * sizeof(T)), sizeof(T)}, 1,
                    false, tmp.data() + lo * half, y + lo * last, scale, 1);
          },
          /*align=*/1);
      return;
    }
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
  // A single large multi-dimensional transform (an image's fft2): its
  // passes split across the pool instead.
  if (batch == 1 && k > 1 && n >= 2 * int64_t{64} * 1024) {
    FftOneByAxes<T>(mode, operand, out, lengths, scale);
    return;
  }
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
