#include "baton/backend/cpu/host_backend.h"

#include <string>

#include "baton/backend/cpu/blas_threads.h"
#include "baton/backend/host_region_provider.h"
#include "baton/runtime/client.h"
#include "baton/runtime/parallel_copy.h"

namespace baton {
namespace {

class HostBackend final : public DeviceBackend {
 public:
  const std::string& platform() const override { return platform_; }
  std::unique_ptr<RegionProvider> MakeRegionProvider(int, MemoryKind) override {
    return std::make_unique<HostRegionProvider>();
  }
  bool host_addressable(MemoryKind) const override { return true; }
  bool programs_read_host_memory() const override { return true; }
  Event CopyAsync(int, QueueKind, void* dst, const void* src,
                  size_t bytes) override {
    ParallelCopy(dst, src, bytes);
    return Event::Ready();
  }
  Event FillAsync(int, QueueKind, void* dst, int64_t count, size_t elem_bytes,
                  uint64_t pattern) override {
    FillHost(dst, count, elem_bytes, pattern);
    return Event::Ready();
  }

 private:
  const std::string platform_ = "cpu";
};

}  // namespace

std::shared_ptr<DeviceBackend> HostDeviceBackend() {
  static const std::shared_ptr<DeviceBackend> backend =
      std::make_shared<HostBackend>();
  return backend;
}

// The runtime's Client names no platform; its CPU forms are defined here,
// with the CPU platform (client.h).
Client::Client(int num_devices) : Client(num_devices, HostDeviceBackend()) {}

Client& Client::Default() {
  static Client* client = [] {
    const int devices = NumCpuDevicesFromEnv();
    cpu::ShareBlasThreadsAmongDevices(devices);  // cpu/blas_threads.h
    return new Client(devices);
  }();
  return *client;
}

}  // namespace baton
