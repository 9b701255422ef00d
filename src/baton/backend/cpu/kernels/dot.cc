#include "baton/backend/cpu/kernels/dot.h"


#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <type_traits>

#include "baton/backend/cpu/blas_threads.h"
#include "baton/backend/cpu/kernels/elementwise.h"
#include "baton/backend/cpu/kernels/parallel.h"
#include "baton/backend/cpu/kernels/shape_ops.h"
#include "baton/backend/cpu/kernels/vector_loop.h"
#include "baton/core/blas_fork_lock.h"
#include "baton/core/blas_symbols.h"
#include "baton/core/dot_dimensions.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/scalar_math.h"

namespace baton::cpu {
namespace {

// Each piece of DotGeneral's scratch starts on a cache line.
constexpr int64_t kScratchAlignment = 64;

int64_t AlignedScratch(int64_t bytes) {
  return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
}

// Hands out DotGeneral's scratch from the caller's span, piece by piece.
class ScratchSpan {
 public:
  explicit ScratchSpan(std::span<std::byte> bytes) : left_(bytes) {}

  // `bytes` (rounded up to kScratchAlignment) from the front. Running out is
  // a caller's bug (it sized the span with something other than
  // DotGeneralScratchBytes): stop rather than write past it.
  void* Take(int64_t bytes) {
    const size_t n = static_cast<size_t>(AlignedScratch(bytes));
    if (n > left_.size()) {
      std::fprintf(stderr,
                   "baton: DotGeneral's scratch ran out: %zu bytes left where "
                   "the next piece needs %zu (size it with "
                   "DotGeneralScratchBytes)\n",
                   left_.size(), n);
      std::abort();
    }
    void* p = left_.data();
    left_ = left_.subspan(n);
    return p;
  }

  std::span<std::byte> rest() const { return left_; }

