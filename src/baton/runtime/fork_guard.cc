#include "baton/runtime/fork_guard.h"

#include <pthread.h>

#include <atomic>
#include <mutex>

#include "baton/core/blas_fork_lock.h"

namespace baton {
namespace {

std::atomic<int> runtime_threads{0};
std::atomic<bool> forked_child{false};

// Runs in the child right after fork(), on its only thread. Lock-free
// atomics only: any other thread may have held any lock at the fork.
void MarkChild() {
  ReleaseBlasCallsAfterFork();
  if (runtime_threads.load(std::memory_order_relaxed) > 0) {
    forked_child.store(true, std::memory_order_relaxed);
  }
  runtime_threads.store(0, std::memory_order_relaxed);
}

}  // namespace

void ForkGuard::ThreadStarted() {
  static std::once_flag installed;
  // Registered after the BLAS library loaded (it is a dependency of
  // baton), so this prepare handler runs before the BLAS's own: no BLAS call
  // is running when the BLAS stops its threads (core/blas_fork_lock.h).
  std::call_once(installed, [] {
    pthread_atfork(HoldBlasCallsForFork, ReleaseBlasCallsAfterFork, MarkChild);
  });
  runtime_threads.fetch_add(1, std::memory_order_relaxed);
}

void ForkGuard::ThreadStopped() {
  runtime_threads.fetch_sub(1, std::memory_order_relaxed);
}

int ForkGuard::RuntimeThreads() {
  return runtime_threads.load(std::memory_order_relaxed);
}

bool ForkGuard::InForkedChild() {
  return forked_child.load(std::memory_order_relaxed);
}

Status ForkGuard::ForkedChildError() {
  return FailedPrecondition(
      "baton cannot be used after fork(): this process was forked from one "
      "in which baton's worker threads were running, and a forked child has "
      "none of them, so any computation would hang. Start worker processes "
      "with multiprocessing's 'spawn' (or 'forkserver') start method, e.g. "
      "multiprocessing.get_context('spawn'), or import baton only in the "
      "child.");
}

}  // namespace baton
