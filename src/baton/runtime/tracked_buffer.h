// TrackedBuffer: one piece of device storage plus the holds that say who may
// still touch it (after XLA PJRT's TrackedDeviceBuffer).
//
//  - Definition event: ready once the bytes are written (by a transfer or a
//    computation). Readers order themselves after it.
//  - Usage holds: every enqueued read or write takes one while it is being
//    enqueued (BeginUsage) and converts it into a usage event (EndUsage).
//    Only the last usage event per queue is kept: queues are in order.
//  - External references: one per host view or DLPack export. While any
//    exists, the buffer cannot be donated or overwritten.
//  - Exclusive (donation) hold: AcquireExclusive fails at once if an external
//    reference exists, waits for in-progress enqueues to finish, and returns
//    every event the new owner's writes must wait for.
//  - A writable host view makes later readers wait for its release.
//
// Release (DESIGN R1): the destructor returns the storage to its MemorySpace
// once the definition and usage events are ready -- deterministically, from
// the thread that completes the last one, never from a garbage collector.
// Borrowed storage (zero-copy from the caller) calls its release callback
// instead and is not counted in memory statistics.
//
// Ownership: shared (std::shared_ptr) by the Array that owns it and by host
// views; enqueued work does not own it (its usage events keep the storage
// alive instead). The MemorySpace must outlive it.
// Thread-safety: all methods are thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "baton/core/status.h"
#include "baton/runtime/event.h"
#include "baton/runtime/memory_space.h"

namespace baton {

class TrackedBuffer {
 public:
  // Allocates `bytes` in `space` for work that first touches it on
  // `queue_id`. The definition event starts as Ready(); the creator sets the
  // real one with SetDefinitionEvent before sharing the buffer.
  static Result<std::shared_ptr<TrackedBuffer>> Allocate(MemorySpace* space,
                                                         size_t bytes,
                                                         int queue_id,
                                                         AllocationLabel label);
  // Wraps caller-owned memory; `on_release` runs (on some thread) once the
  // buffer is destroyed and all work on it is done.
  static std::shared_ptr<TrackedBuffer> Borrow(MemorySpace* space, void* data,
                                               size_t bytes,
                                               std::function<void()> on_release);
  ~TrackedBuffer();
  TrackedBuffer(const TrackedBuffer&) = delete;
  TrackedBuffer& operator=(const TrackedBuffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  MemorySpace* memory_space() const { return space_; }
  bool borrowed() const { return borrowed_; }

  // --- definition -----------------------------------------------------------
  void SetDefinitionEvent(Event e);
  Event definition_event() const;
  // Events a new reader must wait for: the definition event and, while a
  // writable host view is live, that view's release.
  std::vector<Event> ReadDependencies() const;

  // --- usage holds ----------------------------------------------------------
  // Marks an enqueue in progress. Fails if the buffer has been taken
  // exclusively (donated or overwritten).
  Status BeginUsage();
  // Ends an enqueue: `done` (the enqueued work's event) becomes a usage event.
  // An invalid `done` means the enqueue was abandoned.
  void EndUsage(Event done);
  // Definition + all usage events (what a writer or a free must wait for).
  std::vector<Event> AllEvents() const;

  // --- external references (host views, DLPack) -----------------------------
  // Fails if the buffer is held exclusively or a writable view is live.
  Status AddExternalReference(const std::string& holder);
  void DropExternalReference(const std::string& holder);
  int external_references() const;

  // --- writable host view ---------------------------------------------------
  // Requires no external reference; returns the events to wait for before
  // the host may write. Readers enqueued until EndHostWrite wait for it.
  Result<std::vector<Event>> BeginHostWrite(const std::string& holder);
  void EndHostWrite(const std::string& holder);

  // --- exclusive hold (donation / overwrite) --------------------------------
  // Takes the buffer for a new owner that will write it: fails (changing
  // nothing) if an external reference exists, naming the holders; otherwise
  // waits for in-progress enqueues, then returns every event the new owner's
  // writes must wait for. Later BeginUsage calls fail until Reset.
  Result<std::vector<Event>> AcquireExclusive();
  // Hands the buffer to its new owner: definition := `definition`, usage
  // events cleared (the writer waited for them), exclusivity released.
  void ResetForNewOwner(Event definition);
  // Undoes AcquireExclusive when the new owner gave up before writing (a
  // later argument of the same call failed): events stay as they were.
  void ReleaseExclusive();

 private:
  TrackedBuffer(MemorySpace* space, void* data, size_t bytes, bool borrowed,
                std::function<void()> on_release);
  std::string HolderList() const;  // requires mu_

  MemorySpace* const space_;  // not owned; outlives this
  void* const data_;
  const size_t size_;
  const bool borrowed_;
  std::function<void()> on_release_;  // for borrowed storage

  mutable std::mutex mu_;
  std::condition_variable cv_;
  Event definition_;                   // guarded by mu_
  std::vector<Event> usage_;           // guarded by mu_; one per queue
  int enqueues_in_progress_ = 0;       // guarded by mu_
  std::vector<std::string> holders_;   // guarded by mu_: external refs
  bool exclusive_ = false;             // guarded by mu_
  Event host_write_;                   // guarded by mu_; valid while writing
};

}  // namespace baton
