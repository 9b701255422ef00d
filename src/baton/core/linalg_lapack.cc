#include "baton/core/linalg_lapack.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "baton/core/blas_fork_lock.h"
#include "baton/core/lapack.h"

namespace baton {
namespace {

// The LAPACK entry points of one precision.
template <typename T>
struct Lapack;

template <>
struct Lapack<float> {
  static constexpr auto potrf = BATON_BLAS(spotrf_);
  static constexpr auto getrf = BATON_BLAS(sgetrf_);
  static constexpr auto geqrf = BATON_BLAS(sgeqrf_);
  static constexpr auto orgqr = BATON_BLAS(sorgqr_);
  static constexpr auto syevd = BATON_BLAS(ssyevd_);
  static constexpr auto gesdd = BATON_BLAS(sgesdd_);
  static constexpr auto trsm = BATON_BLAS(cblas_strsm);
  static constexpr auto gees = BATON_BLAS(sgees_);
};

template <>
struct Lapack<double> {
  static constexpr auto potrf = BATON_BLAS(dpotrf_);
  static constexpr auto getrf = BATON_BLAS(dgetrf_);
  static constexpr auto geqrf = BATON_BLAS(dgeqrf_);
  static constexpr auto orgqr = BATON_BLAS(dorgqr_);
  static constexpr auto syevd = BATON_BLAS(dsyevd_);
  static constexpr auto gesdd = BATON_BLAS(dgesdd_);
  static constexpr auto trsm = BATON_BLAS(cblas_dtrsm);
  static constexpr auto gees = BATON_BLAS(dgees_);
};

// A workspace size as LAPACK reports it from a query (a float count).
template <typename T>
int WorkSize(T query) {
  return std::max(1, static_cast<int>(std::ceil(query)));
}

// Row-major a (rows x cols) into column-major scratch, and back.
template <typename T>
std::vector<T> ToColumnMajor(const T* a, int64_t rows, int64_t cols) {
  std::vector<T> c(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) c[j * rows + i] = a[i * cols + j];
  }
  return c;
}

template <typename T>
void FromColumnMajor(const T* c, int64_t ld, int64_t rows, int64_t cols,
                     T* out) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = c[j * ld + i];
  }
}

template <typename T>
void FillNaN(T* out, int64_t size) {
  std::fill(out, out + size, std::numeric_limits<T>::quiet_NaN());
}

// Iterative routines (syevd, gesdd) are not given NaNs or infinities: the
// answer is all NaN anyway, and not every LAPACK version terminates on them.
template <typename T>
bool AllFinite(const T* a, int64_t size) {
  for (int64_t i = 0; i < size; ++i) {
    if (!std::isfinite(a[i])) return false;
  }
  return true;
}

template <typename T>
void Identity(T* out, int64_t rows, int64_t cols) {
  std::fill(out, out + rows * cols, T(0));
  for (int64_t i = 0; i < std::min(rows, cols); ++i) out[i * cols + i] = 1;
}

template <typename T>
void Cholesky(const LinalgOptions& o, int n, const T* a, T* out) {
  std::vector<T> c = ToColumnMajor(a, n, n);
  const char uplo = o.lower ? 'L' : 'U';
  int info = 0;
  Lapack<T>::potrf(&uplo, &n, c.data(), &n, &info, 1);
  if (info != 0) return FillNaN(out, int64_t{n} * n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const bool keep = o.lower ? j <= i : j >= i;
      out[i * n + j] = keep ? c[j * n + i] : T(0);
    }
  }
}

// Row-major BLAS: no scratch; x starts as a copy of b.
template <typename T>
void TriangularSolve(const LinalgOptions& o, const LinalgGeometry& g,
                     const T* a, const T* b, T* out) {
  const int64_t size = g.b_rows * g.b_cols;
  std::copy(b, b + size, out);
  if (size == 0) return;
  const int n = static_cast<int>(g.n);
  Lapack<T>::trsm(CblasRowMajor, o.left_side ? CblasLeft : CblasRight,
                  o.lower ? CblasLower : CblasUpper,
                  o.transpose_a ? CblasTrans : CblasNoTrans,
                  o.unit_diagonal ? CblasUnit : CblasNonUnit,
                  static_cast<int>(g.b_rows), static_cast<int>(g.b_cols), T(1),
                  a, n, out, static_cast<int>(g.b_cols));
}

template <typename T>
void Lu(int n, const T* a, T* out) {
  std::vector<T> c = ToColumnMajor(a, n, n);
  std::vector<int> ipiv(static_cast<size_t>(std::max(n, 1)));
  int info = 0;
  if (n > 0) Lapack<T>::getrf(&n, &n, c.data(), &n, ipiv.data(), &info);
  // LAPACK's swaps (row i with row ipiv[i] - 1, in order) applied to the
  // identity permutation give the rows of a in the order of L U.
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  for (int i = 0; i < n; ++i) std::swap(perm[i], perm[ipiv[i] - 1]);
  const int64_t w = int64_t{n} + 1;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) out[i * w + j] = c[j * n + i];
    out[i * w + n] = static_cast<T>(perm[i]);
  }
}

