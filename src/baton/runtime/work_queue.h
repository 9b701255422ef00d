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
// Work launched from inside a task: a task may run code that enqueues more
// work and waits for it -- a host callback (bt.debug.callback) that calls a
// jitted function, reads an array or makes a transfer. Queued as usual it
// could wait for ever: on the task's own queue it would wait behind the task
// that waits for it, and on another queue (device-to-host, say) behind work
// that itself waits for the running task (another thread's read of the
// running program's output). So work enqueued by a thread that is running
// a task -- of this queue or of any other -- runs at once, on that thread,
// inside the running task, after waiting for its dependencies; its event is
// ready when Enqueue returns (device work: once the device has done it).
// This is the only order that cannot hang, and the one JAX gives such
// callbacks. What it costs the rest of the design,
// and how that is kept sound:
//  - Queue order. Such a task runs before tasks already queued on its queue,
//    so it is not part of that queue's order: its event has queue_id() ==
//    kNoQueue. Everything keyed on "later on the same queue implies done"
//    (TrackedBuffer keeps one usage event per queue; MemorySpace::FreeAfter
//    reuses memory at once for later work of the freeing queue) thus treats
//    it as work of no queue. It does count as in flight (Synchronize waits
//    for it).
//  - Stream-ordered memory reuse (DESIGN R1). Memory released to a queue by
//    queued work may be handed to "later" work on that queue without
//    waiting -- but this work runs earlier than the queued work (and than
//    the rest of the running task). MemorySpace::Allocate therefore reuses
//    no pending block when called by a thread running a task
//    (QueueTaskScope::RunningAny): such allocations take free memory.
//  - Dependencies that cannot be met. Pending work of a queue whose task
//    this thread is running is that task itself or work behind it: work
//    depending on it could never start. Such work is refused: its event
//    fails with WouldDeadlock and it does not run. Event::Wait refuses the
//    same wait (event.h). A dependency that reaches the running task only
//    through other queued work (an earlier task of another queue that waits
//    for it) is not detected.
//  - Synchronize() from inside any task could wait for work that waits for
//    the task: it is refused with WouldDeadlock.
// Alternatives considered: a second worker per queue (breaks the in-order
// contract every event and stream-ordered reuse depend on); running host
// callbacks off the queue (a program's later ops need the callback to have
// finished, and its callbacks must run in program order); running only work
// for the task's own queue at once (a callback's read then still hangs
// behind another thread's read queued on the device-to-host queue).
//
// Device work (an accelerator's queue): the queue's thread only *launches*
// it. EnqueueLaunch's task enqueues copies or kernels on the device stream
// behind this queue (DeviceBackend::CopyAsync) and returns the device's
// event; the task's own event completes when that one does, and the worker
// goes on to the next task at once, so the host runs ahead of the device.
// The stream keeps the device work in the queue's order. A dependency that
// the device itself can wait for (an event of the same backend carrying a
// device marker, see DeviceWaiter) becomes a device-side wait instead of a
// host wait; its error still reaches the task's event. At most
// max_launched() launched tasks are in flight on the device: the worker
// waits for the oldest before launching more (PJRT bounds executions in
// flight the same way), so the host's lead and the memory it holds stay
// bounded.
//
// After fork(): in a child forked while baton threads ran, Enqueue returns a
// failed event and Synchronize an error (ForkGuard), before taking any lock.
//
// Ownership: a WorkQueue owns its worker thread; it is non-copyable and
// non-movable. The destructor waits for all enqueued work to finish.
// Thread-safety: Enqueue/Synchronize may be called from any thread, including
// from inside a task (with the effects described above).
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
  // Called by a thread running a task (of any queue), `fn` runs on that
  // thread before Enqueue returns, whatever `dispatch` says, and the event's
  // queue_id() is kNoQueue (see class comment).
  Event Enqueue(std::vector<Event> deps, std::function<Status()> fn,
                Dispatch dispatch = Dispatch::kAsync);

  // Enqueues device work: `launch` runs in queue order like a task (after
  // the dependencies the device cannot wait for) and returns the event of
  // the device work it enqueued (Event::Ready() for work already done, a
  // failed event for a launch error). The returned event completes with
  // the first error among that event and the dependencies waited for on the
  // device, and takes its device marker.
  Event EnqueueLaunch(std::vector<Event> deps, std::function<Event()> launch,
                      Dispatch dispatch = Dispatch::kAsync);

  // Makes launched work wait for dependencies on the device: `waiter(e)`
  // enqueues a device-side wait for pending event `e` on this queue's
  // stream and returns true, or returns false when the device cannot wait
  // for `e` (the queue then waits on the host). Set once, before the first
  // EnqueueLaunch; without one every dependency is waited for on the host.
  using DeviceWaiter = std::function<bool(const Event&)>;
  void SetDeviceWaiter(DeviceWaiter waiter, size_t max_launched);
  size_t max_launched() const { return max_launched_; }

  // Blocks until every task enqueued so far has finished. Returns
  // WouldDeadlock at once when called from inside a task (it could wait for
  // itself), and ForkGuard's error in a forked child.
  Status Synchronize();

  int id() const { return id_; }
  const std::string& name() const { return name_; }
  // Tasks enqueued and not yet finished.
  size_t pending() const;

 private:
  struct Task {
    std::vector<Event> deps;
    std::function<Status()> fn;      // a host task, or
    std::function<Event()> launch;   // a launch of device work
    Event done;
  };
  Event EnqueueTask(Task task, Dispatch dispatch);
  void WorkerLoop();
  // Runs a task's function after its dependencies, marking this thread as
  // running a task of this queue (QueueTaskScope). Its event completes (and
  // its in-flight count ends, TaskFinished) once it is done -- a launch
  // task's with its device work -- and, for a task in queue order, once the
  // task before it has completed: a queue's events complete in order.
  void RunTask(Task& task, bool in_queue_order);
  // Ends the in-flight count of a task whose event is complete.
  void TaskFinished(bool launched);
  // Enqueue for a thread running a task (class comment).
  Event RunInsideTask(Task task);

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
  DeviceWaiter device_waiter_;  // set before use, then immutable
  size_t max_launched_ = 0;     // 0: unbounded
  size_t launched_ = 0;         // guarded by mu_: launched, device not done
  Event last_completion_;       // guarded by mu_: the last task run in order
  std::condition_variable launch_cv_;  // the worker waits for launched_
  uint64_t next_sequence_ = 0;  // guarded by mu_
  // guarded by mu_: the last task enqueued while a host write was live
  // (see Event::SetWaitsOn); invalid otherwise.
  Event last_recorded_;
  std::thread worker_;
};

}  // namespace baton
