// ProcessGroup::ConnectMpi when CMake found no MPI: it says so.
#include "baton/collectives/process_group.h"

namespace baton::collectives {

bool ProcessGroup::MpiAvailable() { return false; }

Result<std::unique_ptr<ProcessGroup>> ProcessGroup::ConnectMpi() {
  return Unimplemented("baton was built without MPI, so it cannot join an mpirun job; "
                       "install libopenmpi-dev (tools/install_deps.sh) and rebuild, or "
                       "start the processes with tools/launch_processes.py (Gloo)");
}

}  // namespace baton::collectives
