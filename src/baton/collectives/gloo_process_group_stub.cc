// ProcessGroup::Connect when CMake found no Gloo: it says so.
#include "baton/collectives/process_group.h"

namespace baton::collectives {

bool ProcessGroup::GlooAvailable() { return false; }

Result<std::unique_ptr<ProcessGroup>> ProcessGroup::Connect(const ProcessGroupOptions&) {
  return Unimplemented("baton was built without Gloo, so it cannot join several processes; "
                       "install libgloo-dev (tools/install_deps.sh) and rebuild");
}

}  // namespace baton::collectives
