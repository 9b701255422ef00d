#include "baton/backend/cpu/kernels/strided_copy.h"

#include <cassert>
#include <cstring>
#include <vector>

#include "baton/backend/cpu/kernels/parallel.h"

namespace baton::cpu {
namespace {

struct Dim {
  int64_t size;
  int64_t in_stride;
  int64_t out_stride;
};

// Drops size-1 dimensions and merges neighbours that are contiguous with each
// other on both sides, so a row-major copy becomes one long run.
std::vector<Dim> Simplify(std::span<const int64_t> in_strides,
                          std::span<const int64_t> out_strides,
                          std::span<const int64_t> dims) {
  std::vector<Dim> out;
  out.reserve(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    Dim cur{dims[d], in_strides[d], out_strides[d]};
    if (!out.empty()) {
      Dim& prev = out.back();
      if (prev.in_stride == cur.in_stride * cur.size &&
          prev.out_stride == cur.out_stride * cur.size) {
        prev = Dim{prev.size * cur.size, cur.in_stride, cur.out_stride};
        continue;
      }
    }
    out.push_back(cur);
  }
  return out;
}

template <typename U>
void CopyRun(const U* in, int64_t in_stride, U* out, int64_t out_stride,
             int64_t n) {
  if (in_stride == 1 && out_stride == 1) {
    std::memcpy(out, in, static_cast<size_t>(n) * sizeof(U));
  } else if (in_stride == 0 && out_stride == 1) {
    const U v = *in;
    for (int64_t j = 0; j < n; ++j) out[j] = v;
  } else if (out_stride == 1) {
    for (int64_t j = 0; j < n; ++j) out[j] = in[j * in_stride];
  } else {
    for (int64_t j = 0; j < n; ++j) out[j * out_stride] = in[j * in_stride];
  }
}

// Offsets of the start of outer row `row` (an index over dims[0..r-1)).
void RowOffsets(const std::vector<Dim>& dims, int64_t row, int64_t* in_off,
                int64_t* out_off, std::vector<int64_t>* index) {
  *in_off = 0;
  *out_off = 0;
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) {
    const int64_t i = row % dims[d].size;
    row /= dims[d].size;
    (*index)[d] = i;
    *in_off += i * dims[d].in_stride;
    *out_off += i * dims[d].out_stride;
  }
}

// Advances the outer odometer by one row.
void NextRow(const std::vector<Dim>& dims, int64_t* in_off, int64_t* out_off,
             std::vector<int64_t>* index) {
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) {
    *in_off += dims[d].in_stride;
    *out_off += dims[d].out_stride;
    if (++(*index)[d] < dims[d].size) return;
    *in_off -= dims[d].size * dims[d].in_stride;
    *out_off -= dims[d].size * dims[d].out_stride;
    (*index)[d] = 0;
  }
}

// The general case: the flattened index space split across threads, each
// range walked row by row (a range may start or end mid-row).
template <typename U>
void CopyGeneral(const U* in, U* out, const std::vector<Dim>& dims) {
  const Dim inner = dims.back();
  int64_t total = inner.size;
  for (size_t d = 0; d + 1 < dims.size(); ++d) total *= dims[d].size;
  ParallelRanges(total, kCheapGrain, [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> index(dims.size(), 0);
    int64_t in_off, out_off;
    RowOffsets(dims, lo / inner.size, &in_off, &out_off, &index);
    int64_t off = lo % inner.size;
    for (int64_t pos = lo; pos < hi;) {
      const int64_t len = std::min(inner.size - off, hi - pos);
      CopyRun(in + in_off + off * inner.in_stride, inner.in_stride,
              out + out_off + off * inner.out_stride, inner.out_stride, len);
      pos += len;
      off = 0;
      NextRow(dims, &in_off, &out_off, &index);
    }
  });
}