 private:
  std::span<std::byte> left_;
};

// One operand as a batch of matrices: either the data as given (with BLAS's
// transpose flag when its inner two groups are swapped) or a transposed
// copy in the canonical order, in the caller's scratch.
struct MatrixOperand {
  const void* data = nullptr;
  bool transposed = false;  // memory holds [batch, cols, rows]
};

// The bytes of the transposed copy Canonicalize makes of this operand, or 0
// when it is used in place.
int64_t CanonicalCopyBytes(DType dtype, const Shape& shape,
                           const std::vector<int64_t>& batch,
                           const std::vector<int64_t>& row_dims,
                           const std::vector<int64_t>& col_dims,
                           bool allow_transposed) {
  const MatrixLayout layout = MatrixLayoutOf(shape, batch, row_dims, col_dims);
  if (layout == MatrixLayout::kRowMajor ||
      (allow_transposed && layout == MatrixLayout::kTransposed)) {
    return 0;
  }
  return shape.num_elements() * static_cast<int64_t>(dtype_size(dtype));
}

// Makes `data` (shape `shape`) readable as [batch, rows, cols] where rows and
// cols are the dim groups `row_dims`, `col_dims`. With `allow_transposed`,
// [batch, cols, rows] memory is accepted as is. A copy, when one is needed,
// goes into `scratch` (CanonicalCopyBytes of it).
MatrixOperand Canonicalize(DType dtype, const void* data, const Shape& shape,
                           const std::vector<int64_t>& batch,
                           const std::vector<int64_t>& row_dims,
                           const std::vector<int64_t>& col_dims,
                           bool allow_transposed, ScratchSpan& scratch) {
  MatrixOperand m;
  const MatrixLayout layout = MatrixLayoutOf(shape, batch, row_dims, col_dims);
  if (layout == MatrixLayout::kRowMajor) {
    m.data = data;
    return m;
  }
  if (allow_transposed && layout == MatrixLayout::kTransposed) {
    m.data = data;
    m.transposed = true;
    return m;
  }
  void* copy = scratch.Take(shape.num_elements() *
                            static_cast<int64_t>(dtype_size(dtype)));
  Transpose(dtype, data, shape, ConcatDims(batch, row_dims, col_dims), copy);
  m.data = copy;
  return m;
}

struct GemmShape {
  int64_t batch, m, n, k;
};

// out = alpha * (lhs . rhs) + beta * out; beta is 0 (out is only written)
// or 1 (accumulate into out).
struct Scaling {
  double alpha = 1.0;
  double beta = 0.0;
};

template <typename F>
void BlasGemm(const MatrixOperand& a, const MatrixOperand& b, F* c,
              const GemmShape& g, const Scaling& scaling) {
  BlasCallScope blas_call;  // a fork waits for it (core/blas_fork_lock.h)
  KeepBlasWorkersOffCallersCore();
  const auto ta = a.transposed ? CblasTrans : CblasNoTrans;
  const auto tb = b.transposed ? CblasTrans : CblasNoTrans;
  const F* ap = static_cast<const F*>(a.data);
  const F* bp = static_cast<const F*>(b.data);
  const int lda = static_cast<int>(a.transposed ? g.m : g.k);
  const int ldb = static_cast<int>(b.transposed ? g.k : g.n);
  const int m = static_cast<int>(g.m), n = static_cast<int>(g.n),
            k = static_cast<int>(g.k);
  const F alpha = static_cast<F>(scaling.alpha);
  const F beta = static_cast<F>(scaling.beta);
  for (int64_t i = 0; i < g.batch; ++i) {
    const F* ai = ap + i * g.m * g.k;
    const F* bi = bp + i * g.k * g.n;
    F* ci = c + i * g.m * g.n;
    if constexpr (std::is_same_v<F, float>) {
      // A matrix-vector product (an RNN step, a layer on one example): gemv
      // reads the matrix once, where gemm would pack it first.
      if (g.n == 1) {
        if (a.transposed) {
          BATON_BLAS(cblas_sgemv)(CblasRowMajor, CblasTrans, k, m, alpha, ai,
                                  lda, bi, 1, beta, ci, 1);
        } else {
          BATON_BLAS(cblas_sgemv)(CblasRowMajor, CblasNoTrans, m, k, alpha, ai,
                                  lda, bi, 1, beta, ci, 1);
        }
        continue;
      }
      if (g.m == 1) {
        if (b.transposed) {
          BATON_BLAS(cblas_sgemv)(CblasRowMajor, CblasNoTrans, n, k, alpha, bi,
                                  ldb, ai, 1, beta, ci, 1);
        } else {
          BATON_BLAS(cblas_sgemv)(CblasRowMajor, CblasTrans, k, n, alpha, bi,
                                  ldb, ai, 1, beta, ci, 1);
        }
        continue;
      }
      BATON_BLAS(cblas_sgemm)(CblasRowMajor, ta, tb, m, n, k, alpha, ai, lda,
                              bi, ldb, beta, ci, n);
    } else if constexpr (std::is_same_v<F, double>) {
      BATON_BLAS(cblas_dgemm)(CblasRowMajor, ta, tb, m, n, k, alpha, ai, lda,
                              bi, ldb, beta, ci, n);
    } else {
      // Complex: the BLAS's cgemm/zgemm (alpha and beta by pointer).
      if constexpr (std::is_same_v<F, complex64>) {
        BATON_BLAS(cblas_cgemm)(CblasRowMajor, ta, tb, m, n, k, &alpha, ai,
                                lda, bi, ldb, &beta, ci, n);
      } else {
        BATON_BLAS(cblas_zgemm)(CblasRowMajor, ta, tb, m, n, k, &alpha, ai,
                                lda, bi, ldb, &beta, ci, n);
      }
    }
  }
}

// Integer (and bool) matmul on canonical [batch, m, k] x [batch, k, n]:
// each output row accumulates rank-1 updates over k in an L1-sized block of
// columns, vectorized along the columns.
template <typename T>
void LoopGemm(const T* a, const T* b, T* c, const GemmShape& g) {
  constexpr int64_t kCols = 512;
  const int64_t rows = g.batch * g.m;
  const int64_t per_row = std::max<int64_t>(1, g.n * g.k);
  ParallelRanges(
      rows, std::max<int64_t>(1, kCheapGrain / per_row),
      [&](int64_t lo, int64_t hi) {
        T acc[kCols];
        for (int64_t r = lo; r < hi; ++r) {
          const T* arow = a + r * g.k;
          const T* bmat = b + (r / g.m) * g.k * g.n;
          for (int64_t j0 = 0; j0 < g.n; j0 += kCols) {
            const int64_t len = std::min(kCols, g.n - j0);
            std::fill(acc, acc + len, T(0));
            for (int64_t kk = 0; kk < g.k; ++kk) {
              const T aik = arow[kk];
              const T* brow = bmat + kk * g.n + j0;
              VectorLoop(0, len, [&](int64_t j) {
                acc[j] = scalar::Binary<BinaryOp::kAdd, T>(
                    acc[j], scalar::Binary<BinaryOp::kMul, T>(aik, brow[j]));
              });
            }
            std::copy(acc, acc + len, c + r * g.n + j0);
          }
        }
      },
      1);
}

}  // namespace

Shape DotGeneralShape(const Shape& lhs_shape, const Shape& rhs_shape,
                      const DotDimensions& dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims.lhs_batch)
    out.push_back(lhs_shape[static_cast<int>(d)]);
  for (int64_t d :
       DotFreeDimensions(lhs_shape.rank(), dims.lhs_batch, dims.lhs_contracting)) {
    out.push_back(lhs_shape[static_cast<int>(d)]);
  }
  for (int64_t d :
       DotFreeDimensions(rhs_shape.rank(), dims.rhs_batch, dims.rhs_contracting)) {
    out.push_back(rhs_shape[static_cast<int>(d)]);
  }
  return Shape(std::move(out));
}

