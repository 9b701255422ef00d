// CudaKernelLibrary: the kernels of one emitted program
// (codegen::EmittedProgram) on one CUDA device -- compiled by NVRTC to a
// CUBIN for the device's architecture (codegen/nvrtc_compiler.h: cached in
// memory and on disk) and loaded with the CUDA runtime's library API
// (cudaLibraryLoadData; runtime API only, so baton keeps no link-time
// dependency on libcuda) -- and their launches.
//
// The source is split into a few parts compiled side by side
// (codegen::Partition, NvrtcCompiler::CompileToCubins: NVRTC compiles one
// program on one thread); each part is one cudaLibrary_t, so an executable
// holds one library per part (one for most programs), unloaded in the
// destructor.
//
// A launch covers `threads` work items with blocks of kBlockThreads
// threads: the emitted __global__ entry (emit_context.cc) takes the
// KernelArgs block by value and the item count, and strides over the grid
// (i += blockDim.x * gridDim.x), so the grid is ceil(threads / block),
// capped so that the launch has at most codegen::kMaxThreadsPerLaunch
// threads (the 32-bit loop counter's bound); the loop covers the rest.
//
// Built only with the CUDA backend; the header has no CUDA header.
//
// Ownership: owns its libraries. The caller keeps it alive until the
// device is past every launch it made (the GPU executable's runs hold it).
// Thread-safety: Launch may be called from any thread, concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/core/status.h"

struct CUstream_st;  // cudaStream_t
struct CUlib_st;     // cudaLibrary_t
struct CUkern_st;    // cudaKernel_t

namespace baton::cuda {

class CudaKernelLibrary {
 public:
  static constexpr int kBlockThreads = 256;

  // The grid (blocks of kBlockThreads) of a launch over `threads` >= 1 work
  // items: ceil(threads / kBlockThreads), at most
  // kMaxThreadsPerLaunch / kBlockThreads. A pure function (defined here so
  // that tests of every build can check it).
  static constexpr int64_t GridBlocks(int64_t threads) {
    const int64_t max_blocks = codegen::kMaxThreadsPerLaunch / kBlockThreads;
    const int64_t blocks =
        threads / kBlockThreads + (threads % kBlockThreads != 0 ? 1 : 0);
    return blocks < 1 ? 1 : blocks > max_blocks ? max_blocks : blocks;
  }

  // "sm_90" for compute capability (9, 0).
  static std::string Architecture(int major, int minor) {
    return "sm_" + std::to_string(major) + std::to_string(minor);
  }

  // Compiles `emitted`'s kernels for `arch` ("sm_90") and loads them on the
  // calling thread's current device (the caller made it current);
  // `what` ("f on cuda:0") names them in errors. FailedPrecondition without
  // NVRTC, InvalidArgument when NVRTC rejects the source (its log in the
  // message), a CUDA error when loading fails. `emitted` must have kernels.
  static Result<std::unique_ptr<CudaKernelLibrary>> Load(
      const codegen::EmittedProgram& emitted, const std::string& arch,
      const std::string& what);

  ~CudaKernelLibrary();
  CudaKernelLibrary(const CudaKernelLibrary&) = delete;
  CudaKernelLibrary& operator=(const CudaKernelLibrary&) = delete;

  // Enqueues kernel `kernel` (an EmittedProgram::kernel_names index) over
  // `threads` work items with `args` on `stream`, whose device is current.
  Status Launch(int kernel, int64_t threads, const codegen::KernelArgs& args,
                CUstream_st* stream) const;

  int num_kernels() const { return static_cast<int>(kernels_.size()); }
  int num_libraries() const { return static_cast<int>(libraries_.size()); }

 private:
  CudaKernelLibrary() = default;

  std::string what_;
  std::vector<std::string> names_;      // per kernel
  std::vector<CUlib_st*> libraries_;    // per part
  std::vector<CUkern_st*> kernels_;     // per kernel
};

}  // namespace baton::cuda
