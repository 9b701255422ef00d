#include "baton/runtime/event.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>

#include "baton/runtime/fork_guard.h"

namespace baton {

namespace {
// Pending host-write events, process-wide (see Event::CreateHostWrite).
std::atomic<int> live_host_writes{0};
// The innermost QueueTaskScope of this thread (a stack linked by outer_).
thread_local const QueueTaskScope* innermost_task_scope = nullptr;
}  // namespace

QueueTaskScope::QueueTaskScope(int queue_id, const std::string* queue_name,
                               uint64_t sequence)
    : queue_id_(queue_id),
      queue_name_(queue_name),
      sequence_(sequence),
      outer_(innermost_task_scope) {
  innermost_task_scope = this;
}

QueueTaskScope::~QueueTaskScope() { innermost_task_scope = outer_; }

const std::string* QueueTaskScope::Running(int queue_id, uint64_t sequence) {
  if (queue_id == kNoQueue) return nullptr;
  for (const QueueTaskScope* s = innermost_task_scope; s; s = s->outer_) {
    if (s->queue_id_ == queue_id && sequence >= s->sequence_) {
      return s->queue_name_;
    }
  }
  return nullptr;
}

bool QueueTaskScope::RunningAny() { return innermost_task_scope != nullptr; }

Status WaitForOwnQueueError(const std::string& queue_name,
                            const std::string& what) {
  return WouldDeadlock(
      what + " would never end: it needs work queued on " + queue_name +
      " behind the task this thread is running (the caller runs inside that "
      "task, e.g. in a host callback such as bt.debug.callback), and that "
      "work can only start once the running task has finished. Inside a "
      "callback, compute only from its arguments and from arrays that were "
      "ready before the program that calls it was launched.");
}

struct Event::State {
  State(int q, uint64_t seq) : queue_id(q), sequence(seq) {}
  const int queue_id;
  const uint64_t sequence;
  // A host write: the thread holding it and what it is (set before the
  // event is shared, immutable after).
  bool host_write = false;
  std::thread::id holder;
  std::string holder_what;
  // guarded by mu; dropped on completion. Weak: a join's event waiting on
  // an event that never completes must not keep it (and the join) alive.
  std::vector<std::weak_ptr<State>> waits_on;
  mutable std::mutex mu;
  std::condition_variable cv;
  bool ready = false;       // guarded by mu
  bool completing = false;  // guarded by mu: status set, callbacks running
  Status status;            // guarded by mu; immutable once completing
  std::vector<std::function<void(const Status&)>> callbacks;  // guarded by mu
  const void* marker_owner = nullptr;  // guarded by mu
  std::shared_ptr<void> marker;        // guarded by mu
};

Event Event::Create(int queue_id, uint64_t sequence) {
  return Event(std::make_shared<State>(queue_id, sequence));
}

Event Event::Ready() {
  static const Event ready = [] {
    Event e = Create();
    e.SetReady();
    return e;
  }();
  return ready;
}

Event Event::Failed(Status status) {
  Event e = Create();
  e.SetError(std::move(status));
  return e;
}

bool Event::IsReady() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->ready;
}

Status Event::status() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->status;
}

Event Event::CreateHostWrite(std::string what) {
  Event e = Create();
  e.state_->host_write = true;
  e.state_->holder = std::this_thread::get_id();
  e.state_->holder_what = std::move(what);
  live_host_writes.fetch_add(1);
  return e;
}

bool Event::HostWritesLive() { return live_host_writes.load() > 0; }

void Event::SetWaitsOn(std::vector<Event> events) const {
  std::vector<std::weak_ptr<State>> weak;
  weak.reserve(events.size());
  for (const Event& e : events) {
    if (e.valid()) weak.push_back(e.state_);
  }
  std::lock_guard<std::mutex> lock(state_->mu);
  if (!state_->ready && !state_->completing) state_->waits_on = std::move(weak);
}

Status Event::Wait() const {
  if (live_host_writes.load(std::memory_order_relaxed) > 0) {
    if (std::optional<std::string> what = OwnHostWriteWaitedFor()) {
      return WouldDeadlock(
          "this wait would never end: the work it waits for reads an array "
          "whose writable host view (" + *what + ") this thread holds, and "
          "that work runs only once the view is released. Release the view "
          "first (leave its `with x.host_view(writable=True)` block), then "
          "wait for results.");
    }
  }
  if (ForkGuard::InForkedChild()) {
    // Whatever would complete a pending event did not survive the fork; its
    // lock may even have been held then, so only try it.
    std::unique_lock<std::mutex> lock(state_->mu, std::try_to_lock);
    if (!lock.owns_lock() || !state_->ready) {
      return ForkGuard::ForkedChildError();
    }
    return state_->status;
  }
  std::unique_lock<std::mutex> lock(state_->mu);
  if (!state_->ready) {
    // Pending work of a queue this thread runs a task of finishes only after
    // that task (the queue is in order), which is waiting here.
    if (const std::string* q =
            QueueTaskScope::Running(state_->queue_id, state_->sequence)) {
      lock.unlock();
      return WaitForOwnQueueError(*q, "this wait");
    }
  }
  state_->cv.wait(lock, [&] { return state_->ready; });
  return state_->status;
}

