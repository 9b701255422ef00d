// The LAPACK routines baton calls, as OpenBLAS exports them (Fortran
// symbols, 32-bit integers: neither scipy-openblas32 nor Debian's
// libopenblas0 is an ILP64 build; names through BATON_BLAS, blas_symbols.h).
// Character arguments are followed, at the end, by their hidden lengths
// (gfortran's convention; always 1 here), which the Fortran routines may
// rely on. Every routine is reentrant: all state is in the arguments.
#pragma once

#include <cstddef>

#include "baton/core/blas_symbols.h"

extern "C" {

void BATON_BLAS(spotrf_)(const char* uplo, const int* n, float* a, const int* lda,
             int* info, size_t uplo_len);
void BATON_BLAS(dpotrf_)(const char* uplo, const int* n, double* a, const int* lda,
             int* info, size_t uplo_len);

void BATON_BLAS(sgetrf_)(const int* m, const int* n, float* a, const int* lda, int* ipiv,
             int* info);
void BATON_BLAS(dgetrf_)(const int* m, const int* n, double* a, const int* lda, int* ipiv,
             int* info);

void BATON_BLAS(sgeqrf_)(const int* m, const int* n, float* a, const int* lda, float* tau,
             float* work, const int* lwork, int* info);
void BATON_BLAS(dgeqrf_)(const int* m, const int* n, double* a, const int* lda, double* tau,
             double* work, const int* lwork, int* info);

void BATON_BLAS(sorgqr_)(const int* m, const int* n, const int* k, float* a, const int* lda,
             const float* tau, float* work, const int* lwork, int* info);
void BATON_BLAS(dorgqr_)(const int* m, const int* n, const int* k, double* a,
             const int* lda, const double* tau, double* work, const int* lwork,
             int* info);

void BATON_BLAS(ssyevd_)(const char* jobz, const char* uplo, const int* n, float* a,
             const int* lda, float* w, float* work, const int* lwork,
             int* iwork, const int* liwork, int* info, size_t jobz_len,
             size_t uplo_len);
void BATON_BLAS(dsyevd_)(const char* jobz, const char* uplo, const int* n, double* a,
             const int* lda, double* w, double* work, const int* lwork,
             int* iwork, const int* liwork, int* info, size_t jobz_len,
             size_t uplo_len);

void BATON_BLAS(sgesdd_)(const char* jobz, const int* m, const int* n, float* a,
             const int* lda, float* s, float* u, const int* ldu, float* vt,
             const int* ldvt, float* work, const int* lwork, int* iwork,
             int* info, size_t jobz_len);
void BATON_BLAS(dgesdd_)(const char* jobz, const int* m, const int* n, double* a,
             const int* lda, double* s, double* u, const int* ldu, double* vt,
             const int* ldvt, double* work, const int* lwork, int* iwork,
             int* info, size_t jobz_len);

// Real Schur form (sort = 'N': select and bwork are not referenced).
using BatonGeesSelectS = int (*)(const float*, const float*);
using BatonGeesSelectD = int (*)(const double*, const double*);
void BATON_BLAS(sgees_)(const char* jobvs, const char* sort,
             BatonGeesSelectS select, const int* n, float* a, const int* lda,
             int* sdim, float* wr, float* wi, float* vs, const int* ldvs,
             float* work, const int* lwork, int* bwork, int* info,
             size_t jobvs_len, size_t sort_len);
void BATON_BLAS(dgees_)(const char* jobvs, const char* sort,
             BatonGeesSelectD select, const int* n, double* a, const int* lda,
             int* sdim, double* wr, double* wi, double* vs, const int* ldvs,
             double* work, const int* lwork, int* bwork, int* info,
             size_t jobvs_len, size_t sort_len);

}  // extern "C"
