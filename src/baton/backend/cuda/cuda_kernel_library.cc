// Emitted kernels compiled by NVRTC and launched on a CUDA device
// (cuda_kernel_library.h).
#include "baton/backend/cuda/cuda_kernel_library.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <thread>

#include "baton/backend/cuda/codegen/nvrtc_compiler.h"
#include "baton/backend/cuda/cuda_error.h"

namespace baton::cuda {

// Parts compiled side by side: NVRTC takes some milliseconds per kernel on
// one thread, plus tens for the prelude each part repeats.
constexpr int kMaxParts = 8;

Result<std::unique_ptr<CudaKernelLibrary>> CudaKernelLibrary::Load(
    const codegen::EmittedProgram& emitted, const std::string& arch,
    const std::string& what) {
  std::unique_ptr<CudaKernelLibrary> lib(new CudaKernelLibrary());
  lib->what_ = what;
  lib->names_ = emitted.kernel_names;
  if (emitted.kernel_names.empty()) {
    return Internal(what + ": a kernel library without kernels");
  }
  const int cores =
      std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const codegen::PartitionedSource parts =
      codegen::Partition(emitted, std::min(cores, kMaxParts));
  BATON_ASSIGN_OR_RETURN(
      std::vector<CompiledCubin> cubins,
      NvrtcCompiler::Default().CompileToCubins(parts.sources, what + ".cu",
                                               arch));
  for (size_t part = 0; part < cubins.size(); ++part) {
    cudaLibrary_t library = nullptr;
    BATON_RETURN_IF_ERROR(CudaError(
        cudaLibraryLoadData(&library, cubins[part].cubin.data(), nullptr,
                            nullptr, 0, nullptr, nullptr, 0),
        "cudaLibraryLoadData",
        what + ": loading the kernels compiled for " + arch + " (part " +
            std::to_string(part + 1) + " of " +
            std::to_string(cubins.size()) + ")"));
    lib->libraries_.push_back(library);
  }
  lib->kernels_.assign(emitted.kernel_names.size(), nullptr);
  for (size_t k = 0; k < emitted.kernel_names.size(); ++k) {
    const int part = parts.part_of_kernel[k];
    cudaKernel_t kernel = nullptr;
    BATON_RETURN_IF_ERROR(CudaError(
        cudaLibraryGetKernel(&kernel, lib->libraries_[static_cast<size_t>(part)],
                             emitted.kernel_names[k].c_str()),
        "cudaLibraryGetKernel",
        what + ": finding kernel " + emitted.kernel_names[k]));
    lib->kernels_[k] = kernel;
  }
  return lib;
}

CudaKernelLibrary::~CudaKernelLibrary() {
  for (CUlib_st* library : libraries_) {
    // Teardown: nothing to report to (the device is past every launch).
    (void)cudaLibraryUnload(library);
  }
  (void)cudaGetLastError();
}

Status CudaKernelLibrary::Launch(int kernel, int64_t threads,
                                 const codegen::KernelArgs& args,
                                 CUstream_st* stream) const {
  if (threads <= 0) return OkStatus();
  if (kernel < 0 || kernel >= num_kernels()) {
    return Internal(what_ + ": no kernel " + std::to_string(kernel));
  }
  const dim3 grid(static_cast<unsigned>(GridBlocks(threads)));
  const dim3 block(kBlockThreads);
  // The entry's parameters: (const KernelArgs a, bt::i64 n).
  long long n = threads;
  void* params[] = {const_cast<codegen::KernelArgs*>(&args), &n};
  // A cudaKernel_t is launched through the runtime's symbol entry point,
  // cast to a pointer (cuda_runtime_api.h, cudaLaunchKernel).
  const cudaError_t error = cudaLaunchKernel(
      reinterpret_cast<const void*>(kernels_[static_cast<size_t>(kernel)]),
      grid, block, params, 0, stream);
  if (error == cudaSuccess) return OkStatus();  // no message to build
  return CudaError(error, "cudaLaunchKernel",
                   what_ + ": launching " +
                       names_[static_cast<size_t>(kernel)] + " over " +
                       std::to_string(threads) + " items");
}

}  // namespace baton::cuda
