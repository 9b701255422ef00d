#include "baton/core/blas_fork_lock.h"

namespace baton {

std::shared_mutex& BlasForkMutex() {
  static std::shared_mutex* mu = new std::shared_mutex;  // never destroyed
  return *mu;
}

void HoldBlasCallsForFork() { BlasForkMutex().lock(); }

void ReleaseBlasCallsAfterFork() { BlasForkMutex().unlock(); }

}  // namespace baton
