// The tracer function of the fft op (FftAttrs, op_attrs.h): jax.lax.fft.
// The numpy-style wrappers (axes, n, norm) are the Python front end's
// (python/baton/numpy/fft.py), built on this one op.
//
// Errors: like tracer.h, it throws baton::Error (InvalidArgument, naming
// the op) for a wrong dtype or fft_lengths that do not match the operand.
// Thread-safety: as any tracing, on the thread that owns the TraceContext.
#pragma once

#include <cstdint>
#include <vector>

#include "baton/compiler/op_attrs.h"
#include "baton/compiler/tracer.h"

namespace baton::compiler {

// The DFT of `type` over x's trailing lengths.size() (1 to 3) dimensions
// (jax.lax.fft): kFft/kIfft need a complex x, kRfft a float32/float64 x,
// kIrfft a complex x whose last dimension is lengths.back()/2 + 1. No
// implicit conversion: the front end promotes first, as jax.numpy.fft does.
Tracer fft(const Tracer& x, FftType type, std::vector<int64_t> lengths);

}  // namespace baton::compiler
