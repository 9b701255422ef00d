// Host views from Python (DESIGN R7, seed 004): the owner object behind
// np.asarray(x) / x.host_view(), and the buffer protocol of bt.Array.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <string>

#include "baton/runtime/array.h"
#include "baton/runtime/host_view.h"

namespace nb = nanobind;

namespace baton::python {

// HostViewHold: one host view of an array's storage as a Python object. It is
// the `base` of the numpy arrays that view the storage (numpy builds them
// from its __array_interface__), so the view's hold -- an external reference,
// or exclusive write access for a writable view -- lives exactly as long as
// those numpy arrays: when numpy frees the last of them, the hold goes and
// the array can be donated or overwritten again. Nothing is cached on the
// array.
//
// Release() drops the hold early (the end of a `with x.host_view()` block)
// but keeps the storage allocated until the hold object dies, so a numpy
// array still pointing at it never dangles; its contents are then no longer
// guaranteed.
//
// Ownership: shares the storage (TrackedBuffer) with the array.
// Thread-safety: called with the GIL held.
class HostViewHold {
 public:
  HostViewHold(HostView view, std::shared_ptr<TrackedBuffer> storage,
               const Array& array, std::string holder)
      : view_(std::move(view)),
        storage_(std::move(storage)),
        shape_(array.shape()),
        dtype_(array.dtype()),
        holder_(std::move(holder)),
        data_(view_.data()),
        writable_(view_.writable()) {}

  void Release() { view_.Release(); }
  bool released() const { return !view_.valid(); }
  bool writable() const { return writable_; }
  DType dtype() const { return dtype_; }
  const std::string& holder() const { return holder_; }
  // numpy's array interface (version 3) describing the storage; raises
  // BufferError once released.
  nb::dict ArrayInterface() const;

 private:
  HostView view_;
  std::shared_ptr<TrackedBuffer> storage_;
  Shape shape_;
  DType dtype_;
  std::string holder_;
  void* data_;
  bool writable_;
};

// Acquires a host view of `array` for `holder` ("np.asarray view"), waiting
// (without the GIL) until its value is ready -- or, for a writable view,
// until work using it is done. Raises DeletedArrayError, ValueError (a
// writable view of `device` memory or of borrowed memory), BufferError (a
// conflicting view is live or memory the host cannot address).
std::unique_ptr<HostViewHold> AcquireHostViewHold(const Array& array,
                                                  bool writable,
                                                  const std::string& holder);

// The Py_bf_getbuffer / Py_bf_releasebuffer slots of bt.Array.
extern PyType_Slot kArrayBufferSlots[];

}  // namespace baton::python
