#include "baton/runtime/device.h"

#include <algorithm>

#include "baton/runtime/array.h"

namespace baton {

Device::Device(int id, std::shared_ptr<DeviceBackend> backend, int ordinal)
    : id_(id), backend_(std::move(backend)), ordinal_(ordinal) {
  for (int k = 0; k < kNumMemoryKinds; ++k) {
    const auto kind = static_cast<MemoryKind>(k);
    spaces_[k] = std::make_unique<MemorySpace>(
        ToString(), id_, kind, backend_->MakeRegionProvider(ordinal_, kind));
  }
  staging_ = std::make_unique<StagingPool>(
      &memory_space(MemoryKind::kPinnedHost), StagingPool::kDefaultCapacity);
  const std::string tag = std::to_string(id_);
  queues_[0] = std::make_unique<WorkQueue>("compute:" + tag);
  queues_[1] = std::make_unique<WorkQueue>("h2d:" + tag);
  queues_[2] = std::make_unique<WorkQueue>("d2h:" + tag);
  for (int k = 0; k < kNumQueueKinds; ++k) {
    queues_[k]->SetDeviceWaiter(
        [backend = backend_.get(), ordinal = ordinal_,
         queue = static_cast<QueueKind>(k)](const Event& e) {
          return backend->WaitOnStream(ordinal, queue, e);
        },
        kMaxLaunchedPerQueue);
  }
}

Device::~Device() {
  for (auto& q : queues_) q.reset();  // drain before memory goes away
}

std::string Device::ToString() const {
  return platform() + ":" + std::to_string(id_);
}

Status Device::Synchronize() {
  // From inside a task every queue refuses (work_queue.h): refused before
  // waiting for anything.
  if (QueueTaskScope::RunningAny()) return queues_[0]->Synchronize();
  for (auto& q : queues_) BATON_RETURN_IF_ERROR(q->Synchronize());
  return OkStatus();
}

void Device::RegisterArray(const std::shared_ptr<ArrayImpl>& impl) {
  std::lock_guard<std::mutex> lock(registry_mu_);
  registry_.emplace(impl.get(), impl);
}

void Device::UnregisterArray(ArrayImpl* impl) {
  std::lock_guard<std::mutex> lock(registry_mu_);
  registry_.erase(impl);
}

std::vector<Array> Device::LiveArrays() {
  std::vector<std::shared_ptr<ArrayImpl>> impls;
  {
    std::lock_guard<std::mutex> lock(registry_mu_);
    impls.reserve(registry_.size());
    for (auto& [ptr, weak] : registry_) {
      if (auto impl = weak.lock()) impls.push_back(std::move(impl));
    }
  }
  // Oldest first; the shared_ptrs are released outside the registry lock (a
  // last reference dropped here unregisters, which takes the lock).
  std::sort(impls.begin(), impls.end(),
            [](const auto& a, const auto& b) { return a->id() < b->id(); });
  std::vector<Array> out;
  for (auto& impl : impls) {
    if (!impl->IsDeleted()) out.emplace_back(impl);
  }
  return out;
}

}  // namespace baton
