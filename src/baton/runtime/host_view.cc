#include "baton/runtime/host_view.h"

#include <atomic>

#include "baton/runtime/device.h"

namespace baton {
namespace {
std::atomic<uint64_t> next_view_id{1};
}  // namespace

Result<HostView> HostView::Acquire(const Array& array, bool writable,
                                   std::string holder) {
  if (writable && !is_host_kind(array.memory_kind())) {
    return InvalidArgument(
        "a writable host view needs an array in pinned_host or unpinned_host "
        "memory, but this " + array.impl()->Describe() + " is in " +
        std::string(memory_kind_name(array.memory_kind())) +
        " memory. Move it first: device_put(x, memory_kind=\"pinned_host\").");
  }
  Device* device = array.device();
  if (!device->host_addressable(array.memory_kind())) {
    return InvalidArgument(
        "a host view needs memory the host can address, but this " +
        array.impl()->Describe() + " is in " + device->ToString() + "'s " +
        std::string(memory_kind_name(array.memory_kind())) +
        " memory. Copy it to the host (np.asarray copies), or move it first: "
        "device_put(x, memory_kind=\"pinned_host\").");
  }
  holder += " #" + std::to_string(next_view_id.fetch_add(1));
  BATON_ASSIGN_OR_RETURN(auto buffer, array.impl()->AcquireExternal(
                                          holder, writable));
  HostView view;
  view.buffer_ = std::move(buffer.buffer);
  view.data_ = view.buffer_->data();
  view.size_ = view.buffer_->size();
  view.writable_ = writable;
  view.holder_ = std::move(holder);
  // Read: the value must be there. Write: nobody may still be reading.
  Status s = WaitAll(buffer.wait_for);
  if (!s.ok()) return s;  // `view` releases its hold on the way out
  return view;
}

HostView::HostView(HostView&& o) noexcept { *this = std::move(o); }

HostView& HostView::operator=(HostView&& o) noexcept {
  if (this != &o) {
    Release();
    buffer_ = std::move(o.buffer_);
    data_ = o.data_;
    size_ = o.size_;
    writable_ = o.writable_;
    holder_ = std::move(o.holder_);
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

void HostView::Release() {
  if (!buffer_) return;
  if (writable_) {
    buffer_->EndHostWrite(holder_);
  } else {
    buffer_->DropExternalReference(holder_);
  }
  buffer_.reset();
  data_ = nullptr;
}

}  // namespace baton
