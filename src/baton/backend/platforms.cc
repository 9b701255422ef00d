#include "baton/backend/platforms.h"

#include "baton/backend/cuda/cuda_platform.h"
#include "baton/backend/simulated/simulated_backend.h"

namespace baton {

Result<Platform> GetPlatform(std::string_view name) {
  if (name == "cpu") return Platform{std::string(name), &Client::Default(), ""};
  if (name == "sim") return Platform{std::string(name), &SimulatedClient(), ""};
  if (name == "cuda") {
    Client& c = cuda::CudaClient();
    return Platform{std::string(name), &c,
                    c.device_count() ? "" : cuda::UnavailableReason()};
  }
  return InvalidArgument("unknown platform '" + std::string(name) +
                         "'; baton has 'cpu', 'cuda' and 'sim'");
}

Result<std::vector<Platform>> GetPlatforms(std::string_view list) {
  std::vector<Platform> out;
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t end = list.find(',', begin);
    if (end == std::string_view::npos) end = list.size();
    const std::string_view name = list.substr(begin, end - begin);
    begin = end + 1;
    if (name.empty()) continue;
    bool seen = false;
    for (const Platform& p : out) seen = seen || p.name == name;
    if (seen) continue;
    Result<Platform> p = GetPlatform(name);
    BATON_RETURN_IF_ERROR(p.status());
    out.push_back(std::move(p).value());
  }
  return out;
}

Result<size_t> DefaultPlatformIndex(const std::vector<Platform>& platforms) {
  std::string why;
  for (size_t i = 0; i < platforms.size(); ++i) {
    const Platform& p = platforms[i];
    if (p.client->device_count() > 0) return i;
    why += (why.empty() ? "" : "; ") + p.name + ": " + p.unavailable;
  }
  return FailedPrecondition("no listed platform has a device (" + why + ")");
}

}  // namespace baton
