// ForkGuard: what baton does about fork().
//
// baton's work runs on threads it starts (each WorkQueue's worker, the
// ThreadPool's helpers). fork() copies only the calling thread into the
// child, so in a child those threads do not exist: work handed to a queue
// would never run and every wait for it would hang, silently -- and a
// runtime lock that one of them held at the moment of the fork stays locked
// for ever. baton therefore refuses to run in such a child instead: a
// pthread_atfork handler marks the child, and the runtime's entry points
// (WorkQueue::Enqueue and Synchronize, waits for pending events, allocation,
// ThreadPool::ParallelFor) check the mark before they take any lock and fail
// with ForkedChildError(). The Python module warns at os.fork() while
// baton's threads run, as JAX does (python/baton/__init__.py).
//
// A fork before any baton thread started (RuntimeThreads() == 0) is
// harmless: the child only counts as forked once a thread has started in the
// parent.
//
// Thread-safety: every function may be called from any thread; the atfork
// handler only stores to a lock-free atomic (all a forked child may do).
#pragma once

#include "baton/core/status.h"

namespace baton {

class ForkGuard {
 public:
  // Called by each thread-owning object when it starts or joins a thread.
  // The first call installs the atfork handler.
  static void ThreadStarted();
  static void ThreadStopped();
  // baton threads running now in this process (0 in a forked child).
  static int RuntimeThreads();
  // True in a child forked while baton threads ran in the parent.
  static bool InForkedChild();
  // The error every entry point returns in such a child.
  static Status ForkedChildError();
};

}  // namespace baton
