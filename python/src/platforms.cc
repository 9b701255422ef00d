#include "platforms.h"

#include <cstdlib>
#include <stdexcept>

namespace baton::python {
namespace {

std::vector<Platform>* platforms = nullptr;
std::vector<Device*>* default_devices = nullptr;
std::vector<Device*>* all_devices = nullptr;  // the default platform's first

}  // namespace

void InitPlatforms() {
  if (platforms != nullptr) return;
  const char* set = std::getenv("BATON_PLATFORMS");
  const std::string env =
      set != nullptr && *set ? set : std::string(kDefaultPlatforms);
  Result<std::vector<Platform>> listed = GetPlatforms(env);
  if (!listed.ok()) {
    throw std::runtime_error("BATON_PLATFORMS=\"" + env + "\" names an " +
                             listed.status().message());
  }
  auto list =
      std::make_unique<std::vector<Platform>>(std::move(listed).value());
  Result<size_t> chosen_index = DefaultPlatformIndex(*list);
  if (!chosen_index.ok()) {
    throw std::runtime_error("BATON_PLATFORMS=\"" + env +
                             "\": " + chosen_index.status().message() +
                             ". Add 'cpu' to the list to fall back to it.");
  }
  const Platform* chosen = &(*list)[chosen_index.value()];
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
