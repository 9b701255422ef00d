#include "baton/backend/constant_cache.h"

#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "baton/runtime/device_backend.h"
#include "baton/runtime/parallel_copy.h"

namespace baton {
namespace {

int DebugLevel() {
  static const int level = [] {
    const char* env = std::getenv("BATON_DEBUG");
    return env ? std::atoi(env) : 0;
  }();
  return level;
}

// Whether the device copy at `on_device` holds `host`'s bytes (read back
// through the backend where the host cannot address device memory).
Result<bool> SameBytes(const Device& device, const void* on_device,
                       const void* host, size_t bytes) {
  if (bytes == 0) return true;
  if (device.host_addressable(MemoryKind::kDevice)) {
    return std::memcmp(on_device, host, bytes) == 0;
  }
  std::vector<char> back(bytes);
  BATON_RETURN_IF_ERROR(device.backend().Copy(
      device.ordinal(), QueueKind::kDeviceToHost, back.data(), on_device,
      bytes));
  return std::memcmp(back.data(), host, bytes) == 0;
}

}  // namespace

ConstantBuffer::~ConstantBuffer() {
  if (cache_) cache_->Remove(key_, this);
}

ConstantCache& ConstantCache::Global() {
  static ConstantCache* cache = new ConstantCache();  // used until exit
  return *cache;
}

size_t ConstantCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [key, weak] : entries_) n += weak.expired() ? 0 : 1;
  return n;
}

void ConstantCache::Remove(const ConstantBuffer::Key& key,
                           const ConstantBuffer* which) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  // Only erase our own entry: a new copy may have replaced an expired one.
  if (it != entries_.end()) {
    auto live = it->second.lock();
    if (!live || live.get() == which) entries_.erase(it);
  }
}

Result<std::shared_ptr<ConstantBuffer>> ConstantCache::Get(
    const compiler::Literal& literal, Device* device) {
  const size_t bytes = static_cast<size_t>(literal.byte_size());
  const uint64_t hash = XXH3_64bits(literal.untyped_data(), bytes);
  ConstantBuffer::Key key{device, static_cast<int>(literal.dtype()),
                          literal.shape().dims(), hash};
  bool cacheable = true;
  // No lock is held across a device copy: on an accelerator the copy waits
  // for its stream, and the work ahead of it may be what frees another
  // constant (~ConstantBuffer takes the lock) -- holding it there deadlocked.
  // Released after every lock below.
  std::shared_ptr<ConstantBuffer> existing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) existing = it->second.lock();
  }
  if (existing) {
    BATON_ASSIGN_OR_RETURN(bool same,
                           SameBytes(*device, existing->data(),
                                     literal.untyped_data(), bytes));
    if (same) return existing;
    // A hash collision: serve this literal uncached rather than wrongly.
    cacheable = false;
  }
  BATON_ASSIGN_OR_RETURN(
      auto buffer,
      TrackedBuffer::Allocate(&device->memory_space(MemoryKind::kDevice), bytes,
                              kNoQueue,
                              AllocationLabel(
                                  std::string(dtype_name(literal.dtype())) +
                                      literal.shape().to_string(),
                                  AllocationKind::kConstant,
                                  "baton::ConstantCache")));
  if (device->host_addressable(MemoryKind::kDevice)) {
    ParallelCopy(buffer->data(), literal.untyped_data(), bytes);
  } else if (bytes > 0) {
    // The host cannot touch the device's memory: the backend copies.
    BATON_RETURN_IF_ERROR(device->backend().Copy(
        device->ordinal(), QueueKind::kHostToDevice, buffer->data(),
        literal.untyped_data(), bytes));
  }
  auto constant = std::shared_ptr<ConstantBuffer>(new ConstantBuffer());
  constant->buffer_ = std::move(buffer);
  if (cacheable) {
    std::shared_ptr<ConstantBuffer> raced;  // released after the lock
    std::lock_guard<std::mutex> lock(mu_);
    std::weak_ptr<ConstantBuffer>& slot = entries_[key];
    raced = slot.lock();
    // Another call stored this content meanwhile: ours stays uncached (a
    // second copy while both live, never a wrong one).
    if (raced == nullptr) {
      constant->cache_ = this;
      constant->key_ = key;
      slot = constant;
    }
  }
  if (DebugLevel() >= 1 && bytes >= (size_t{1} << 20)) {
    std::fprintf(stderr,
                 "baton: captured constant %s%s (%.1f MiB) stored once on %s\n",
                 std::string(dtype_name(literal.dtype())).c_str(),
                 literal.shape().to_string().c_str(),
                 static_cast<double>(bytes) / (1 << 20),
                 device->ToString().c_str());
  }
  return constant;
}

}  // namespace baton
