#include "baton/compiler/block_copy.h"

#include <cstring>
#include <vector>

namespace baton::compiler {
namespace {

// Calls f(block_offset, global_offset) for every contiguous run of a block
// of shape `block` at `origin` in an array of shape `global` (row-major
// element offsets; a run is the block's last dimension).
template <typename F>
void ForEachRun(const Shape& global, const Shape& block,
                const std::vector<int64_t>& origin, F f) {
  const int64_t n = block.num_elements();
  if (n == 0) return;
  if (block.rank() == 0) {
    f(0, 0, 1);
    return;
  }
  const int last = block.rank() - 1;
  const int64_t run = block.dim(last);
  const std::vector<int64_t> strides = global.strides();
  std::vector<int64_t> index(block.rank(), 0);
  for (int64_t i = 0; i < n; i += run) {
    int64_t g = 0;
    for (int d = 0; d < block.rank(); ++d) g += (origin[d] + index[d]) * strides[d];
    f(i, g, run);
    for (int d = last; d-- > 0;) {
      if (++index[d] < block.dim(d)) break;
      index[d] = 0;
    }
  }
}

// Copies between the whole array's bytes and the block's, either way.
void CopyBlock(bool out, const void* from, const Shape& global,
               size_t element_bytes, const Sharding& sharding,
               const DeviceMesh& mesh, int64_t device, void* to) {
  const auto* src = static_cast<const char*>(from);
  auto* dst = static_cast<char*>(to);
  const size_t e = element_bytes;
  ForEachRun(global, BlockShape(global, sharding, mesh),
             BlockOrigin(global, sharding, mesh, device),
             [&](int64_t b, int64_t g, int64_t run) {
               const int64_t s = out ? g : b, d = out ? b : g;
               std::memcpy(dst + d * e, src + s * e, run * e);
             });
}

}  // namespace

void CopyBlockOut(const void* whole, const Shape& global, size_t element_bytes,
                  const Sharding& sharding, const DeviceMesh& mesh,
                  int64_t device, void* block) {
  CopyBlock(true, whole, global, element_bytes, sharding, mesh, device, block);
}

void CopyBlockIn(const void* block, const Shape& global, size_t element_bytes,
                 const Sharding& sharding, const DeviceMesh& mesh,
                 int64_t device, void* whole) {
  CopyBlock(false, block, global, element_bytes, sharding, mesh, device, whole);
}

}  // namespace baton::compiler
