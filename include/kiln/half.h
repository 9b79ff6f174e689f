// Host-side 16-bit floats (IEEE binary16 and bfloat16): storage types for buffers and references.
// Conversions round to nearest even, as the GPU's cvt.rn does, so host references match devices.
#pragma once

#include <bit>
#include <concepts>
#include <cstdint>
#include <type_traits>

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

// Rounds sig * 2^exp (sig > 0) to nearest even in a binary format with `mant` fraction bits and
// `exp_bits` exponent bits, once: converting a double or a 64-bit integer through float would
// round twice and can land one unit off.
inline uint16_t round_to_bits(bool neg, uint64_t sig, int exp, int mant, int exp_bits) {
  const uint16_t sign = neg ? uint16_t(1u << (mant + exp_bits)) : 0;
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int emin = 1 - bias;
  const int msb = 63 - std::countl_zero(sig);
  const int e = msb + exp;  // the value is in [2^e, 2^(e+1))
  const uint16_t inf = uint16_t(sign | (((1u << exp_bits) - 1) << mant));
  if (e > bias) return inf;
  const int ulp = (e > emin ? e : emin) - mant;  // exponent of the last kept bit
  const int shift = ulp - exp;
  uint64_t m;
  if (shift <= 0) {
    m = sig << -shift;
  } else if (shift >= 65) {
    m = 0;
  } else {
    uint64_t kept = shift == 64 ? 0 : sig >> shift;
    uint64_t rem = shift == 64 ? sig : sig & ((uint64_t(1) << shift) - 1);
    uint64_t half = uint64_t(1) << (shift - 1);
    m = kept + ((rem > half || (rem == half && (kept & 1))) ? 1 : 0);
  }
  if (m == 0) return sign;
  if (m < (uint64_t(1) << mant)) return uint16_t(sign | m);  // subnormal
  int field = ulp + mant + bias;
  if (m >= (uint64_t(2) << mant)) {  // rounding carried into the next binade
    m >>= 1;
    ++field;
  }
  if (field >= (1 << exp_bits) - 1) return inf;
  return uint16_t(sign | (uint32_t(field) << mant) | (m - (uint64_t(1) << mant)));
}

inline uint16_t double_to_bits(double d, int mant, int exp_bits, uint16_t quiet_nan) {
  uint64_t x = std::bit_cast<uint64_t>(d);
  bool neg = (x >> 63) != 0;
  int field = int((x >> 52) & 0x7ff);
  uint64_t frac = x & ((uint64_t(1) << 52) - 1);
  uint16_t sign = neg ? uint16_t(1u << (mant + exp_bits)) : 0;
  if (field == 0x7ff) {
    return frac ? uint16_t(sign | quiet_nan) : uint16_t(sign | (((1u << exp_bits) - 1) << mant));
  }
  if (field == 0 && frac == 0) return sign;
  uint64_t sig = field ? (frac | (uint64_t(1) << 52)) : frac;
  int exp = (field ? field : 1) - 1075;
  return round_to_bits(neg, sig, exp, mant, exp_bits);
}

template <class I>
uint16_t integer_to_bits(I v, int mant, int exp_bits) {
  if (v == 0) return 0;
  bool neg = false;
  uint64_t mag;
  if constexpr (std::is_signed_v<I>) {
    neg = v < 0;
    mag = neg ? uint64_t(0) - uint64_t(int64_t(v)) : uint64_t(v);
  } else {
    mag = uint64_t(v);
  }
  return round_to_bits(neg, mag, 0, mant, exp_bits);
}

}  // namespace detail

// IEEE binary16. Arithmetic on the host goes through float, which rounds the same way as the
// device's native half arithmetic for + - * / (float carries more than twice half's precision).
struct f16 {
  static constexpr int mantissa_bits = 10;  // stored; with the implicit bit, 11 of precision
  static constexpr int exponent_bits = 5;
  uint16_t bits = 0;
  f16() = default;
  explicit f16(float f) : bits(detail::float_to_half_bits(f)) {}
  explicit f16(double d) : bits(detail::double_to_bits(d, mantissa_bits, exponent_bits, 0x7e00)) {}
  // Any integer, rounded once as a cast does. Without it f16(1) is ambiguous (an int converts to
  // float and to double equally well), and so is T(1) in a kernel templated over its element type.
  template <std::integral I>
  explicit f16(I v) : bits(detail::integer_to_bits(v, mantissa_bits, exponent_bits)) {}
  explicit operator float() const { return detail::half_bits_to_float(bits); }
  static f16 from_bits(uint16_t b) {
    f16 h;
    h.bits = b;
    return h;
  }
  // Rounded once to nearest even (a conversion through float could round twice); the same as f16(v).
  template <std::integral I>
  static f16 from_integer(I v) {
    return f16(v);
  }
  friend bool operator==(f16 a, f16 b) { return static_cast<float>(a) == static_cast<float>(b); }
};

// bfloat16: the top half of a float.
struct bf16 {
  static constexpr int mantissa_bits = 7;
  static constexpr int exponent_bits = 8;
  uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float f) : bits(detail::float_to_bf16_bits(f)) {}
  explicit bf16(double d) : bits(detail::double_to_bits(d, mantissa_bits, exponent_bits, 0x7fc0)) {}
  template <std::integral I>  // as f16's
  explicit bf16(I v) : bits(detail::integer_to_bits(v, mantissa_bits, exponent_bits)) {}
  explicit operator float() const { return detail::bf16_bits_to_float(bits); }
  static bf16 from_bits(uint16_t b) {
    bf16 h;
    h.bits = b;
    return h;
  }
  template <std::integral I>
  static bf16 from_integer(I v) {
    return bf16(v);
  }
  friend bool operator==(bf16 a, bf16 b) { return static_cast<float>(a) == static_cast<float>(b); }
};

}  // namespace kiln
