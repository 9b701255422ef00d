#include "baton/runtime/event.h"

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace baton {

struct Event::State {
  State(int q, uint64_t seq) : queue_id(q), sequence(seq) {}
  const int queue_id;
  const uint64_t sequence;
  mutable std::mutex mu;
  std::condition_variable cv;
  bool ready = false;       // guarded by mu
  bool completing = false;  // guarded by mu: status set, callbacks running
  Status status;            // guarded by mu; immutable once completing
  std::vector<std::function<void(const Status&)>> callbacks;  // guarded by mu
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

Status Event::Wait() const {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait(lock, [&] { return state_->ready; });
  return state_->status;
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
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->ready || state_->completing) return;  // first completion wins
    state_->completing = true;
    state_->status = std::move(status);
  }
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
