// NVRTC, loaded at run time: CUDA C++ kernel source -> PTX or CUBIN.
//
// The CUDA code generator (kernel_emitter.h) emits CUDA C++ (the device
// prelude plus the kernels); this compiles it with NVRTC, dlopen'ed on
// first use instead of linked, so baton has no link-time or loader-path
// dependency on it: a machine without NVRTC gets an error that says so, not a
// binary that fails to start. The names tried, in order: the toolkit's
// ${BATON_CUDA_LIB_DIR}/libnvrtc.so.13 and .so.12 (when CMake defines
// BATON_CUDA_LIB_DIR), then libnvrtc.so.13, libnvrtc.so.12 and libnvrtc.so
// on the loader's path. No CUDA header is needed: the few NVRTC entry points
// are declared by hand (plain C ABI).
//
// Ownership: the library, once loaded, stays loaded for the process.
// Thread-safety: every function may be called from any thread; the library
// is loaded exactly once, and NVRTC programs are independent, so concurrent
// compilations are safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "baton/core/status.h"

namespace baton::cuda {

// "" when NVRTC is loaded, else one sentence saying which libraries were
// tried, why loading failed (dlerror) and what to do.
const std::string& NvrtcUnavailableReason();

// NVRTC's (major, minor) version, e.g. (13, 0). FailedPrecondition with
// NvrtcUnavailableReason() when NVRTC is not loaded.
Result<std::pair<int, int>> NvrtcVersion();

// Compiles the CUDA C++ `source` to PTX for the virtual architecture `arch`
// ("compute_90"); `name` names the program in NVRTC's diagnostics and in
// errors. The options are always --gpu-architecture=<arch>, -std=c++17,
// --fmad=false (a*b+c is never contracted into an FMA: the CPU backend
// builds with -ffp-contract=off) and -default-device, then `extra_options`.
// Results are cached in memory by a hash of source, architecture and
// options, so compiling the same text again costs a lookup.
// A source that does not compile is InvalidArgument, with NVRTC's error and
// its full log in the message; FailedPrecondition when NVRTC is not loaded.
Result<std::string> CompileToPtx(
    const std::string& source, const std::string& name, const std::string& arch,
    const std::vector<std::string>& extra_options = {});

// As CompileToPtx, but to machine code for the real architecture `arch`
// ("sm_90"): NVRTC runs ptxas too, so register and resource limits of that
// GPU are checked, without one. The CUBIN's bytes.
Result<std::string> CompileToCubin(
    const std::string& source, const std::string& name, const std::string& arch,
    const std::vector<std::string>& extra_options = {});

}  // namespace baton::cuda
