// NcclProcessGroup: several processes, one CUDA device each, joined for
// collectives on device memory through NCCL -- all-reduce, all-gather,
// reduce-scatter and broadcast of device buffers, enqueued on a CUDA stream
// the caller gives (the device's compute stream, so they are ordered with
// the kernels that produce and consume the buffers) and returning at once.
//
// Not a collectives::ProcessGroup: that interface is host memory, with
// each call first agreed by an all-gather of headers through the engine;
// NCCL works on device memory and streams, and an agreement read back to
// the host per call would synchronise the stream it is meant to run on. It
// shares ProcessGroupOptions (coordinator address, process count and id,
// timeouts) and the coordinator: process 0 makes NCCL's unique id and
// publishes it in the coordinator's store (collectives/coordinator.h,
// served by process 0 as for Gloo), every process reads it and calls
// ncclCommInitRank on its device. Several GPUs, one process per GPU; one
// process with one GPU is a group of one (tools/gpu_check.sh runs that).
//
// Loading: NCCL is opened with dlopen on first use (libnccl.so.2, the
// toolkit's folder first, then the loader's path; toolkit_library.h), as
// NVRTC and cuBLASLt are: baton builds and runs without it, and Connect
// says why it cannot. nccl.h is included (by the .cc) for types only.
//
// Builds: with the CUDA backend and the coordinator (Gloo found), the real
// one (nccl_process_group.cc); otherwise nccl_process_group_stub.cc, whose
// Connect says what the build lacks. The dtype and op mappings below are
// pure and built everywhere (checked against nccl.h in the .cc).
//
// Ownership: owns its NCCL communicator (destroyed by the destructor, after
// the device is past its work on it: the destructor synchronises the
// device) and, in process 0, the coordinator server.
// Thread-safety: collectives must be called from one thread at a time and
// in the same order on every process (NCCL's rule); the streams given must
// be streams of cuda_device().
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "baton/collectives/process_group.h"
#include "baton/core/dtype.h"
#include "baton/core/status.h"

struct CUstream_st;  // cudaStream_t

namespace baton::cuda {

// ncclDataType_t of `dtype` (InvalidArgument for bool, int16 and complex
// types, which NCCL has no type for; uint32 is ncclUint32).
Result<int> NcclDataType(DType dtype);
// ncclRedOp_t of `op`.
int NcclRedOp(collectives::ReduceOp op);

struct NcclOptions {
  collectives::ProcessGroupOptions group;
  int cuda_device = 0;  // the ordinal this process computes on
};

class NcclProcessGroup {
 public:
  // Whether this build has the real group (CUDA backend and coordinator).
  static bool Built();
  // "" when NCCL loads, else why not (which names were tried, dlerror,
  // what to install). Loads it on first call.
  static const std::string& UnavailableReason();

  // Joins the group: FailedPrecondition naming the reason when NCCL is not
  // there or the process has no usable CUDA device `cuda_device` (no
  // driver, no GPU); InvalidArgument for a bad process id or count;
  // FailedPrecondition (the coordinator's message, after init_timeout)
  // when process 0 never publishes the id; Internal with NCCL's message when NCCL fails.
  static Result<std::unique_ptr<NcclProcessGroup>> Connect(
      const NcclOptions& options);

  // Joins NCCL with the processes of `ids`, a connected Gloo or MPI group
  // (its rank and size are this group's): process 0 makes NCCL's id and
  // broadcasts it through `ids`, so no second coordinator is served.
  // `cuda_device`: this process's ordinal. Errors as Connect's;
  // FailedPrecondition when the broadcast through `ids` fails.
  static Result<std::unique_ptr<NcclProcessGroup>> ConnectOver(
      collectives::ProcessGroup& ids, int cuda_device);

  ~NcclProcessGroup();
  NcclProcessGroup(const NcclProcessGroup&) = delete;
  NcclProcessGroup& operator=(const NcclProcessGroup&) = delete;

  int rank() const;
  int size() const;
  int cuda_device() const;

  // Enqueued on `stream`; `send` may equal `recv` (in place).
  // Element-wise over `count` elements of every process.
  Status AllReduce(const void* send, void* recv, size_t count, DType dtype,
                   collectives::ReduceOp op, CUstream_st* stream);
  // `recv` holds size() * count: process i's at recv + i * count.
  Status AllGather(const void* send, void* recv, size_t count, DType dtype,
                   CUstream_st* stream);
  // `send` holds size() * recv_count; process i gets the reduction of
  // block i.
  Status ReduceScatter(const void* send, void* recv, size_t recv_count,
                       DType dtype, collectives::ReduceOp op,
                       CUstream_st* stream);
  // Every process's `recv` gets root's `send` (only root's is read).
  Status Broadcast(const void* send, void* recv, size_t count, DType dtype,
                   int root, CUstream_st* stream);
  // Waits until the work enqueued on `stream` (these collectives') is done.
  Status Synchronize(CUstream_st* stream) const;

 private:
  NcclProcessGroup();
  struct Impl;  // nccl_process_group.cc
  // Connect's and ConnectOver's common part: checks, cudaSetDevice, the id
  // (`make_id` fills it in for a group of several processes), the
  // communicator.
  static Result<std::unique_ptr<NcclProcessGroup>> Start(
      const NcclOptions& options,
      const std::function<Status(const std::string& what, void* id, Impl& impl)>&
          make_id);
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::cuda
