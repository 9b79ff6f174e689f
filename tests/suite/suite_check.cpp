// The kernel suite's host helpers that need no templates: float rounding and decoding, poisoned
// buffers, formatting and byte comparison.
#include "suite_check.h"

#include <charconv>
#include <cstdio>

namespace kiln::suite {

long double round_to_format(long double x, int p, int emin, int emax) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  long double mag = std::fabs(x);
  int e = 0;
  std::frexp(mag, &e);  // mag = f * 2^e with f in [0.5, 1): the leading bit has exponent e - 1
  int lead = std::max(e - 1, emin);
  long double ulp = std::ldexp(1.0L, lead - (p - 1));
  long double r = std::nearbyint(mag / ulp) * ulp;  // exact scaling; nearbyint ties to even
  long double max_finite = (2.0L - std::ldexp(1.0L, 1 - p)) * std::ldexp(1.0L, emax);
  if (r > max_finite) r = std::numeric_limits<long double>::infinity();
  return x < 0 ? -r : r;
}

uint16_t f16_bits_of(long double v) {
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  long double m = std::fabs(v);
  if (std::isnan(v)) return 0x7e00;
  if (std::isinf(m)) return uint16_t(sign | 0x7c00);
  if (m == 0) return sign;
  if (m < std::ldexp(1.0L, -14)) return uint16_t(sign | uint16_t(m / std::ldexp(1.0L, -24)));  // subnormal
  int e = 0;
  long double f = std::frexp(m, &e);  // m = f * 2^e, f in [0.5, 1)
  int exponent = e - 1;
  auto mantissa = uint16_t((f * 2 - 1) * 1024);
  return uint16_t(sign | uint16_t((exponent + 15) << 10) | mantissa);
}

long double f16_value(uint16_t bits) {
  long double s = (bits & 0x8000) ? -1.0L : 1.0L;
  int exp = (bits >> 10) & 0x1f;
  int man = bits & 0x3ff;
  if (exp == 0x1f)
    return man ? std::numeric_limits<long double>::quiet_NaN() : s * std::numeric_limits<long double>::infinity();
  if (exp == 0) return s * std::ldexp(static_cast<long double>(man), -24);
  return s * std::ldexp(1.0L + man / 1024.0L, exp - 15);
}

long double bf16_value(uint16_t bits) {
  return static_cast<long double>(std::bit_cast<float>(static_cast<uint32_t>(bits) << 16));
}

long double f8_value(uint8_t bits, bool e4m3) {
  const int mant = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15, top = e4m3 ? 15 : 31;
  const long double sign = (bits & 0x80) ? -1.0L : 1.0L;
  const int field = (bits & 0x7f) >> mant, frac = bits & ((1 << mant) - 1);
  if (e4m3 && field == top && frac == 7) return std::numeric_limits<long double>::quiet_NaN();
  if (!e4m3 && field == top) return frac ? std::numeric_limits<long double>::quiet_NaN() : sign * INFINITY;
  if (field == 0) return sign * std::ldexp(static_cast<long double>(frac), 1 - bias - mant);
  return sign * std::ldexp(static_cast<long double>(frac + (1 << mant)), field - bias - mant);
}

uint8_t f8_saturated_bits(long double r, bool e4m3) {
  if (std::isnan(r)) return 0x7f;
  const uint8_t sign = std::signbit(r) ? 0x80 : 0, max = e4m3 ? 0x7e : 0x7b;
  const long double m = std::fabs(r);
  if (m >= f8_value(max, e4m3)) return uint8_t(sign | max);
  for (int b = 0; b < max; ++b) {
    if (f8_value(uint8_t(b), e4m3) == m) return uint8_t(sign | b);
  }
  ADD_FAILURE() << "f8_saturated_bits: " << double(r) << " is not an fp8 value";
  return 0x7f;
}

Handle poisoned(const Client& client, size_t bytes) {
  std::vector<unsigned char> p(bytes, 0xff);
  return client.upload(p).as_bytes();
}

std::vector<unsigned char> read_all_bytes(const Client& client, const Handle& h) {
  return client.read<unsigned char>(h.as_bytes());
}

std::string format_long_double(long double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  double d = static_cast<double>(v);
  if (static_cast<long double>(d) == v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, d);
    return std::string(buf, r.ptr);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.21Lg", v);
  return buf;
}

std::string Tol::describe() const {
  if (rel == 0 && abs == 0 && ulps == 0) return "exact";
  std::string s;
  if (ulps) s += std::to_string(ulps) + " ulp";
  if (rel) s += (s.empty() ? "" : " or ") + std::string("rel ") + format_long_double(rel);
  if (abs) s += (s.empty() ? "" : " + ") + std::string("abs ") + format_long_double(abs);
  return s;
}

uint64_t& comparison_count() {
  static uint64_t n = 0;
  return n;
}

bool expect_same_bytes(std::string_view what, const std::vector<unsigned char>& expected,
                       const std::vector<unsigned char>& actual) {
  ++comparison_count();
  if (expected.size() != actual.size()) {
    ADD_FAILURE() << what << ": expected " << expected.size() << " bytes, read back " << actual.size();
    return false;
  }
  size_t bad = 0;
  std::string lines;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == actual[i]) continue;
    if (bad < 8) {
      char buf[80];
      std::snprintf(buf, sizeof buf, "\n  byte [%zu] expected 0x%02x, actual 0x%02x", i, expected[i], actual[i]);
      lines += buf;
    }
    ++bad;
  }
  if (bad == 0) return true;
  ADD_FAILURE() << what << ": " << bad << " of " << expected.size() << " bytes differ; first bad:" << lines;
  return false;
}

}  // namespace kiln::suite
