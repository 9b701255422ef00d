#include "baton/runtime/work_queue.h"

#include <atomic>

#include <pthread.h>

#include "baton/runtime/fork_guard.h"

namespace baton {
namespace {
std::atomic<int> next_queue_id{0};

bool AllDoneOk(const std::vector<Event>& deps) {
  for (const Event& e : deps) {
    if (e.valid() && !(e.IsReady() && e.status().ok())) return false;
  }
  return true;
}

// If the calling thread runs a task of some queue and `deps` has pending
// work of that queue, the error to fail the new work with: that work is the
// running task or behind it, and the caller (inside the task) would wait.
Status RefuseWaitForOwnQueue(const std::vector<Event>& deps) {
  if (!QueueTaskScope::RunningAny()) return OkStatus();
  for (const Event& e : deps) {
    if (!e.valid()) continue;
    const std::string* q = QueueTaskScope::Running(e.queue_id(), e.sequence());
    if (q != nullptr && !e.IsReady()) {
      return WaitForOwnQueueError(*q, "work enqueued here");
    }
  }
  return OkStatus();
}
}  // namespace

WorkQueue::WorkQueue(std::string name)
    : name_(std::move(name)), id_(next_queue_id.fetch_add(1)) {
  ForkGuard::ThreadStarted();
  worker_ = std::thread([this] { WorkerLoop(); });
  // Thread names are at most 15 characters on Linux.
  pthread_setname_np(worker_.native_handle(), name_.substr(0, 15).c_str());
}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  worker_cv_.notify_all();
  if (ForkGuard::InForkedChild()) {
    worker_.detach();  // it does not exist here; nothing to wait for
    return;
  }
  worker_.join();
  ForkGuard::ThreadStopped();
  // Device work launched by the last tasks completes on its backend's
  // thread, which then touches this queue (TaskFinished).
  std::unique_lock<std::mutex> lock(mu_);
  ++idle_waiters_;
  idle_cv_.wait(lock, [&] { return in_flight_ == 0; });
}

Event WorkQueue::Enqueue(std::vector<Event> deps, std::function<Status()> fn,
                         Dispatch dispatch) {
  return EnqueueTask(Task{std::move(deps), std::move(fn), nullptr, Event()},
                     dispatch);
}

Event WorkQueue::EnqueueLaunch(std::vector<Event> deps,
                               std::function<Event()> launch,
                               Dispatch dispatch) {
  return EnqueueTask(
      Task{std::move(deps), nullptr, std::move(launch), Event()}, dispatch);
}

void WorkQueue::SetDeviceWaiter(DeviceWaiter waiter, size_t max_launched) {
  device_waiter_ = std::move(waiter);
  max_launched_ = max_launched;
}

Event WorkQueue::EnqueueTask(Task task, Dispatch dispatch) {
  // Before any lock: in a forked child one may have been held at the fork.
  if (ForkGuard::InForkedChild()) {
    return Event::Failed(ForkGuard::ForkedChildError());
  }
  if (QueueTaskScope::RunningAny()) return RunInsideTask(std::move(task));
  bool run_inline = false;
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Created under the lock so sequence order is queue order.
    task.done = Event::Create(id_, ++next_sequence_);
    // While a writable host view is live, record what this task waits for
    // (its dependencies and, the queue being in order, the task before it)
    // so a wait on the view's own thread can see it would never end.
    if (Event::HostWritesLive()) {
      std::vector<Event> waits = task.deps;
      if (last_recorded_.valid()) waits.push_back(last_recorded_);
      task.done.SetWaitsOn(std::move(waits));
      last_recorded_ = task.done;
    } else if (last_recorded_.valid()) {
      last_recorded_ = Event();
    }
    ++in_flight_;
    // in_flight_ was 0: nothing queued, nothing running (worker or inline),
    // no device work in flight.
    if (dispatch == Dispatch::kInlineWhenIdle && in_flight_ == 1 &&
        !inline_running_ && AllDoneOk(task.deps)) {
      inline_running_ = true;
      run_inline = true;
    } else {
      tasks_.push_back(task);
      // Only a sleeping worker needs the (costly) wake-up; a busy one finds
      // the task when it looks for the next.
      // (During an inline task the finisher wakes it instead.)
      wake = worker_waiting_ && !inline_running_;
    }
  }
  Event done = task.done;
  if (run_inline) {
    RunTask(task, /*in_queue_order=*/true);
    std::lock_guard<std::mutex> lock(mu_);
    inline_running_ = false;
    // Tasks enqueued meanwhile waited for this one; the worker may go now.
    if (worker_waiting_ && (!tasks_.empty() || stopping_)) {
      worker_cv_.notify_one();
    }
  } else if (wake) {
    worker_cv_.notify_one();
  }
  return done;
}

