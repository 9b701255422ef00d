// The CUDA platform: baton's entry point to the GPUs of this machine
// (DESIGN 5.7).
//
// CMake decides whether this build has the CUDA backend (BATON_CUDA, see the
// top-level CMakeLists.txt): with a CUDA toolkit, cuda_platform.cc talks to
// the CUDA runtime; without one, cuda_platform_stub.cc answers "no devices"
// and says why. Nothing else in baton needs to know which was built.
//
// A machine without a GPU or without a CUDA driver is not an error: the
// client then simply has zero devices, and UnavailableReason() says why in
// one sentence. CUDA_VISIBLE_DEVICES selects (and renumbers) the GPUs the
// way every CUDA program sees it.
//
// Ownership: CudaClient() is process-wide, created on first call and never
// destroyed (like Client::Default()), so arrays on it may outlive main(). The
// backend is shared by the client's Devices and by every caller of
// CudaDeviceBackend().
// Thread-safety: every function may be called from any thread; the first
// call that creates the client is serialized.
#pragma once

#include <memory>
#include <string>

#include "baton/runtime/client.h"
#include "baton/runtime/device_backend.h"

namespace baton::cuda {

// Whether this build has the CUDA backend (CMake found a CUDA toolkit).
bool Built();

// The process-wide client of the visible GPUs, platform "cuda", device ids
// equal to CUDA device ordinals; zero devices when there is no usable GPU.
Client& CudaClient();

// "" when CudaClient() has devices; otherwise one sentence saying why not
// (built without CUDA, no driver, no visible device, ...).
const std::string& UnavailableReason();

// The CUDA DeviceBackend (shared by CudaClient()'s devices), for callers
// that build their own Client over it; nullptr when built without CUDA.
std::shared_ptr<DeviceBackend> CudaDeviceBackend();

}  // namespace baton::cuda