namespace {

bool IsHalfFloat(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16;
}

// Whether the BLAS multiplies `dtype` (and so takes a transposed operand as
// is); other types use LoopGemm on the canonical layout.
bool IsBlasType(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 ||
         is_complex(dtype);
}

void ScaledDotGeneral(DType dtype, const void* lhs, const Shape& lhs_shape,
                      const void* rhs, const Shape& rhs_shape,
                      const DotDimensions& dims, const Scaling& scaling,
                      void* out, ScratchSpan& scratch) {
  const bool accumulate = scaling.beta != 0.0;
  const std::vector<int64_t> lhs_free =
      DotFreeDimensions(lhs_shape.rank(), dims.lhs_batch, dims.lhs_contracting);
  const std::vector<int64_t> rhs_free =
      DotFreeDimensions(rhs_shape.rank(), dims.rhs_batch, dims.rhs_contracting);
  const GemmShape g{DimsSize(lhs_shape, dims.lhs_batch),
                    DimsSize(lhs_shape, lhs_free), DimsSize(rhs_shape, rhs_free),
                    DimsSize(lhs_shape, dims.lhs_contracting)};
  const int64_t out_elems = g.batch * g.m * g.n;
  if (out_elems == 0) return;
  if (g.k == 0) {  // an empty sum: zeros (all-zero bits for every dtype)
    if (accumulate) return;  // out + alpha * 0
    std::memset(out, 0, static_cast<size_t>(out_elems) * dtype_size(dtype));
    return;
  }
  if (IsHalfFloat(dtype)) {
    assert(!accumulate && "DotGeneralAccumulate: float32/float64 only");
    // Widen both operands (same layouts), multiply in float32, round back.
    const int64_t nl = lhs_shape.num_elements(), nr = rhs_shape.num_elements();
    auto* l32 = static_cast<float*>(scratch.Take(nl * 4));
    auto* r32 = static_cast<float*>(scratch.Take(nr * 4));
    auto* o32 = static_cast<float*>(scratch.Take(out_elems * 4));
    Convert(dtype, DType::kFloat32, lhs, l32, nl);
    Convert(dtype, DType::kFloat32, rhs, r32, nr);
    ScaledDotGeneral(DType::kFloat32, l32, lhs_shape, r32, rhs_shape, dims,
                     Scaling{}, o32, scratch);
    Convert(DType::kFloat32, dtype, o32, out, out_elems);
    return;
  }
  const bool blas = IsBlasType(dtype);
  const MatrixOperand a =
      Canonicalize(dtype, lhs, lhs_shape, dims.lhs_batch, lhs_free,
                   dims.lhs_contracting, /*allow_transposed=*/blas, scratch);
  const MatrixOperand b =
      Canonicalize(dtype, rhs, rhs_shape, dims.rhs_batch, dims.rhs_contracting,
                   rhs_free, /*allow_transposed=*/blas, scratch);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  kIsComplex<T>) {
      BlasGemm<T>(a, b, static_cast<T*>(out), g, scaling);
    } else if constexpr (std::is_integral_v<T>) {  // includes bool
      assert(!accumulate && "DotGeneralAccumulate: float32/float64 only");
      LoopGemm<T>(static_cast<const T*>(a.data), static_cast<const T*>(b.data),
                  static_cast<T*>(out), g);
    }
  });
}

// Whether gemm with beta = 1 on a 64 x 64 output and contraction `k` gives
// bitwise the product made first, then added (alpha = 1: one rounding each
// way when the BLAS adds the product in one step).
template <typename F>
bool AddsInOneStep(int64_t k) {
  constexpr int64_t m = 64, n = 64;
  std::vector<F> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)),
      c(m * n), product(m * n), sum(m * n);
  uint32_t state = 0x9e3779b9u ^ static_cast<uint32_t>(k);
  auto next = [&state] {  // xorshift32, in [-0.5, 0.5)
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return static_cast<F>(state) / static_cast<F>(4294967296.0) - F(0.5);
  };
  for (F& x : a) x = next();
  for (F& x : b) x = next();
  for (F& x : c) x = F(100) * next();
  MatrixOperand ma, mb;
  ma.data = a.data();
  mb.data = b.data();
  const GemmShape g{1, m, n, k};
  BlasGemm<F>(ma, mb, product.data(), g, Scaling{1.0, 0.0});
  sum = c;
  BlasGemm<F>(ma, mb, sum.data(), g, Scaling{1.0, 1.0});
  for (size_t i = 0; i < sum.size(); ++i) {
    const F once = c[i] + product[i];
    if (sum[i] != once) return false;
  }
  return true;
}