Event WorkQueue::RunInsideTask(Task task) {
  // Not in queue order (see class comment): an event of no queue.
  task.done = Event::Create(kNoQueue);
  if (Status refused = RefuseWaitForOwnQueue(task.deps); !refused.ok()) {
    task.done.SetError(std::move(refused));
    return task.done;
  }
  if (Event::HostWritesLive()) task.done.SetWaitsOn(task.deps);
  {
    // In flight, so that Synchronize on another thread waits for it; the
    // worker is not involved.
    std::lock_guard<std::mutex> lock(mu_);
    ++in_flight_;
  }
  Event done = task.done;
  RunTask(task, /*in_queue_order=*/false);
  return done;
}

Status WorkQueue::Synchronize() {
  if (ForkGuard::InForkedChild()) return ForkGuard::ForkedChildError();
  if (QueueTaskScope::RunningAny()) {
    return WouldDeadlock(
        "synchronizing " + name_ + " from inside a running task (e.g. in a "
        "host callback) could wait for that task itself and never end; "
        "synchronize from the code that launched the work instead");
  }
  std::unique_lock<std::mutex> lock(mu_);
  ++idle_waiters_;
  idle_cv_.wait(lock, [&] { return in_flight_ == 0; });
  --idle_waiters_;
  return OkStatus();
}

size_t WorkQueue::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

void WorkQueue::RunTask(Task& task, bool in_queue_order) {
  // Events complete in queue order (event.h: of two events of one queue,
  // the later completes last), which stream-ordered reuse and usage
  // tracking rely on. Tasks run in that order; a host task may still finish
  // before the device work an earlier task launched (on another device's
  // stream, or a copy after a launch), so each task completes only once the
  // one before it has.
  Event previous;
  if (in_queue_order) {
    std::lock_guard<std::mutex> lock(mu_);
    previous = std::move(last_completion_);
    last_completion_ = task.done;
  }
  // Dependencies come from other queues or from the host (e.g. a writable
  // host view); waiting here keeps this queue in order. They were all
  // enqueued before this task, so the waits cannot form a cycle.
  Status status;
  Event launched;
  std::vector<Event> device_deps;
  {
    // Work this task enqueues on this queue runs re-entrantly (class
    // comment). The scope ends before completion: the event's callbacks are
    // not part of the task.
    QueueTaskScope scope(id_, &name_,
                         in_queue_order ? task.done.sequence() : 0);
    if (task.launch) {
      // Launched work waits on the device for what the device can wait
      // for (a pending event of its own backend), on the host for the rest.
      // Earlier work of this queue is before it on its stream already: not
      // waited for, only joined (its error still reaches this task).
      std::vector<Event> host_deps;
      for (Event& e : task.deps) {
        if (!e.valid()) continue;
        if (in_queue_order && e.queue_id() == id_ && !e.IsReady()) {
          device_deps.push_back(std::move(e));
        } else if (!e.IsReady() && device_waiter_ && device_waiter_(e)) {
          device_deps.push_back(std::move(e));
        } else {
          host_deps.push_back(std::move(e));
        }
      }
      status = WaitAll(host_deps);
      if (status.ok()) launched = task.launch();
    } else {
      status = WaitAll(task.deps);
      if (status.ok()) status = task.fn();
    }
    task.fn = nullptr;  // drop captured state before signalling completion
    task.launch = nullptr;
  }
  task.deps.clear();
  const bool previous_pending = previous.valid() && !previous.IsReady();
  if (!launched.valid()) {
    // A host task, or a launch refused before it ran.
    if (!previous_pending) {
      task.done.SetStatus(std::move(status));
      TaskFinished(false);
      return;
    }
    previous.OnReady([this, done = task.done,
                      status = std::move(status)](const Status&) {
      done.SetStatus(status);
      TaskFinished(false);
    });
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++launched_;
  }
  task.done.AdoptDeviceMarker(launched);
  device_deps.push_back(launched);
  Event device_done = JoinEvents(device_deps);
  auto complete = [this, done = task.done](const Status& s) {
    done.SetStatus(s);
    TaskFinished(true);
  };
  if (!previous_pending) {
    device_done.OnReady(std::move(complete));
    return;
  }
  // The previous task's status is its own: only its completion is waited
  // for.
  previous.OnReady([device_done, complete = std::move(complete)](
                       const Status&) mutable {
    device_done.OnReady(std::move(complete));
  });
}

void WorkQueue::TaskFinished(bool launched) {
  std::lock_guard<std::mutex> lock(mu_);
  if (launched) {
    --launched_;
    launch_cv_.notify_one();
  }
  --in_flight_;
  if (in_flight_ == 0 && idle_waiters_ > 0) idle_cv_.notify_all();
}

void WorkQueue::WorkerLoop() {
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // An inline task started while the queue was idle; whatever was
      // enqueued after it waits until it is done.
      while (inline_running_ || (!stopping_ && tasks_.empty())) {
        worker_waiting_ = true;
        worker_cv_.wait(lock);
        worker_waiting_ = false;
      }
      if (tasks_.empty()) return;  // stopping and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
      // Bounded device work in flight (class comment).
      if (task.launch && max_launched_ > 0) {
        launch_cv_.wait(lock, [&] { return launched_ < max_launched_; });
      }
    }
    RunTask(task, /*in_queue_order=*/true);
  }
}

}  // namespace baton
