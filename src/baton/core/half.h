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

inline float bf16_to_float(bfloat16 h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h.bits) << 16);
}

inline bfloat16 float_to_bf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep it quiet and a NaN
    return bfloat16{static_cast<uint16_t>((u >> 16) | 0x40u)};
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  return bfloat16{static_cast<uint16_t>(u >> 16)};
}

inline float f16_to_float(float16 h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000u) << 16;
  const uint32_t exp = (h.bits >> 10) & 0x1fu;
  const uint32_t man = h.bits & 0x3ffu;
  uint32_t u;
  if (exp == 0) {
    if (man == 0) {
      u = sign;
    } else {  // subnormal: value = man * 2^-24
      float f = static_cast<float>(man) * 5.9604644775390625e-08f;
      return sign ? -f : f;
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (man << 13);
  } else {
    u = sign | ((exp + 112) << 23) | (man << 13);
  }
  return std::bit_cast<float>(u);
}

inline float16 float_to_f16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  u &= 0x7fffffffu;
  if (u > 0x7f800000u) return float16{static_cast<uint16_t>(sign | 0x7e00u)};
  if (u >= 0x477ff000u) {  // rounds to >= 65520: infinity
    return float16{static_cast<uint16_t>(sign | 0x7c00u)};
  }
  if (u < 0x38800000u) {  // below the smallest normal: subnormal or zero
    // Add 0.5 (as float) so the FPU does the round-to-nearest-even for us.
    float a = std::bit_cast<float>(u) + 0.5f;
    uint32_t r = std::bit_cast<uint32_t>(a) - 0x3f000000u;
    return float16{static_cast<uint16_t>(sign | r)};
  }
  const uint32_t mant_odd = (u >> 13) & 1u;
  u += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round
  return float16{static_cast<uint16_t>(sign | (u >> 13))};
}

}  // namespace baton
