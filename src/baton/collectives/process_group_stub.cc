// ProcessGroup when CMake found no Gloo: every entry point says so.
#include "baton/collectives/process_group.h"

namespace baton::collectives {
namespace {
Status NoGloo() {
  return Unimplemented("baton was built without Gloo, so it cannot join several processes; "
                       "install libgloo-dev (tools/install_deps.sh) and rebuild");
}
}  // namespace

struct ProcessGroup::Impl {};
bool ProcessGroup::Available() { return false; }
Result<std::unique_ptr<ProcessGroup>> ProcessGroup::Connect(const ProcessGroupOptions&) {
  return NoGloo();
}
ProcessGroup::ProcessGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ProcessGroup::~ProcessGroup() = default;
int ProcessGroup::rank() const { return 0; }
int ProcessGroup::size() const { return 1; }
Status ProcessGroup::AllReduce(void*, size_t, DType, ReduceOp) { return NoGloo(); }
Status ProcessGroup::AllGather(const void*, void*, size_t) { return NoGloo(); }
Status ProcessGroup::Broadcast(void*, size_t, int) { return NoGloo(); }
Status ProcessGroup::Barrier() { return NoGloo(); }

}  // namespace baton::collectives
