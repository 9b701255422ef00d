#include "baton/runtime/strided_import.h"

#include <cstring>
#include <string>

namespace baton {
namespace {

std::string N(int64_t v) { return std::to_string(v); }
std::string U(uint64_t v) { return std::to_string(v); }

Status Fail(std::string_view what, const std::string& message) {
  return InvalidArgument(std::string(what) + ": " + message);
}

bool MulOverflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}
bool AddOverflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_add_overflow(a, b, out);
}

}  // namespace

Result<StridedPlan> PlanStridedImport(const StridedSource& src) {
  const std::string_view what = src.what;
  const size_t rank = src.shape.size();
  if (rank > static_cast<size_t>(kMaxImportRank)) {
    return Fail(what, "the tensor has " + U(rank) +
                          " dimensions; baton imports at most " +
                          N(kMaxImportRank));
  }
  if (src.strides && src.strides->size() != rank) {
    return Fail(what, "the tensor has " + U(rank) + " dimensions but " +
                          U(src.strides->size()) + " strides");
  }
  StridedPlan plan;
  plan.dtype = src.dtype;
  plan.shape = Shape(std::vector<int64_t>(src.shape.begin(), src.shape.end()));
  if (Status s = plan.shape.Check(); !s.ok()) return Fail(what, s.message());
  const int64_t itemsize = static_cast<int64_t>(dtype_size(src.dtype));

  // The address of element 0, as an integer: pointer arithmetic outside the
  // producer's object would be undefined, integer arithmetic is not.
  const uintptr_t base = reinterpret_cast<uintptr_t>(src.data);
  uintptr_t first = 0;
  if (src.byte_offset > static_cast<uint64_t>(INT64_MAX) ||
      __builtin_add_overflow(base, static_cast<uintptr_t>(src.byte_offset),
                             &first)) {
    return Fail(what, "byte_offset " + U(src.byte_offset) +
                          " does not fit the address space from data " +
                          U(base));
  }
  plan.first = reinterpret_cast<const std::byte*>(first);

  // Strides in bytes. Row-major ones cannot overflow: the shape passed the
  // check, so every byte count fits int64. A zero-size tensor reads nothing,
  // so its strides do not matter: it is planned as row-major.
  plan.byte_strides = plan.shape.strides();
  for (int64_t& s : plan.byte_strides) s *= itemsize;
  const int64_t n = plan.shape.num_elements();
  if (n == 0) {
    plan.contiguous = true;
    plan.lowest = plan.end = 0;
    return plan;
  }
  if (src.strides) {
    const int64_t unit =
        src.stride_unit == StrideUnit::kElements ? itemsize : 1;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t st = (*src.strides)[i];
      // A size-1 dimension's stride is never used (recorded as 0).
      if (plan.shape.dims()[i] == 1) {
        plan.byte_strides[i] = 0;
      } else if (MulOverflows(st, unit, &plan.byte_strides[i])) {
        return Fail(what, "stride " + N(st) + " of dimension " + U(i) +
                              " overflows 64 bits in bytes");
      }
    }
  }

  if (src.data == nullptr) {
    return Fail(what, "the data pointer is null but the tensor has " + N(n) +
                          " elements");
  }

  // The span of the elements relative to element 0: the sum of the
  // negative (resp. positive) stride * (dim - 1) terms.
  int64_t lowest = 0, highest = 0;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d = plan.shape.dims()[i];
    if (d == 1) continue;  // a size-1 dimension's stride is never used
    int64_t span = 0;
    if (MulOverflows(plan.byte_strides[i], d - 1, &span) ||
        AddOverflows(span < 0 ? lowest : highest, span,
                     span < 0 ? &lowest : &highest)) {
      return Fail(what, "dimension " + U(i) + " (size " + N(d) + ", stride " +
                            N(plan.byte_strides[i]) +
                            " bytes) reaches beyond the 64-bit address range");
    }
  }
  int64_t end = 0;
  if (AddOverflows(highest, itemsize, &end)) {
    return Fail(what, "the tensor reaches beyond the 64-bit address range");
  }
  plan.lowest = lowest;
  plan.end = end;

  // Addresses [first + lowest, first + end) must exist.
  const uint64_t below =
      static_cast<uint64_t>(0) - static_cast<uint64_t>(lowest);
  if (below > first || static_cast<uint64_t>(end) > UINTPTR_MAX - first) {
    return Fail(what, "strides reach outside the address space (element 0 at " +
                          U(first) + ", bytes " + N(lowest) + " to " + N(end) +
                          " around it)");
  }
  if (src.extent) {
    const uintptr_t ext = reinterpret_cast<uintptr_t>(src.extent->begin);
    uintptr_t ext_end = 0;
    if (__builtin_add_overflow(ext, src.extent->size, &ext_end)) {
      return Fail(what, "the buffer's extent wraps around the address space");
    }
    const uintptr_t lo = first - below;
    const uintptr_t hi = first + static_cast<uint64_t>(end);
    if (lo < ext || hi > ext_end) {
      return Fail(what, "the elements occupy bytes " + N(lowest) + " to " +
                            N(end) + " around element 0 at offset " +
                            N(static_cast<int64_t>(first - ext)) +
                            ", outside the buffer's " + U(src.extent->size) +
                            " bytes");
    }
  }

  int64_t expected = itemsize;
  plan.contiguous = true;
  for (size_t i = rank; i-- > 0;) {
    const int64_t d = plan.shape.dims()[i];
    if (d == 1) continue;
    if (plan.byte_strides[i] != expected) {
      plan.contiguous = false;
      break;
    }
    expected *= d;  // <= nbytes, which fits
  }
  return plan;
}

