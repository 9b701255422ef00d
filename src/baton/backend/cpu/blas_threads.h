// How many threads one BLAS call uses when a process has several CPU devices.
//
// The CPU devices of one process (BATON_NUM_CPU_DEVICES, for sharded
// programs) share the machine's cores, and a sharded program's stages run on
// all of them at once, each device's GEMMs on its own compute queue. A BLAS
// that gives every call all the cores then runs devices x cores threads on
// the cores and they take turns (a data-parallel MLP step on 4 devices and 2
// cores: 17.5 ms at 2 threads a call, 16.4 ms at 1, JAX 16.1 ms). So each
// call gets the cores divided among the devices, at least one -- what XLA's
// CPU devices get by sharing one intra-op pool. A program placed on one
// device of such a process runs its GEMMs on that share too: processes
// with several CPU devices are for sharded work.
//
// Thread-safety: ShareBlasThreadsAmongDevices is called once, while the
// process's CPU client is made, before any GEMM runs.
#pragma once

#include <sched.h>

namespace baton::cpu {

// Sets the BLAS's threads per call to max(1, cores / devices) when
// devices > 1 and the user has not chosen (OPENBLAS_NUM_THREADS unset);
// returns the threads per call in effect afterwards.
int ShareBlasThreadsAmongDevices(int devices);

// The BLAS's threads per call now.
int BlasThreadsPerCall();

// Keeps OpenBLAS's worker threads off the core the calling thread runs on:
// their affinity becomes the caller's cores less its current one. Called
// before each GEMM; a system call per worker only when the caller's core
// differs from the last call's. Woken onto its caller's core, a worker
// takes turns with a caller that spins for it with sched_yield, and the
// other core stays idle until a scheduler tick moves one of them: on the
// 2-vCPU VM, 128^2 matmuls in 1 ms bursts took 4, 8 or 12 ms instead of
// 40 us in most runs of the size sweep (the same test with the worker kept
// off: none in five). The pool's helpers do the same for baton's own
// kernels (runtime/thread_pool.cc). The cores are the workers' own when
// first asked (their process's), less the caller's. No-op where the BLAS has
// no openblas_setaffinity, the process has one core, or the BLAS runs one
// thread a call. Thread-safe.
void KeepBlasWorkersOffCallersCore();

// The cores OpenBLAS worker `worker` (0 to BlasThreadsPerCall() - 2) may run
// on, into `mask`; false where that is not known (as above).
bool BlasWorkerAffinity(int worker, cpu_set_t* mask);

}  // namespace baton::cpu
