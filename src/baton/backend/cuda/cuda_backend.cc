#include "baton/backend/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>

#include "baton/backend/cuda/cuda_error.h"
#include "baton/backend/cuda/cuda_region_provider.h"
#include "baton/runtime/parallel_copy.h"

namespace baton::cuda {
namespace {

const char* StreamName(QueueKind queue) {
  switch (queue) {
    case QueueKind::kCompute:
      return "compute";
    case QueueKind::kHostToDevice:
      return "host-to-device";
    case QueueKind::kDeviceToHost:
      return "device-to-host";
  }
  return "unknown";
}

// "cuda:0: copying 4096 bytes on the host-to-device stream".
std::string Doing(int ordinal, QueueKind queue, const std::string& what) {
  return "cuda:" + std::to_string(ordinal) + ": " + what + " on the " +
         StreamName(queue) + " stream";
}

// True for memory the CPU may touch directly: pageable memory CUDA does not
// know and page-locked host memory. Device and managed memory, and anything
// CUDA cannot classify, go through CUDA copies.
bool IsHostMemory(const void* ptr) {
  cudaPointerAttributes attributes{};
  const cudaError_t error = cudaPointerGetAttributes(&attributes, ptr);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeUnregistered ||
         attributes.type == cudaMemoryTypeHost;
}

}  // namespace

CudaBackend::CudaBackend(int device_count)
    : streams_(static_cast<size_t>(std::max(device_count, 0))) {
  for (auto& per_device : streams_) per_device.fill(nullptr);
}

CudaBackend::~CudaBackend() {
  for (size_t ordinal = 0; ordinal < streams_.size(); ++ordinal) {
    for (CUstream_st* stream : streams_[ordinal]) {
      if (stream == nullptr) continue;
      // Teardown: nothing to report to, and the stream is idle (every Copy
      // and Fill synchronized it).
      if (cudaSetDevice(static_cast<int>(ordinal)) == cudaSuccess) {
        (void)cudaStreamDestroy(stream);
      }
      (void)cudaGetLastError();
    }
  }
}

std::unique_ptr<RegionProvider> CudaBackend::MakeRegionProvider(
    int device_ordinal, MemoryKind kind) {
  // No CUDA call here: a Device is created without touching its GPU (the
  // context is made on the first allocation or copy).
  return MakeCudaRegionProvider(device_ordinal, kind);
}

Status CudaBackend::CheckOrdinal(int ordinal) const {
  if (ordinal >= 0 && ordinal < device_count()) return OkStatus();
  return InvalidArgument("CUDA device ordinal " + std::to_string(ordinal) +
                         " is out of range: the CUDA backend has " +
                         std::to_string(device_count()) + " device(s)");
}

Status CudaBackend::StreamFor(int ordinal, QueueKind queue,
                              CUstream_st** stream) {
  BATON_RETURN_IF_ERROR(CheckOrdinal(ordinal));
  BATON_RETURN_IF_ERROR(
      CudaError(cudaSetDevice(ordinal), "cudaSetDevice",
                "cuda:" + std::to_string(ordinal) + ": selecting the device"));
  std::lock_guard<std::mutex> lock(mu_);
  CUstream_st*& slot = streams_[ordinal][static_cast<int>(queue)];
  if (slot == nullptr) {
    cudaStream_t created = nullptr;
    BATON_RETURN_IF_ERROR(
        CudaError(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking),
                  "cudaStreamCreateWithFlags",
                  Doing(ordinal, queue, "creating the stream")));
    slot = created;
  }
  *stream = slot;
  return OkStatus();
}

Status CudaBackend::Copy(int device_ordinal, QueueKind queue, void* dst,
                         const void* src, size_t bytes) {
  if (bytes == 0) return OkStatus();
  BATON_RETURN_IF_ERROR(CheckOrdinal(device_ordinal));
  if (IsHostMemory(dst) && IsHostMemory(src)) {
    ParallelCopy(dst, src, bytes);  // no stream, no device switch
    return OkStatus();
  }
  cudaStream_t stream = nullptr;
  BATON_RETURN_IF_ERROR(StreamFor(device_ordinal, queue, &stream));
  const auto doing = [&] {
    return Doing(device_ordinal, queue,
                 "copying " + std::to_string(bytes) + " bytes");
  };
  BATON_RETURN_IF_ERROR(
      CudaError(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream),
                "cudaMemcpyAsync", doing()));
  return CudaError(cudaStreamSynchronize(stream), "cudaStreamSynchronize",
                   doing());
}

Status CudaBackend::Fill(int device_ordinal, QueueKind queue, void* dst,
                         int64_t count, size_t elem_bytes, uint64_t pattern) {
  if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4 &&
      elem_bytes != 8) {
    return InvalidArgument("Fill: element size " + std::to_string(elem_bytes) +
                           " is not 1, 2, 4 or 8 bytes");
  }
  if (count <= 0) return OkStatus();
  const size_t total = static_cast<size_t>(count) * elem_bytes;
  BATON_RETURN_IF_ERROR(CheckOrdinal(device_ordinal));
  if (IsHostMemory(dst)) {
    FillHost(dst, count, elem_bytes, pattern);
    return OkStatus();
  }
  cudaStream_t stream = nullptr;
  BATON_RETURN_IF_ERROR(StreamFor(device_ordinal, queue, &stream));
  const std::string doing =
      Doing(device_ordinal, queue,
            "filling " + std::to_string(count) + " elements of " +
                std::to_string(elem_bytes) + " bytes");

  // The element's bytes, little-endian (what FillHost writes).
  unsigned char element[8];
  std::memcpy(element, &pattern, sizeof(element));
  const bool byte_uniform =
      std::all_of(element, element + elem_bytes,
                  [&](unsigned char b) { return b == element[0]; });
  if (byte_uniform) {
    BATON_RETURN_IF_ERROR(
        CudaError(cudaMemsetAsync(dst, element[0], total, stream),
                  "cudaMemsetAsync", doing));
    return CudaError(cudaStreamSynchronize(stream), "cudaStreamSynchronize",
                     doing);
  }

  // A general pattern: a seed of whole elements from the host, then the
  // filled prefix doubles with device-to-device copies (log2 steps).
  // kFillSeedBytes is a multiple of every element size, so the seed is too.
  const size_t seed_bytes = std::min(total, kFillSeedBytes);
  std::vector<unsigned char> seed(seed_bytes);
  FillHost(seed.data(), static_cast<int64_t>(seed_bytes / elem_bytes),
           elem_bytes, pattern);
  char* out = static_cast<char*>(dst);
  Status status = CudaError(cudaMemcpyAsync(out, seed.data(), seed_bytes,
                                            cudaMemcpyHostToDevice, stream),
                            "cudaMemcpyAsync", doing);
  for (size_t filled = seed_bytes; status.ok() && filled < total;) {
    const size_t n = std::min(filled, total - filled);
    status = CudaError(
        cudaMemcpyAsync(out + filled, out, n, cudaMemcpyDeviceToDevice, stream),
        "cudaMemcpyAsync", doing);
    filled += n;
  }
  // Always synchronize: whatever was enqueued must be done before `seed`
  // goes away and before the caller sees the result.
  Status synced =
      CudaError(cudaStreamSynchronize(stream), "cudaStreamSynchronize", doing);
  return status.ok() ? synced : status;
}

}  // namespace baton::cuda
