#include "baton/backend/simulated/simulated_backend.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "baton/runtime/client.h"

namespace baton {
namespace {

// The device kind's regions: PROT_NONE pages with a shadow mapping.
class SimulatedDeviceRegions final : public RegionProvider {
 public:
  explicit SimulatedDeviceRegions(std::shared_ptr<SimulatedBackend> backend)
      : backend_(std::move(backend)) {}
  void* AllocateRegion(size_t bytes) override {
    return backend_->MapRegion(bytes);
  }
  void FreeRegion(void* ptr, size_t bytes) override {
    backend_->UnmapRegion(ptr, bytes);
  }

 private:
  const std::shared_ptr<SimulatedBackend> backend_;
};

int NumSimDevicesFromEnv() {
  const char* env = std::getenv("BATON_NUM_SIM_DEVICES");
  if (env == nullptr) return 1;
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  if (end == env || *end != '\0' || n < 1 || n > 64) return 1;
  return static_cast<int>(n);
}

}  // namespace

std::unique_ptr<RegionProvider> SimulatedBackend::MakeRegionProvider(
    int, MemoryKind kind) {
  if (kind == MemoryKind::kDevice) {
    return std::make_unique<SimulatedDeviceRegions>(shared_from_this());
  }
  return std::make_unique<HostRegionProvider>();
}

void* SimulatedBackend::MapRegion(size_t bytes) {
  if (bytes == 0) return nullptr;
  const int fd = memfd_create("baton-simulated-device", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  void* device = MAP_FAILED;
  void* shadow = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(bytes)) == 0) {
    device = mmap(nullptr, bytes, PROT_NONE, MAP_SHARED, fd, 0);
    shadow = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  close(fd);  // the mappings keep the memory
  if (device == MAP_FAILED || shadow == MAP_FAILED) {
    if (device != MAP_FAILED) munmap(device, bytes);
    if (shadow != MAP_FAILED) munmap(shadow, bytes);
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu_);
  regions_.emplace(reinterpret_cast<uintptr_t>(device),
                   Region{bytes, static_cast<char*>(shadow)});
  return device;
}

void SimulatedBackend::UnmapRegion(void* device_base, size_t bytes) {
  if (device_base == nullptr) return;
  char* shadow = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = regions_.find(reinterpret_cast<uintptr_t>(device_base));
    if (it == regions_.end()) return;
    shadow = it->second.shadow;
    regions_.erase(it);
  }
  munmap(device_base, bytes);
  munmap(shadow, bytes);
}

Result<char*> SimulatedBackend::Shadow(const void* ptr, size_t bytes) const {
  const auto p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = regions_.upper_bound(p);
  if (it == regions_.begin()) return static_cast<char*>(nullptr);
  --it;
  const uintptr_t base = it->first;
  const Region& r = it->second;
  if (p >= base + r.bytes) return static_cast<char*>(nullptr);
  if (bytes > base + r.bytes - p) {
    return InvalidArgument("simulated device: " + std::to_string(bytes) +
                           " bytes at offset " + std::to_string(p - base) +
                           " run past the end of a " + std::to_string(r.bytes) +
                           "-byte region");
  }
  return r.shadow + (p - base);
}

Result<char*> SimulatedBackend::Resolve(const void* ptr, size_t bytes,
                                        bool* on_device) const {
  BATON_ASSIGN_OR_RETURN(char* shadow, Shadow(ptr, bytes));
  *on_device = shadow != nullptr;
  return shadow != nullptr ? shadow
                           : static_cast<char*>(const_cast<void*>(ptr));
}

bool SimulatedBackend::IsDeviceMemory(const void* ptr, size_t bytes) const {
  Result<char*> r = Shadow(ptr, bytes);
  return r.ok() && r.value() != nullptr;
}

Status SimulatedBackend::Copy(int, QueueKind, void* dst, const void* src,
                              size_t bytes) {
  if (bytes == 0) return OkStatus();
  bool dst_device = false;
  bool src_device = false;
  BATON_ASSIGN_OR_RETURN(char* to, Resolve(dst, bytes, &dst_device));
  BATON_ASSIGN_OR_RETURN(char* from, Resolve(src, bytes, &src_device));
  std::memcpy(to, from, bytes);
  if (dst_device) to_device_.fetch_add(static_cast<int64_t>(bytes));
  if (src_device) from_device_.fetch_add(static_cast<int64_t>(bytes));
  return OkStatus();
}

Status SimulatedBackend::Fill(int, QueueKind, void* dst, int64_t count,
                              size_t elem_bytes, uint64_t pattern) {
  const size_t bytes = static_cast<size_t>(count) * elem_bytes;
  if (bytes == 0) return OkStatus();
  bool on_device = false;
  BATON_ASSIGN_OR_RETURN(char* to, Resolve(dst, bytes, &on_device));
  FillHost(to, count, elem_bytes, pattern);
  if (on_device) to_device_.fetch_add(static_cast<int64_t>(bytes));
  return OkStatus();
}

Client& SimulatedClient() {
  static Client* client =
      new Client(NumSimDevicesFromEnv(), std::make_shared<SimulatedBackend>());
  return *client;
}

}  // namespace baton