template <typename T>
void Qr(const LinalgOptions& o, int m, int n, const T* a, T* out) {
  const int k = std::min(m, n);
  const int qc = o.full_matrices ? m : k;
  T* q_out = out;
  T* r_out = out + int64_t{m} * qc;
  if (k == 0) {
    Identity(q_out, m, qc);
    std::fill(r_out, r_out + int64_t{qc} * n, T(0));
    return;
  }
  // Column-major m x max(n, qc): orgqr builds Q in place over the
  // reflectors geqrf leaves below the diagonal.
  const int cols = std::max(n, qc);
  std::vector<T> c(static_cast<size_t>(int64_t{m} * cols), T(0));
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) c[int64_t{j} * m + i] = a[int64_t{i} * n + j];
  }
  std::vector<T> tau(static_cast<size_t>(k));
  int info = 0, lwork = -1;
  T query = 0;
  Lapack<T>::geqrf(&m, &n, c.data(), &m, tau.data(), &query, &lwork, &info);
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  Lapack<T>::geqrf(&m, &n, c.data(), &m, tau.data(), work.data(), &lwork,
                   &info);
  for (int i = 0; i < qc; ++i) {
    for (int j = 0; j < n; ++j) {
      r_out[int64_t{i} * n + j] = j >= i ? c[int64_t{j} * m + i] : T(0);
    }
  }
  lwork = -1;
  Lapack<T>::orgqr(&m, &qc, &k, c.data(), &m, tau.data(), &query, &lwork,
                   &info);
  lwork = WorkSize(query);
  work.resize(static_cast<size_t>(lwork));
  Lapack<T>::orgqr(&m, &qc, &k, c.data(), &m, tau.data(), work.data(), &lwork,
                   &info);
  FromColumnMajor(c.data(), m, m, qc, q_out);
}

template <typename T>
void Eigh(const LinalgOptions& o, int n, const T* a, T* out) {
  const int64_t w = int64_t{n} + 1;
  if (n == 0) return;
  for (int i = 0; i < n; ++i) {  // only the triangle syevd reads
    const int lo = o.lower ? 0 : i, hi = o.lower ? i + 1 : n;
    if (!AllFinite(a + int64_t{i} * n + lo, hi - lo)) {
      return FillNaN(out, n * w);
    }
  }
  std::vector<T> c = ToColumnMajor(a, n, n);
  std::vector<T> vals(static_cast<size_t>(n));
  const char jobz = 'V', uplo = o.lower ? 'L' : 'U';
  int info = 0, lwork = -1, liwork = -1, iquery = 0;
  T query = 0;
  Lapack<T>::syevd(&jobz, &uplo, &n, c.data(), &n, vals.data(), &query, &lwork,
                   &iquery, &liwork, &info, 1, 1);
  lwork = WorkSize(query);
  liwork = std::max(1, iquery);
  std::vector<T> work(static_cast<size_t>(lwork));
  std::vector<int> iwork(static_cast<size_t>(liwork));
  Lapack<T>::syevd(&jobz, &uplo, &n, c.data(), &n, vals.data(), work.data(),
                   &lwork, iwork.data(), &liwork, &info, 1, 1);
  if (info != 0) return FillNaN(out, n * w);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) out[i * w + j] = c[int64_t{j} * n + i];
    out[i * w + n] = vals[i];
  }
}

template <typename T>
void Svd(const LinalgOptions& o, int m, int n, const T* a, T* out) {
  const int k = std::min(m, n);
  const int uc = o.full_matrices ? m : k;
  const int vr = o.full_matrices ? n : k;
  T* u_out = out;
  T* s_out = out + int64_t{m} * uc;
  T* vt_out = s_out + k;
  const int64_t size = int64_t{m} * uc + k + int64_t{vr} * n;
  if (k == 0) {
    Identity(u_out, m, uc);
    Identity(vt_out, vr, n);
    return;
  }
  if (!AllFinite(a, int64_t{m} * n)) return FillNaN(out, size);
  std::vector<T> c = ToColumnMajor(a, m, n);
  std::vector<T> s(static_cast<size_t>(k));
  std::vector<T> u(static_cast<size_t>(int64_t{m} * uc));
  std::vector<T> vt(static_cast<size_t>(int64_t{vr} * n));
  std::vector<int> iwork(static_cast<size_t>(8) * k);
  const char jobz = o.full_matrices ? 'A' : 'S';
  int info = 0, lwork = -1;
  T query = 0;
  Lapack<T>::gesdd(&jobz, &m, &n, c.data(), &m, s.data(), u.data(), &m,
                   vt.data(), &vr, &query, &lwork, iwork.data(), &info, 1);
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  Lapack<T>::gesdd(&jobz, &m, &n, c.data(), &m, s.data(), u.data(), &m,
                   vt.data(), &vr, work.data(), &lwork, iwork.data(), &info, 1);
  if (info != 0) return FillNaN(out, size);
  FromColumnMajor(u.data(), m, m, uc, u_out);
  std::copy(s.begin(), s.end(), s_out);
  FromColumnMajor(vt.data(), vr, vr, n, vt_out);
}

