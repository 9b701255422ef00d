// The CUDA platform when CMake found a CUDA toolkit (cuda_platform.h).
#include "baton/backend/cuda/cuda_platform.h"

#include <cuda_runtime_api.h>

#include <cstdlib>

#include "baton/backend/cuda/cuda_backend.h"
#include "baton/backend/cuda/cuda_error.h"

namespace baton::cuda {
namespace {

// What the first call found; never destroyed.
struct Platform {
  std::shared_ptr<CudaBackend> backend;
  std::string unavailable_reason;
  Client* client = nullptr;
};

// "13.0" for 13000.
std::string CudaVersionText(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

// The visible devices, or 0 with the reason. Without a driver (no
// libcuda.so.1) or without a GPU, cudaGetDeviceCount fails: that is zero
// devices, not an error.
int CountDevices(std::string* reason) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    *reason =
        "no CUDA device: cudaGetDeviceCount failed: " + CudaErrorText(error);
    // The runtime says "insufficient driver" both for an old driver and for
    // none at all; tell the two apart.
    int driver = 0;
    int runtime = 0;
    if (error == cudaErrorInsufficientDriver &&
        cudaDriverGetVersion(&driver) == cudaSuccess &&
        cudaRuntimeGetVersion(&runtime) == cudaSuccess) {
      *reason += driver == 0
                     ? "; no NVIDIA driver is installed (libcuda.so.1 not "
                       "found)"
                     : "; the NVIDIA driver supports CUDA " +
                           CudaVersionText(driver) +
                           " but baton's runtime is " +
                           CudaVersionText(runtime) + ": update the driver";
    }
    (void)cudaGetLastError();
    return 0;
  }
  if (count <= 0) {
    *reason = "no CUDA device: cudaGetDeviceCount found none";
    return 0;
  }
  return count;
}

const Platform& GetPlatform() {
  static const Platform* platform = [] {
    auto* p = new Platform;
    const int count = CountDevices(&p->unavailable_reason);
    if (count == 0) {
      if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
        p->unavailable_reason +=
            std::string(" (CUDA_VISIBLE_DEVICES=\"") + visible + "\")";
      }
    }
    p->backend = std::make_shared<CudaBackend>(count);
    p->client = new Client(count, p->backend);
    return p;
  }();
  return *platform;
}

}  // namespace

bool Built() { return true; }

Client& CudaClient() { return *GetPlatform().client; }

const std::string& UnavailableReason() {
  return GetPlatform().unavailable_reason;
}

std::shared_ptr<DeviceBackend> CudaDeviceBackend() {
  return GetPlatform().backend;
}

}  // namespace baton::cuda
