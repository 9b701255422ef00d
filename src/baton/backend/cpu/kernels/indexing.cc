#include "baton/backend/cpu/kernels/indexing.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "baton/backend/cpu/kernels/isa.h"
#include "baton/backend/cpu/kernels/parallel.h"
#include "baton/backend/cpu/kernels/strided_copy.h"
#include "baton/core/dtype_dispatch.h"
#include "baton/core/scalar_math.h"

#if BATON_KERNELS_HAVE_AVX2
#include <immintrin.h>
#endif

namespace baton::cpu {
namespace {

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

// Reads num indices of an integer dtype as int64.
std::vector<int64_t> ReadIndices(const void* indices, DType index_dtype,
                                 int64_t num) {
  std::vector<int64_t> out(static_cast<size_t>(num));
  VisitDType(index_dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<I>) {
      const I* p = static_cast<const I*>(indices);
      for (int64_t j = 0; j < num; ++j) out[j] = static_cast<int64_t>(p[j]);
    }
  });
  return out;
}

// An index clamped into [0, d - 1] (d >= 1), without widening it to int64
// first when it is already 64-bit.
template <typename I>
inline int64_t ClampIndex(I i, int64_t d) {
  if constexpr (std::is_signed_v<I>) {
    if (i < 0) return 0;
  }
  const auto u = static_cast<uint64_t>(i);
  return u >= static_cast<uint64_t>(d) ? d - 1 : static_cast<int64_t>(u);
}

#if BATON_KERNELS_HAVE_AVX2
// The largest table GatherI32Avx2 reads. A vpgatherdd pays off while its
// loads hit a core's cache; on a table in the shared cache or in memory
// the scalar loop, whose loads the core issues out of order one by one,
// measured faster (BM_GatherTake/N/0 against /N/1: 1 MiB table 0.68x the
// scalar loop's time, 4 MiB 1.13x, 16 MiB 1.35x, on a 2 MiB-L2 Xeon).
inline constexpr int64_t kVectorGatherTableBytes = int64_t{2} << 20;

// out[r] = op[clamp(idx[r])] for 4-byte elements and int32 indices, eight
// at a time: clamp in vector registers and one vpgatherdd (loads that hit
// the caches issue in parallel instead of one by one). With `bounds`, a
// negative index is first wrapped and an index still out of range reads
// the fill value, as GatherBounds::Position says. Same values as the scalar
// loop; returns the first row it did not do. (d fits int32: the table is at
// most kVectorGatherTableBytes.)
__attribute__((target("avx2"))) int64_t GatherI32Avx2(
    const uint32_t* op, const int32_t* idx, int64_t d, uint32_t* out,
    int64_t lo, int64_t hi, const GatherBounds& bounds) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i size = _mm256_set1_epi32(static_cast<int32_t>(d));
  const __m256i last = _mm256_set1_epi32(static_cast<int32_t>(d - 1));
  const __m256i fill =
      _mm256_set1_epi32(static_cast<int32_t>(bounds.fill_bits & 0xffffffffu));
  const int* base = reinterpret_cast<const int*>(op);
  int64_t r = lo;
  for (; r + 8 <= hi; r += 8) {
    __m256i i = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx + r));
    if (bounds.wrap_negative) {
      i = _mm256_add_epi32(i, _mm256_and_si256(_mm256_cmpgt_epi32(zero, i),
                                               size));
    }
    __m256i got = _mm256_i32gather_epi32(
        base, _mm256_min_epi32(_mm256_max_epi32(i, zero), last), 4);
    if (bounds.fill) {
      // Outside: i < 0, or i >= d (not d > i).
      const __m256i below = _mm256_cmpgt_epi32(zero, i);
      const __m256i above = _mm256_andnot_si256(_mm256_cmpgt_epi32(size, i),
                                                _mm256_set1_epi32(-1));
      got = _mm256_blendv_epi8(got, fill, _mm256_or_si256(below, above));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + r), got);
  }
  return r;
}
#endif

// The fill element of `bounds` as a U (its low bytes).
template <typename U>
U FillOf(const GatherBounds& bounds) {
  U v{};
  std::memcpy(&v, &bounds.fill_bits, std::min(sizeof(U), sizeof(uint64_t)));
  return v;
}

