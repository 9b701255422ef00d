// CudaError: a failed CUDA runtime call as a baton Status.
//
// Every CUDA runtime call in backend/cuda returns a cudaError_t that is
// checked; a failure becomes a Status whose message names the operation, the
// device, the CUDA call and CUDA's own description, and says what to do when
// the error leaves the CUDA context unusable. The error is also cleared from
// the runtime's per-thread "last error", so it is never reported twice.
//
// Thread-safety: stateless.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "baton/core/status.h"

namespace baton::cuda {

// "cudaErrorMemoryAllocation (out of memory)".
std::string CudaErrorText(cudaError_t error);

// The Status for `call` ("cudaMemcpyAsync") failing with `error` while doing
// `what` ("cuda:0: copying 4096 bytes on the host-to-device stream"):
// ResourceExhausted for out-of-memory, FailedPrecondition when no usable
// device or driver is there, Internal otherwise. OK for cudaSuccess.
Status CudaError(cudaError_t error, const char* call, const std::string& what);

}  // namespace baton::cuda
