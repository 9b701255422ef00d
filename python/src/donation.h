// The Python `Donated` marker's rules shared by its bindings (donation.cc)
// and jit's argument parsing (jit_arguments.cc).
//
// A marker holds its array's storage until one call claims it. The claim is
// taken under the GIL in one step (check and move together), so when the
// same marker reaches several calls at once, from several threads, exactly
// one wins. A call that fails before running gives the storage back to the
// array (it is live again, nothing lost) and the marker stays unusable.
#pragma once

#include <string>

#include "baton/jit/donation.h"

namespace baton::python {

// True while the marker still holds its array's storage.
inline bool Holds(const Donated& d) { return d.taken.buffer != nullptr; }

// Why a marker that no longer holds storage cannot be passed, and what to
// do instead (for an InvalidArgument / ValueError).
std::string UnusableMarkerMessage(const Donated& d);

}  // namespace baton::python
