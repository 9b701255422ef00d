// WorkQueue: an in-order queue of tasks served by one worker thread.
//
// Each device has several (compute, host-to-device, device-to-host). A task
// runs after every task enqueued before it on the same queue has finished and
// after all of its dependency events are ready. If a dependency failed, the
// task does not run and its event carries that dependency's error, so an error
// in a producer reaches every consumer.
//
// Small tasks may run inline: Enqueue(..., Dispatch::kInlineWhenIdle) runs
// the task on the calling thread, before returning, when nothing else is
// queued or running on this queue and every dependency is already done (OK).
// Order is kept: while an inline task runs, later tasks wait behind it just
// as they would behind the worker. This removes the thread hand-off (a futex
// wake and a context switch, several microseconds) from calls whose work is
// smaller than the hand-off itself; XLA's CPU client does the same.
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
  enum class Dispatch {
    kAsync,           // always handed to the worker thread
    kInlineWhenIdle,  // run on the caller if the queue is idle and deps done
  };

  // `name` appears in traces and thread names. Each queue gets a process-wide
  // unique id(), used to key stream-ordered memory reuse.
  explicit WorkQueue(std::string name);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Enqueues `fn`; returns the event it completes (with fn's Status).
  // The returned event's queue_id() is id(). Events are created in enqueue
  // order under the queue's lock, so "enqueued before" is well defined.
  // With kInlineWhenIdle the event may already be ready on return.
  Event Enqueue(std::vector<Event> deps, std::function<Status()> fn,
                Dispatch dispatch = Dispatch::kAsync);

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
  // Runs a task's function after its dependencies; completes its event.
  static void RunTask(Task& task);
  // Called with mu_ held after a task finished: wakes whoever waits for it.
  void OnTaskFinishedLocked();

  const std::string name_;
  const int id_;
  mutable std::mutex mu_;
  std::condition_variable worker_cv_;  // the worker waits here for tasks
  std::condition_variable idle_cv_;    // Synchronize waits here
  std::deque<Task> tasks_;  // guarded by mu_
  size_t in_flight_ = 0;    // guarded by mu_: queued + running
  bool worker_waiting_ = false;  // guarded by mu_: worker blocked on worker_cv_
  bool inline_running_ = false;  // guarded by mu_: a caller runs a task inline
  int idle_waiters_ = 0;         // guarded by mu_: threads in Synchronize
  bool stopping_ = false;   // guarded by mu_
  uint64_t next_sequence_ = 0;  // guarded by mu_
  // guarded by mu_: the last task enqueued while a host write was live
  // (see Event::SetWaitsOn); invalid otherwise.
  Event last_recorded_;
  std::thread worker_;
};

}  // namespace baton
