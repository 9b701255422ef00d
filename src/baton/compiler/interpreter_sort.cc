// Reference interpreter: sort (SortAttrs). Independent of the CPU kernel's
// algorithm (std::stable_sort there): the order is spelled out as a strict
// total order on (value, position) -- `before` below, equal values keeping
// their positions' order (stability) -- and each row is put in that order
// by a bottom-up merge sort written here. With ties broken by position
// there is exactly one sorted order, whatever algorithm finds it. (It used
// to count each element's rank directly, O(n^2) per row: the random-program
// tests spent most of their minute there.)
#include <algorithm>
#include <vector>

#include "baton/compiler/interpreter_ops.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/sort_order.h"

namespace baton::compiler::interpreter {

Literal EvalSort(const Instruction& inst, const Operands& in) {
  const auto& a = inst.attrs_as<SortAttrs>();
  const Literal& x = *in[0];
  const Shape& shape = x.shape();
  Literal out = NewResult(inst);
  const int dim = static_cast<int>(a.dimension);
  const int64_t n = shape[dim];
  const int64_t stride = shape.strides()[dim];
  if (shape.num_elements() == 0) return out;
  std::vector<int64_t> row_dims = shape.dims();
  row_dims[dim] = 1;
  const std::vector<int64_t> strides = shape.strides();
  VisitRealDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T* src = x.data<T>();
    // "before(i, j)": element i goes before element j.
    auto before = [&](const C& vi, int64_t i, const C& vj, int64_t j) {
      const bool lt =
          a.descending && a.indices ? SortLess(vj, vi) : SortLess(vi, vj);
      if (lt) return true;
      const bool gt =
          a.descending && a.indices ? SortLess(vi, vj) : SortLess(vj, vi);
      return !gt && i < j;
    };
    std::vector<C> row(n);
    std::vector<int64_t> pos(n), order(n), merged(n);
    ForEachIndex(
        Shape(row_dims), [&](const std::vector<int64_t>& index, int64_t) {
          const int64_t base = Offset(index, strides);
          for (int64_t i = 0; i < n; ++i) {
            row[i] = ToCompute(src[base + i * stride]);
            order[i] = i;
          }
          // Runs of `width` in order, merged pairwise into runs of twice
          // that; from the right run only what goes strictly before the
          // left run's head.
          for (int64_t width = 1; width < n; width *= 2) {
            for (int64_t lo = 0; lo < n; lo += 2 * width) {
              const int64_t mid = std::min(lo + width, n);
              const int64_t hi = std::min(lo + 2 * width, n);
              int64_t l = lo, r = mid;
              for (int64_t k = lo; k < hi; ++k) {
                const bool take_right =
                    r < hi && (l >= mid || before(row[order[r]], order[r],
                                                  row[order[l]], order[l]));
                merged[k] = take_right ? order[r++] : order[l++];
              }
            }
            std::swap(order, merged);
          }
          for (int64_t p = 0; p < n; ++p) {
            // Values descending: the ascending result reversed.
            pos[order[p]] = a.descending && !a.indices ? n - 1 - p : p;
          }
          for (int64_t j = 0; j < n; ++j) {
            const int64_t to = base + pos[j] * stride;
            if (a.indices) {
              out.mutable_data<int32_t>()[to] = static_cast<int32_t>(j);
            } else {
              out.mutable_data<T>()[to] = src[base + j * stride];
            }
          }
        });
  });
  return out;
}

}  // namespace baton::compiler::interpreter
