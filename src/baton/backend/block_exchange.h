// BlockExchange: how the devices of one process receive the blocks that
// other processes' devices hold, for an SPMD executable whose mesh spans
// processes (jit/spmd_executable.h: a communication stage that crosses
// processes). Every process calls Gather for the same stages, in the same
// order, with its own blocks: it is a collective.
//
// Two engines:
//  - HostStagedExchange (host_staged_exchange.h): each block is copied to
//    the host, exchanged by the process group's all-gather (Gloo or MPI,
//    collectives/process_group.h) and put on the devices that need it.
//    Works for every platform and memory kind; waits on the host.
//  - NcclBlockExchange (cuda/nccl_block_exchange.h): the blocks move
//    between the GPUs' device memory through NCCL, enqueued on each
//    device's compute stream behind the work that made them; nothing waits
//    on the host. One CUDA device per process.
//
// Ownership: whoever makes an exchange owns it (bt.distributed keeps the
// process's); an executable refers to it and must not outlive it.
// Thread-safety: Gather is a collective -- one call at a time per process,
// in the same order on every process (as ProcessGroup's collectives).
#pragma once

#include <string>
#include <vector>

#include "baton/core/memory_kind.h"
#include "baton/core/status.h"
#include "baton/runtime/array.h"
#include "baton/runtime/device.h"

namespace baton {

class BlockExchange {
 public:
  virtual ~BlockExchange() = default;

  // "host-staged over gloo", "nccl".
  virtual std::string name() const = 0;

  // Whether Gather can move blocks of memory kind `kind` between
  // `local_devices` (this process's devices of the mesh, in mesh order)
  // and the other processes' devices. HostStagedExchange serves every
  // case; NCCL only one CUDA device's device memory per process.
  virtual bool Serves(const std::vector<Device*>& local_devices,
                      MemoryKind kind) const = 0;

  // One exchange of a value's blocks.
  //  - `local[k]`: the block of this process's k-th mesh position (in mesh
  //    order), on that position's device; all of one shape, dtype and
  //    memory kind, and Serves(their devices, kind) must hold.
  //  - `process_of[e]`: the process holding mesh position e; this
  //    process's positions are those of `process_index`.
  //  - `wanted[k]`: the mesh positions of other processes whose blocks
  //    this process's k-th device needs.
  // Returns, per local position k, a vector over the mesh positions: at e
  // (for each e in wanted[k]) the block of position e on local device k,
  // in `local`'s memory kind, defined once it has arrived (it may still be
  // in flight); invalid Arrays elsewhere. Errors name the exchange and
  // leave `local` untouched; a peer's failure is the engine's error
  // (a timeout over Gloo, NCCL's message).
  virtual Result<std::vector<std::vector<Array>>> Gather(
      const std::vector<Array>& local, const std::vector<int>& process_of,
      int process_index, const std::vector<std::vector<int>>& wanted) = 0;
};

}  // namespace baton
