#include "baton/runtime/work_queue.h"

#include <atomic>

#include <pthread.h>

namespace baton {
namespace {
std::atomic<int> next_queue_id{0};
}  // namespace

WorkQueue::WorkQueue(std::string name)
    : name_(std::move(name)), id_(next_queue_id.fetch_add(1)) {
  worker_ = std::thread([this] { WorkerLoop(); });
  // Thread names are at most 15 characters on Linux.
  pthread_setname_np(worker_.native_handle(), name_.substr(0, 15).c_str());
}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

Event WorkQueue::Enqueue(std::vector<Event> deps, std::function<Status()> fn) {
  Event done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Created under the lock so sequence order is queue order.
    done = Event::Create(id_, ++next_sequence_);
    tasks_.push_back(Task{std::move(deps), std::move(fn), done});
    ++in_flight_;
  }
  cv_.notify_all();
  return done;
}

void WorkQueue::Synchronize() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return in_flight_ == 0; });
}

size_t WorkQueue::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

void WorkQueue::WorkerLoop() {
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    // Dependencies come from other queues or from the host (e.g. a writable
    // host view); waiting here keeps this queue in order. They were all
    // enqueued before this task, so the waits cannot form a cycle.
    Status status = WaitAll(task.deps);
    if (status.ok()) status = task.fn();
    task.fn = nullptr;  // drop captured state before signalling completion
    task.deps.clear();
    task.done.SetStatus(std::move(status));
    {
      std::lock_guard<std::mutex> lock(mu_);
      --in_flight_;
    }
    cv_.notify_all();
  }
}

}  // namespace baton
