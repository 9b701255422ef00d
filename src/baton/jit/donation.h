// Call-site donation (DESIGN R4): `f(donate(x), y)`.
//
// donate(x) consumes x at once -- every reference sees IsDeleted() -- even
// while other references exist, and takes x's storage for the next jitted
// call it is passed to. With a live host view (or DLPack export) it is
// refused with a DonationError naming the views, and x stays valid.
//
// Ownership: a Donated owns the taken storage until a call consumes it; a
// Donated dropped unused frees the storage (after in-flight work).
// Thread-safety: a Donated is a plain move-only value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "baton/runtime/array.h"

namespace baton {

struct Donated {
  Array array;              // the consumed handle: metadata and rollback
  ArrayImpl::Taken taken;   // its storage and what writers must wait for
};

// Consumes `a` for a later call; the error names live views or says why.
Result<Donated> TryDonate(const Array& a);
// Throwing form: DonationError / DeletedArrayError.
Donated donate(const Array& a);

// Spends `d`: a new live array with the donated value on the same storage
// (nothing copied or written). The old array's readers may still run: the
// new array's definition waits for them, so nothing writes or frees the
// storage first. `d` must still hold its storage.
Array AdoptDonated(Donated& d);

// jit's message for donated arguments that no output can reuse, each named
// in `arguments` ("argument x (float32[4])"), for a single-device call or,
// `per_device`, a partitioned one (reuse on every device). `refused`: the
// refusal of bt.config's "error" donation mode (nothing consumed), else the
// DonationWarning of "warn" (their storage is freed after the call). One
// text for both kinds of call: the C++ jit and python/baton/
// _partitioned_call.py (through the bindings) use it.
std::string UnusableDonationMessage(std::string_view fn_name,
                                    const std::vector<std::string>& arguments,
                                    bool per_device, bool refused);

}  // namespace baton
