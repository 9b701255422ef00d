#include "baton/backend/simulated/simulated_backend.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "baton/backend/host_region_provider.h"
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
  bool WantsFreeNotices() const override { return backend_->options().slow; }
  void OnBlockFreed(void* ptr, size_t bytes) override {
    backend_->Poison(ptr, bytes);
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

// BATON_SIM_SLOW=<seed>: slow-device mode with that seed.
SimulatedBackend::Options OptionsFromEnv() {
  SimulatedBackend::Options options;
  const char* env = std::getenv("BATON_SIM_SLOW");
  if (env == nullptr || *env == '\0') return options;
  char* end = nullptr;
  const unsigned long long seed = std::strtoull(env, &end, 10);
  if (end == env || *end != '\0') return options;
  options.slow = true;
  options.seed = seed;
  return options;
}

}  // namespace

SimulatedBackend::~SimulatedBackend() {
  // Streams first: their last work may still touch the regions.
  streams_.clear();
}

std::unique_ptr<RegionProvider> SimulatedBackend::MakeRegionProvider(
    int, MemoryKind kind) {
  if (kind == MemoryKind::kDevice) {
    return std::make_unique<SimulatedDeviceRegions>(shared_from_this());
  }
  return std::make_unique<HostRegionProvider>();
}

SimulatedBackend::SimulatedBackend(Options options)
    : options_(options),
      capacity_(static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) *
                static_cast<int64_t>(sysconf(_SC_PAGESIZE))) {}

void* SimulatedBackend::MapRegion(size_t bytes) {
  if (bytes == 0) return nullptr;
  {
    // Reserved before mapping (released below if mapping fails): the
    // device's memory is finite (class comment).
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<int64_t>(bytes) > capacity_ - mapped_bytes_) {
      return nullptr;
    }
    mapped_bytes_ += static_cast<int64_t>(bytes);
  }
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
    std::lock_guard<std::mutex> lock(mu_);
    mapped_bytes_ -= static_cast<int64_t>(bytes);
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
    mapped_bytes_ -= static_cast<int64_t>(it->second.bytes);
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

SimulatedStreams& SimulatedBackend::StreamsOf(int ordinal) {
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<SimulatedStreams>& streams = streams_[ordinal];
  if (streams == nullptr) {
    Options options = options_;
    options.seed += static_cast<uint64_t>(ordinal);
    streams = std::make_unique<SimulatedStreams>(kNumQueueKinds, options);
    if (held_) streams->Hold();
  }
  return *streams;
}

void SimulatedBackend::HoldDevices() {
  std::lock_guard<std::mutex> lock(mu_);
  held_ = true;
  for (auto& [ordinal, streams] : streams_) streams->Hold();
}

void SimulatedBackend::ReleaseDevices() {
  std::lock_guard<std::mutex> lock(mu_);
  held_ = false;
  for (auto& [ordinal, streams] : streams_) streams->Release();
}

Event SimulatedBackend::CopyAsync(int ordinal, QueueKind queue, void* dst,
                                  const void* src, size_t bytes) {
  if (bytes == 0) return Event::Ready();
  bool dst_device = false;
  bool src_device = false;
  Result<char*> to = Resolve(dst, bytes, &dst_device);
  if (!to.ok()) return Event::Failed(to.status());
  Result<char*> from = Resolve(src, bytes, &src_device);
  if (!from.ok()) return Event::Failed(from.status());
  return StreamsOf(ordinal).Enqueue(
      static_cast<int>(queue),
      [this, to = to.value(), from = from.value(), bytes, dst_device,
       src_device] {
        std::memcpy(to, from, bytes);
        if (dst_device) to_device_.fetch_add(static_cast<int64_t>(bytes));
        if (src_device) from_device_.fetch_add(static_cast<int64_t>(bytes));
        return OkStatus();
      },
      this);
}

Event SimulatedBackend::FillAsync(int ordinal, QueueKind queue, void* dst,
                                  int64_t count, size_t elem_bytes,
                                  uint64_t pattern) {
  const size_t bytes = static_cast<size_t>(count) * elem_bytes;
  if (bytes == 0) return Event::Ready();
  bool on_device = false;
  Result<char*> to = Resolve(dst, bytes, &on_device);
  if (!to.ok()) return Event::Failed(to.status());
  return StreamsOf(ordinal).Enqueue(
      static_cast<int>(queue),
      [this, to = to.value(), count, elem_bytes, pattern, bytes, on_device] {
        FillHost(to, count, elem_bytes, pattern);
        if (on_device) to_device_.fetch_add(static_cast<int64_t>(bytes));
        return OkStatus();
      },
      this);
}

Event SimulatedBackend::EmulateAsync(
    int ordinal, QueueKind queue,
    std::function<Status(const HostAddressOf&)> work) {
  return StreamsOf(ordinal).Enqueue(
      static_cast<int>(queue),
      [this, work = std::move(work)] {
        const HostAddressOf host_address =
            [this](const void* ptr, size_t bytes) -> Result<void*> {
          bool on_device = false;
          BATON_ASSIGN_OR_RETURN(char* at, Resolve(ptr, bytes, &on_device));
          return static_cast<void*>(at);
        };
        return work(host_address);
      },
      this);
}

bool SimulatedBackend::WaitOnStream(int ordinal, QueueKind queue,
                                    const Event& event) {
  std::shared_ptr<void> marker = event.DeviceMarker(this);
  if (marker == nullptr) return false;
  StreamsOf(ordinal).EnqueueWait(
      static_cast<int>(queue),
      std::static_pointer_cast<SimulatedStreams::Work>(std::move(marker)));
  return true;
}

void SimulatedBackend::Poison(void* device_ptr, size_t bytes) {
  Result<char*> shadow = Shadow(device_ptr, bytes);
  if (shadow.ok() && shadow.value() != nullptr) {
    std::memset(shadow.value(), kPoisonByte, bytes);
  }
}

Client& SimulatedClient() {
  static Client* client = new Client(
      NumSimDevicesFromEnv(), std::make_shared<SimulatedBackend>(OptionsFromEnv()));
  return *client;
}

}  // namespace baton
