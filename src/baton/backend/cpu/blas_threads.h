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

namespace baton::cpu {

// Sets the BLAS's threads per call to max(1, cores / devices) when
// devices > 1 and the user has not chosen (OPENBLAS_NUM_THREADS unset);
// returns the threads per call in effect afterwards.
int ShareBlasThreadsAmongDevices(int devices);

// The BLAS's threads per call now.
int BlasThreadsPerCall();

}  // namespace baton::cpu
