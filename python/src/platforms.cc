#include "platforms.h"

#include <cstdlib>
#include <stdexcept>

#include "baton/backend/cuda/cuda_platform.h"
#include "baton/backend/simulated/simulated_backend.h"

namespace baton::python {
namespace {

std::vector<Platform>* platforms = nullptr;
std::vector<Device*>* default_devices = nullptr;

Platform MakePlatform(const std::string& name, const std::string& env) {
  if (name == "cpu") return {name, &Client::Default(), ""};
  if (name == "sim") return {name, &SimulatedClient(), ""};
  if (name == "cuda") {
    Client& c = cuda::CudaClient();
    return {name, &c, c.device_count() ? "" : cuda::UnavailableReason()};
  }
  throw std::runtime_error("BATON_PLATFORMS=\"" + env +
                           "\" names an unknown platform '" + name +
                           "'; baton has 'cpu', 'cuda' and 'sim'");
}

}  // namespace

void InitPlatforms() {
  if (platforms != nullptr) return;
  const char* set = std::getenv("BATON_PLATFORMS");
  const std::string env = set != nullptr && *set ? set : "cpu,cuda";
  auto list = std::make_unique<std::vector<Platform>>();
  size_t begin = 0;
  while (begin <= env.size()) {
    size_t end = env.find(',', begin);
    if (end == std::string::npos) end = env.size();
    std::string name = env.substr(begin, end - begin);
    begin = end + 1;
    if (name.empty()) continue;
    bool seen = false;
    for (const Platform& p : *list) seen = seen || p.name == name;
    if (!seen) list->push_back(MakePlatform(name, env));
  }
  std::string why;
  for (const Platform& p : *list) {
    if (p.client->device_count() > 0) {
      default_devices = new std::vector<Device*>(p.client->devices());
      break;
    }
    why += (why.empty() ? "" : "; ") + p.name + ": " + p.unavailable;
  }
  if (default_devices == nullptr) {
    throw std::runtime_error("BATON_PLATFORMS=\"" + env +
                             "\": no listed platform has a device (" + why +
                             "). Add 'cpu' to the list to fall back to it.");
  }
  platforms = list.release();
}

const std::vector<Platform>& Platforms() { return *platforms; }

const std::vector<Device*>& DefaultDevices() { return *default_devices; }

std::vector<Device*> AllDevices() {
  std::vector<Device*> out = *default_devices;
  for (const Platform& p : *platforms) {
    if (p.client->device_count() == 0) continue;
    if (p.client->devices()[0] == default_devices->front()) continue;
    for (Device* d : p.client->devices()) out.push_back(d);
  }
  return out;
}

}  // namespace baton::python
