#include "baton/backend/cpu/kernels/shape_ops.h"

#include <algorithm>
#include <vector>

#include "baton/backend/cpu/kernels/parallel.h"
#include "baton/core/dtype_dispatch.h"

namespace baton::cpu {
namespace {

std::vector<int64_t> RowMajorStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> s(dims.size());
  int64_t acc = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    s[i] = acc;
    acc *= dims[i];
  }
  return s;
}

int64_t Product(std::span<const int64_t> dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

// ceil(a / b) for a >= 0, b >= 1, without the overflow of (a + b - 1) / b
// for huge b (a slice's or a pad's step may be anything shape inference
// accepts; a negative a gives 0, as the callers want).
int64_t CeilDiv(int64_t a, int64_t b) { return a <= 0 ? 0 : 1 + (a - 1) / b; }

// Writes the one element at `value` to all n elements of out.
void Fill(size_t elem_size, const void* value, void* out, int64_t n) {
  const int64_t zero = 0, one = 1;
  StridedCopy(elem_size, value, {&zero, 1}, out, {&one, 1}, {&n, 1});
}

}  // namespace

void BroadcastInDim(DType dtype, const void* in, const Shape& in_shape,
                    std::span<const int64_t> broadcast_dimensions, void* out,
                    const Shape& out_shape) {
  const std::vector<int64_t> in_row = in_shape.strides();
  std::vector<int64_t> in_strides(out_shape.rank(), 0);
  for (int k = 0; k < in_shape.rank(); ++k) {
    // A size-1 operand dimension repeats: stride 0 along its output dim.
    if (in_shape[k] != 1) in_strides[broadcast_dimensions[k]] = in_row[k];
  }
  StridedCopy(dtype_size(dtype), in, in_strides, out, out_shape.strides(),
              out_shape.dims());
}

void Transpose(DType dtype, const void* in, const Shape& in_shape,
               std::span<const int64_t> permutation, void* out) {
  const std::vector<int64_t> in_row = in_shape.strides();
  const int rank = in_shape.rank();
  std::vector<int64_t> out_dims(rank), in_strides(rank);
  for (int d = 0; d < rank; ++d) {
    out_dims[d] = in_shape[static_cast<int>(permutation[d])];
    in_strides[d] = in_row[permutation[d]];
  }
  StridedCopy(dtype_size(dtype), in, in_strides, out, RowMajorStrides(out_dims),
              out_dims);
}

void Slice(DType dtype, const void* in, const Shape& in_shape,
           std::span<const int64_t> start, std::span<const int64_t> limit,
           std::span<const int64_t> stride, void* out) {
  const std::vector<int64_t> in_row = in_shape.strides();
  const int rank = in_shape.rank();
  std::vector<int64_t> out_dims(rank), in_strides(rank);
  int64_t offset = 0;
  for (int d = 0; d < rank; ++d) {
    out_dims[d] = CeilDiv(limit[d] - start[d], stride[d]);
    // A stride taken at most once is never used, and may be too large to
    // multiply; otherwise stride * in_row < dim * in_row fits.
    in_strides[d] = out_dims[d] > 1 ? in_row[d] * stride[d] : 0;
    offset += start[d] * in_row[d];
  }
  const size_t esize = dtype_size(dtype);
  StridedCopy(esize, static_cast<const char*>(in) + offset * esize, in_strides,
              out, RowMajorStrides(out_dims), out_dims);
}

void Concatenate(DType dtype, std::span<const void* const> inputs,
                 std::span<const Shape> shapes, int dimension, void* out) {
  if (inputs.empty()) return;
  const std::vector<int64_t>& dims0 = shapes[0].dims();
  const int64_t outer = Product(dims0, 0, dimension);
  const int64_t inner = Product(dims0, dimension + 1, dims0.size());
  int64_t row = 0;
  for (const Shape& s : shapes) row += s[dimension] * inner;
  const size_t esize = dtype_size(dtype);
  // Each input fills a [outer, chunk] window of the [outer, row] output.
  int64_t offset = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const int64_t chunk = shapes[i][dimension] * inner;
    const int64_t dims[] = {outer, chunk};
    const int64_t in_strides[] = {chunk, 1};
    const int64_t out_strides[] = {row, 1};
    StridedCopy(esize, inputs[i], in_strides,
                static_cast<char*>(out) + offset * esize, out_strides, dims);
    offset += chunk;
  }
}

