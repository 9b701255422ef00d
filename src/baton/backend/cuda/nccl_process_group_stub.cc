// NcclProcessGroup in a build without the CUDA backend: Connect says so;
// nothing else is reachable (no group is ever made).
#include "baton/backend/cuda/nccl_process_group.h"

namespace baton::cuda {

struct NcclProcessGroup::Impl {};

bool NcclProcessGroup::Built() { return false; }

const std::string& NcclProcessGroup::UnavailableReason() {
  static const std::string reason =
      "baton was built without the CUDA backend, which NCCL needs; rebuild "
      "with a CUDA toolkit (-DBATON_CUDA=AUTO or ON)";
  return reason;
}

NcclProcessGroup::NcclProcessGroup() = default;
NcclProcessGroup::~NcclProcessGroup() = default;
int NcclProcessGroup::rank() const { return 0; }
int NcclProcessGroup::size() const { return 0; }
int NcclProcessGroup::cuda_device() const { return 0; }

Result<std::unique_ptr<NcclProcessGroup>> NcclProcessGroup::Connect(
    const NcclOptions&) {
  return Unimplemented("NCCL group: " + UnavailableReason());
}

Result<std::unique_ptr<NcclProcessGroup>> NcclProcessGroup::ConnectOver(
    collectives::ProcessGroup&, int) {
  return Unimplemented("NCCL group: " + UnavailableReason());
}

Status NcclProcessGroup::AllReduce(const void*, void*, size_t, DType,
                                   collectives::ReduceOp, CUstream_st*) {
  return Unimplemented(UnavailableReason());
}
Status NcclProcessGroup::AllGather(const void*, void*, size_t, DType,
                                   CUstream_st*) {
  return Unimplemented(UnavailableReason());
}
Status NcclProcessGroup::ReduceScatter(const void*, void*, size_t, DType,
                                       collectives::ReduceOp, CUstream_st*) {
  return Unimplemented(UnavailableReason());
}
Status NcclProcessGroup::Broadcast(const void*, void*, size_t, DType, int,
                                   CUstream_st*) {
  return Unimplemented(UnavailableReason());
}

Status NcclProcessGroup::Synchronize(CUstream_st*) const {
  return Unimplemented(UnavailableReason());
}

}  // namespace baton::cuda
