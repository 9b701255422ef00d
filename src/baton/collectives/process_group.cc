// What every ProcessGroup engine shares (process_group.h).
#include "baton/collectives/process_group.h"

#include <string>

namespace baton::collectives {

Status CheckBroadcastRoot(int root, int size) {
  if (root >= 0 && root < size) return OkStatus();
  return InvalidArgument("broadcast root is " + std::to_string(root) +
                         "; it must be in [0, process_count=" + std::to_string(size) + ")");
}

}  // namespace baton::collectives
