// FuzzInput: the fuzzers' view of libFuzzer's bytes as a stream of choices.
//
// Every read consumes bytes from the front; past the end every read returns
// its smallest choice (0, false, the first option), so any input -- even an
// empty one -- decodes to something and a prefix of an input decodes to a
// prefix of its choices (which keeps libFuzzer's mutations local).
//
// Dimensions and indices are mostly small and valid, but a few byte values
// decode to hostile ones (negative, huge, INT64_MAX, kMaxElements and its
// neighbours), so every size check is exercised at its edges.
//
// Not thread-safe; one per fuzz input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "baton/core/shape.h"

namespace baton::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  size_t remaining() const { return empty() ? 0 : size_ - pos_; }

  uint8_t Byte() { return empty() ? 0 : data_[pos_++]; }
  bool Bool() { return (Byte() & 1) != 0; }
  // A value in [lo, hi] (lo when out of bytes).
  int Int(int lo, int hi) {
    if (hi <= lo) return lo;
    const uint32_t span = static_cast<uint32_t>(hi - lo) + 1;
    uint32_t v = Byte();
    if (span > 256) v = (v << 8) | Byte();
    return lo + static_cast<int>(v % span);
  }
  // A full 64-bit value (little-endian bytes).
  uint64_t U64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{Byte()} << (8 * i);
    return v;
  }
  // Picks one of `n` options.
  size_t Pick(size_t n) {
    return n <= 1 ? 0 : static_cast<size_t>(Int(0, static_cast<int>(n) - 1));
  }
  template <typename T>
  const T& PickFrom(const std::vector<T>& v) {
    return v[Pick(v.size())];
  }
  // `n` raw bytes into `out` (zeros past the end).
  void Bytes(void* out, size_t n) {
    auto* o = static_cast<uint8_t*>(out);
    for (size_t i = 0; i < n; ++i) o[i] = Byte();
  }

  // A hostile 64-bit value: the edges of every size check.
  int64_t Hostile() {
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    switch (Byte() % 16) {
      case 0:
        return -1;
      case 1:
        return kMin;
      case 2:
        return kMax;
      case 3:
        return kMax - 1;
      case 4:
        return kMaxElements;
      case 5:
        return kMaxElements + 1;
      case 6:
        return int64_t{1} << 31;
      case 7:
        return int64_t{1} << 32;
      case 8:
        return (int64_t{1} << 32) - 1;
      case 9:
        return int64_t{1} << 62;
      case 10:
        return -(int64_t{1} << 62);
      case 11:
        return kMaxElements / 2 + 1;
      case 12:
        return 3037000500;  // about sqrt(INT64_MAX)
      case 13:
        return std::numeric_limits<int32_t>::max();
      case 14:
        return -2;
      default:
        return static_cast<int64_t>(U64());
    }
  }
  // A dimension size: mostly 0..5, sometimes up to 64, rarely large but
  // valid on its own (near kMaxElements: products and sums of a few of them
  // overflow) or hostile.
  int64_t Dim() {
    const uint8_t b = Byte();
    if (b < 200) return b % 6;
    if (b < 228) return b % 65;
    if (b < 242) {
      static constexpr int64_t kLarge[] = {
          kMaxElements,     kMaxElements / 2 + 1, kMaxElements / 17 + 1,
          int64_t{1} << 40, int64_t{1} << 31,     3037000500,
          1 << 20};
      return kLarge[Byte() % 7];
    }
    return Hostile();
  }
  // An index into something of size `n`: mostly in [0, n), sometimes just
  // outside, rarely hostile.
  int64_t Index(int64_t n) {
    const uint8_t b = Byte();
    if (b < 220) return n > 0 ? static_cast<int64_t>(Byte()) % n : 0;
    if (b < 240) return b % 2 == 0 ? n : -1;
    return Hostile();
  }
  // A small signed value, sometimes hostile (pads, slice bounds).
  int64_t Small() {
    const uint8_t b = Byte();
    if (b < 230) return static_cast<int64_t>(b % 9) - 3;
    return Hostile();
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace baton::fuzz
