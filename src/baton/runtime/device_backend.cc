#include "baton/runtime/device_backend.h"

#include <cstring>

#include "baton/runtime/parallel_copy.h"

namespace baton {
namespace {

class HostBackend final : public DeviceBackend {
 public:
  const std::string& platform() const override { return platform_; }
  std::unique_ptr<RegionProvider> MakeRegionProvider(int, MemoryKind) override {
    return std::make_unique<HostRegionProvider>();
  }
  bool host_addressable(MemoryKind) const override { return true; }
  Status Copy(int, QueueKind, void* dst, const void* src,
              size_t bytes) override {
    ParallelCopy(dst, src, bytes);
    return OkStatus();
  }
  Status Fill(int, QueueKind, void* dst, int64_t count, size_t elem_bytes,
              uint64_t pattern) override {
    FillHost(dst, count, elem_bytes, pattern);
    return OkStatus();
  }

 private:
  const std::string platform_ = "cpu";
};

}  // namespace

void FillHost(void* dst, int64_t count, size_t elem_bytes, uint64_t pattern) {
  char* out = static_cast<char*>(dst);
  if (pattern == 0) {
    std::memset(out, 0, static_cast<size_t>(count) * elem_bytes);
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(out + i * static_cast<int64_t>(elem_bytes), &pattern,
                elem_bytes);
  }
}

std::shared_ptr<DeviceBackend> HostDeviceBackend() {
  static const std::shared_ptr<DeviceBackend> backend =
      std::make_shared<HostBackend>();
  return backend;
}

}  // namespace baton
