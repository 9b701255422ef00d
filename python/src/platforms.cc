#include "platforms.h"

#include <cstdlib>
#include <stdexcept>

#include "baton/backend/cuda/cuda_platform.h"
#include "baton/backend/simulated/simulated_backend.h"

namespace baton::python {
namespace {

std::vector<Platform>* platforms = nullptr;
std::vector<Device*>* default_devices = nullptr;
std::vector<Device*>* all_devices = nullptr;  // the default platform's first

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
  const Platform* chosen = nullptr;
  for (const Platform& p : *list) {
    if (p.client->device_count() > 0) {
      chosen = &p;
      break;
    }
    why += (why.empty() ? "" : "; ") + p.name + ": " + p.unavailable;
  }
  if (chosen == nullptr) {
    throw std::runtime_error("BATON_PLATFORMS=\"" + env +
                             "\": no listed platform has a device (" + why +
                             "). Add 'cpu' to the list to fall back to it.");
  }
  default_devices = new std::vector<Device*>(chosen->client->devices());
  all_devices = new std::vector<Device*>(*default_devices);
  for (const Platform& p : *list) {
    if (&p == chosen) continue;
    for (Device* d : p.client->devices()) all_devices->push_back(d);
  }
  platforms = list.release();
}

const std::vector<Platform>& Platforms() { return *platforms; }

const std::vector<Device*>& DefaultDevices() { return *default_devices; }

const std::vector<Device*>& AllDevices() { return *all_devices; }

}  // namespace baton::python
