// The dimensions of a dot_general operand that are neither batch nor
// contracting ("free" dimensions), in increasing order -- the order they
// take in the result, after the batch dimensions (StableHLO dot_general).
// Shared by the CPU kernel, the CUDA emitter, sharding propagation and
// their tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace baton {

inline std::vector<int64_t> DotFreeDimensions(
    int rank, const std::vector<int64_t>& batch,
    const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) ==
            contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

}  // namespace baton