void Event::SetDeviceMarker(const void* owner,
                            std::shared_ptr<void> marker) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->marker_owner = owner;
  state_->marker = std::move(marker);
}

std::shared_ptr<void> Event::DeviceMarker(const void* owner) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->marker_owner == owner ? state_->marker : nullptr;
}

void Event::AdoptDeviceMarker(const Event& from) const {
  if (!from.valid() || from.state_ == state_) return;
  const void* owner;
  std::shared_ptr<void> marker;
  {
    std::lock_guard<std::mutex> lock(from.state_->mu);
    owner = from.state_->marker_owner;
    marker = from.state_->marker;
  }
  if (marker != nullptr) SetDeviceMarker(owner, std::move(marker));
}

int Event::queue_id() const { return state_->queue_id; }

uint64_t Event::sequence() const { return state_->sequence; }

void Event::OnReady(std::function<void(const Status&)> callback) const {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->ready) {
      state_->callbacks.push_back(std::move(callback));
      return;
    }
  }
  callback(state_->status);  // status is immutable once ready
}

void Event::SetStatus(Status status) const {
  // Callbacks run BEFORE the event reads as ready, so whoever observes it
  // ready (Wait, IsReady) also observes their effects -- in particular the
  // frees of buffers this work was the last user of (DESIGN: completion
  // order). Callbacks added meanwhile are queued and run here too.
  std::vector<std::weak_ptr<State>> waited_on;  // released outside the lock
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->ready || state_->completing) return;  // first completion wins
    state_->completing = true;
    state_->status = std::move(status);
    waited_on.swap(state_->waits_on);
  }
  if (state_->host_write) live_host_writes.fetch_sub(1);
  for (;;) {
    std::vector<std::function<void(const Status&)>> callbacks;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (state_->callbacks.empty()) {
        state_->ready = true;
        break;
      }
      callbacks.swap(state_->callbacks);
    }
    for (auto& cb : callbacks) cb(state_->status);
  }
  state_->cv.notify_all();
}

std::optional<std::string> Event::OwnHostWriteWaitedFor() const {
  const std::thread::id me = std::this_thread::get_id();
  std::vector<std::shared_ptr<State>> stack{state_};
  std::unordered_set<const State*> seen;
  while (!stack.empty()) {
    std::shared_ptr<State> s = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(s.get()).second) continue;
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->ready || s->completing) continue;
    if (s->host_write && s->holder == me) return s->holder_what;
    for (const std::weak_ptr<State>& w : s->waits_on) {
      if (std::shared_ptr<State> next = w.lock()) stack.push_back(std::move(next));
    }
  }
  return std::nullopt;
}

Status WaitAll(const std::vector<Event>& events) {
  Status first;
  for (const Event& e : events) {
    if (!e.valid()) continue;
    Status s = e.Wait();
    if (first.ok() && !s.ok()) first = std::move(s);
  }
  return first;
}

Event JoinEvents(const std::vector<Event>& events) {
  std::vector<Event> pending;
  for (const Event& e : events) {
    if (e.valid() && !(e.IsReady() && e.status().ok())) pending.push_back(e);
  }
  if (pending.empty()) return Event::Ready();
  if (pending.size() == 1) return pending[0];
  struct Join {
    std::atomic<size_t> remaining;
    std::mutex mu;
    Status first;  // guarded by mu
    Event done = Event::Create();
  };
  auto join = std::make_shared<Join>();
  join->remaining = pending.size();
  Event done = join->done;
  if (Event::HostWritesLive()) done.SetWaitsOn(pending);
  for (const Event& e : pending) {
    e.OnReady([join](const Status& s) {
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(join->mu);
        if (join->first.ok()) join->first = s;
      }
      if (join->remaining.fetch_sub(1) == 1) {
        Status result;
        {
          std::lock_guard<std::mutex> lock(join->mu);
          result = join->first;
        }
        join->done.SetStatus(std::move(result));
      }
    });
  }
  return done;
}

}  // namespace baton
