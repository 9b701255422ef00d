#include "baton/backend/cuda/nccl_block_exchange.h"

#include <utility>

#include "baton/backend/cuda/cuda_backend.h"
#include "baton/backend/cuda/nccl_process_group.h"
#include "baton/runtime/tracked_buffer.h"
#include "baton/runtime/transfer.h"

namespace baton::cuda {

NcclBlockExchange::NcclBlockExchange(Device* device,
                                     std::unique_ptr<NcclProcessGroup> nccl)
    : device_(device), nccl_(std::move(nccl)) {}

Result<std::unique_ptr<NcclBlockExchange>> NcclBlockExchange::Connect(
    collectives::ProcessGroup& group, Device* device) {
  if (device == nullptr ||
      dynamic_cast<CudaBackend*>(&device->backend()) == nullptr) {
    return InvalidArgument(
        "NCCL exchange: " +
        (device == nullptr ? std::string("no device") : device->ToString()) +
        " is not a CUDA device; NCCL moves blocks between GPUs");
  }
  BATON_ASSIGN_OR_RETURN(
      std::unique_ptr<NcclProcessGroup> nccl,
      NcclProcessGroup::ConnectOver(group, device->ordinal()));
  return std::unique_ptr<NcclBlockExchange>(
      new NcclBlockExchange(device, std::move(nccl)));
}

bool NcclBlockExchange::Serves(const std::vector<Device*>& local_devices,
                               MemoryKind kind) const {
  return local_devices.size() == 1 && local_devices[0] == device_ &&
         kind == MemoryKind::kDevice;
}

Result<std::vector<std::vector<Array>>> NcclBlockExchange::Gather(
    const std::vector<Array>& local, const std::vector<int>& process_of,
    int process_index, const std::vector<std::vector<int>>& wanted) {
  if (local.size() != 1 || wanted.size() != 1 ||
      !Serves({local[0].device()}, local[0].memory_kind())) {
    return InvalidArgument(
        "NCCL exchange: it moves one block of " + device_->ToString() +
        "'s device memory per process; use the host-staged exchange for "
        "other layouts");
  }
  const Array& block = local[0];
  const size_t n = process_of.size();
  int own = -1;
  for (size_t e = 0; e < n; ++e) {
    if (process_of[e] == process_index) own = static_cast<int>(e);
  }
  if (own < 0) {
    return InvalidArgument("NCCL exchange: process " +
                           std::to_string(process_index) +
                           " holds no position of the mesh");
  }
  // Every wanted position is checked before anything is allocated or
  // enqueued, so a refused call leaves nothing behind.
  for (int e : wanted[0]) {
    if (e < 0 || static_cast<size_t>(e) >= n || e == own) {
      return InvalidArgument(
          "NCCL exchange: wanted position " + std::to_string(e) +
          (e == own
               ? " is this process's own, not another's"
               : " is outside the mesh's " + std::to_string(n) + " positions"));
    }
  }
  std::vector<std::vector<Array>> out(1, std::vector<Array>(n));
  const size_t bytes = static_cast<size_t>(block.nbytes());
  if (bytes == 0) {
    for (int e : wanted[0]) {
      BATON_ASSIGN_OR_RETURN(out[0][e], Empty(block.shape(), block.dtype(),
                                              device_, block.memory_kind()));
    }
    return out;
  }
  WorkQueue& queue = device_->queue(QueueKind::kCompute);
  MemorySpace* space = &device_->memory_space(block.memory_kind());
  BATON_ASSIGN_OR_RETURN(UsageHold hold, block.impl()->AcquireRead());
  std::vector<std::shared_ptr<TrackedBuffer>> received(n);
  std::vector<void*> at(n, nullptr);
  for (size_t e = 0; e < n; ++e) {
    if (static_cast<int>(e) == own) {
      at[e] = hold.data();
      continue;
    }
    BATON_ASSIGN_OR_RETURN(
        received[e],
        TrackedBuffer::Allocate(
            space, bytes, queue.id(),
            AllocationLabel(std::string(dtype_name(block.dtype())) +
                                block.shape().to_string(),
                            AllocationKind::kArray,
                            "baton::NcclBlockExchange")));
    at[e] = received[e]->data();
  }
  auto* cuda = dynamic_cast<CudaBackend*>(&device_->backend());
  const int ordinal = device_->ordinal();
  const std::string what =
      "exchanging " + std::to_string(bytes) + "-byte blocks through NCCL";
  // The broadcasts run in queue order behind the block's definition; the
  // communicator stays alive until the device is past them.
  Event done = queue.EnqueueLaunch(
      hold.dependencies(),
      [cuda, ordinal, nccl = nccl_, at, process_of, bytes, what]() {
        return cuda->LaunchAsync(
            ordinal, QueueKind::kCompute, what,
            [&](CUstream_st* stream) -> Status {
              for (size_t e = 0; e < at.size(); ++e) {
                BATON_RETURN_IF_ERROR(nccl->Broadcast(
                    at[e], at[e], bytes, DType::kUInt8, process_of[e], stream));
              }
              return OkStatus();
            },
            nccl);
      });
  hold.Finish(done);
  for (size_t e = 0; e < n; ++e) {
    if (received[e]) received[e]->SetDefinitionEvent(done);
  }
  for (int e : wanted[0]) {
    out[0][e] =
        Array(ArrayImpl::Create(device_, block.memory_kind(), block.shape(),
                                block.dtype(), received[e]));
  }
  return out;
}

}  // namespace baton::cuda
