// The platforms Python sees and their order of preference.
//
// BATON_PLATFORMS (read once, at import) lists platform names, comma
// separated, most preferred first: "cpu", "cuda", and "sim" (the names and
// the clients are backend/platforms.h's). Unset, it is kDefaultPlatforms,
// "cpu,cuda": CUDA devices are reached with bt.devices("cuda"). The default
// platform is the first listed one that has devices; bt.devices() lists its
// devices, and arrays go to its device 0 unless told otherwise.
//
// Ownership: the clients are process-wide and never destroyed; so is the
// table. Thread-safety: built at import, read-only afterwards.
#pragma once

#include <string>
#include <vector>

#include "baton/backend/platforms.h"
#include "baton/runtime/client.h"

namespace baton::python {

// Parses BATON_PLATFORMS and creates the clients; throws std::runtime_error
// naming the problem for an unknown name, or when no listed platform has a
// device. Called once from module init.
void InitPlatforms();
// Every listed platform, in order.
const std::vector<Platform>& Platforms();
// The default platform's devices (bt.devices()).
const std::vector<Device*>& DefaultDevices();
// Every device of every listed platform, the default platform's first.
const std::vector<Device*>& AllDevices();

}  // namespace baton::python
