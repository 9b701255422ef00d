// What baton runs on, for bt.print_environment_info(): the BLAS kernel the
// linked OpenBLAS chose and whether it fits this CPU
// (backend/environment_info.h), and the threads of the CPU kernels' pool.
#include <nanobind/stl/string.h>

#include "baton/backend/environment_info.h"
#include "baton/runtime/thread_pool.h"
#include "module.h"

void init_environment(nb::module_& m) {
  m.def(
      "blas_info",
      [] {
        const baton::BlasEnvironment info = baton::QueryBlasEnvironment();
        nb::dict d;
        d["config"] = info.config;
        d["corename"] = info.corename;
        d["cpu_isa"] = info.cpu_isa;
        d["kernel_fits_cpu"] = info.kernel_fits_cpu;
        d["advice"] = info.advice;
        d["threads_per_call"] = info.threads_per_call;
        return d;
      },
      "The BLAS library baton computes GEMMs with: {'config', 'corename' "
      "(the kernel family it chose), 'cpu_isa' (this CPU's best vector "
      "instructions), 'kernel_fits_cpu', 'advice' (what to do when it does "
      "not fit), 'threads_per_call' (the cores divided among this process's "
      "CPU devices unless OPENBLAS_NUM_THREADS says)}.");
  m.def(
      "cpu_pool_threads", [] { return baton::ThreadPool::Global().num_threads(); },
      "Threads (the caller included) that split one CPU kernel: one per core "
      "this process may run on (its affinity mask, as taskset or a cpuset "
      "sets it).");
  m.def(
      "blas_kernel_isa", &baton::BlasKernelIsa, nb::arg("corename"),
      "The vector ISA an OpenBLAS kernel family is written for ('avx512', "
      "'avx2', 'avx', 'sse'; '' when unknown).");
}
