// Client: the set of devices of one platform and the entry point to them.
//
// Client::Default() is the process-wide CPU client with
// BATON_NUM_CPU_DEVICES devices (read once, default 1); it is never
// destroyed, so arrays may outlive main(). Tests may create their own.
//
// Ownership: owns its Devices. Thread-safety: all methods are thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "baton/runtime/device.h"

namespace baton {

class Array;

class Client {
 public:
  // `num_devices` devices of `backend`'s platform, ordinals 0..n-1.
  Client(int num_devices, std::shared_ptr<DeviceBackend> backend);
  // `num_devices` CPU devices. The runtime names no platform: this and
  // Default() are defined with the CPU backend (backend/cpu/host_backend.cc).
  explicit Client(int num_devices);
  // The process-wide CPU client.
  static Client& Default();
  // The device count BATON_NUM_CPU_DEVICES asks for (1 if unset or invalid).
  static int NumCpuDevicesFromEnv();

  int device_count() const { return static_cast<int>(devices_.size()); }
  // Device `id`; InvalidArgument for an out-of-range id.
  Result<Device*> device(int id) const;
  std::vector<Device*> devices() const;
  const std::string& platform() const { return platform_; }

 private:
  std::string platform_;
  std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace baton
