#include "baton/backend/cuda/codegen/host_gemm.h"

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "baton/core/blas_fork_lock.h"
#include "baton/core/blas_symbols.h"
#include "baton/core/half.h"

namespace baton::cuda::codegen {

namespace {

// One product of the batch, c = op(a) * op(b), in the BLAS's type.
template <typename F>
void Gemm(const Action& g, const F* a, const F* b, F* c) {
  const CBLAS_TRANSPOSE ta = g.trans_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = g.trans_b ? CblasTrans : CblasNoTrans;
  const int m = static_cast<int>(g.m), n = static_cast<int>(g.n),
            k = static_cast<int>(g.k);
  const int lda = g.trans_a ? m : k;
  const int ldb = g.trans_b ? k : n;
  if constexpr (std::is_same_v<F, float>) {
    BATON_BLAS(cblas_sgemm)(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b,
                            ldb, 0.0f, c, n);
  } else {
    BATON_BLAS(cblas_dgemm)(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b,
                            ldb, 0.0, c, n);
  }
}

template <typename F>
void Batched(const Action& g, const F* a, const F* b, F* c) {
  for (int64_t i = 0; i < g.batch; ++i) {
    Gemm(g, a + i * g.m * g.k, b + i * g.k * g.n, c + i * g.m * g.n);
  }
}

// float16/bfloat16: widened, multiplied in float32, rounded once.
template <typename H, float (*ToFloat)(H), H (*FromFloat)(float)>
void Widened(const Action& g, const void* a, const void* b, void* c) {
  const int64_t na = g.batch * g.m * g.k, nb = g.batch * g.k * g.n,
                nc = g.batch * g.m * g.n;
  std::vector<float> fa(static_cast<size_t>(na)), fb(static_cast<size_t>(nb)),
      fc(static_cast<size_t>(nc));
  for (int64_t i = 0; i < na; ++i) fa[i] = ToFloat(static_cast<const H*>(a)[i]);
  for (int64_t i = 0; i < nb; ++i) fb[i] = ToFloat(static_cast<const H*>(b)[i]);
  Batched<float>(g, fa.data(), fb.data(), fc.data());
  for (int64_t i = 0; i < nc; ++i) static_cast<H*>(c)[i] = FromFloat(fc[i]);
}

}  // namespace

Status RunGemmOnHost(const Action& g, const void* a, const void* b, void* c) {
  if (g.m == 0 || g.n == 0 || g.batch == 0) return OkStatus();
  if (g.k == 0) {
    // An empty sum: zeros (the BLAS would not touch c).
    std::memset(c, 0,
                static_cast<size_t>(g.batch * g.m * g.n) * dtype_size(g.dtype));
    return OkStatus();
  }
  BlasCallScope blas_call;  // a fork waits for it (core/blas_fork_lock.h)
  switch (g.dtype) {
    case DType::kFloat32:
      Batched(g, static_cast<const float*>(a), static_cast<const float*>(b),
              static_cast<float*>(c));
      return OkStatus();
    case DType::kFloat64:
      Batched(g, static_cast<const double*>(a), static_cast<const double*>(b),
              static_cast<double*>(c));
      return OkStatus();
    case DType::kFloat16:
      Widened<float16, f16_to_float, float_to_f16>(g, a, b, c);
      return OkStatus();
    case DType::kBFloat16:
      Widened<bfloat16, bf16_to_float, float_to_bf16>(g, a, b, c);
      return OkStatus();
    default:
      return InvalidArgument(std::string("a GEMM of ") +
                             std::string(dtype_name(g.dtype)) +
                             ": only float types have one");
  }
}

}  // namespace baton::cuda::codegen
