// Device: one accelerator (on the CPU backend, a logical CPU device) with its
// three memory spaces, its in-order work queues and its live-array registry.
//
// Ownership: owned by the Client; owns its memory spaces, queues and staging
// pool. Queues are destroyed (drained) before memory spaces.
// Thread-safety: all methods are thread-safe.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "baton/core/memory_kind.h"
#include "baton/runtime/memory_space.h"
#include "baton/runtime/staging_pool.h"
#include "baton/runtime/work_queue.h"

namespace baton {

class Array;
class ArrayImpl;

enum class QueueKind { kCompute, kHostToDevice, kDeviceToHost };

class Device {
 public:
  Device(int id, std::string platform);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int id() const { return id_; }
  const std::string& platform() const { return platform_; }
  // "cpu:0".
  std::string ToString() const;

  MemorySpace& memory_space(MemoryKind kind) {
    return *spaces_[static_cast<int>(kind)];
  }
  WorkQueue& queue(QueueKind kind) { return *queues_[static_cast<int>(kind)]; }
  StagingPool& staging() { return *staging_; }

  // Live, undeleted arrays on this device (every memory kind).
  std::vector<Array> LiveArrays();
  // Waits for every queue to drain.
  void Synchronize();

  // Registry hooks used by ArrayImpl.
  void RegisterArray(const std::shared_ptr<ArrayImpl>& impl);
  void UnregisterArray(ArrayImpl* impl);

 private:
  const int id_;
  const std::string platform_;
  std::array<std::unique_ptr<MemorySpace>, kNumMemoryKinds> spaces_;
  std::unique_ptr<StagingPool> staging_;
  std::array<std::unique_ptr<WorkQueue>, 3> queues_;  // after spaces_: dies first
  std::mutex registry_mu_;
  std::unordered_map<ArrayImpl*, std::weak_ptr<ArrayImpl>> registry_;
};

}  // namespace baton
