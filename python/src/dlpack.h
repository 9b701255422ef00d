// The DLPack ABI, as the bindings name it. The structs, the dtype mapping
// and the validation of a producer's tensor live in the runtime
// (baton/runtime/dlpack_abi.h), where they need no Python and are fuzzed
// (tests/fuzz/fuzz_dlpack_import.cc).
#pragma once

#include "baton/runtime/dlpack_abi.h"

namespace baton::python {
namespace dlpack = ::baton::dlpack;
}  // namespace baton::python
