#include "baton/backend/simulated/simulated_streams.h"

#include <pthread.h>

#include <chrono>

#include "baton/runtime/fork_guard.h"

namespace baton {

namespace {
// The streams whose work the calling thread is running (a stream thread),
// else null.
thread_local const SimulatedStreams* running_streams = nullptr;
}  // namespace

struct SimulatedStreams::Work {
  std::function<Status()> run;          // null for a wait
  std::shared_ptr<Work> waits_for;      // a wait: the work it waits for
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // guarded by mu
  Status status;      // guarded by mu; final once done

  void Finish(Status s) {
    {
      std::lock_guard<std::mutex> lock(mu);
      status = std::move(s);
      done = true;
    }
    cv.notify_all();
  }
  Status WaitDone() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
    return status;
  }
};

SimulatedStreams::SimulatedStreams(int num_streams, Options options)
    : options_(options), streams_(static_cast<size_t>(num_streams)),
      rng_(options.seed) {
  for (int s = 0; s < num_streams; ++s) {
    ForkGuard::ThreadStarted();
    streams_[s].thread = std::thread([this, s] { StreamLoop(s); });
    pthread_setname_np(streams_[s].thread.native_handle(), "sim-stream");
    ForkGuard::ThreadStarted();
    streams_[s].completion_thread = std::thread([this, s] { CompletionLoop(s); });
    pthread_setname_np(streams_[s].completion_thread.native_handle(),
                       "sim-completion");
  }
}

SimulatedStreams::~SimulatedStreams() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    held_ = false;
  }
  cv_.notify_all();
  const bool forked = ForkGuard::InForkedChild();
  for (Stream& s : streams_) {
    for (std::thread* t : {&s.thread, &s.completion_thread}) {
      if (forked) {
        t->detach();
      } else {
        t->join();
        ForkGuard::ThreadStopped();
      }
    }
  }
}

Event SimulatedStreams::Enqueue(int stream, std::function<Status()> run,
                                const void* marker_owner) {
  if (running_streams == this) {
    // Enqueued by work of these streams as it runs (a host callback of an
    // emulated program calling another program): it runs now, on this
    // thread, as WorkQueue runs a task enqueued from inside a task --
    // queued behind the running work, it would wait for it forever.
    Status s = run();
    return s.ok() ? Event::Ready() : Event::Failed(std::move(s));
  }
  auto work = std::make_shared<Work>();
  work->run = std::move(run);
  Event done = Event::Create();
  done.SetDeviceMarker(marker_owner, work);
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams_[stream].work.push_back(work);
    streams_[stream].completions.emplace_back(work, done);
  }
  cv_.notify_all();
  return done;
}

void SimulatedStreams::EnqueueWait(int stream, std::shared_ptr<Work> marker) {
  // From running work, later work runs at once (Enqueue): nothing to order.
  if (running_streams == this) return;
  auto work = std::make_shared<Work>();
  work->waits_for = std::move(marker);
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams_[stream].work.push_back(std::move(work));
  }
  cv_.notify_all();
}

void SimulatedStreams::Hold() {
  std::lock_guard<std::mutex> lock(mu_);
  held_ = true;
}

void SimulatedStreams::Release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = false;
  }
  cv_.notify_all();
}

int SimulatedStreams::DelayUs() {
  if (!options_.slow || options_.max_delay_us <= 0) return 0;
  return static_cast<int>(rng_() %
                          static_cast<uint64_t>(options_.max_delay_us + 1));
}

void SimulatedStreams::StreamLoop(int stream) {
  for (;;) {
    std::shared_ptr<Work> work;
    int delay_us = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] {
        return (!held_ && !streams_[stream].work.empty()) ||
               (stopping_ && streams_[stream].work.empty());
      });
      if (streams_[stream].work.empty()) return;  // stopping and drained
      work = std::move(streams_[stream].work.front());
      streams_[stream].work.pop_front();
      delay_us = DelayUs();
    }
    if (delay_us > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
    }
    if (work->waits_for != nullptr) {
      // A device-side wait: this stream stops until that work has run.
      (void)work->waits_for->WaitDone();
      work->Finish(OkStatus());
    } else {
      running_streams = this;
      Status status = work->run();
      running_streams = nullptr;
      // What the work holds (an executable and its constants) goes before
      // it reads as done: whoever waited for it sees that memory freed.
      work->run = nullptr;
      work->Finish(std::move(status));
    }
  }
}

void SimulatedStreams::CompletionLoop(int stream) {
  for (;;) {
    std::pair<std::shared_ptr<Work>, Event> next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      std::deque<std::pair<std::shared_ptr<Work>, Event>>& completions =
          streams_[stream].completions;
      cv_.wait(lock, [&] { return stopping_ || !completions.empty(); });
      if (completions.empty()) return;  // stopping and drained
      next = std::move(completions.front());
      completions.pop_front();
    }
    // In enqueue order: per stream, the order the work ran in.
    Status status = next.first->WaitDone();
    next.second.SetStatus(std::move(status));
  }
}

}  // namespace baton
