// Event: a one-shot completion signal for asynchronous work.
//
// An Event is a cheap, copyable handle (shared state). It starts pending and
// becomes ready exactly once, either OK or with an error Status. Work enqueued
// on a WorkQueue is represented by the Event its task completes; consumers
// wait on it or attach callbacks.
//
// Thread-safety: every method may be called from any thread.
// Callbacks run exactly once: immediately on the calling thread if the event is
// already ready, otherwise on the thread that calls SetReady/SetError, without
// the event's internal lock held (a callback may take other locks and add
// callbacks to other events). They run before the event reads as ready:
// whoever sees IsReady() or returns from Wait() also sees their effects.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/core/status.h"

namespace baton {

// Identifies the in-order queue whose task completes an event.
inline constexpr int kNoQueue = -1;

class Event {
 public:
  Event() = default;  // invalid (no state); valid() is false

  // A pending event that a task on queue `queue_id` (or no queue) completes;
  // `sequence` is the task's position in that queue (0 for no queue).
  static Event Create(int queue_id = kNoQueue, uint64_t sequence = 0);
  // An event that is already ready (OK).
  static Event Ready();
  // An event that is already ready with error `status`.
  static Event Failed(Status status);

  bool valid() const { return state_ != nullptr; }
  // True once SetReady/SetError has happened.
  bool IsReady() const;
  // The final status; only meaningful once IsReady().
  Status status() const;
  // Blocks until ready; returns the final status -- or, without blocking,
  // WouldDeadlock if it depends on a host write this thread holds, or if it
  // is pending work of a queue whose task this thread is running (see
  // QueueTaskScope: that work runs only after the running task).
  Status Wait() const;
  // The queue whose in-order work completes this event, or kNoQueue.
  int queue_id() const;
  // Position of the completing task in its queue: of two events of the same
  // queue, the one with the larger sequence completes last.
  uint64_t sequence() const;

  // --- waits that could never end ------------------------------------------
  // A host write (a writable host view, see TrackedBuffer) is the one event
  // a user thread itself completes: work reading the array waits for it. If
  // that thread then waits for such work, it waits for itself. To see this
  // coming, the host write's event names its holder, and while any host
  // write is live, queued work records what it waits for (SetWaitsOn). Wait()
  // then refuses, with WouldDeadlock naming the view, when the event
  // depends on a host write held by the waiting thread.
  //
  // A pending event completed by the calling thread's host write `what`
  // ("host view #3 of float32(4,)").
  static Event CreateHostWrite(std::string what);
  // Records the events the work completing this one waits for (only
  // meaningful while HostWritesLive()).
  void SetWaitsOn(std::vector<Event> events) const;
  // True while any host-write event is pending, anywhere.
  static bool HostWritesLive();

  // --- device markers ---------------------------------------------------------
  // Work of an accelerator completes when the device passes a marker its
  // backend recorded in a stream (a CUDA event). A backend attaches that
  // marker to the work's event so that later work on another stream of the
  // same backend can wait for it on the device (cudaStreamWaitEvent) instead
  // of on the host. `owner` identifies the backend; a marker is only ever
  // read back by its owner. Setting it again replaces it (a queue's event
  // takes the marker of the device work its task launched).
  void SetDeviceMarker(const void* owner, std::shared_ptr<void> marker) const;
  // The marker `owner` attached, or null (none, or another owner's).
  std::shared_ptr<void> DeviceMarker(const void* owner) const;
  // Takes `from`'s marker (whatever its owner), if it has one.
  void AdoptDeviceMarker(const Event& from) const;

  // Runs `callback(status)` once the event is ready (see class comment).
  void OnReady(std::function<void(const Status&)> callback) const;

  // Completes the event. Completing twice is a programming error (ignored in
  // release builds; the first completion wins).
  void SetReady() const { SetStatus(OkStatus()); }
  void SetError(Status status) const { SetStatus(std::move(status)); }
  void SetStatus(Status status) const;

  // Identity: two handles to the same event compare equal.
  bool operator==(const Event& o) const { return state_ == o.state_; }

 private:
  struct State;
  // The description of a pending host write held by the calling thread that
  // this event depends on through recorded waits. Only pending events are
  // followed, so the search is bounded by the work in flight.
  std::optional<std::string> OwnHostWriteWaitedFor() const;
  explicit Event(std::shared_ptr<State> s) : state_(std::move(s)) {}
  std::shared_ptr<State> state_;
};

// --- the queue tasks a thread is running ------------------------------------
// A WorkQueue marks the thread that runs one of its tasks (its worker, or a
// caller running a task inline or re-entrantly) for the task's duration.
// Code inside a task -- a host callback -- can then be told that waiting for
// pending work of that queue would never end: the queue is in order, so its
// pending work is the running task itself or work queued behind it. Scopes
// nest (a task enqueued re-entrantly from inside another runs within it).
// Thread-safety: the record is per thread; a scope must end on the thread
// that began it, in reverse order of beginning (it is a stack object).
class QueueTaskScope {
 public:
  // `queue_name` must outlive the scope (the queue's own name). `sequence`:
  // the running task's position in its queue (Event::sequence()); events of
  // the queue enqueued before it do not wait for it (a queue runs its tasks
  // in order, and their device work completes without it). 0 for a task
  // run outside the queue's order: every pending event of the queue counts.
  QueueTaskScope(int queue_id, const std::string* queue_name,
                 uint64_t sequence = 0);
  ~QueueTaskScope();
  QueueTaskScope(const QueueTaskScope&) = delete;
  QueueTaskScope& operator=(const QueueTaskScope&) = delete;

  // The name of queue `queue_id` if the calling thread is running one of its
  // tasks that a pending event of that queue with `sequence` may wait for
  // (one enqueued at or after it), else nullptr.
  static const std::string* Running(int queue_id,
                                    uint64_t sequence = UINT64_MAX);
  // True if the calling thread is running a task of any queue.
  static bool RunningAny();

 private:
  const int queue_id_;
  const std::string* const queue_name_;
  const uint64_t sequence_;
  const QueueTaskScope* const outer_;
};

// The WouldDeadlock error for waiting (or making work wait) from inside a
// task of queue `queue_name` for pending work of that same queue.
Status WaitForOwnQueueError(const std::string& queue_name,
                            const std::string& what);

// Waits for every event; returns the first error met, or OK.
Status WaitAll(const std::vector<Event>& events);

// An event that becomes ready when all `events` are (with the first error among
// them, if any). Returns Ready() for an empty list.
Event JoinEvents(const std::vector<Event>& events);

}  // namespace baton
