// ConstantCache: device copies of captured constants, shared by content
// (DESIGN R5).
//
// Executables ask for the device copy of each constant they use; equal
// constants (same device, dtype, shape and bytes, found by an xxHash64 of the
// bytes and confirmed by comparing them) get the same copy, so a 64 MiB
// constant used by many executables is stored and transferred once. The copy
// lives as long as some executable holds it and is freed when the last one
// goes. Copies are not user arrays: live_arrays() does not list them.
// Every backend's executables use it: where the host cannot address the
// device's memory (the simulated device, CUDA) the bytes move through the
// device's backend (a synchronous host-to-device copy when first stored, a
// read-back to confirm a hash match).
// With BATON_DEBUG >= 1, every constant of 1 MiB or more is reported on
// stderr when it is first stored.
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "baton/compiler/literal.h"
#include "baton/runtime/device.h"
#include "baton/runtime/tracked_buffer.h"

namespace baton {

class ConstantCache;

// One device copy of a constant. Owned (shared) by the executables using it.
class ConstantBuffer {
 public:
  ~ConstantBuffer();
  const void* data() const { return buffer_->data(); }
  int64_t bytes() const { return static_cast<int64_t>(buffer_->size()); }

 private:
  friend class ConstantCache;
  // (device, dtype, dims, hash of the bytes). The device itself, not its
  // id: two Clients (tests make their own) both have a device 0.
  using Key = std::tuple<const Device*, int, std::vector<int64_t>, uint64_t>;
  ConstantCache* cache_ = nullptr;  // not owned; process lifetime
  Key key_;
  std::shared_ptr<TrackedBuffer> buffer_;
};

class ConstantCache {
 public:
  static ConstantCache& Global();
  // The device copy of `literal` in `device`'s device memory.
  Result<std::shared_ptr<ConstantBuffer>> Get(const compiler::Literal& literal,
                                              Device* device);
  // Distinct constants alive now (for tests and memory debugging).
  size_t size() const;

 private:
  friend class ConstantBuffer;
  void Remove(const ConstantBuffer::Key& key, const ConstantBuffer* which);
  mutable std::mutex mu_;
  std::map<ConstantBuffer::Key, std::weak_ptr<ConstantBuffer>> entries_;
};

}  // namespace baton
