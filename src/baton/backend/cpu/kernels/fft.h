// The FFT kernel (compiler FftAttrs, jax.lax.fft): discrete Fourier
// transforms over the trailing lengths.size() dimensions of a dense
// row-major array, batched over its leading dimensions, computed by
// pocketfft (cmake/BatonPocketfft.cmake; only fft.cc includes it).
// Ownership: pointers are borrowed for the call only; pocketfft's plans and
// scratch (its per-transform buffers, and irfft's intermediate complex
// array for two or three dimensions) are allocated and freed inside the
// call, so nothing outlives it. Thread-safety: a pure function of its
// arguments; independent transforms (the batch) are split across
// ThreadPool::Global(), pocketfft's own threads being compiled out. A
// single multi-dimensional transform of 2^17 points or more (an image's
// fft2) runs one dimension at a time instead, each pass split over the
// other dimensions' positions. `out` must not overlap `operand`.
#pragma once

#include <cstdint>
#include <vector>

#include "baton/core/dtype.h"
#include "baton/core/shape.h"

namespace baton::cpu {

// The four transforms of jax.lax.FftType.
enum class FftMode : uint8_t {
  kForward,      // complex -> complex
  kInverse,      // complex -> complex, scaled by 1/N
  kRealForward,  // real -> complex, last dimension n -> n/2 + 1
  kRealInverse,  // complex -> real, last dimension n/2 + 1 -> n, scaled 1/N
};

// `dtype` is the operand's: complex64/complex128 for kForward, kInverse and
// kRealInverse, float32/float64 for kRealForward. `lengths` (1 to 3
// entries, each >= 1) are the transform's dimensions, as FftAttrs: the
// operand's trailing dimensions, except kRealInverse's last, which is
// lengths.back()/2 + 1. N is the product of `lengths`. The result's
// layout is the one compiler::InferType gives.
void Fft(FftMode mode, DType dtype, const void* operand, const Shape& shape,
         const std::vector<int64_t>& lengths, void* out);

}  // namespace baton::cpu
