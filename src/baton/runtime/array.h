// Array: a cheap, thread-safe handle to an immutable n-dimensional buffer on
// one device and memory kind.
//
// Copies of an Array share one ArrayImpl, so consuming it through any copy
// (Delete, donation, device_put(into=)) is seen by all: IsDeleted() is true
// for every reference, and any use of the values fails with a deleted-array
// error saying how the array was consumed. Shape, dtype, device, memory kind
// and nbytes stay readable after deletion.
//
// Ownership: the ArrayImpl owns its TrackedBuffer (shared with host views);
// the buffer is released when the last owner lets go and the work enqueued on
// it is done (DESIGN R1). An Array does not own its Device; the Client does
// and outlives every Array.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "baton/core/dtype.h"
#include "baton/core/memory_kind.h"
#include "baton/core/shape.h"
#include "baton/core/status.h"
#include "baton/runtime/event.h"
#include "baton/runtime/tracked_buffer.h"

namespace baton {

class Device;

// How an array stopped being usable.
struct ConsumedReason {
  enum class Kind { kLive, kDeleted, kDonated, kOverwritten };
  Kind kind = Kind::kLive;
  std::string to;  // for kDonated: the function it was donated to
};

// A buffer pinned for one enqueue: the caller enqueues work reading or
// writing `buffer`, then calls Finish with that work's event. Until then the
// buffer cannot be donated. Move-only; Finish is idempotent and the
// destructor abandons the hold if Finish was not called.
class UsageHold {
 public:
  UsageHold() = default;
  UsageHold(std::shared_ptr<TrackedBuffer> buffer, std::vector<Event> deps)
      : buffer_(std::move(buffer)), deps_(std::move(deps)) {}
  UsageHold(UsageHold&& o) noexcept = default;
  UsageHold& operator=(UsageHold&& o) noexcept;
  ~UsageHold() { Finish(Event()); }

  TrackedBuffer* buffer() const { return buffer_.get(); }
  void* data() const { return buffer_->data(); }
  // Events the enqueued work must wait for.
  const std::vector<Event>& dependencies() const { return deps_; }
  void Finish(Event done);

 private:
  std::shared_ptr<TrackedBuffer> buffer_;
  std::vector<Event> deps_;
};

class ArrayImpl : public std::enable_shared_from_this<ArrayImpl> {
 public:
  // Creates the impl and registers it with the device's live-array registry.
  static std::shared_ptr<ArrayImpl> Create(Device* device, MemoryKind kind,
                                           Shape shape, DType dtype,
                                           std::shared_ptr<TrackedBuffer> buf);
  ~ArrayImpl();

  Device* device() const { return device_; }
  MemoryKind memory_kind() const { return kind_; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  int64_t nbytes() const { return shape_.num_elements() * dtype_size(dtype_); }
  uint64_t id() const { return id_; }
  // "float32(8, 1024)".
  std::string Describe() const;

  bool IsDeleted() const;
  ConsumedReason consumed_reason() const;
  // The deleted-array error for this array (why and what to do).
  Status DeletedError() const;

  // Drops the storage now (freed once in-flight work is done). Idempotent.
  void Delete();
  // Pins the buffer for an enqueue that reads it (see UsageHold).
  Result<UsageHold> AcquireRead();
  // The buffer (for host views), or the deleted-array error.
  Result<std::shared_ptr<TrackedBuffer>> buffer() const;
  // Consumes the array for a new owner that writes its storage (donation or
  // overwrite). On success the array is consumed with `reason`, and the
  // returned events are what the writer must wait for. On failure nothing
  // changes. A deleted array fails with the deleted-array error; live host
  // references fail with a donation error naming them.
  struct Taken {
    std::shared_ptr<TrackedBuffer> buffer;
    std::vector<Event> wait_for;
  };
  Result<Taken> TakeExclusive(ConsumedReason reason);
  // Gives back a Taken that was never written (a call failed before running),
  // making the array live again with its value intact.
  void Untake(Taken taken);
  // Names the function a call-site donation went to (for error messages).
  void SetDonationTarget(std::string to);

  // Takes an external reference (or, if `writable`, exclusive host-write
  // access) for a host view named `holder`; see HostView. Fails for a
  // deleted array or when the buffer's holds forbid it.
  struct External {
    std::shared_ptr<TrackedBuffer> buffer;
    std::vector<Event> wait_for;  // before the host may read / write
  };
  Result<External> AcquireExternal(const std::string& holder, bool writable);

  // Ready when the array's value is (or with the producer's error).
  Result<Event> ReadyEvent() const;

 private:
  ArrayImpl(Device* device, MemoryKind kind, Shape shape, DType dtype,
            std::shared_ptr<TrackedBuffer> buf);

  Device* const device_;  // not owned
  const MemoryKind kind_;
  const Shape shape_;
  const DType dtype_;
  const uint64_t id_;
  mutable std::mutex mu_;
  std::shared_ptr<TrackedBuffer> buffer_;  // guarded by mu_; null once consumed
  ConsumedReason reason_;                  // guarded by mu_
};

class Array {
 public:
  Array() = default;  // a null handle; valid() is false
  explicit Array(std::shared_ptr<ArrayImpl> impl) : impl_(std::move(impl)) {}

  bool valid() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl_->shape(); }
  DType dtype() const { return impl_->dtype(); }
  int ndim() const { return impl_->shape().rank(); }
  int64_t size() const { return impl_->shape().num_elements(); }
  int64_t nbytes() const { return impl_->nbytes(); }
  Device* device() const { return impl_->device(); }
  MemoryKind memory_kind() const { return impl_->memory_kind(); }

  // Drops the storage now; any later use raises DeletedArrayError.
  void Delete() { impl_->Delete(); }
  bool IsDeleted() const { return impl_->IsDeleted(); }
  // Throws DeletedArrayError if deleted.
  bool IsReady() const;
  // Waits for the value; throws the producer's error or DeletedArrayError.
  const Array& BlockUntilReady() const;

  // Same underlying array (not equal values).
  bool Is(const Array& o) const { return impl_ == o.impl_; }
  ArrayImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<ArrayImpl>& shared_impl() const { return impl_; }

 private:
  std::shared_ptr<ArrayImpl> impl_;
};

}  // namespace baton
