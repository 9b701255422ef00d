// NcclBlockExchange: the BlockExchange (backend/block_exchange.h) of
// processes with one GPU each -- a value's blocks move between the GPUs'
// device memory through NCCL, on the compute stream, in stream order with
// the kernels that make and read them.
//
// Gather enqueues, on this process's device's compute queue behind the
// work that defines its block, one ncclBroadcast per mesh position (rooted
// at the process holding it; mesh order, the same on every process) into a
// fresh block of device memory per other position; the root broadcasts
// its own block in place. Nothing waits on the host: the received blocks
// are defined by the event of that work. Each device receives every
// position's block (a broadcast needs every rank); the ones no stage wants
// are released when the work is done.
//
// Hangs: NCCL has no timeout. Before a call's exchanges SpmdExecutable
// checks over the host group (Gloo or MPI, bounded by its timeout) that
// every process runs the same ones; a process that dies mid-exchange
// leaves the others' streams waiting, as it does in every NCCL program.
//
// Built with the CUDA backend (nccl_block_exchange.cc); otherwise
// nccl_block_exchange_stub.cc, whose Connect says what the build lacks.
//
// Ownership: owns its NCCL communicator; refers to the Device, which must
// outlive it.
// Thread-safety: as BlockExchange (one Gather at a time, in the same order
// on every process).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "baton/backend/block_exchange.h"
#include "baton/collectives/process_group.h"

namespace baton::cuda {

class NcclProcessGroup;

class NcclBlockExchange final : public BlockExchange {
 public:
  // Joins NCCL with the processes of `group` (a connected Gloo or MPI
  // group; NCCL's id is broadcast through it) on `device`, a CUDA device of
  // this process. InvalidArgument when `device` is not a CUDA device;
  // NcclProcessGroup::ConnectOver's errors otherwise (no NCCL, no GPU).
  static Result<std::unique_ptr<NcclBlockExchange>> Connect(
      collectives::ProcessGroup& group, Device* device);
  ~NcclBlockExchange() override = default;

  Device* device() const { return device_; }

  std::string name() const override { return "nccl"; }
  // One local device, this exchange's, and device memory.
  bool Serves(const std::vector<Device*>& local_devices,
              MemoryKind kind) const override;
  Result<std::vector<std::vector<Array>>> Gather(
      const std::vector<Array>& local, const std::vector<int>& process_of,
      int process_index, const std::vector<std::vector<int>>& wanted) override;

 private:
  // Defined with the real exchange only (the stub never makes one).
  NcclBlockExchange(Device* device, std::unique_ptr<NcclProcessGroup> nccl);

  Device* device_;  // not owned
  std::shared_ptr<NcclProcessGroup> nccl_;
};

}  // namespace baton::cuda
