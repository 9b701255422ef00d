#include "baton/backend/cpu/blas_threads.h"

#include <algorithm>
#include <cstdlib>

#include "baton/core/blas_symbols.h"

extern "C" {
void BATON_BLAS(openblas_set_num_threads)(int);
int BATON_BLAS(openblas_get_num_threads)(void);
}

namespace baton::cpu {

int ShareBlasThreadsAmongDevices(int devices) {
  if (devices > 1 && std::getenv("OPENBLAS_NUM_THREADS") == nullptr) {
    // The BLAS's own default is the cores this process may use (affinity
    // and cgroup limits counted).
    const int cores = std::max(1, BlasThreadsPerCall());
    BATON_BLAS(openblas_set_num_threads)(std::max(1, cores / devices));
  }
  return BlasThreadsPerCall();
}

int BlasThreadsPerCall() { return BATON_BLAS(openblas_get_num_threads)(); }

}  // namespace baton::cpu
