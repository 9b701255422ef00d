// A CUDA stream as the GPU executable's command list uses it (cuda_stream.h).
#include "baton/backend/cuda/cuda_stream.h"

#include <cuda_runtime_api.h>

#include "baton/backend/cuda/cuda_error.h"

namespace baton::cuda {

CudaStream::CudaStream(int ordinal, CUstream_st* stream)
    : ordinal_(ordinal), stream_(stream) {}

std::string CudaStream::Doing(const std::string& what) const {
  return "cuda:" + std::to_string(ordinal_) + ": " + what;
}

Status CudaStream::Copy(void* dst, const void* src, int64_t bytes) const {
  if (bytes <= 0 || dst == src) return OkStatus();
  const cudaError_t error = cudaMemcpyAsync(
      dst, src, static_cast<size_t>(bytes), cudaMemcpyDefault, stream_);
  if (error == cudaSuccess) return OkStatus();  // no message to build
  return CudaError(error, "cudaMemcpyAsync",
                   Doing("copying " + std::to_string(bytes) +
                         " bytes on the compute stream"));
}

namespace {

// A copy on `stream`, then a wait for everything on it so far.
Status CopyAndWait(cudaStream_t stream, void* dst, const void* src,
                   int64_t bytes, const std::string& doing) {
  BATON_RETURN_IF_ERROR(
      CudaError(cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes),
                                cudaMemcpyDefault, stream),
                "cudaMemcpyAsync", doing));
  return CudaError(cudaStreamSynchronize(stream), "cudaStreamSynchronize",
                   doing);
}

}  // namespace

Status CudaStream::Read(void* dst, const void* src, int64_t bytes) const {
  if (bytes <= 0) return OkStatus();
  return CopyAndWait(stream_, dst, src, bytes,
                     Doing("reading " + std::to_string(bytes) +
                           " bytes back to the host"));
}

Status CudaStream::Write(void* dst, const void* src, int64_t bytes) const {
  if (bytes <= 0) return OkStatus();
  return CopyAndWait(stream_, dst, src, bytes,
                     Doing("writing " + std::to_string(bytes) +
                           " bytes from the host"));
}

Status CudaStream::Synchronize() const {
  return CudaError(cudaStreamSynchronize(stream_), "cudaStreamSynchronize",
                   Doing("waiting for the compute stream"));
}

}  // namespace baton::cuda
