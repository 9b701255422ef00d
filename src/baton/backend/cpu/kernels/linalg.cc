#include "baton/backend/cpu/kernels/linalg.h"

#include <algorithm>

#include "baton/backend/cpu/kernels/parallel.h"

namespace baton::cpu {

void Linalg(const LinalgOptions& options, DType dtype, const void* a,
            const Shape& a_shape, const void* b, const Shape& b_shape,
            void* out) {
  const LinalgGeometry g = LinalgGeometryOf(options, a_shape, b_shape);
  if (g.batch == 0 || g.out_size == 0) return;  // nothing to write
  // A matrix costs ~n^3 flops: batches of small matrices are split, a few
  // large ones are left to OpenBLAS's own threads.
  const int64_t n = std::max<int64_t>({g.m, g.n, g.b_cols, g.b_rows, 1});
  const int64_t cost = n * n * n;
  const int64_t grain = std::max<int64_t>(1, 64 * kExpensiveGrain / cost);
  ParallelRanges(
      g.batch, grain,
      [&](int64_t lo, int64_t hi) {
        LinalgBatches(options, dtype, g, a, b, out, lo, hi);
      },
      1);
}

}  // namespace baton::cpu
