// What the backends run on, as plain data for bt.print_environment_info()
// (python/src/environment.cc): today the BLAS library the CPU backend
// computes GEMMs with (cpu/blas_info.h says how it is found out). Callers
// above the backend layer read this instead of naming a backend.
// Thread-safety: pure queries, callable from any thread.
#pragma once

#include <string>

namespace baton {

struct BlasEnvironment {
  std::string config;    // the library's version and build options
  std::string corename;  // the kernel family chosen (e.g. "SkylakeX", "Zen")
  std::string cpu_isa;   // the best vector ISA this CPU has: avx512, avx2, sse
  // False when the kernel family is a generic one below what the CPU
  // supports; `advice` then says what to do.
  bool kernel_fits_cpu = true;
  std::string advice;
  // Threads one GEMM uses (cpu/blas_threads.h: the cores divided among a
  // process's CPU devices).
  int threads_per_call = 1;
};

// The CPU backend's BLAS library and whether its kernels fit this CPU.
BlasEnvironment QueryBlasEnvironment();

// The vector ISA a BLAS kernel family is written for ("avx512", "avx2",
// "avx", "sse"); "" for a name unknown here (assumed to fit).
std::string BlasKernelIsa(const std::string& corename);

}  // namespace baton