// Rows [lo, hi) of the gather's (outer * n) rows of `inner` elements each:
// row r = o * n + j is operand row (o, clamp(idx[j])). Indices are read in
// their own type and clamped on the fly (no int64 copy of them), and (o, j)
// advance by increment rather than a division per row. A single element is
// a typed move (memcpy of 4 bytes through a call would dominate take on a
// vector); the one-axis vector case is a loop of just load, clamp, load,
// store (out-of-order execution keeps enough of its misses in flight that a
// software prefetch measured no faster on a 64 MiB table). `kPlain`: the
// default bounds (clamped); otherwise each index goes through
// bounds.Position, and a row it puts outside reads the fill value.
template <bool kPlain, typename U, typename I>
void GatherRange(const U* op, const I* idx, int64_t n, int64_t d, int64_t inner,
                 U* out, int64_t lo, int64_t hi, const GatherBounds& bounds) {
  const U fill = FillOf<U>(bounds);
  if (inner == 1 && n >= hi) {  // outer == 1 over this range
    int64_t r = lo;
#if BATON_KERNELS_HAVE_AVX2
    if constexpr (sizeof(U) == 4 && std::is_same_v<I, int32_t>) {
      if (d * 4 <= kVectorGatherTableBytes && UseAvx2Kernels()) {
        r = GatherI32Avx2(op, idx, d, out, lo, hi, bounds);
      }
    }
#endif
    if constexpr (kPlain) {
      for (; r < hi; ++r) out[r] = op[ClampIndex(idx[r], d)];
    } else {
      for (; r < hi; ++r) {
        const int64_t at = bounds.Position(idx[r], d);
        out[r] = at < 0 ? fill : op[at];
      }
    }
    return;
  }
  int64_t o = lo / n, j = lo % n;
  const U* base = op + o * d * inner;
  for (int64_t r = lo; r < hi; ++r) {
    const int64_t at =
        kPlain ? ClampIndex(idx[j], d) : bounds.Position(idx[j], d);
    if (!kPlain && at < 0) {
      std::fill(out + r * inner, out + (r + 1) * inner, fill);
    } else if (inner == 1) {
      out[r] = base[at];
    } else {
      std::memcpy(out + r * inner, base + at * inner,
                  static_cast<size_t>(inner) * sizeof(U));
    }
    if (++j == n) {
      j = 0;
      base += d * inner;
    }
  }
}

// A complex128 element, moved as two words.
struct Bytes16 {
  uint64_t lo, hi;
};

template <typename U>
void GatherAs(const void* operand, const void* indices, DType index_dtype,
              int64_t n, int64_t outer, int64_t d, int64_t inner, void* out,
              const GatherBounds& bounds) {
  const U* op = static_cast<const U*>(operand);
  U* o = static_cast<U*>(out);
  if (d == 0) {  // every index is out of range: the fill (or zeros)
    std::fill(o, o + outer * n * inner, bounds.fill ? FillOf<U>(bounds) : U{});
    return;
  }
  // A row of one element costs a random read, more than a streamed copy:
  // split sooner when the table does not fit in the caches.
  const int64_t grain =
      inner == 1 && d * static_cast<int64_t>(sizeof(U)) > (1 << 20)
          ? kExpensiveGrain
          : std::max<int64_t>(1, kCheapGrain / inner);
  VisitDType(index_dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
      const I* idx = static_cast<const I*>(indices);
      ParallelRanges(outer * n, grain, [&](int64_t lo, int64_t hi) {
        if (bounds.plain()) {
          GatherRange<true>(op, idx, n, d, inner, o, lo, hi, bounds);
        } else {
          GatherRange<false>(op, idx, n, d, inner, o, lo, hi, bounds);
        }
      });
    }
  });
}

template <ScatterMode mode, typename T>
void ScatterTyped(const std::vector<int64_t>& idx, const T* upd, T* out,
                  int64_t outer, int64_t d, int64_t inner) {
  using C = ComputeType<T>;
  const int64_t n = static_cast<int64_t>(idx.size());
  // Threads split the outer rows, or the columns of each row when there are
  // few rows: either way a target element belongs to one thread, which
  // applies its updates in index order (duplicates behave as if serial).
  const int64_t threads = ThreadPool::Global().num_threads();
  const int64_t col_parts =
      (outer >= threads || inner < 2 * kCheapGrain) ? 1 : threads;
  const int64_t col_len = (inner + col_parts - 1) / col_parts;
  const int64_t work_per_task = std::max<int64_t>(1, n * col_len);
  ParallelRanges(
      outer * col_parts, std::max<int64_t>(1, kCheapGrain / work_per_task),
      [&](int64_t lo, int64_t hi) {
        for (int64_t task = lo; task < hi; ++task) {
          const int64_t o = task / col_parts;
          const int64_t c0 = (task % col_parts) * col_len;
          const int64_t c1 = std::min(inner, c0 + col_len);
          for (int64_t j = 0; j < n; ++j) {
            const int64_t t = idx[j];
            if (t < 0 || t >= d) continue;  // out of range: dropped
            T* dst = out + (o * d + t) * inner;
            const T* src = upd + (o * n + j) * inner;
            for (int64_t k = c0; k < c1; ++k) {
              if constexpr (mode == ScatterMode::kSet) {
                dst[k] = src[k];
              } else {
                constexpr BinaryOp op =
                    mode == ScatterMode::kAdd   ? BinaryOp::kAdd
                    : mode == ScatterMode::kMul ? BinaryOp::kMul
                    : mode == ScatterMode::kMin ? BinaryOp::kMin
                                                : BinaryOp::kMax;
                dst[k] = FromCompute<T>(scalar::Binary<op, C>(
                    ToCompute<T>(dst[k]), ToCompute<T>(src[k])));
              }
            }
          }
        }
      },
      1);
}

}  // namespace

