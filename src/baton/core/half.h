// float16 and bfloat16 storage types with float conversions (round to nearest
// even), for kernels and the reference interpreter. Arithmetic is done in
// float, as XLA's CPU backend does.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace baton {

struct bfloat16 {
  uint16_t bits;
};
struct float16 {
  uint16_t bits;
};

namespace half_detail {
// c ? a : b as bit operations. The conversions below select with it rather
// than branch, so that a loop over an array of them is vectorized (GCC keeps
// a conditional expression whose arms do float arithmetic as a branch, and a
// loop with a branch stays scalar): a float16 kernel then runs 3-5x faster.
inline uint32_t Pick(bool c, uint32_t a, uint32_t b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(c);
  return (a & mask) | (b & ~mask);
}
}  // namespace half_detail

inline float bf16_to_float(bfloat16 h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h.bits) << 16);
}

// A NaN stays a NaN and becomes quiet (its payload's top bits kept).
inline bfloat16 float_to_bf16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (u >> 16) | 0x40u;
  const bool nan = static_cast<int32_t>(u & 0x7fffffffu) > 0x7f800000;
  return bfloat16{
      static_cast<uint16_t>(half_detail::Pick(nan, quiet_nan, rounded))};
}

// Exact. A NaN keeps its payload (shifted into place).
inline float f16_to_float(float16 h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  const uint32_t magnitude = h.bits & 0x7fffu;
  const uint32_t shifted = magnitude << 13;  // mantissa in place
  const uint32_t exp = magnitude & 0x7c00u;
  // Zero or subnormal (exp 0): mantissa * 2^-24, made exactly as
  // 2^-14 * (1 + mantissa / 2^10) - 2^-14.
  const uint32_t subnormal = std::bit_cast<uint32_t>(
      std::bit_cast<float>(shifted + (113u << 23)) -
      std::bit_cast<float>(113u << 23));
  // Otherwise the exponent rebiased by 127 - 15 = 112; infinity and NaN
  // (exp 31) go to exponent 255.
  const uint32_t other =
      shifted + half_detail::Pick(exp == 0x7c00u, 224u << 23, 112u << 23);
  return std::bit_cast<float>(sign | half_detail::Pick(exp == 0, subnormal, other));
}

// Round to nearest even; overflow goes to infinity; every NaN becomes the
// quiet NaN 0x7e00 (with the sign).
inline float16 float_to_f16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t u = bits & 0x7fffffffu;
  const int32_t magnitude = static_cast<int32_t>(u);
  // Below the smallest normal: subnormal or zero. Adding 0.5 (as float)
  // makes the FPU round to nearest even at the 2^-24 place.
  const uint32_t subnormal =
      std::bit_cast<uint32_t>(std::bit_cast<float>(u) + 0.5f) - 0x3f000000u;
  // Normal: rebias the exponent (-112 << 23) and round (half to even).
  const uint32_t normal = (u + 0xc8000fffu + ((u >> 13) & 1u)) >> 13;
  uint32_t r = half_detail::Pick(magnitude < 0x38800000, subnormal, normal);
  r = half_detail::Pick(magnitude >= 0x477ff000, 0x7c00u, r);  // >= 65520: inf
  r = half_detail::Pick(magnitude > 0x7f800000, 0x7e00u, r);  // NaN
  return float16{static_cast<uint16_t>(sign | r)};
}

}  // namespace baton
