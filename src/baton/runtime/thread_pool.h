// ThreadPool: a fixed set of worker threads for splitting one piece of work
// (a kernel, a large memcpy) into parallel chunks.
//
// ParallelFor is a fork-join call: it returns when every chunk has run. The
// calling thread runs chunks too, so a pool of size 1 (or nested use from a
// pool thread) degrades to a serial loop and never deadlocks. Idle workers
// and a waiting caller poll briefly (tens of microseconds) before they
// sleep, because a wake-up costs more than a mid-size kernel's chunk.
//
// Ownership: owns its threads; non-copyable. Thread-safety: ParallelFor may be
// called concurrently from several threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace baton {

class ThreadPool {
 public:
  // `num_threads` total workers including the caller (0: the cores it may run on).
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(begin, end) over disjoint ranges covering [0, n), each of at
  // least `min_chunk` items (except possibly the last), in parallel: up to
  // kChunksPerThread ranges per thread, each claimed by whichever thread is
  // free next (which thread runs which range is not fixed).
  static constexpr int64_t kChunksPerThread = 4;
  void ParallelFor(int64_t n, int64_t min_chunk,
                   const std::function<void(int64_t, int64_t)>& fn);

  // The process-wide pool used by the CPU backend (sized to the machine).
  static ThreadPool& Global();

 private:
  void WorkerLoop();
  int num_threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;  // guarded by mu_
  // jobs_.size(), readable without mu_: what idle workers poll before they
  // sleep (thread_pool.cc: kWorkerSpin).
  std::atomic<int64_t> queued_{0};
  bool stopping_ = false;                   // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace baton
