// BLAS calls and fork(): OpenBLAS's fork handler stops its worker threads,
// and a threaded GEMM that another thread is running at that moment waits
// for them forever -- the parent process hangs (seen when os.fork() met a
// jitted matmul on the compute queue). So every BLAS/LAPACK call holds a
// BlasCallScope, and fork() (runtime/fork_guard.cc) first waits until no
// call is running and holds new ones back until the fork is done.
//
// Thread-safety: BlasCallScope may be held by any number of threads at once
// (a shared lock); HoldBlasCallsForFork/ReleaseBlasCallsAfterFork are the
// fork handlers' (prepare, then parent and child).
#pragma once

#include <shared_mutex>

namespace baton {

std::shared_mutex& BlasForkMutex();

class BlasCallScope {
 public:
  BlasCallScope() : lock_(BlasForkMutex()) {}
  BlasCallScope(const BlasCallScope&) = delete;
  BlasCallScope& operator=(const BlasCallScope&) = delete;

 private:
  std::shared_lock<std::shared_mutex> lock_;
};

// fork()'s prepare handler: waits for running BLAS calls, blocks new ones.
void HoldBlasCallsForFork();
// fork()'s parent and child handlers (the thread that forked).
void ReleaseBlasCallsAfterFork();

}  // namespace baton
