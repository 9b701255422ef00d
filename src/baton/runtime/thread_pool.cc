#include "baton/runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>

#include <pthread.h>
#include <sched.h>

#include "baton/runtime/fork_guard.h"

namespace baton {
namespace {
// True on pool worker threads: nested ParallelFor runs serially there.
thread_local bool in_pool_worker = false;

// Waking a thread blocked on a condition variable costs 10-40 us on a
// loaded 2-vCPU machine, more than a kernel's chunk at mid sizes: measured
// at 2^18 elements of tanh, ~80 us of every split call went to the wake-up
// of the helper and then of the caller. So a worker polls for new jobs for
// kWorkerSpin after its last one before it sleeps (kernels come back to
// back: the steps of one program), and a caller polls for the chunks its
// helpers are running for up to kCallerSpin before it sleeps (bounded by a
// chunk's time, since it runs every unclaimed chunk itself).
//
// They poll even when every core of the machine is busy. Not polling then
// (a reading of /proc/loadavg's ready threads against the online cores,
// taken at most every 500 us) was measured on the 2-vCPU VM while a build
// kept both cores busy: it made calls 1.3-2.0x slower at 2^18-2^22
// elements (tanh, sum(a*a), a*2+1), because a thread that sleeps then waits
// for the scheduler to give it a core back, and polling with sched_yield
// instead of pause was as slow (1.5-1.9x). A poll is bounded (50 us after a
// job, a chunk's time for a caller), so what it takes from other processes
// is bounded too.
constexpr auto kWorkerSpin = std::chrono::microseconds(50);
constexpr auto kCallerSpin = std::chrono::microseconds(200);

// The cores this process may run on (its affinity mask, as `taskset` or a
// container's cpuset sets it), at least 1; where the mask cannot be read,
// the machine's hardware threads. A process limited to 4 of a server's 64
// cores gets 4 threads, not 64 that take turns on 4 (XLA sizes its pool the
// same way). Under `taskset -c 0` on the 2-vCPU VM, with a build on both
// cores, a 1-thread pool took 0.17-0.70 of a 2-thread pool's time at
// 2^16-2^20 elements (sum(a*a), a*2+1, tanh).
int ProcessCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    return std::max(1, CPU_COUNT(&set));
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// The cores a pool worker may run on as it started (its process's mask).
thread_local cpu_set_t worker_start_mask;

// Keeps the calling pool worker off `cpu`, its caller's core, from now on:
// its affinity becomes its start mask less that core, which migrates it at
// once. A helper woken onto its caller's core can only run the caller's
// chunks by taking turns with it. On the 2-vCPU VM the scheduler put the
// pool's helper on the caller's core after ~1,500 calls of a 2^16 tanh with
// 1 ms pauses and kept it there: the call went from 15 to 36-45 us, slower
// than one thread (25 us), the other core idle. Moving it only for the call
// (restoring the mask after) left it woken onto the caller's core again in
// a quarter of the samples (26 us); kept off, it stayed at 14-15 us. Where
// the caller later moves onto the helper's core, the helper's next job
// moves it off that one instead (the start mask less one core, never
// less). Two system calls, only when the cores are shared.
void KeepOffCpu(int cpu) {
  if (CPU_COUNT(&worker_start_mask) < 2 || !CPU_ISSET(cpu, &worker_start_mask)) {
    return;
  }
  cpu_set_t others = worker_start_mask;
  CPU_CLR(cpu, &others);
  (void)sched_setaffinity(0, sizeof(others), &others);
}

// Polls `ready` until it returns true or `budget` has passed; its result.
template <typename F>
bool SpinUntil(F&& ready, std::chrono::microseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    for (int k = 0; k < 16; ++k) CpuRelax();
    if ((i & 7) == 7 && std::chrono::steady_clock::now() >= deadline) {
      return ready();
    }
  }
}
}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = ProcessCores();
  num_threads_ = num_threads;
  for (int i = 1; i < num_threads_; ++i) {
    ForkGuard::ThreadStarted();
    workers_.emplace_back([this] { WorkerLoop(); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) {
    if (ForkGuard::InForkedChild()) {
      t.detach();  // it does not exist here
      continue;
    }
    t.join();
    ForkGuard::ThreadStopped();
  }
}

ThreadPool& ThreadPool::Global() {
  static ThreadPool* pool = new ThreadPool();  // never destroyed: used at exit
  return *pool;
}

void ThreadPool::WorkerLoop() {
  in_pool_worker = true;
  // Named for profilers, top -H and /proc/<pid>/task/*/comm.
  pthread_setname_np(pthread_self(), "baton-pool");
  CPU_ZERO(&worker_start_mask);
  (void)sched_getaffinity(0, sizeof(worker_start_mask), &worker_start_mask);
  for (;;) {
    SpinUntil([&] { return queued_.load(std::memory_order_acquire) > 0; },
              kWorkerSpin);
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    job();
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t min_chunk,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(1, min_chunk);
  const int64_t max_chunks = (n + min_chunk - 1) / min_chunk;
  // Several chunks per thread, claimed as threads come free: a thread that
  // starts late or is slowed by another process (a 2-core machine shared
  // with a build) leaves its chunks to the others instead of holding the
  // whole call back by its share.
  // In a forked child the helpers do not exist (fork_guard.h): serial,
  // without touching the pool's lock.
  const int64_t num_chunks =
      in_pool_worker || ForkGuard::InForkedChild()
          ? 1
          : std::min<int64_t>(kChunksPerThread * num_threads_, max_chunks);
  if (num_chunks <= 1) {
    fn(0, n);
    return;
  }
  // Chunks are claimed from a shared counter by the caller and by helpers;
  // the caller returns once all chunks are done, so helpers that start late
  // find nothing left and exit at once.
  struct Shared {
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> done{0};
    std::mutex mu;
    std::condition_variable cv;
    int caller_cpu = sched_getcpu();  // -1 where unknown
  };
  auto shared = std::make_shared<Shared>();
  const int64_t chunk = (n + num_chunks - 1) / num_chunks;
  auto run = [shared, chunk, n, num_chunks, &fn] {
    if (in_pool_worker && shared->caller_cpu >= 0 &&
        shared->next.load(std::memory_order_relaxed) < num_chunks &&
        sched_getcpu() == shared->caller_cpu) {
      KeepOffCpu(shared->caller_cpu);
    }
    for (;;) {
      const int64_t c = shared->next.fetch_add(1);
      if (c >= num_chunks) return;
      const int64_t b = c * chunk, e = std::min(n, b + chunk);
      fn(b, e);
      if (shared->done.fetch_add(1) + 1 == num_chunks) {
        std::lock_guard<std::mutex> lock(shared->mu);
        shared->cv.notify_all();
      }
    }
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int64_t helpers = std::min<int64_t>(num_chunks, num_threads_) - 1;
    for (int64_t i = 0; i < helpers; ++i) jobs_.push_back(run);
    queued_.fetch_add(helpers, std::memory_order_release);
  }
  cv_.notify_all();
  run();
  if (SpinUntil([&] { return shared->done.load() == num_chunks; },
                kCallerSpin)) {
    return;
  }
  std::unique_lock<std::mutex> lock(shared->mu);
  shared->cv.wait(lock, [&] { return shared->done.load() == num_chunks; });
}

}  // namespace baton
