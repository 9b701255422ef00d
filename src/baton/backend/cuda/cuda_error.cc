#include "baton/backend/cuda/cuda_error.h"

namespace baton::cuda {
namespace {

// Errors after which every later CUDA call of this process fails as well.
bool IsSticky(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string CudaErrorText(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" +
         cudaGetErrorString(error) + ")";
}

Status CudaError(cudaError_t error, const char* call, const std::string& what) {
  if (error == cudaSuccess) return OkStatus();
  (void)cudaGetLastError();  // reported here; do not leave it for the next call
  std::string message =
      what + " failed: " + call + " returned " + CudaErrorText(error);
  switch (error) {
    case cudaErrorMemoryAllocation:
      return ResourceExhausted(message +
                               "; free arrays or lower the memory in use");
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
      return FailedPrecondition(
          message + "; check the GPU with nvidia-smi and CUDA_VISIBLE_DEVICES");
    default:
      if (IsSticky(error)) {
        message +=
            "; the CUDA context of this process is now unusable, restart it";
      }
      return Internal(std::move(message));
  }
}

}  // namespace baton::cuda