void DynamicSlice(DType dtype, const void* operand, const Shape& operand_shape,
                  std::span<const int64_t> starts,
                  std::span<const int64_t> sizes, void* out) {
  const std::vector<int64_t> strides = operand_shape.strides();
  std::vector<int64_t> out_strides(sizes.size());
  int64_t offset = 0, acc = 1;
  for (int d = operand_shape.rank() - 1; d >= 0; --d) {
    const int64_t s =
        std::clamp<int64_t>(starts[d], 0, operand_shape[d] - sizes[d]);
    offset += s * strides[d];
    out_strides[d] = acc;
    acc *= sizes[d];
  }
  const size_t esize = dtype_size(dtype);
  StridedCopy(esize, static_cast<const char*>(operand) + offset * esize,
              strides, out, out_strides, sizes);
}

void DynamicUpdateSlice(DType dtype, const void* operand,
                        const Shape& operand_shape, const void* update,
                        const Shape& update_shape,
                        std::span<const int64_t> starts, void* out) {
  const size_t esize = dtype_size(dtype);
  if (out != operand) {
    Copy(operand, out, operand_shape.num_elements() * esize);
  }
  const std::vector<int64_t> strides = operand_shape.strides();
  int64_t offset = 0;
  for (int d = 0; d < operand_shape.rank(); ++d) {
    const int64_t s =
        std::clamp<int64_t>(starts[d], 0, operand_shape[d] - update_shape[d]);
    offset += s * strides[d];
  }
  StridedCopy(esize, update, update_shape.strides(),
              static_cast<char*>(out) + offset * esize, strides,
              update_shape.dims());
}

void Gather(DType dtype, const void* operand, const Shape& operand_shape,
            const void* indices, DType index_dtype, int64_t num_indices,
            int axis, void* out, const GatherBounds& bounds) {
  const std::vector<int64_t>& dims = operand_shape.dims();
  const int64_t outer = Product(dims, 0, axis);
  const int64_t d = dims[axis];
  const int64_t inner = Product(dims, axis + 1, dims.size());
  const size_t esize = dtype_size(dtype);
  const int64_t rows = outer * num_indices;
  if (rows * inner == 0) return;
  switch (esize) {
    case 1:
      return GatherAs<uint8_t>(operand, indices, index_dtype, num_indices,
                               outer, d, inner, out, bounds);
    case 2:
      return GatherAs<uint16_t>(operand, indices, index_dtype, num_indices,
                                outer, d, inner, out, bounds);
    case 4:
      return GatherAs<uint32_t>(operand, indices, index_dtype, num_indices,
                                outer, d, inner, out, bounds);
    case 8:
      return GatherAs<uint64_t>(operand, indices, index_dtype, num_indices,
                                outer, d, inner, out, bounds);
    default:  // complex128
      return GatherAs<Bytes16>(operand, indices, index_dtype, num_indices,
                               outer, d, inner, out, bounds);
  }
}

void Scatter(ScatterMode mode, DType dtype, const void* operand,
             const Shape& operand_shape, const void* indices, DType index_dtype,
             int64_t num_indices, const void* updates, int axis, void* out) {
  const std::vector<int64_t>& dims = operand_shape.dims();
  const size_t esize = dtype_size(dtype);
  if (out != operand) {
    Copy(operand, out, operand_shape.num_elements() * esize);
  }
  const int64_t outer = Product(dims, 0, axis);
  const int64_t inner = Product(dims, axis + 1, dims.size());
  if (outer * num_indices * inner == 0) return;
  const std::vector<int64_t> idx =
      ReadIndices(indices, index_dtype, num_indices);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* upd = static_cast<const T*>(updates);
    T* o = static_cast<T*>(out);
    switch (mode) {
      case ScatterMode::kSet:
        return ScatterTyped<ScatterMode::kSet>(idx, upd, o, outer, dims[axis],
                                               inner);
      case ScatterMode::kAdd:
        return ScatterTyped<ScatterMode::kAdd>(idx, upd, o, outer, dims[axis],
                                               inner);
      case ScatterMode::kMul:
        return ScatterTyped<ScatterMode::kMul>(idx, upd, o, outer, dims[axis],
                                               inner);
      case ScatterMode::kMin:
        return ScatterTyped<ScatterMode::kMin>(idx, upd, o, outer, dims[axis],
                                               inner);
      case ScatterMode::kMax:
        return ScatterTyped<ScatterMode::kMax>(idx, upd, o, outer, dims[axis],
                                               inner);
    }
  });
}

}  // namespace baton::cpu
