// WorkQueue: an in-order queue of tasks served by one worker thread.
//
// Each device has several (compute, host-to-device, device-to-host). A task
// runs after every task enqueued before it on the same queue has finished and
// after all of its dependency events are ready. If a dependency failed, the
// task does not run and its event carries that dependency's error, so an error
// in a producer reaches every consumer.
//
// Ownership: a WorkQueue owns its worker thread; it is non-copyable and
// non-movable. The destructor waits for all enqueued work to finish.
// Thread-safety: Enqueue/Synchronize may be called from any thread, including
// from inside a task of another queue (not from a task of this same queue for
// Synchronize, which would deadlock).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "baton/core/status.h"
#include "baton/runtime/event.h"

namespace baton {

class WorkQueue {
 public:
  // `name` appears in traces and thread names. Each queue gets a process-wide
  // unique id(), used to key stream-ordered memory reuse.
  explicit WorkQueue(std::string name);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Enqueues `fn`; returns the event it completes (with fn's Status).
  // The returned event's queue_id() is id(). Events are created in enqueue
  // order under the queue's lock, so "enqueued before" is well defined.
  Event Enqueue(std::vector<Event> deps, std::function<Status()> fn);

  // Blocks until every task enqueued so far has finished.
  void Synchronize();

  int id() const { return id_; }
  const std::string& name() const { return name_; }
  // Tasks enqueued and not yet finished.
  size_t pending() const;

 private:
  struct Task {
    std::vector<Event> deps;
    std::function<Status()> fn;
    Event done;
  };
  void WorkerLoop();

  const std::string name_;
  const int id_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> tasks_;  // guarded by mu_
  size_t in_flight_ = 0;    // guarded by mu_: queued + running
  bool stopping_ = false;   // guarded by mu_
  uint64_t next_sequence_ = 0;  // guarded by mu_
  std::thread worker_;
};

}  // namespace baton
