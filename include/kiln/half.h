// Host-side 16-bit floats (IEEE binary16 and bfloat16): storage types for buffers and references.
// Conversions round to nearest even, as the GPU's cvt.rn does, so host references match devices.
#pragma once

#include <bit>
#include <cstdint>

namespace kiln {

namespace detail {

inline uint16_t float_to_half_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7fffffffu;
  if (mag >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u | ((mag >> 13) & 0x3ffu) : 0u));
  }
  if (mag >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (mag < 0x38800000u) {  // subnormal half (or zero): shift the 24-bit significand into place
    if (mag < 0x33000000u) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
    uint32_t exp = mag >> 23;
    uint32_t sig = (mag & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exp;  // 14 + (112 - exp)
    uint32_t half = sig >> shift;
    uint32_t rem = sig & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((mag - 0x38000000u) >> 13);
  uint32_t rem = mag & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

inline float half_bits_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t sig = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (sig << 13));
  if (exp == 0) {
    if (sig == 0) return std::bit_cast<float>(sign);
    // subnormal: value = sig * 2^-24
    float v = static_cast<float>(sig) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (sig << 13));
}

inline uint16_t float_to_bf16_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

inline float bf16_bits_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

}  // namespace detail

// IEEE binary16. Arithmetic on the host goes through float, which rounds the same way as the
// device's native half arithmetic for + - * / (float carries more than twice half's precision).
struct f16 {
  uint16_t bits = 0;
  f16() = default;
  explicit f16(float f) : bits(detail::float_to_half_bits(f)) {}
  explicit f16(double d) : f16(static_cast<float>(d)) {}
  explicit operator float() const { return detail::half_bits_to_float(bits); }
  static f16 from_bits(uint16_t b) { f16 h; h.bits = b; return h; }
  friend bool operator==(f16 a, f16 b) { return static_cast<float>(a) == static_cast<float>(b); }
};

// bfloat16: the top half of a float.
struct bf16 {
  uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float f) : bits(detail::float_to_bf16_bits(f)) {}
  explicit bf16(double d) : bf16(static_cast<float>(d)) {}
  explicit operator float() const { return detail::bf16_bits_to_float(bits); }
  static bf16 from_bits(uint16_t b) { bf16 h; h.bits = b; return h; }
  friend bool operator==(bf16 a, bf16 b) { return static_cast<float>(a) == static_cast<float>(b); }
};

}  // namespace kiln
