// The CUDA platform when CMake found no CUDA toolkit (or BATON_CUDA=OFF): no
// devices, and a reason that says so (cuda_platform.h).
#include "baton/backend/cuda/cuda_platform.h"

namespace baton::cuda {
namespace {

// Only gives the empty client its platform name: a client with no devices
// never asks it for memory or copies.
class UnavailableBackend final : public DeviceBackend {
 public:
  const std::string& platform() const override { return platform_; }
  std::unique_ptr<RegionProvider> MakeRegionProvider(int, MemoryKind) override {
    return nullptr;
  }
  bool host_addressable(MemoryKind kind) const override {
    return kind != MemoryKind::kDevice;
  }
  Event CopyAsync(int, QueueKind, void*, const void*, size_t) override {
    return Event::Failed(Unimplemented(UnavailableReason()));
  }
  Event FillAsync(int, QueueKind, void*, int64_t, size_t,
                  uint64_t) override {
    return Event::Failed(Unimplemented(UnavailableReason()));
  }

 private:
  const std::string platform_ = "cuda";
};

}  // namespace

bool Built() { return false; }

Client& CudaClient() {
  static Client* client = new Client(0, std::make_shared<UnavailableBackend>());
  return *client;
}

const std::string& UnavailableReason() {
  static const std::string reason =
      "baton was built without the CUDA backend (CMake found no CUDA "
      "toolkit, or BATON_CUDA=OFF); install the CUDA toolkit and reconfigure "
      "with -DBATON_CUDA=ON";
  return reason;
}

std::shared_ptr<DeviceBackend> CudaDeviceBackend() { return nullptr; }

}  // namespace baton::cuda
