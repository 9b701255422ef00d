// Which BLAS kernel the linked OpenBLAS chose for this CPU, and whether that
// choice fits the CPU's features (issue 40: an OpenBLAS that picks kernels by
// model number falls back to a generic SSE3 kernel on CPUs newer than
// itself, and every GEMM runs ~6x slower without a word). Shown by
// bt.print_environment_info(); a mismatch is warned about once at import.
// Thread-safety: pure queries, callable from any thread.
#pragma once

#include <string>

namespace baton::cpu {

struct BlasInfo {
  std::string config;    // openblas_get_config(): version and build options
  std::string corename;  // the kernel family chosen (e.g. "SkylakeX", "Zen")
  std::string cpu_isa;   // the best vector ISA this CPU has: avx512, avx2, sse
  // False when the kernel family is a generic one below what the CPU
  // supports (e.g. "Prescott" on an AVX-512 CPU); `advice` then says what
  // to do.
  bool kernel_fits_cpu = true;
  std::string advice;
};

BlasInfo QueryBlasInfo();

// The vector ISA a BLAS kernel family is written for ("avx512", "avx2",
// "avx", "sse"); "" for a name this table does not know (assumed to fit).
std::string KernelIsa(const std::string& corename);

}  // namespace baton::cpu