// The largest multiple of 8 up to 4096 for which AddsInOneStep holds (the
// BLAS's blocks of the contraction are multiples of its unroll).
template <typename F>
int64_t MeasureMaxDepth() {
  constexpr int64_t kCap = 4096;
  if (AddsInOneStep<F>(kCap)) return kCap;
  int64_t lo = 0, hi = kCap;  // AddsInOneStep(lo) (0: trivially), !(hi)
  while (hi - lo > 8) {
    const int64_t mid = (lo + hi) / 16 * 8;
    (AddsInOneStep<F>(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace

int64_t DotAccumulateMaxDepth(DType dtype) {
  if (dtype == DType::kFloat32) {
    static const int64_t depth = MeasureMaxDepth<float>();
    return depth;
  }
  if (dtype == DType::kFloat64) {
    static const int64_t depth = MeasureMaxDepth<double>();
    return depth;
  }
  return 0;
}

bool AccumulatesInOneRounding(DType dtype, const Shape& lhs_shape,
                              const Shape& rhs_shape, const DotDimensions& dims) {
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) return false;
  const int64_t m = DimsSize(lhs_shape, DotFreeDimensions(lhs_shape.rank(), dims.lhs_batch,
                                                          dims.lhs_contracting));
  const int64_t n = DimsSize(rhs_shape, DotFreeDimensions(rhs_shape.rank(), dims.rhs_batch,
                                                          dims.rhs_contracting));
  const int64_t k = DimsSize(lhs_shape, dims.lhs_contracting);
  return m > 1 && n > 1 && k <= DotAccumulateMaxDepth(dtype);
}

int64_t DotGeneralScratchBytes(DType dtype, const Shape& lhs_shape,
                               const Shape& rhs_shape,
                               const DotDimensions& dims) {
  const std::vector<int64_t> lhs_free =
      DotFreeDimensions(lhs_shape.rank(), dims.lhs_batch, dims.lhs_contracting);
  const std::vector<int64_t> rhs_free =
      DotFreeDimensions(rhs_shape.rank(), dims.rhs_batch, dims.rhs_contracting);
  const int64_t out_elems = DimsSize(lhs_shape, dims.lhs_batch) *
                            DimsSize(lhs_shape, lhs_free) *
                            DimsSize(rhs_shape, rhs_free);
  if (out_elems == 0 || DimsSize(lhs_shape, dims.lhs_contracting) == 0) {
    return 0;  // nothing multiplied (ScaledDotGeneral's early returns)
  }
  if (IsHalfFloat(dtype)) {
    return AlignedScratch(lhs_shape.num_elements() * 4) +
           AlignedScratch(rhs_shape.num_elements() * 4) +
           AlignedScratch(out_elems * 4) +
           DotGeneralScratchBytes(DType::kFloat32, lhs_shape, rhs_shape, dims);
  }
  const bool blas = IsBlasType(dtype);
  return AlignedScratch(CanonicalCopyBytes(dtype, lhs_shape, dims.lhs_batch,
                                           lhs_free, dims.lhs_contracting,
                                           blas)) +
         AlignedScratch(CanonicalCopyBytes(dtype, rhs_shape, dims.rhs_batch,
                                           dims.rhs_contracting, rhs_free,
                                           blas));
}

void DotGeneral(DType dtype, const void* lhs, const Shape& lhs_shape,
                const void* rhs, const Shape& rhs_shape,
                const DotDimensions& dims, void* out,
                std::span<std::byte> scratch) {
  ScratchSpan pieces(scratch);
  ScaledDotGeneral(dtype, lhs, lhs_shape, rhs, rhs_shape, dims, Scaling{},
                   out, pieces);
}

void DotGeneralAccumulate(DType dtype, const void* lhs, const Shape& lhs_shape,
                          const void* rhs, const Shape& rhs_shape,
                          const DotDimensions& dims, double alpha, void* out,
                          std::span<std::byte> scratch) {
  assert((dtype == DType::kFloat32 || dtype == DType::kFloat64) &&
         "DotGeneralAccumulate: float32/float64 only");
  ScratchSpan pieces(scratch);
  ScaledDotGeneral(dtype, lhs, lhs_shape, rhs, rhs_shape, dims,
                   Scaling{alpha, 1.0}, out, pieces);
}

}  // namespace baton::cpu