// A transpose pattern: the innermost output dimension `l` is strided in the
// input while another dimension `k` is contiguous there. Copying tile by tile
// keeps both the input and output lines of a tile in L1.
template <typename U>
void CopyTransposed(const U* in, U* out, const std::vector<Dim>& dims,
                    size_t k) {
  constexpr int64_t kTile = sizeof(U) >= 4 ? 32 : 64;
  const Dim dk = dims[k];
  const Dim dl = dims.back();
  std::vector<Dim> batch;
  for (size_t d = 0; d + 1 < dims.size(); ++d) {
    if (d != k) batch.push_back(dims[d]);
  }
  int64_t nbatch = 1;
  for (const Dim& d : batch) nbatch *= d.size;
  const int64_t tiles_k = (dk.size + kTile - 1) / kTile;
  const int64_t tiles_l = (dl.size + kTile - 1) / kTile;
  const int64_t ntasks = nbatch * tiles_k * tiles_l;
  ParallelRanges(
      ntasks, kCheapGrain / (kTile * kTile),
      [&](int64_t lo, int64_t hi) {
        for (int64_t t = lo; t < hi; ++t) {
          const int64_t tl = t % tiles_l;
          const int64_t tk = (t / tiles_l) % tiles_k;
          int64_t b = t / (tiles_l * tiles_k);
          int64_t in_off = 0, out_off = 0;
          for (int d = static_cast<int>(batch.size()) - 1; d >= 0; --d) {
            const int64_t i = b % batch[d].size;
            b /= batch[d].size;
            in_off += i * batch[d].in_stride;
            out_off += i * batch[d].out_stride;
          }
          const int64_t k0 = tk * kTile, k1 = std::min(dk.size, k0 + kTile);
          const int64_t l0 = tl * kTile, l1 = std::min(dl.size, l0 + kTile);
          for (int64_t kk = k0; kk < k1; ++kk) {
            const U* src = in + in_off + kk * dk.in_stride + l0 * dl.in_stride;
            U* dst = out + out_off + kk * dk.out_stride + l0;
            const int64_t is = dl.in_stride;
            for (int64_t ll = 0; ll < l1 - l0; ++ll) dst[ll] = src[ll * is];
          }
        }
      },
      1);
}

template <typename U>
void StridedCopyTyped(const void* in_v, void* out_v,
                      const std::vector<Dim>& dims) {
  const U* in = static_cast<const U*>(in_v);
  U* out = static_cast<U*>(out_v);
  if (dims.empty()) {
    *out = *in;
    return;
  }
  const Dim& inner = dims.back();
  if (inner.out_stride == 1 && inner.in_stride != 1 && inner.in_stride != 0 &&
      inner.size >= 8) {
    for (size_t k = 0; k + 1 < dims.size(); ++k) {
      if (dims[k].in_stride == 1 && dims[k].size >= 8) {
        CopyTransposed(in, out, dims, k);
        return;
      }
    }
  }
  CopyGeneral(in, out, dims);
}

// A complex128 element, moved as two words.
struct Bytes16 {
  uint64_t lo, hi;
};

}  // namespace

void StridedCopy(size_t elem_size, const void* in,
                 std::span<const int64_t> in_strides, void* out,
                 std::span<const int64_t> out_strides,
                 std::span<const int64_t> dims) {
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  const std::vector<Dim> simple = Simplify(in_strides, out_strides, dims);
  switch (elem_size) {
    case 1:
      return StridedCopyTyped<uint8_t>(in, out, simple);
    case 2:
      return StridedCopyTyped<uint16_t>(in, out, simple);
    case 4:
      return StridedCopyTyped<uint32_t>(in, out, simple);
    case 8:
      return StridedCopyTyped<uint64_t>(in, out, simple);
    case 16:
      return StridedCopyTyped<Bytes16>(in, out, simple);
  }
  assert(false && "StridedCopy: element size must be 1, 2, 4, 8 or 16");
}

void Copy(const void* in, void* out, int64_t bytes) {
  if (in == out || bytes <= 0) return;
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(out);
  // 256 KiB a range at least; 4 KiB-aligned so ranges start on page bounds.
  ParallelRanges(
      bytes, 256 * 1024,
      [&](int64_t lo, int64_t hi) {
        std::memcpy(dst + lo, src + lo, static_cast<size_t>(hi - lo));
      },
      4096);
}

}  // namespace baton::cpu
