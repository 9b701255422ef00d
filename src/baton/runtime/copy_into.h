// CopyArrayInto: device_put(array, into=old) -- the in-place overwrite of
// DESIGN R2 with an array (any device, any memory kind) as the source, e.g.
// refreshing a pinned-host copy of device parameters without allocating.
//
// Writes `src`'s values into `into`'s storage once every computation already
// enqueued on `into` has finished and `src`'s value is ready; consumes `into`
// (its error says it was overwritten) and returns the array that owns the
// storage now. Asynchronous: the copy runs on a work queue.
//
// Errors (nothing consumed): shape/dtype mismatch (InvalidArgument), a
// deleted `src` or `into` (DeletedArray), live host views of `into`
// (Donation). `src` may be `into` itself (the storage is rebound unchanged).
// Thread-safety: may be called from any thread.
#pragma once

#include "baton/runtime/array.h"

namespace baton {

Result<Array> CopyArrayInto(const Array& src, const Array& into);

}  // namespace baton