void Pad(DType dtype, const void* in, const Shape& in_shape,
         const void* padding_value, std::span<const int64_t> low,
         std::span<const int64_t> high, std::span<const int64_t> interior,
         void* out) {
  const int rank = in_shape.rank();
  std::vector<int64_t> out_dims(rank);
  for (int d = 0; d < rank; ++d) {
    const int64_t n = in_shape[d];
    out_dims[d] =
        low[d] + high[d] + n + std::max<int64_t>(n - 1, 0) * interior[d];
  }
  const std::vector<int64_t> in_row = in_shape.strides();
  const std::vector<int64_t> out_row = RowMajorStrides(out_dims);
  // The input elements that land inside the output (negative low/high crop
  // some away) form a strided window of the output.
  std::vector<int64_t> counts(rank), in_strides(rank), out_strides(rank);
  int64_t in_off = 0, out_off = 0, visible = 1, total = 1;
  for (int d = 0; d < rank; ++d) {
    const int64_t step = interior[d] + 1;
    const int64_t i_lo = low[d] >= 0 ? 0 : CeilDiv(-low[d], step);
    const int64_t room = out_dims[d] - low[d];
    const int64_t i_hi =
        room <= 0 ? 0 : std::min(in_shape[d], CeilDiv(room, step));
    counts[d] = std::max<int64_t>(0, i_hi - i_lo);
    total *= out_dims[d];
    if (counts[d] == 0) {  // nothing lands: the offsets below may not fit
      visible = 0;
      continue;
    }
    // A step taken at most once is never used (and out_row * step may not
    // fit); otherwise (counts - 1) * step < out_dims keeps it in range.
    in_strides[d] = in_row[d];
    out_strides[d] = counts[d] > 1 ? out_row[d] * step : 0;
    in_off += i_lo * in_row[d];
    out_off += (low[d] + i_lo * step) * out_row[d];
    visible *= counts[d];
  }
  const size_t esize = dtype_size(dtype);
  bool has_interior = false;
  for (int d = 0; d < rank; ++d) has_interior |= interior[d] > 0;
  if (visible == 0 || has_interior) {
    if (visible < total) Fill(esize, padding_value, out, total);
  } else if (visible < total) {
    // The input is one box of the output: write the padding only around
    // it, so each output element is written once (a full fill first would
    // double the writes of a large pad).
    std::vector<int64_t> dims(out_dims), box_start(rank);
    for (int d = 0; d < rank; ++d) box_start[d] = std::max<int64_t>(low[d], 0);
    const std::vector<int64_t> zeros(rank, 0);
    int64_t prefix_off = 0;
    for (int d = 0; d < rank; ++d) {
      // Slabs before and after the box along d, inside the box along the
      // dims before d, whole along the dims after it.
      const int64_t before = box_start[d];
      const int64_t after_start = box_start[d] + counts[d];
      for (const auto& [start, len] :
           {std::pair{int64_t{0}, before},
            std::pair{after_start, out_dims[d] - after_start}}) {
        if (len <= 0) continue;
        dims[d] = len;
        StridedCopy(
            esize, padding_value, zeros,
            static_cast<char*>(out) + (prefix_off + start * out_row[d]) * esize,
            out_row, dims);
      }
      dims[d] = counts[d];
      prefix_off += box_start[d] * out_row[d];
    }
  }
  if (visible == 0) return;
  StridedCopy(esize, static_cast<const char*>(in) + in_off * esize, in_strides,
              static_cast<char*>(out) + out_off * esize, out_strides, counts);
}

void Iota(DType dtype, const Shape& shape, int dimension, void* out) {
  const int64_t total = shape.num_elements();
  if (total == 0) return;
  if (shape.rank() == 0) {
    VisitDType(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      *static_cast<T*>(out) = ConvertElement<T, int64_t>(0);
    });
    return;
  }
  const std::vector<int64_t>& dims = shape.dims();
  const int64_t outer = Product(dims, 0, dimension);
  const int64_t n = dims[dimension];
  const int64_t inner = Product(dims, dimension + 1, dims.size());
  const int64_t block = n * inner;  // one outer slice; every slice is equal
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = static_cast<T*>(out);
    ParallelRanges(n, std::max<int64_t>(1, kCheapGrain / inner),
                   [&](int64_t lo, int64_t hi) {
                     for (int64_t i = lo; i < hi; ++i) {
                       const T v = ConvertElement<T, int64_t>(i);
                       std::fill(o + i * inner, o + (i + 1) * inner, v);
                     }
                   });
  });
  if (outer > 1) {
    const int64_t rep_dims[] = {outer - 1, block};
    const int64_t in_strides[] = {0, 1};
    const int64_t out_strides[] = {block, 1};
    const size_t esize = dtype_size(dtype);
    StridedCopy(esize, out, in_strides, static_cast<char*>(out) + block * esize,
                out_strides, rep_dims);
  }
}

}  // namespace baton::cpu