namespace {

// One dimension of a gather after merging: `size` steps of `stride` bytes.
struct Dim {
  int64_t size;
  int64_t stride;
};

template <size_t kSize>
void CopyElements(const std::byte* src, int64_t stride, int64_t count,
                  std::byte* dst) {
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(dst + i * static_cast<int64_t>(kSize), src + i * stride, kSize);
  }
}

}  // namespace

void CopyStridedToDense(const StridedPlan& plan, void* dst_void) {
  auto* dst = static_cast<std::byte*>(dst_void);
  const int64_t n = plan.num_elements();
  if (n == 0) return;
  const int64_t itemsize = static_cast<int64_t>(dtype_size(plan.dtype));
  if (plan.contiguous) {
    std::memcpy(dst, plan.first, static_cast<size_t>(n * itemsize));
    return;
  }
  // Drop size-1 dimensions and merge a dimension into the one outside it
  // when that one steps exactly over it (row-major nesting).
  std::vector<Dim> dims;
  for (int i = 0; i < plan.shape.rank(); ++i) {
    const int64_t d = plan.shape.dims()[i];
    if (d == 1) continue;
    dims.push_back({d, plan.byte_strides[i]});
  }
  std::vector<Dim> merged;
  if (dims.empty()) {  // one element (not reached: that is contiguous)
    std::memcpy(dst, plan.first, static_cast<size_t>(itemsize));
    return;
  }
  for (const Dim& d : dims) {
    int64_t step = 0;  // d.stride * d.size may overflow where a span does not
    if (!merged.empty() && !MulOverflows(d.stride, d.size, &step) &&
        merged.back().stride == step) {
      merged.back() = {merged.back().size * d.size, d.stride};
    } else {
      merged.push_back(d);
    }
  }
  // The innermost dimension is copied as a run; the others are walked with
  // an odometer. Every offset is a partial sum of the terms the plan
  // checked, so none overflows.
  const Dim inner = merged.back();
  merged.pop_back();
  const bool dense_run = inner.stride == itemsize;
  const int64_t run_bytes = inner.size * itemsize;
  std::vector<int64_t> index(merged.size(), 0);
  int64_t offset = 0;
  for (int64_t out = 0; out < n; out += inner.size) {
    const std::byte* src = plan.first + offset;
    if (dense_run) {
      std::memcpy(dst, src, static_cast<size_t>(run_bytes));
    } else {
      switch (itemsize) {
        case 1:
          CopyElements<1>(src, inner.stride, inner.size, dst);
          break;
        case 2:
          CopyElements<2>(src, inner.stride, inner.size, dst);
          break;
        case 4:
          CopyElements<4>(src, inner.stride, inner.size, dst);
          break;
        case 8:
          CopyElements<8>(src, inner.stride, inner.size, dst);
          break;
        default:  // complex128
          CopyElements<16>(src, inner.stride, inner.size, dst);
          break;
      }
    }
    dst += run_bytes;
    for (size_t k = merged.size(); k-- > 0;) {
      if (++index[k] < merged[k].size) {
        offset += merged[k].stride;
        break;
      }
      offset -= merged[k].stride * (merged[k].size - 1);
      index[k] = 0;
    }
  }
}

Result<StridedPlan> PlanBufferImport(const BufferView& view, DType dtype,
                                     std::optional<MemoryExtent> extent,
                                     std::string_view what) {
  if (view.ndim < 0 || view.ndim > kMaxImportRank) {
    return Fail(what, "the buffer has " + N(view.ndim) +
                          " dimensions; baton imports 0 to " +
                          N(kMaxImportRank));
  }
  if (view.ndim > 0 && view.shape == nullptr) {
    return Fail(what, "the buffer has " + N(view.ndim) +
                          " dimensions but no shape (export it with "
                          "PyBUF_ND)");
  }
  if (view.len < 0) return Fail(what, "negative length " + N(view.len));
  const std::span<const int64_t> shape(view.shape,
                                       static_cast<size_t>(view.ndim));
  StridedSource src;
  src.data = view.buf;
  src.dtype = dtype;
  src.shape = shape;
  src.stride_unit = StrideUnit::kBytes;
  src.what = what;
  const Shape checked(std::vector<int64_t>(shape.begin(), shape.end()));
  if (Status s = checked.Check(); !s.ok()) return Fail(what, s.message());
  const int64_t nbytes =
      checked.num_elements() * static_cast<int64_t>(dtype_size(dtype));
  if (view.strides == nullptr) {
    if (view.len != nbytes) {
      return InvalidArgument(
          "host buffer of " + N(view.len) + " bytes does not match " +
          std::string(dtype_name(dtype)) + checked.to_string());
    }
    src.extent = MemoryExtent{view.buf, static_cast<uint64_t>(view.len)};
  } else {
    if (view.itemsize != static_cast<int64_t>(dtype_size(dtype))) {
      return Fail(what, "items of " + N(view.itemsize) +
                            " bytes cannot be read as " +
                            std::string(dtype_name(dtype)));
    }
    if (view.len != nbytes) {
      return Fail(what, "length " + N(view.len) + " is not the " + N(nbytes) +
                            " bytes of " + std::string(dtype_name(dtype)) +
                            checked.to_string());
    }
    src.strides =
        std::span<const int64_t>(view.strides, static_cast<size_t>(view.ndim));
    src.extent = extent;
  }
  return PlanStridedImport(src);
}

}  // namespace baton
