#include "baton/runtime/client.h"

#include <cstdlib>
#include <string>

namespace baton {

Client::Client(int num_devices, std::shared_ptr<DeviceBackend> backend)
    : platform_(backend->platform()) {
  for (int i = 0; i < num_devices; ++i) {
    devices_.push_back(std::make_unique<Device>(i, backend, i));
  }
}

int Client::NumCpuDevicesFromEnv() {
  const char* env = std::getenv("BATON_NUM_CPU_DEVICES");
  if (env == nullptr) return 1;
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  if (end == env || *end != '\0' || n < 1 || n > 1024) return 1;
  return static_cast<int>(n);
}

Result<Device*> Client::device(int id) const {
  if (id < 0 || id >= device_count()) {
    return InvalidArgument("device id " + std::to_string(id) +
                           " is out of range: this client has " +
                           std::to_string(device_count()) + " device(s)" +
                           (platform_ == "cpu"
                                ? " (set BATON_NUM_CPU_DEVICES for more CPU "
                                  "devices)"
                                : ""));
  }
  return devices_[id].get();
}

std::vector<Device*> Client::devices() const {
  std::vector<Device*> out;
  for (const auto& d : devices_) out.push_back(d.get());
  return out;
}

}  // namespace baton
