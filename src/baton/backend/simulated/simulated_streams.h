// SimulatedStreams: the "device" of the simulated accelerator -- in-order
// streams that execute enqueued work on threads of their own, and per
// stream a completion thread that completes each work's Event once it has
// run.
//
// This is the asynchronous contract of a GPU (DeviceBackend) without a GPU:
// Enqueue returns at once, the work runs later in its stream's order, and
// its event completes from its stream's completion thread (never from the
// thread that ran it, as a CUDA event is seen by a host thread, not by the
// device), in the stream's order and independently of other streams -- a
// copy's event does not wait for a long kernel on another stream. A stream can wait for another stream's work on the device
// (EnqueueWait), without any host thread waiting.
//
// Slow-device mode (Options::slow) exists to catch missing dependencies on a
// CPU machine: before each operation a stream sleeps a random 0..max_delay
// microseconds (seeded), so work that was not made to wait for its producer
// runs before it, and reads what the simulated backend's poisoning left
// there (simulated_backend.h). Hold() stops every stream from starting
// work until Release(), so a test can observe the host running ahead.
//
// Work enqueued by work of these streams as it runs (a host callback inside
// an emulated program that calls another program) runs at once on that
// thread -- as WorkQueue runs a task enqueued from inside a task -- since
// behind the running work it would wait forever; a device-side wait
// enqueued from there is dropped (what it orders already ran).
//
// Ownership: owns its threads; the destructor runs what was enqueued, then
// joins them. Thread-safety: every method may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "baton/core/status.h"
#include "baton/runtime/event.h"

namespace baton {

class SimulatedStreams {
 public:
  struct Options {
    bool slow = false;
    uint64_t seed = 0;
    int max_delay_us = 2000;
  };
  // Work that has been enqueued: the marker a device-side wait waits for.
  struct Work;

  // `num_streams` streams (stream ids 0..num_streams-1).
  SimulatedStreams(int num_streams, Options options);
  ~SimulatedStreams();
  SimulatedStreams(const SimulatedStreams&) = delete;
  SimulatedStreams& operator=(const SimulatedStreams&) = delete;

  // Enqueues `run` on `stream`; returns the event completed with its Status
  // after it ran, marked (Event::SetDeviceMarker) with `marker_owner` and
  // the work, so that a stream of the same owner can wait for it.
  Event Enqueue(int stream, std::function<Status()> run,
                const void* marker_owner);
  // Makes later work on `stream` start after the work `marker` (from an
  // event of this object) has run.
  void EnqueueWait(int stream, std::shared_ptr<Work> marker);

  void Hold();
  void Release();
  const Options& options() const { return options_; }

 private:
  struct Stream {
    std::deque<std::shared_ptr<Work>> work;  // guarded by mu_
    // Events to complete, in enqueue order; guarded by mu_.
    std::deque<std::pair<std::shared_ptr<Work>, Event>> completions;
    std::thread thread;
    std::thread completion_thread;
  };
  void StreamLoop(int stream);
  void CompletionLoop(int stream);
  int DelayUs();  // guarded by mu_ (the generator)

  const Options options_;
  std::mutex mu_;
  std::condition_variable cv_;  // work queued, hold released, stopping
  std::vector<Stream> streams_;
  bool held_ = false;      // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  std::mt19937_64 rng_;    // guarded by mu_
};

}  // namespace baton
