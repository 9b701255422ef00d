// An independent model of the strided-import checks, for the import
// fuzzers (fuzz_dlpack_import.cc, fuzz_buffer_import.cc): computed with
// 128-bit integers, so it needs none of the overflow care the validator
// (runtime/strided_import.cc) takes, and written without looking at how the
// validator walks its dimensions.
//
// Given the shape, byte strides and address of element 0, it gives the
// exact byte range the elements occupy and reads them one by one. The
// fuzzers check that the validator accepts a tensor against a known extent
// exactly when this range lies inside it, that its plan describes the same
// range, and that CopyStridedToDense copies what ReadNaive reads.
//
// Plain functions; thread-safe.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace baton::fuzz {

using i128 = __int128;

struct OracleRange {
  bool empty = false;  // some dimension is 0: nothing is read
  i128 first = 0;      // address of element 0
  i128 lo = 0;         // lowest byte read
  i128 hi = 0;         // one past the highest byte read
};

// `byte_strides[i]` exact (already multiplied by the unit, in 128 bits).
inline OracleRange ExactRange(const std::vector<int64_t>& shape,
                              const std::vector<i128>& byte_strides, i128 first,
                              int64_t itemsize) {
  OracleRange r;
  r.first = first;
  r.lo = first;
  r.hi = first + itemsize;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) r.empty = true;
    if (shape[i] <= 1) continue;
    const i128 span = byte_strides[i] * (shape[i] - 1);
    if (span < 0)
      r.lo += span;
    else
      r.hi += span;
  }
  return r;
}

inline bool Inside(const OracleRange& r, i128 begin, i128 end) {
  return r.lo >= begin && r.hi <= end;
}

// The elements in row-major index order, each read with its own offset.
inline std::vector<uint8_t> ReadNaive(const std::vector<int64_t>& shape,
                                      const std::vector<i128>& byte_strides,
                                      const uint8_t* first, int64_t itemsize) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<uint8_t> out(static_cast<size_t>(n * itemsize));
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    i128 off = 0;
    for (size_t i = 0; i < shape.size(); ++i) off += byte_strides[i] * idx[i];
    std::memcpy(&out[static_cast<size_t>(e * itemsize)],
                first + static_cast<int64_t>(off),
                static_cast<size_t>(itemsize));
    for (size_t i = shape.size(); i-- > 0;) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

}  // namespace baton::fuzz
