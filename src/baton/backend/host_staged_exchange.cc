#include "baton/backend/host_staged_exchange.h"

#include <cstddef>

#include "baton/runtime/transfer.h"

namespace baton {

std::string HostStagedExchange::name() const {
  return std::string("host-staged over ") + group_->backend();
}

Result<std::vector<std::vector<Array>>> HostStagedExchange::Gather(
    const std::vector<Array>& local, const std::vector<int>& process_of,
    int process_index, const std::vector<std::vector<int>>& wanted) {
  (void)process_index;
  if (local.empty() || wanted.size() != local.size()) {
    return InvalidArgument(
        "host-staged exchange: " + std::to_string(local.size()) +
        " local blocks and " + std::to_string(wanted.size()) +
        " lists of wanted positions; give one per local mesh position");
  }
  const Array& first = local[0];
  const size_t bytes = static_cast<size_t>(first.nbytes());
  const size_t per_process = local.size() * bytes;
  const size_t processes = static_cast<size_t>(group_->size());
  std::vector<char> mine(per_process), all(per_process * processes);
  for (size_t k = 0; k < local.size(); ++k) {
    if (bytes == 0) break;
    BATON_RETURN_IF_ERROR(CopyToHost(local[k], mine.data() + k * bytes, bytes));
  }
  if (per_process > 0) {
    BATON_RETURN_IF_ERROR(group_->AllGather(mine.data(), all.data(), per_process));
  }
  // Where position e's bytes are in `all`: process p's blocks arrive in the
  // mesh order of its positions.
  const size_t n = process_of.size();
  std::vector<const char*> at(n, nullptr);
  std::vector<size_t> next(processes, 0);
  for (size_t e = 0; e < n; ++e) {
    const size_t p = static_cast<size_t>(process_of[e]);
    at[e] = all.data() + p * per_process + next[p]++ * bytes;
  }
  std::vector<std::vector<Array>> out(local.size(), std::vector<Array>(n));
  for (size_t k = 0; k < local.size(); ++k) {
    for (int e : wanted[k]) {
      // DevicePut snapshots the bytes before it returns.
      BATON_ASSIGN_OR_RETURN(
          out[k][e],
          DevicePut(HostBuffer{at[e], first.shape(), first.dtype()},
                    local[k].device(), first.memory_kind()));
    }
  }
  return out;
}

}  // namespace baton
