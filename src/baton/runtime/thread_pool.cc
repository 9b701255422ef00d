#include "baton/runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <memory>

namespace baton {
namespace {
// True on pool worker threads: nested ParallelFor runs serially there.
thread_local bool in_pool_worker = false;
}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) {
    num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  num_threads_ = num_threads;
  for (int i = 1; i < num_threads_; ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

ThreadPool& ThreadPool::Global() {
  static ThreadPool* pool = new ThreadPool();  // never destroyed: used at exit
  return *pool;
}

void ThreadPool::WorkerLoop() {
  in_pool_worker = true;
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
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
  const int64_t num_chunks =
      in_pool_worker
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
  };
  auto shared = std::make_shared<Shared>();
  const int64_t chunk = (n + num_chunks - 1) / num_chunks;
  auto run = [shared, chunk, n, num_chunks, &fn] {
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
  }
  cv_.notify_all();
  run();
  std::unique_lock<std::mutex> lock(shared->mu);
  shared->cv.wait(lock, [&] { return shared->done.load() == num_chunks; });
}

}  // namespace baton
