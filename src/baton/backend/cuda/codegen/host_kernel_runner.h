// Host emulation of the emitted CUDA kernels: the source KernelEmitter
// writes (kernel_emitter.h) compiled by the host's C++ compiler with
// BATON_HOST_EMULATION, loaded with dlopen, and its actions run on the
// calling thread one work item after another.
//
// This is how the generated kernels are tested on machines without a GPU
// (tests/cpp/codegen): the same text NVRTC compiles for a device, here built
// for the host, so every emitted kernel, action list and buffer binding is
// exercised and compared with the reference interpreter; and the simulated
// device's executables run their kernels this way (gpu_executable.h). It is
// a test vehicle, not a fast path.
//
// The compiler is $BATON_HOST_CXX, else the C++ compiler baton was built
// with. Compiled libraries are cached by a hash of source, compiler and
// flags under $BATON_HOST_KERNEL_CACHE (default: $TMPDIR or /tmp, in
// baton-host-kernels-<uid>), so a source compiles once per machine. Tests
// compile many programs in one invocation: emit each with its own
// EmitOptions::kernel_prefix and compile CombinedSource of them all.
//
// Ownership: a HostKernelLibrary keeps its shared library loaded while it
// lives; the kernels it returns are valid as long as it is.
// Thread-safety: Compile may run concurrently (each result is written under
// a unique name and renamed into place); a library is immutable once made.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/core/status.h"

namespace baton::cuda::codegen {

// A kernel compiled for the host: runs work items 0 .. threads-1 in order.
using HostKernel = void (*)(int64_t threads, const KernelArgs* args);

class HostKernelLibrary {
 public:
  // Compiles `source` (an EmittedProgram's source or a CombinedSource) for
  // the host and loads it; `name` appears in errors. Internal, with the
  // compiler's output, when the compiler rejects the source.
  // kFastCompile (-O0): tests of many small programs, where compiling is
  // nearly all the time; kFastRun (-O2): an executable's kernels, which run
  // on real data, unless $BATON_HOST_KERNEL_OPTIMIZE is 0 (the test
  // scripts: their data is small). Float results are the same either way
  // (SSE arithmetic, no contraction).
  enum class Optimization { kFastCompile, kFastRun };
  static Result<std::unique_ptr<HostKernelLibrary>> Compile(
      const std::string& source, const std::string& name,
      Optimization optimization = Optimization::kFastCompile);

  ~HostKernelLibrary();
  HostKernelLibrary(const HostKernelLibrary&) = delete;
  HostKernelLibrary& operator=(const HostKernelLibrary&) = delete;

  // The kernel named `kernel` (an EmittedProgram::kernel_names entry);
  // Internal when the library has none.
  Result<HostKernel> Find(const std::string& kernel) const;

 private:
  HostKernelLibrary() = default;
  void* handle_ = nullptr;
};

// One source of several emitted programs (each emitted with a distinct
// EmitOptions::kernel_prefix): the prelude once, then every program's
// kernels in order. Empty when `programs` is.
std::string CombinedSource(const std::vector<const EmittedProgram*>& programs);

// Runs every action of `emitted` on the host, in order, with kernels from
// `library` (may be null when `emitted` has none). `value_data[v]` is the host storage of slot v (a value's, as
// BufferRef::kSlot names it); `step_scratch[s]` holds at least
// step_scratch_bytes[s] bytes for each step s that needs scratch. A copy
// whose source is its destination moves nothing. A kGemm action calls the
// BLAS (host_gemm.h), as a GPU calls its GEMM library. A kHostStep
// action calls `host_step` with its step index (Unimplemented without one).
using HostStepRunner = std::function<Status(int step)>;
Status RunOnHost(const HostKernelLibrary* library,
                 const EmittedProgram& emitted,
                 const std::vector<void*>& value_data,
                 const std::vector<void*>& step_scratch,
                 const HostStepRunner& host_step = nullptr);

}  // namespace baton::cuda::codegen