// The real Schur form a = Z T Z^T (gees, no eigenvalue ordering): T
// quasi-upper-triangular (1x1 and 2x2 blocks on its diagonal), Z
// orthogonal; out is [n, 2n], T in columns 0..n-1 and Z in n..2n-1.
template <typename T>
void Schur(int n, const T* a, T* out) {
  const int64_t w = 2 * int64_t{n};
  if (!AllFinite(a, int64_t{n} * n)) return FillNaN(out, n * w);
  std::vector<T> c = ToColumnMajor(a, n, n);
  std::vector<T> z(static_cast<size_t>(int64_t{n} * n));
  std::vector<T> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n));
  const char jobvs = 'V', sort = 'N';
  int sdim = 0, info = 0, lwork = -1;
  T query = 0;
  Lapack<T>::gees(&jobvs, &sort, nullptr, &n, c.data(), &n, &sdim, wr.data(),
                  wi.data(), z.data(), &n, &query, &lwork, nullptr, &info, 1,
                  1);
  lwork = WorkSize(query);
  std::vector<T> work(static_cast<size_t>(lwork));
  Lapack<T>::gees(&jobvs, &sort, nullptr, &n, c.data(), &n, &sdim, wr.data(),
                  wi.data(), z.data(), &n, work.data(), &lwork, nullptr, &info,
                  1, 1);
  if (info != 0) return FillNaN(out, n * w);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      // gees leaves T's strictly lower part zero except the 2x2 blocks'
      // subdiagonal entries, which it keeps.
      out[i * w + j] = c[int64_t{j} * n + i];
      out[i * w + n + j] = z[int64_t{j} * n + i];
    }
  }
}

template <typename T>
void RunBatches(const LinalgOptions& o, const LinalgGeometry& g, const T* a,
                const T* b, T* out, int64_t begin, int64_t end) {
  const int m = static_cast<int>(g.m), n = static_cast<int>(g.n);
  const int64_t a_size = g.m * g.n, b_size = g.b_rows * g.b_cols;
  for (int64_t i = begin; i < end; ++i) {
    const T* ai = a + i * a_size;
    T* oi = out + i * g.out_size;
    switch (o.kind) {
      case LinalgKind::kCholesky:
        Cholesky(o, n, ai, oi);
        break;
      case LinalgKind::kTriangularSolve:
        TriangularSolve(o, g, ai, b + i * b_size, oi);
        break;
      case LinalgKind::kLu:
        Lu(n, ai, oi);
        break;
      case LinalgKind::kQr:
        Qr(o, m, n, ai, oi);
        break;
      case LinalgKind::kEigh:
        Eigh(o, n, ai, oi);
        break;
      case LinalgKind::kSvd:
        Svd(o, m, n, ai, oi);
        break;
      case LinalgKind::kSchur:
        Schur(n, ai, oi);
        break;
    }
  }
}

}  // namespace

LinalgGeometry LinalgGeometryOf(const LinalgOptions& o, const Shape& a,
                                const Shape& b) {
  LinalgGeometry g;
  const int r = a.rank();
  g.m = a[r - 2];
  g.n = a[r - 1];
  g.batch = 1;
  for (int d = 0; d < r - 2; ++d) g.batch *= a[d];
  const int64_t k = std::min(g.m, g.n);
  switch (o.kind) {
    case LinalgKind::kCholesky:
      g.out_size = g.n * g.n;
      break;
    case LinalgKind::kTriangularSolve:
      g.b_rows = b[b.rank() - 2];
      g.b_cols = b[b.rank() - 1];
      g.out_size = g.b_rows * g.b_cols;
      break;
    case LinalgKind::kLu:
    case LinalgKind::kEigh:
      g.out_size = g.n * (g.n + 1);
      break;
    case LinalgKind::kSchur:
      g.out_size = 2 * g.n * g.n;
      break;
    case LinalgKind::kQr: {
      const int64_t c = o.full_matrices ? g.m : k;
      g.out_size = g.m * c + c * g.n;
      break;
    }
    case LinalgKind::kSvd: {
      const int64_t u = o.full_matrices ? g.m : k;
      const int64_t v = o.full_matrices ? g.n : k;
      g.out_size = g.m * u + k + v * g.n;
      break;
    }
  }
  return g;
}

void LinalgBatches(const LinalgOptions& o, DType dtype, const LinalgGeometry& g,
                   const void* a, const void* b, void* out, int64_t begin,
                   int64_t end) {
  // Nothing to write (an n = 0 matrix): a batch of any length is done, and
  // looping over it could take as long as its (unbounded) batch count. The
  // routines below are so never given n = 0, which LAPACK rejects as lda = 0
  // (printing a line about it).
  if (g.out_size == 0) return;
  BlasCallScope blas_call;  // a fork waits for it (core/blas_fork_lock.h)
  if (dtype == DType::kFloat64) {
    RunBatches(o, g, static_cast<const double*>(a),
               static_cast<const double*>(b), static_cast<double*>(out), begin,
               end);
  } else {
    RunBatches(o, g, static_cast<const float*>(a), static_cast<const float*>(b),
               static_cast<float*>(out), begin, end);
  }
}

}  // namespace baton
