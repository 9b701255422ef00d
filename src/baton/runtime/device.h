// Device: one accelerator (on the CPU backend, a logical CPU device) with its
// three memory spaces, its in-order work queues and its live-array registry.
// What is platform-specific (where memory comes from, whether the host may
// touch it, how bytes move) comes from its DeviceBackend (device_backend.h).
//
// Ownership: owned by the Client; owns its memory spaces, queues and staging
// pool and shares its backend. Queues are destroyed (drained) before memory
// spaces.
// Thread-safety: all methods are thread-safe.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/core/memory_kind.h"
#include "baton/runtime/device_backend.h"
#include "baton/runtime/memory_space.h"
#include "baton/runtime/staging_pool.h"
#include "baton/runtime/work_queue.h"

namespace baton {

class Array;
class ArrayImpl;

class Device {
 public:
  // Device `id` of its Client; `ordinal` is its index on `backend`'s
  // platform (the CUDA device number; equal to `id` for CPU devices).
  Device(int id, std::shared_ptr<DeviceBackend> backend, int ordinal);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int id() const { return id_; }
  const std::string& platform() const { return backend_->platform(); }
  int ordinal() const { return ordinal_; }
  DeviceBackend& backend() const { return *backend_; }
  // Whether host code may read and write this device's memory of `kind`.
  bool host_addressable(MemoryKind kind) const {
    return backend_->host_addressable(kind);
  }
  // Whether this device's programs are host code, reading host-addressable
  // memory (another device's too) where it lies.
  bool programs_read_host_memory() const {
    return backend_->programs_read_host_memory();
  }
  // Byte movement on the stream of queue `queue`, from a task of that queue
  // (DeviceBackend::CopyAsync and FillAsync): returns the device work's
  // event. The synchronous forms wait for it.
  Event CopyAsync(QueueKind queue, void* dst, const void* src, size_t bytes) {
    return backend_->CopyAsync(ordinal_, queue, dst, src, bytes);
  }
  Event FillAsync(QueueKind queue, void* dst, int64_t count, size_t elem_bytes,
                  uint64_t pattern) {
    return backend_->FillAsync(ordinal_, queue, dst, count, elem_bytes,
                               pattern);
  }
  Status Copy(QueueKind queue, void* dst, const void* src, size_t bytes) {
    return backend_->Copy(ordinal_, queue, dst, src, bytes);
  }
  // Launched device work in flight per queue before its worker waits
  // (WorkQueue::SetDeviceWaiter; PJRT allows 32 executions per device).
  static constexpr size_t kMaxLaunchedPerQueue = 32;
  // "cpu:0".
  std::string ToString() const;

  MemorySpace& memory_space(MemoryKind kind) {
    return *spaces_[static_cast<int>(kind)];
  }
  WorkQueue& queue(QueueKind kind) { return *queues_[static_cast<int>(kind)]; }
  StagingPool& staging() { return *staging_; }

  // Live, undeleted arrays on this device (every memory kind).
  std::vector<Array> LiveArrays();
  // Waits for every queue to drain. Refused (WouldDeadlock, waiting for
  // nothing) when called from inside a running task, e.g. from a host
  // callback: that task could be part of what it would wait for.
  Status Synchronize();

  // Registry hooks used by ArrayImpl.
  void RegisterArray(const std::shared_ptr<ArrayImpl>& impl);
  void UnregisterArray(ArrayImpl* impl);

 private:
  const int id_;
  const std::shared_ptr<DeviceBackend> backend_;
  const int ordinal_;
  std::array<std::unique_ptr<MemorySpace>, kNumMemoryKinds> spaces_;
  std::unique_ptr<StagingPool> staging_;
  std::array<std::unique_ptr<WorkQueue>, kNumQueueKinds> queues_;  // after spaces_: dies first
  std::mutex registry_mu_;
  std::unordered_map<ArrayImpl*, std::weak_ptr<ArrayImpl>> registry_;
};

}  // namespace baton
