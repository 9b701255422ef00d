// A library of the CUDA toolkit (NVRTC, cuBLASLt) loaded with dlopen on
// first use instead of linked, so baton has no link-time or loader-path
// dependency on it: a machine without it gets an error saying so, not a
// binary that fails to start. No CUDA header is needed.
//
// The names tried for stem "nvrtc", in order: the toolkit's
// ${BATON_CUDA_LIB_DIR}/libnvrtc.so.13 and .so.12 (when CMake defines
// BATON_CUDA_LIB_DIR, the toolkit found at configure time), then
// libnvrtc.so.13, libnvrtc.so.12 and libnvrtc.so on the loader's path.
//
// Ownership: a loaded library is never closed (its entry points are kept
// for the process's life).
// Thread-safety: pure functions; dlopen and dlsym are thread-safe.
#pragma once

#include <string>
#include <vector>

namespace baton::cuda {

struct ToolkitLibrary {
  void* handle = nullptr;  // null when none of the names loaded
  std::string loaded;      // the name that loaded
  std::string tried;       // every name tried, comma-separated
  std::string last_error;  // dlerror() of the last failure
};

// Opens lib<stem>.so.13, .so.12 or .so (the toolkit's folder first).
ToolkitLibrary OpenToolkitLibrary(const std::string& stem);
// The same with other sonames: lib<stem>.so.<v> for each of `versions`
// in order, then lib<stem>.so ({"2"} for NCCL's libnccl.so.2).
ToolkitLibrary OpenToolkitLibrary(const std::string& stem,
                                  const std::vector<std::string>& versions);

// The address of `symbol` in `library`, or null (then appended to
// `missing`, comma-separated).
void* ResolveSymbol(void* library, const char* symbol, std::string* missing);

// The same, as the function pointer type of *fn.
template <typename Fn>
void Resolve(void* library, const char* symbol, Fn* fn, std::string* missing) {
  *fn = reinterpret_cast<Fn>(ResolveSymbol(library, symbol, missing));
}

}  // namespace baton::cuda
