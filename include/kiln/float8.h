// Host-side 8-bit floats (the OCP FP8 formats Hopper's tensor cores multiply): storage types for
// buffers and host references. A conversion to one rounds once to nearest even and saturates as
// the device's only conversion to them (cvt.rn.satfinite) does: a value past the largest finite
// one, and an infinity, become the largest finite value of its sign; NaN becomes the format's NaN
// (0x7f). So a host reference built from these matches what a kernel stores.
//   e4m3: 4 exponent bits (bias 7), 3 fraction bits, no infinities, NaN only S.1111.111; 448 at most.
//   e5m2: 5 exponent bits (bias 15), 2 fraction bits, IEEE-like with infinities; 57344 at most.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>

namespace kiln {

namespace detail {

// The facts of one 8-bit format that its conversions need.
struct Float8Format {
  int mantissa_bits, exponent_bits, bias;
  uint8_t max_finite;  // the largest finite value's bits (positive)
  bool has_infinity;   // e5m2's S.11111.00; e4m3 has none
};
inline constexpr Float8Format kE4M3{3, 4, 7, 0x7e, false};
inline constexpr Float8Format kE5M2{2, 5, 15, 0x7b, true};
inline constexpr uint8_t kFloat8Nan = 0x7f;

// The value of an 8-bit pattern, exactly (every one is a float).
inline float float8_to_float(uint8_t b, const Float8Format& f) {
  const bool neg = (b & 0x80u) != 0;
  const int field = (b >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1);
  const int frac = b & ((1 << f.mantissa_bits) - 1);
  const int top = (1 << f.exponent_bits) - 1;
  float v;
  if (f.has_infinity && field == top) {
    v = frac ? NAN : INFINITY;
  } else if (!f.has_infinity && field == top && frac == (1 << f.mantissa_bits) - 1) {
    v = NAN;
  } else if (field == 0) {
    v = std::ldexp(float(frac), 1 - f.bias - f.mantissa_bits);  // subnormal
  } else {
    v = std::ldexp(float(frac | (1 << f.mantissa_bits)), field - f.bias - f.mantissa_bits);
  }
  return neg ? -v : v;
}

// d rounded once to nearest even into the format, then saturated (cvt.rn.satfinite's meaning).
// Every float, and every integer small enough not to saturate, is exact in a double, so float and
// integer conversions come here without rounding twice.
inline uint8_t double_to_float8(double d, const Float8Format& f) {
  if (std::isnan(d)) return kFloat8Nan;
  const uint8_t sign = std::signbit(d) ? 0x80u : 0u;
  const double a = std::fabs(d);
  const double max = float8_to_float(f.max_finite, f);
  if (a >= max) return uint8_t(sign | f.max_finite);  // infinities too: satfinite
  if (a == 0) return sign;
  const int emin = 1 - f.bias;
  int e;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  const int ulp = std::max(e - 1, emin) - f.mantissa_bits;
  const double scaled = std::ldexp(a, -ulp);  // exact: a power-of-two scaling
  double m = std::floor(scaled);
  const double rem = scaled - m;
  if (rem > 0.5 || (rem == 0.5 && std::fmod(m, 2.0) != 0)) m += 1;
  const double r = std::ldexp(m, ulp);
  if (r > max) return uint8_t(sign | f.max_finite);
  // Encode r: m counts ulps; a carry into the next binade leaves m = 2^(mant+1), still exact.
  int re;
  std::frexp(r, &re);
  if (r < std::ldexp(1.0, emin)) return uint8_t(sign | uint8_t(std::ldexp(r, f.mantissa_bits - emin)));
  const int field = re - 1 + f.bias;
  const int frac = int(std::ldexp(r, f.mantissa_bits - (re - 1))) - (1 << f.mantissa_bits);
  return uint8_t(sign | (field << f.mantissa_bits) | frac);
}

template <const Float8Format& F>
struct float8 {
  static constexpr int mantissa_bits = F.mantissa_bits;
  static constexpr int exponent_bits = F.exponent_bits;
  uint8_t bits = 0;
  float8() = default;
  explicit float8(float v) : bits(double_to_float8(double(v), F)) {}
  explicit float8(double v) : bits(double_to_float8(v, F)) {}
  // Any integer: exact in a double below 2^53, and every larger one saturates.
  template <std::integral I>
  explicit float8(I v) : bits(double_to_float8(double(v), F)) {}
  explicit operator float() const { return float8_to_float(bits, F); }
  static float8 from_bits(uint8_t b) {
    float8 x;
    x.bits = b;
    return x;
  }
  template <std::integral I>
  static float8 from_integer(I v) {
    return float8(v);
  }
  friend bool operator==(float8 a, float8 b) { return static_cast<float>(a) == static_cast<float>(b); }
};

}  // namespace detail

// fp8 e4m3 (OCP E4M3FN): 448 at most, no infinities.
using f8e4m3 = detail::float8<detail::kE4M3>;
// fp8 e5m2: 57344 at most (conversions saturate there), with infinities.
using f8e5m2 = detail::float8<detail::kE5M2>;

}  // namespace kiln
