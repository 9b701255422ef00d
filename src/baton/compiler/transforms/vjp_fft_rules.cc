// Cotangent rule (vjp_internal.h) of the fft op: the op is linear, so its
// cotangent is its transpose applied to the output's cotangent, with
// JAX's conventions for complex values (jax/_src/lax/fft.py):
//   fft, ifft: the DFT matrix is symmetric, so each is its own transpose
//     (not the adjoint: the conjugations of complex gradients happen where
//     JAX puts them, at grad's end).
//   rfft: rfft(x) = fft(complex(x))[..., :n/2 + 1], so the transpose pads the
//     cotangent with zeros back to n bins, applies fft, and keeps the real
//     part (the transpose of real -> complex).
//   irfft: the rfft of the cotangent scaled by 1/N, the bins that stand for
//     two (their conjugate partner is not stored) doubled, then conjugated
//     (JAX's convention for complex -> real functions).
#include "baton/compiler/fft_ops.h"
#include "baton/compiler/transforms/vjp_internal.h"

namespace baton::compiler::transforms::vjp_internal {

void VjpBuilder::ApplyFftRule(int n, const Tracer& ct) {
  const Node& nd = nodes_[n];
  const auto& a = std::get<FftAttrs>(nd.attrs);
  const int x_node = nd.operands[0];
  if (!nodes_[x_node].active) return;
  const int64_t last = a.lengths.back();
  const int64_t half = last / 2 + 1;
  switch (a.type) {
    case FftType::kFft:
    case FftType::kIfft:
      AddCotangent(x_node, fft(ct, a.type, a.lengths));
      return;
    case FftType::kRfft: {
      const int rank = ct.rank();
      std::vector<int64_t> low(rank, 0), high(rank, 0);
      high[rank - 1] = last - half;
      const Tracer full_ct = high[rank - 1] > 0 ? pad(ct, 0.0, low, high) : ct;
      AddCotangent(x_node, real(fft(full_ct, FftType::kFft, a.lengths)));
      return;
    }
    case FftType::kIrfft: {
      const Tracer x = fft(ct, FftType::kRfft, a.lengths);
      // 1 for bin 0 and (n even) bin n/2, 2 for the others.
      const bool odd = last % 2 == 1;
      std::vector<double> mask(static_cast<size_t>(half), 2.0);
      mask.front() = 1.0;
      if (!odd) mask.back() = 1.0;
      int64_t total = 1;
      for (int64_t l : a.lengths) total *= l;
      const Tracer m =
          astype(constant(*ct.context(), mask, Shape({half})), x.dtype());
      const Tracer scaled =
          x * broadcast_to(m, x.shape()) * (1.0 / static_cast<double>(total));
      AddCotangent(x_node, conj(scaled));
      return;
    }
  }
}

}  // namespace baton::compiler::transforms::vjp_internal
