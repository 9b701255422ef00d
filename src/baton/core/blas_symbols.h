// The BLAS and LAPACK routines by the names the linked library exports
// (cmake/BatonBlas.cmake): PyPI's scipy-openblas32 prefixes every symbol with
// "scipy_" (so it never clashes with another OpenBLAS loaded in the same
// process, numpy's or scipy's), the system's OpenBLAS does not. Write
// BATON_BLAS(cblas_sgemm)(...), BATON_BLAS(sgetrf_)(...).
//
// Only the files that call the library include this (they get its include
// folder and BATON_BLAS_PREFIX from src/CMakeLists.txt).
#pragma once

#include <cblas.h>

#define BATON_BLAS_JOIN_(a, b) a##b
#define BATON_BLAS_JOIN(a, b) BATON_BLAS_JOIN_(a, b)
#ifdef BATON_BLAS_PREFIX
#define BATON_BLAS(name) BATON_BLAS_JOIN(BATON_BLAS_PREFIX, name)
#else
#define BATON_BLAS(name) name
#endif

extern "C" {
// OpenBLAS's own queries (both builds export them, prefixed alike).
char* BATON_BLAS(openblas_get_corename)(void);
char* BATON_BLAS(openblas_get_config)(void);
}
