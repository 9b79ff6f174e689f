// The fuzzer's arithmetic on element bits (numbers.h).
#include "numbers.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace kiln::fuzz {

namespace {

struct Format {
  int precision, emin, emax, exp_bits;  // significand bits (with the hidden one)
};
Format format_of(ir::Scalar s) {
  switch (s) {
    case ir::Scalar::F16: return {11, -14, 15, 5};
    case ir::Scalar::BF16: return {8, -126, 127, 8};
    case ir::Scalar::F32: return {24, -126, 127, 8};
    default: return {53, -1022, 1023, 11};
  }
}

}  // namespace

int bits_of(ir::Scalar s) { return s == ir::Scalar::Bool ? 1 : ir::scalar_bytes(s) * 8; }
uint64_t mask_of(ir::Scalar s) { return bits_of(s) >= 64 ? ~0ull : (1ull << bits_of(s)) - 1; }

int64_t signed_value(ir::Scalar s, uint64_t v) {
  const int b = bits_of(s);
  if (!ir::is_signed_int(s)) return int64_t(v & mask_of(s));
  if (b >= 64) return int64_t(v);
  const uint64_t sign = 1ull << (b - 1);
  return int64_t((v & mask_of(s)) ^ sign) - int64_t(sign);
}

int precision_of(ir::Scalar s) { return format_of(s).precision; }
long double roundoff(ir::Scalar s) { return std::ldexp(1.0L, -format_of(s).precision); }
long double largest_finite(ir::Scalar s) {
  const Format f = format_of(s);
  return std::ldexp(2.0L - std::ldexp(1.0L, 1 - f.precision), f.emax);
}
long double smallest_normal(ir::Scalar s) { return std::ldexp(1.0L, format_of(s).emin); }
long double approximate_tolerance(ir::Scalar s) {
  return s == ir::Scalar::F64 ? 1e-12L : s == ir::Scalar::F32 ? 1e-5L : s == ir::Scalar::F16 ? 4e-3L : 3e-2L;
}

long double float_value(ir::Scalar s, uint64_t v) {
  if (s == ir::Scalar::F32) {
    float f;
    const uint32_t u = uint32_t(v);
    std::memcpy(&f, &u, 4);
    return f;
  }
  if (s == ir::Scalar::F64) {
    double d;
    std::memcpy(&d, &v, 8);
    return d;
  }
  const Format f = format_of(s);
  const int mant = f.precision - 1, bias = (1 << (f.exp_bits - 1)) - 1;
  const bool negative = (v >> (mant + f.exp_bits)) & 1;
  const int e = int((v >> mant) & ((1u << f.exp_bits) - 1));
  const uint64_t m = v & ((1ull << mant) - 1);
  long double x;
  if (e == (1 << f.exp_bits) - 1) x = m ? std::numeric_limits<long double>::quiet_NaN() : INFINITY;
  else if (e == 0) x = std::ldexp((long double)m, f.emin - mant);
  else x = std::ldexp((long double)(m | (1ull << mant)), e - bias - mant);
  return negative ? -x : x;
}

uint64_t round_to(ir::Scalar s, long double x) {
  const Format f = format_of(s);
  const int mant = f.precision - 1, bias = (1 << (f.exp_bits - 1)) - 1;
  const uint64_t sign_bit = 1ull << (mant + f.exp_bits);
  const uint64_t exp_all = uint64_t((1 << f.exp_bits) - 1) << mant;
  const bool negative = std::signbit(x);
  if (std::isnan(x)) return exp_all | (1ull << (mant - 1));
  const long double a = std::fabs(x);
  uint64_t bits;
  if (std::isinf(a)) {
    bits = exp_all;
  } else if (a == 0) {
    bits = 0;
  } else {
    const int e = std::max(std::ilogb(a), f.emin);                  // subnormals keep emin's quantum
    const long double q = std::nearbyint(std::ldexp(a, mant - e));  // the significand, rounded
    const long double r = std::ldexp(q, e - mant);
    if (std::ilogb(r) > f.emax) {
      bits = exp_all;  // past the largest finite: inf
    } else if (std::ilogb(r) < f.emin) {
      bits = uint64_t(std::ldexp(r, mant - f.emin));  // subnormal: the significand alone
    } else {
      const int re = std::ilogb(r);
      const uint64_t m = uint64_t(std::ldexp(r, mant - re)) & ((1ull << mant) - 1);
      bits = (uint64_t(re + bias) << mant) | m;
    }
  }
  return (negative ? sign_bit : 0) | bits;
}

long double ulp_of(ir::Scalar s, long double x) {
  const Format f = format_of(s);
  const int e = (x == 0 || !std::isfinite(x)) ? f.emin : std::max(std::ilogb(x), f.emin);
  return std::ldexp(1.0L, e - (f.precision - 1));
}

}  // namespace kiln::fuzz
