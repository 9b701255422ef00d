#include "baton/backend/cpu/constant_cache.h"

#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "baton/runtime/parallel_copy.h"

namespace baton::cpu {
namespace {

int DebugLevel() {
  static const int level = [] {
    const char* env = std::getenv("BATON_DEBUG");
    return env ? std::atoi(env) : 0;
  }();
  return level;
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
  // Declared before the lock so that, if it holds the last reference, the
  // destructor (which takes the lock) runs after the lock is released.
  std::shared_ptr<ConstantBuffer> existing;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    if ((existing = it->second.lock())) {
      if (std::memcmp(existing->data(), literal.untyped_data(), bytes) == 0) {
        return existing;
      }
      // A hash collision: serve this literal uncached rather than wrongly.
      cacheable = false;
    }
  }
  BATON_ASSIGN_OR_RETURN(
      auto buffer,
      TrackedBuffer::Allocate(&device->memory_space(MemoryKind::kDevice), bytes,
                              kNoQueue,
                              AllocationLabel(
                                  std::string(dtype_name(literal.dtype())) +
                                      literal.shape().to_string(),
                                  AllocationKind::kConstant,
                                  "baton::cpu::ConstantCache")));
  ParallelCopy(buffer->data(), literal.untyped_data(), bytes);
  auto constant = std::shared_ptr<ConstantBuffer>(new ConstantBuffer());
  constant->buffer_ = std::move(buffer);
  if (cacheable) {
    constant->cache_ = this;
    constant->key_ = key;
    entries_[key] = constant;
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

}  // namespace baton::cpu
