// A GPU executable's device side on a CUDA device (cuda_program.h).
#include "baton/backend/cuda/cuda_program.h"

#include <cuda_runtime_api.h>

#include "baton/backend/cuda/cublaslt_gemm.h"
#include "baton/backend/cuda/cuda_backend.h"
#include "baton/backend/cuda/cuda_error.h"
#include "baton/backend/cuda/cuda_kernel_library.h"
#include "baton/backend/cuda/cuda_stream.h"

namespace baton::cuda {

struct CudaProgram::Impl {
  CudaBackend* backend = nullptr;  // the device's; not owned
  int ordinal = 0;
  std::string what;  // "f on cuda:0"
  std::string arch;  // "sm_90"
  std::unique_ptr<CudaKernelLibrary> kernels;  // null: no kernels
  std::unique_ptr<CublasLtGemms> gemms;        // null: no GEMMs
};

Result<std::unique_ptr<CudaProgram>> CudaProgram::Open(Device* device,
                                                      const std::string& name) {
  auto* backend = dynamic_cast<CudaBackend*>(&device->backend());
  if (backend == nullptr) {
    return Internal(name + ": compiled for a CUDA device, but " +
                    device->ToString() + " is not one (its backend is " +
                    device->platform() + "'s, not the CUDA backend)");
  }
  std::unique_ptr<CudaProgram> program(new CudaProgram());
  program->impl_ = std::make_unique<Impl>();
  Impl& impl = *program->impl_;
  impl.backend = backend;
  impl.ordinal = device->ordinal();
  impl.what = name + " on " + device->ToString();
  const std::string doing = impl.what + ": reading the device's compute capability";
  BATON_RETURN_IF_ERROR(
      CudaError(cudaSetDevice(impl.ordinal), "cudaSetDevice", doing));
  int major = 0, minor = 0;
  BATON_RETURN_IF_ERROR(CudaError(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                             impl.ordinal),
      "cudaDeviceGetAttribute", doing));
  BATON_RETURN_IF_ERROR(CudaError(
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                             impl.ordinal),
      "cudaDeviceGetAttribute", doing));
  impl.arch = CudaKernelLibrary::Architecture(major, minor);
  return program;
}

CudaProgram::~CudaProgram() = default;

const std::string& CudaProgram::arch() const { return impl_->arch; }

Status CudaProgram::Load(const codegen::EmittedProgram& emitted) {
  Impl& impl = *impl_;
  bool has_gemm = false;
  for (const codegen::Action& a : emitted.actions) {
    has_gemm |= a.kind == codegen::Action::Kind::kGemm;
  }
  if (has_gemm) {
    if (const std::string& reason = CublasLtUnavailableReason();
        !reason.empty()) {
      return FailedPrecondition(impl.what + ": its matrix products need "
                                "cuBLASLt, and " + reason);
    }
    impl.gemms = std::make_unique<CublasLtGemms>(impl.ordinal, impl.what);
  }
  if (!emitted.kernel_names.empty()) {
    BATON_RETURN_IF_ERROR(CudaError(cudaSetDevice(impl.ordinal),
                                    "cudaSetDevice",
                                    impl.what + ": loading its kernels"));
    BATON_ASSIGN_OR_RETURN(impl.kernels,
                           CudaKernelLibrary::Load(emitted, impl.arch,
                                                   impl.what));
  }
  return OkStatus();
}

Event CudaProgram::Launch(const std::string& what,
                          const std::function<Status(const CudaStream&)>& run,
                          std::shared_ptr<const void> keep_alive) const {
  const Impl& impl = *impl_;
  return impl.backend->LaunchAsync(
      impl.ordinal, QueueKind::kCompute, what,
      [&](CUstream_st* s) { return run(CudaStream(impl.ordinal, s)); },
      std::const_pointer_cast<void>(std::move(keep_alive)));
}

Status CudaProgram::LaunchKernel(const codegen::Action& kernel,
                                 const codegen::KernelArgs& args,
                                 const CudaStream& stream) const {
  if (impl_->kernels == nullptr) {
    return Internal(impl_->what + ": a kernel launch without kernels");
  }
  return impl_->kernels->Launch(kernel.kernel, kernel.threads, args,
                                stream.get());
}

Status CudaProgram::Gemm(const codegen::Action& gemm, const void* a,
                         const void* b, void* c,
                         const CudaStream& stream) const {
  if (impl_->gemms == nullptr) {
    return Internal(impl_->what + ": a GEMM without cuBLASLt plans");
  }
  return impl_->gemms->Run(gemm, a, b, c, stream.get());
}

}  // namespace baton::cuda
