// CudaProgram: what a GPU executable compiled for a CUDA device
// (gpu_executable.h, Target::kCuda) holds of that device -- the CudaBackend
// and ordinal it enqueues on, its kernels compiled and loaded
// (cuda_kernel_library.h), its GEMMs' cuBLASLt plans (cublaslt_gemm.h) --
// and the operations its command list is made of: a launch of the whole
// run on the compute stream, kernel launches and GEMMs on that stream.
//
// gpu_executable.cc is built with and without the CUDA backend, so this
// header names no CUDA type. With the backend, cuda_program.cc implements
// it; without, cuda_program_stub.cc, whose Open fails with
// UnavailableReason() (no CUDA device exists in such a build).
//
// Ownership: owned by one GpuExecutable; the Device must outlive it. The
// executable keeps itself (and so this) alive until the device is past
// every run it enqueued (Launch's keep_alive).
// Thread-safety: every method but Load may be called from any thread,
// concurrently; Load is called once, before any run.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "baton/backend/cuda/codegen/kernel_emitter.h"
#include "baton/core/status.h"
#include "baton/runtime/device.h"
#include "baton/runtime/event.h"

namespace baton::cuda {

class CudaStream;  // cuda_stream.h

class CudaProgram {
 public:
  // The device side of executable `name` on `device`: Internal when the
  // device's backend is not the CudaBackend (a kCuda executable on another
  // platform's device); FailedPrecondition, with CUDA's reason, when the
  // device cannot be used (no driver, no GPU); Unimplemented in a build
  // without the CUDA backend. Reads the device's compute capability (the
  // architecture its kernels are compiled for); loads nothing yet.
  static Result<std::unique_ptr<CudaProgram>> Open(Device* device,
                                                   const std::string& name);
  ~CudaProgram();
  CudaProgram(const CudaProgram&) = delete;
  CudaProgram& operator=(const CudaProgram&) = delete;

  // Compiles `emitted`'s kernels for the device with NVRTC and loads them
  // (nothing when it has none), and checks that cuBLASLt is there when it
  // has GEMMs (FailedPrecondition, saying why, when not). Once, before any
  // run.
  Status Load(const codegen::EmittedProgram& emitted);

  // "sm_90": what the kernels are compiled for.
  const std::string& arch() const;

  // Enqueues one run on the device's compute stream
  // (CudaBackend::LaunchAsync): calls `run` on this thread with the stream,
  // and returns the Event the device completes after everything `run`
  // enqueued (failed with `run`'s error, if any, once the device is past
  // what was enqueued). `keep_alive` is released only then. `what` names
  // the run in errors ("running f").
  Event Launch(const std::string& what,
               const std::function<Status(const CudaStream&)>& run,
               std::shared_ptr<const void> keep_alive) const;

  // Enqueues the kernel launch `kernel` (Action::kKernel) with its
  // pointers in `args` on `stream`.
  Status LaunchKernel(const codegen::Action& kernel,
                      const codegen::KernelArgs& args,
                      const CudaStream& stream) const;
  // Enqueues `gemm` (Action::kGemm) on `stream` with cuBLASLt: `a`, `b`,
  // `c` its operands' and result's device addresses.
  Status Gemm(const codegen::Action& gemm, const void* a, const void* b,
              void* c, const CudaStream& stream) const;

 private:
  CudaProgram() = default;
  struct Impl;  // cuda_program.cc (cuda_program_stub.cc: empty)
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::cuda
