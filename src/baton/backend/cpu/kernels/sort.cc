#include "baton/backend/cpu/kernels/sort.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "baton/backend/cpu/kernels/parallel.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/sort_order.h"

namespace baton::cpu {
namespace {

// Rows are (outer, inner) pairs: element k of row (o, i) is at
// (o * n + k) * inner + i.
template <typename T>
void SortRows(const T* x, int64_t n, int64_t inner, bool descending,
              bool indices, void* out, int64_t lo, int64_t hi) {
  using C = ComputeType<T>;
  std::vector<C> keys(static_cast<size_t>(n));
  // int64 positions: a values sort may have rows longer than int32 counts.
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t r = lo; r < hi; ++r) {
    const int64_t base = (r / inner) * n * inner + r % inner;
    for (int64_t k = 0; k < n; ++k) keys[k] = ToCompute(x[base + k * inner]);
    std::iota(perm.begin(), perm.end(), int64_t{0});
    if (indices && descending) {
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
        return SortLess(keys[b], keys[a]);
      });
    } else {
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
        return SortLess(keys[a], keys[b]);
      });
    }
    if (indices) {
      int32_t* o = static_cast<int32_t*>(out);
      for (int64_t k = 0; k < n; ++k)
        o[base + k * inner] = static_cast<int32_t>(perm[k]);
    } else {
      T* o = static_cast<T*>(out);
      for (int64_t k = 0; k < n; ++k) {
        const int64_t from = descending ? perm[n - 1 - k] : perm[k];
        o[base + k * inner] = x[base + from * inner];
      }
    }
  }
}

}  // namespace

void Sort(DType dtype, const void* operand, const Shape& shape, int dimension,
          bool descending, bool indices, void* out) {
  if (shape.num_elements() == 0) return;
  const int64_t n = shape[dimension];
  int64_t inner = 1;
  for (int d = dimension + 1; d < shape.rank(); ++d) inner *= shape[d];
  const int64_t rows = shape.num_elements() / n;
  // A row costs ~n log n comparisons: split by rows with a grain that
  // keeps each range at a few thousand elements at least.
  const int64_t grain = std::max<int64_t>(1, kExpensiveGrain / n);
  VisitRealDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(operand);
    ParallelRanges(
        rows, grain,
        [&](int64_t lo, int64_t hi) {
          SortRows<T>(x, n, inner, descending, indices, out, lo, hi);
        },
        1);
  });
}

}  // namespace baton::cpu
