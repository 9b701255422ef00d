// HostView: direct host access to an array's storage, with a hold whose
// lifetime is exactly the view's (DESIGN R7, seed 004).
//
//  - Read-only view: zero-copy; takes an external reference on the buffer
//    (so the array cannot be donated or overwritten while the view lives) and
//    waits for the value to be ready. Nothing is cached on the array.
//  - Writable view (host memory kinds only): the caller gets exclusive access
//    -- it waits for work already using the array, and computations enqueued
//    while the view lives wait for its release. Use it to fill pinned memory
//    directly, e.g. when loading a checkpoint.
// Deleting the array while a view lives keeps the storage until the view is
// released. Host views are only possible for memory the host can address
// (every kind on the CPU backend; host kinds on accelerators).
//
// Ownership: a HostView shares ownership of the buffer. Move-only; Release()
// is idempotent and runs from the destructor.
// Thread-safety: distinct views may be used from different threads; one view
// is not itself synchronized.
#pragma once

#include <memory>
#include <string>

#include "baton/runtime/array.h"

namespace baton {

class HostView {
 public:
  // `holder` names the view in error messages ("np.asarray view").
  static Result<HostView> Acquire(const Array& array, bool writable,
                                  std::string holder = "host view");
  HostView() = default;
  HostView(HostView&& o) noexcept;
  HostView& operator=(HostView&& o) noexcept;
  ~HostView() { Release(); }

  void* data() const { return data_; }
  size_t size() const { return size_; }
  bool writable() const { return writable_; }
  bool valid() const { return buffer_ != nullptr; }
  // Drops the hold (for a writable view, lets waiting computations run).
  void Release();

 private:
  std::shared_ptr<TrackedBuffer> buffer_;
  void* data_ = nullptr;
  size_t size_ = 0;
  bool writable_ = false;
  std::string holder_;
};

}  // namespace baton
