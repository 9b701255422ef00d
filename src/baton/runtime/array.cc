#include "baton/runtime/array.h"

#include <atomic>

#include "baton/core/error.h"
#include "baton/runtime/device.h"

namespace baton {
namespace {
std::atomic<uint64_t> next_array_id{1};
}  // namespace

UsageHold& UsageHold::operator=(UsageHold&& o) noexcept {
  if (this != &o) {
    Finish(Event());
    buffer_ = std::move(o.buffer_);
    deps_ = std::move(o.deps_);
  }
  return *this;
}

void UsageHold::Finish(Event done) {
  if (!buffer_) return;
  buffer_->EndUsage(std::move(done));
  buffer_.reset();
}

ArrayImpl::ArrayImpl(Device* device, MemoryKind kind, Shape shape,
                     DType dtype, std::shared_ptr<TrackedBuffer> buf)
    : device_(device),
      kind_(kind),
      shape_(std::move(shape)),
      dtype_(dtype),
      id_(next_array_id.fetch_add(1, std::memory_order_relaxed)),
      buffer_(std::move(buf)) {}

std::shared_ptr<ArrayImpl> ArrayImpl::Create(
    Device* device, MemoryKind kind, Shape shape, DType dtype,
    std::shared_ptr<TrackedBuffer> buf) {
  std::shared_ptr<ArrayImpl> impl(
      new ArrayImpl(device, kind, std::move(shape), dtype, std::move(buf)));
  device->RegisterArray(impl);
  return impl;
}

ArrayImpl::~ArrayImpl() { device_->UnregisterArray(this); }

std::string ArrayImpl::Describe() const {
  return std::string(dtype_name(dtype_)) + shape_.to_string();
}

bool ArrayImpl::IsDeleted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return buffer_ == nullptr;
}

ConsumedReason ArrayImpl::consumed_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reason_;
}

Status ArrayImpl::DeletedError() const {
  const ConsumedReason r = consumed_reason();
  const std::string what = "Array " + Describe() + " on " +
                           device_->ToString() + " ";
  switch (r.kind) {
    case ConsumedReason::Kind::kDonated:
      return DeletedArray(what + "was donated to " + r.to +
                          " and can no longer be used. Use that function's "
                          "output instead, or do not donate this array.");
    case ConsumedReason::Kind::kOverwritten:
      return DeletedArray(what + "was overwritten in place by " + r.to +
                          " and can no longer be used. Use the array that "
                          "call returned.");
    default:
      return DeletedArray(what + "was deleted (Array.delete()) and can no "
                          "longer be used. Keep a copy (x.copy()) if you need "
                          "its values after deleting it.");
  }
}

void ArrayImpl::Delete() {
  std::shared_ptr<TrackedBuffer> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!buffer_) return;
    dropped = std::move(buffer_);
    reason_ = ConsumedReason{ConsumedReason::Kind::kDeleted, ""};
  }
  // `dropped` dies here, outside the lock: storage goes back to its memory
  // space now, or once enqueued work is done.
}

Result<UsageHold> ArrayImpl::AcquireRead() {
  std::shared_ptr<TrackedBuffer> buf;
  {
    std::lock_guard<std::mutex> lock(mu_);
    buf = buffer_;
    // Under our lock, so a donation (which also takes it) cannot slip in
    // between our check and the hold.
    if (buf) BATON_RETURN_IF_ERROR(buf->BeginUsage());
  }
  if (!buf) return DeletedError();
  std::vector<Event> deps = buf->ReadDependencies();
  return UsageHold(std::move(buf), std::move(deps));
}

Result<std::shared_ptr<TrackedBuffer>> ArrayImpl::buffer() const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (buffer_) return buffer_;
  }
  return DeletedError();
}

Result<ArrayImpl::Taken> ArrayImpl::TakeExclusive(ConsumedReason reason) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (buffer_) {
      Result<std::vector<Event>> wait = buffer_->AcquireExclusive();
      if (!wait.ok()) {
        return DonationRefused("Cannot consume array " + Describe() + ": " +
                               wait.status().message() +
                               ". Nothing was consumed.");
      }
      Taken taken{std::move(buffer_), std::move(wait).value()};
      reason_ = std::move(reason);
      return taken;
    }
  }
  return DeletedError();
}

void ArrayImpl::Untake(Taken taken) {
  taken.buffer->ReleaseExclusive();
  std::lock_guard<std::mutex> lock(mu_);
  buffer_ = std::move(taken.buffer);
  reason_ = ConsumedReason{};
}

void ArrayImpl::SetDonationTarget(std::string to) {
  std::lock_guard<std::mutex> lock(mu_);
  if (reason_.kind == ConsumedReason::Kind::kDonated) reason_.to = std::move(to);
}

Result<ArrayImpl::External> ArrayImpl::AcquireExternal(
    const std::string& holder, bool writable) {
  {
    // Under our lock, so no donation or overwrite can take the buffer between
    // our check and the reference.
    std::lock_guard<std::mutex> lock(mu_);
    if (buffer_) {
      if (writable) {
        BATON_ASSIGN_OR_RETURN(std::vector<Event> wait,
                               buffer_->BeginHostWrite(holder));
        return External{buffer_, std::move(wait)};
      }
      BATON_RETURN_IF_ERROR(buffer_->AddExternalReference(holder));
      return External{buffer_, buffer_->ReadDependencies()};
    }
  }
  return DeletedError();
}

Result<Event> ArrayImpl::ReadyEvent() const {
  BATON_ASSIGN_OR_RETURN(std::shared_ptr<TrackedBuffer> buf, buffer());
  return buf->definition_event();
}

bool Array::IsReady() const {
  Event e = ValueOrThrow(impl_->ReadyEvent());
  return e.IsReady();
}

const Array& Array::BlockUntilReady() const {
  Event e = ValueOrThrow(impl_->ReadyEvent());
  ThrowIfError(e.Wait());
  return *this;
}

}  // namespace baton
