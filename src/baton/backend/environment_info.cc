#include "baton/backend/environment_info.h"

#include <utility>

#include "baton/backend/cpu/blas_info.h"
#include "baton/backend/cpu/blas_threads.h"

namespace baton {

BlasEnvironment QueryBlasEnvironment() {
  cpu::BlasInfo info = cpu::QueryBlasInfo();
  return BlasEnvironment{std::move(info.config), std::move(info.corename),
                         std::move(info.cpu_isa), info.kernel_fits_cpu,
                         std::move(info.advice), cpu::BlasThreadsPerCall()};
}

std::string BlasKernelIsa(const std::string& corename) {
  return cpu::KernelIsa(corename);
}

}  // namespace baton
