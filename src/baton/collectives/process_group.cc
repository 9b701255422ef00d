// What every ProcessGroup engine shares (process_group.h): the argument
// checks and the agreement on each call before the engine runs it.
#include "baton/collectives/process_group.h"

#include <string>
#include <vector>

namespace baton::collectives {
namespace {

std::string DescribeCall(uint32_t collective, uint32_t dtype, uint64_t count,
                         int64_t detail) {
  switch (collective) {
    case 1: {
      static constexpr const char* kOps[] = {"sum", "max", "min"};
      const char* op = detail >= 0 && detail < 3 ? kOps[detail] : "?";
      return std::string("all_reduce(") + op + ") of " +
             std::string(dtype_name(static_cast<DType>(dtype))) + "[" +
             std::to_string(count) + "]";
    }
    case 2:
      return "all_gather of " + std::to_string(count) + " bytes";
    case 3:
      return "broadcast of " + std::to_string(count) + " bytes from process " +
             std::to_string(detail);
    case 4:
      return "barrier";
    default:
      return "an unknown collective (" + std::to_string(collective) + ")";
  }
}

}  // namespace

Status CheckBroadcastRoot(int root, int size) {
  if (root >= 0 && root < size) return OkStatus();
  return InvalidArgument("broadcast root is " + std::to_string(root) +
                         "; it must be in [0, process_count=" + std::to_string(size) + ")");
}

Status ProcessGroup::Agree(const CallHeader& mine) {
  if (size() == 1) return OkStatus();
  std::vector<CallHeader> all(static_cast<size_t>(size()));
  if (Status s = DoAllGather(&mine, all.data(), sizeof(CallHeader)); !s.ok()) {
    const std::string call = DescribeCall(mine.collective, mine.dtype, mine.count, mine.detail);
    return Status(s.code(), call.substr(0, call.find_first_of(" (")) + " failed on process " +
                                std::to_string(rank()) + " of " + std::to_string(size()) +
                                " while agreeing on the call with the others: " + s.message());
  }
  bool same = true;
  for (const CallHeader& h : all) {
    same = same && h.collective == all[0].collective && h.dtype == all[0].dtype &&
           h.count == all[0].count && h.detail == all[0].detail;
  }
  if (same) return OkStatus();
  std::string calls;
  for (size_t i = 0; i < all.size(); ++i) {
    calls += (i ? "; process " : "process ") + std::to_string(i) + ": " +
             DescribeCall(all[i].collective, all[i].dtype, all[i].count, all[i].detail);
  }
  return InvalidArgument(
      "the processes called different collectives (" + calls +
      "); every process must call the same collectives, with the same shapes, "
      "dtypes and ops, in the same order. Nothing was exchanged");
}

Status ProcessGroup::AllReduce(void* data, size_t count, DType dtype, ReduceOp op) {
  if (Status s = Agree({1, static_cast<uint32_t>(dtype), count, static_cast<int64_t>(op)});
      !s.ok()) {
    return s;
  }
  return DoAllReduce(data, count, dtype, op);
}

Status ProcessGroup::AllGather(const void* in, void* out, size_t bytes) {
  if (Status s = Agree({2, 0, bytes, 0}); !s.ok()) return s;
  return DoAllGather(in, out, bytes);
}

Status ProcessGroup::Broadcast(void* data, size_t bytes, int root) {
  if (Status s = CheckBroadcastRoot(root, size()); !s.ok()) return s;
  if (Status s = Agree({3, 0, bytes, root}); !s.ok()) return s;
  return DoBroadcast(data, bytes, root);
}

Status ProcessGroup::Barrier() {
  if (Status s = Agree({4, 0, 0, 0}); !s.ok()) return s;
  return DoBarrier();
}

}  // namespace baton::collectives
