// The platforms baton runs on, by name, for every caller that chooses one:
// "cpu" (the host, Client::Default()), "cuda" (cuda_platform.h) and "sim"
// (the simulated accelerator of backend/simulated, for tests). The Python
// module reads BATON_PLATFORMS and asks here (python/src/platforms.cc); a
// C++ program picks its platforms the same way.
//
// Ownership: the clients are process-wide and never destroyed (created on
// first use). Thread-safety: the functions may be called from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "baton/core/status.h"
#include "baton/runtime/client.h"

namespace baton {

struct Platform {
  std::string name;          // "cpu", "cuda", "sim"
  Client* client = nullptr;  // may have no devices
  std::string unavailable;   // why it has none ("" when it has some)
};

// The platforms used when none are named, most preferred first: the CPU
// stays the default while the CUDA backend has no executables, and CUDA
// devices are reached by naming the platform.
inline constexpr std::string_view kDefaultPlatforms = "cpu,cuda";

// The named platform. InvalidArgument for another name: "unknown platform
// 'tpu'; baton has 'cpu', 'cuda' and 'sim'".
Result<Platform> GetPlatform(std::string_view name);

// The platforms of a comma-separated list of names, most preferred first
// (empty names and repeats skipped). Errors as GetPlatform.
Result<std::vector<Platform>> GetPlatforms(std::string_view list);

// The index of the first platform with a device: the default platform.
// FailedPrecondition when none has one: "no listed platform has a device
// (cuda: <why>; sim: <why>)".
Result<size_t> DefaultPlatformIndex(const std::vector<Platform>& platforms);

}  // namespace baton
