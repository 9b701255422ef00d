// NcclBlockExchange in a build without the CUDA backend: Connect says so;
// no exchange is ever made.
#include "baton/backend/cuda/nccl_block_exchange.h"

#include "baton/backend/cuda/nccl_process_group.h"

namespace baton::cuda {

Result<std::unique_ptr<NcclBlockExchange>> NcclBlockExchange::Connect(
    collectives::ProcessGroup&, Device*) {
  return Unimplemented("NCCL exchange: " + NcclProcessGroup::UnavailableReason());
}

bool NcclBlockExchange::Serves(const std::vector<Device*>&, MemoryKind) const {
  return false;
}

Result<std::vector<std::vector<Array>>> NcclBlockExchange::Gather(
    const std::vector<Array>&, const std::vector<int>&, int,
    const std::vector<std::vector<int>>&) {
  return Unimplemented("NCCL exchange: " + NcclProcessGroup::UnavailableReason());
}

}  // namespace baton::cuda
