// HostStagedExchange: the BlockExchange (block_exchange.h) of every
// platform -- the blocks go through the host and a process group's
// all-gather (Gloo or MPI).
//
// Gather copies each local block to the host (waiting for it), all-gathers
// them through the group (process p's blocks arrive in the mesh order of
// its positions), then puts each wanted block on the device that wants it
// (an asynchronous copy from a host snapshot). Memory on a device: the
// blocks it wants, nothing else; on the host, every process's blocks
// during the call.
//
// Ownership: refers to `group`, which must outlive it.
// Thread-safety: as BlockExchange (one Gather at a time, in the same order
// on every process).
#pragma once

#include <string>
#include <vector>

#include "baton/backend/block_exchange.h"
#include "baton/collectives/process_group.h"

namespace baton {

class HostStagedExchange final : public BlockExchange {
 public:
  explicit HostStagedExchange(collectives::ProcessGroup* group)
      : group_(group) {}

  std::string name() const override;
  bool Serves(const std::vector<Device*>&, MemoryKind) const override {
    return true;
  }
  Result<std::vector<std::vector<Array>>> Gather(
      const std::vector<Array>& local, const std::vector<int>& process_of,
      int process_index, const std::vector<std::vector<int>>& wanted) override;

 private:
  collectives::ProcessGroup* group_;  // not owned
};

}  // namespace baton
