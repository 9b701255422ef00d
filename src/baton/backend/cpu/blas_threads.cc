#include "baton/backend/cpu/blas_threads.h"

#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "baton/core/blas_symbols.h"

extern "C" {
void BATON_BLAS(openblas_set_num_threads)(int);
int BATON_BLAS(openblas_get_num_threads)(void);
}

namespace baton::cpu {
namespace {

// OpenBLAS's openblas_setaffinity / openblas_getaffinity(thread index, mask
// size, mask): indices below its thread count less one are its workers.
// Looked up in the library that holds our sgemm, so another OpenBLAS in the
// process (numpy's) is never the one asked.
using AffinityFn = int (*)(int, size_t, cpu_set_t*);

struct WorkerAffinity {
  AffinityFn set = nullptr;
  AffinityFn get = nullptr;
  cpu_set_t start;  // worker 0's cores when first asked (its process's)
  bool usable = false;
};

const WorkerAffinity& Workers() {
  static const WorkerAffinity workers = [] {
    WorkerAffinity w;
    CPU_ZERO(&w.start);
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&BATON_BLAS(cblas_sgemm)), &info) == 0 ||
        info.dli_fname == nullptr) {
      return w;
    }
    // RTLD_NOLOAD: the library is loaded already; the reference this adds
    // is never dropped (the library stays for the process's life anyway).
    void* handle = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) return w;
    w.set = reinterpret_cast<AffinityFn>(dlsym(handle, "openblas_setaffinity"));
    w.get = reinterpret_cast<AffinityFn>(dlsym(handle, "openblas_getaffinity"));
    w.usable = w.set != nullptr && w.get != nullptr &&
               BlasThreadsPerCall() > 1 && w.get(0, sizeof(w.start), &w.start) == 0 &&
               CPU_COUNT(&w.start) >= 2;
    return w;
  }();
  return workers;
}

}  // namespace

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

void KeepBlasWorkersOffCallersCore() {
  static std::atomic<int> kept_off{-1};  // the core of the last move
  const WorkerAffinity& w = Workers();
  if (!w.usable) return;
  const int cpu = sched_getcpu();
  if (cpu < 0 || cpu == kept_off.load(std::memory_order_relaxed) ||
      !CPU_ISSET(cpu, &w.start)) {
    return;
  }
  cpu_set_t others = w.start;
  CPU_CLR(cpu, &others);
  const int workers = BlasThreadsPerCall() - 1;
  for (int i = 0; i < workers; ++i) (void)w.set(i, sizeof(others), &others);
  kept_off.store(cpu, std::memory_order_relaxed);
}

bool BlasWorkerAffinity(int worker, cpu_set_t* mask) {
  const WorkerAffinity& w = Workers();
  return w.usable && worker >= 0 && worker < BlasThreadsPerCall() - 1 &&
         w.get(worker, sizeof(*mask), mask) == 0;
}

}  // namespace baton::cpu
