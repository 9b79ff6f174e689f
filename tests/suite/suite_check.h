// The kernel suite's host helpers: element-type names, exact host rounding to every float format,
// random inputs with edge values, poisoned output buffers, and comparison with a tolerance by dtype
// that reports the first bad indices. Kept apart from the kernels so that each case stays short.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::suite {

// ---- element types ---------------------------------------------------------------------------

template <class T>
constexpr bool is_fp8_v = std::is_same_v<T, f8e4m3> || std::is_same_v<T, f8e5m2>;
template <class T>
constexpr bool is_short_float_v = std::is_same_v<T, f16> || std::is_same_v<T, bf16> || is_fp8_v<T>;
template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T> || is_short_float_v<T>;
template <class T>
constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T>
constexpr const char* dtype_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_same_v<T, int8_t>) return "i8";
  else if constexpr (std::is_same_v<T, int16_t>) return "i16";
  else if constexpr (std::is_same_v<T, int32_t>) return "i32";
  else if constexpr (std::is_same_v<T, int64_t>) return "i64";
  else if constexpr (std::is_same_v<T, uint8_t>) return "u8";
  else if constexpr (std::is_same_v<T, uint16_t>) return "u16";
  else if constexpr (std::is_same_v<T, uint32_t>) return "u32";
  else if constexpr (std::is_same_v<T, uint64_t>) return "u64";
  else if constexpr (std::is_same_v<T, f16>) return "f16";
  else if constexpr (std::is_same_v<T, bf16>) return "bf16";
  else if constexpr (std::is_same_v<T, f8e4m3>) return "f8e4m3";
  else if constexpr (std::is_same_v<T, f8e5m2>) return "f8e5m2";
  else if constexpr (std::is_same_v<T, float>) return "f32";
  else return "f64";
}

// The host type that holds one element of T in a buffer: bool buffers are read as bytes.
template <class T>
using host_t = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// ---- exact host rounding -----------------------------------------------------------------------
// References compute in long double (64-bit significand on x86-64) and round once to the target.
// For + - * / and sqrt this equals rounding the exact result (64 >= 2p + 2 for p <= 24), and the
// rounding to f16/bf16 here is written independently of kiln/half.h.

// Rounds x to p significand bits, minimum normal exponent emin, maximum exponent emax, ties to even.
long double round_to_format(long double x, int p, int emin, int emax);

uint16_t f16_bits_of(long double exactly_representable);
long double f16_value(uint16_t bits);
long double bf16_value(uint16_t bits);
// fp8 (OCP), written from the formats: e4m3 has 4 bits of precision, normal exponents -6..8, no
// infinities and 448 at most (S.1111.111 is NaN); e5m2 has 3, -14..15 and 57344 at most. A
// conversion saturates (cvt.rn.satfinite): past the largest, infinities too, is the largest; NaN
// is 0x7f.
long double f8_value(uint8_t bits, bool e4m3);
uint8_t f8_saturated_bits(long double rounded, bool e4m3);

template <class T>
T narrow(long double x) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(x);
  } else if constexpr (std::is_same_v<T, double>) {
    return static_cast<double>(x);
  } else if constexpr (std::is_same_v<T, f16>) {
    return f16::from_bits(f16_bits_of(round_to_format(x, 11, -14, 15)));
  } else if constexpr (std::is_same_v<T, f8e4m3>) {
    return f8e4m3::from_bits(f8_saturated_bits(round_to_format(x, 4, -6, 8), true));
  } else if constexpr (std::is_same_v<T, f8e5m2>) {
    return f8e5m2::from_bits(f8_saturated_bits(round_to_format(x, 3, -14, 15), false));
  } else {
    static_assert(std::is_same_v<T, bf16>);
    long double r = round_to_format(x, 8, -126, 127);
    if (std::isnan(r)) return bf16::from_bits(0x7fc0);
    // r is a bf16 value, so a float holds it exactly and its top half is the bf16.
    return bf16::from_bits(static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(r)) >> 16));
  }
}

template <class T>
long double wide(T v) {
  if constexpr (std::is_same_v<T, f16>) return f16_value(v.bits);
  else if constexpr (std::is_same_v<T, bf16>) return bf16_value(v.bits);
  else if constexpr (is_fp8_v<T>) return f8_value(v.bits, std::is_same_v<T, f8e4m3>);
  else return static_cast<long double>(v);
}

// A host value of T from a number (floats round to nearest even; integers must fit).
template <class T>
T make(long double v) {
  if constexpr (is_float_v<T>) return narrow<T>(v);
  else return static_cast<T>(v);
}

template <class T>
bool is_nan(T v) {
  if constexpr (is_float_v<T>) return std::isnan(wide(v));
  else return false;
}

// ---- random inputs -----------------------------------------------------------------------------

// Uniform in [lo, hi], rounded to T (integers: inclusive bounds, clamped to T's range).
template <class T>
std::vector<T> random_values(std::mt19937_64& rng, size_t n, double lo, double hi) {
  std::vector<T> v(n);
  if constexpr (is_float_v<T>) {
    std::uniform_real_distribution<double> d(lo, hi);
    for (auto& x : v) x = narrow<T>(d(rng));
  } else if constexpr (std::is_same_v<T, bool>) {
    for (auto& x : v) x = (rng() & 1) != 0;
  } else {
    long double tlo = std::numeric_limits<T>::lowest(), thi = std::numeric_limits<T>::max();
    long double a = std::max<long double>(lo, tlo), b = std::min<long double>(hi, thi);
    if constexpr (std::is_signed_v<T>) {
      std::uniform_int_distribution<int64_t> d(static_cast<int64_t>(a), static_cast<int64_t>(b));
      for (auto& x : v) x = static_cast<T>(d(rng));
    } else {
      std::uniform_int_distribution<uint64_t> d(static_cast<uint64_t>(a), static_cast<uint64_t>(b));
      for (auto& x : v) x = static_cast<T>(d(rng));
    }
  }
  return v;
}

// Integers: every bit pattern equally likely. Floats: uniform in [-100, 100].
template <class T>
std::vector<T> random_any(std::mt19937_64& rng, size_t n) {
  if constexpr (is_float_v<T>) {
    return random_values<T>(rng, n, -100.0, 100.0);
  } else {
    std::vector<T> v(n);
    for (auto& x : v) {
      uint64_t bits = rng();
      std::memcpy(&x, &bits, sizeof(T));
    }
    return v;
  }
}

// Values that break naive code: integer MIN, MAX, -1, 0, 1; float NaN, +-inf, -0, the smallest
// subnormal, the largest finite value.
template <class T>
std::vector<T> special_values() {
  if constexpr (is_float_v<T>) {
    // The largest finite value and the smallest subnormal of T.
    long double mx, tiny;
    if constexpr (std::is_same_v<T, f16>) mx = 65504.0L, tiny = std::ldexp(1.0L, -24);
    else if constexpr (std::is_same_v<T, bf16>)
      mx = (2.0L - std::ldexp(1.0L, -7)) * std::ldexp(1.0L, 127), tiny = std::ldexp(1.0L, -133);
    else if constexpr (std::is_same_v<T, f8e4m3>) mx = 448.0L, tiny = std::ldexp(1.0L, -9);
    else if constexpr (std::is_same_v<T, f8e5m2>) mx = 57344.0L, tiny = std::ldexp(1.0L, -16);
    else mx = std::numeric_limits<T>::max(), tiny = std::numeric_limits<T>::denorm_min();
    long double inf = std::numeric_limits<long double>::infinity();
    std::vector<T> v = {narrow<T>(std::numeric_limits<long double>::quiet_NaN()),
                        narrow<T>(inf),
                        narrow<T>(-inf),
                        narrow<T>(-0.0L),
                        narrow<T>(0.0L),
                        narrow<T>(tiny),
                        narrow<T>(-mx),
                        narrow<T>(mx),
                        narrow<T>(1.0L),
                        narrow<T>(-1.0L)};
    // A rounding into e5m2 saturates, so its infinities come only as bits (from memory).
    if constexpr (std::is_same_v<T, f8e5m2>) v.insert(v.end(), {T::from_bits(0x7c), T::from_bits(0xfc)});
    return v;
  } else if constexpr (std::is_same_v<T, bool>) {
    return {false, true};
  } else if constexpr (std::is_signed_v<T>) {
    return {std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(-1), T(0), T(1)};
  } else {
    return {std::numeric_limits<T>::max(), T(0), T(1), T(std::numeric_limits<T>::max() / 2 + 1)};
  }
}

// Overwrites about one element in 16 (at least all specials once when n allows) with special values.
template <class T>
void sprinkle_specials(std::vector<T>& v, std::mt19937_64& rng, std::vector<T> specials = special_values<T>()) {
  if (v.empty() || specials.empty()) return;
  size_t count = std::max(specials.size(), v.size() / 16);
  for (size_t k = 0; k < count; ++k) v[rng() % v.size()] = specials[k % specials.size()];
}

// ---- device buffers ----------------------------------------------------------------------------

// `bytes` bytes of 0xff: NaN for every float type, -1 or MAX for integers, an invalid bool.
Handle poisoned(const Client& client, size_t bytes);
template <class T>
Handle poisoned_elems(const Client& client, size_t n) {
  return poisoned(client, n * sizeof(host_t<T>)).template view_as<T>();
}
// The host image of a poisoned buffer.
template <class T>
std::vector<T> poison_vector(size_t n) {
  std::vector<T> v(n);
  std::memset(static_cast<void*>(v.data()), 0xff, n * sizeof(T));
  return v;
}
std::vector<unsigned char> read_all_bytes(const Client& client, const Handle& h);

inline uint32_t cubes_for(size_t units, uint32_t per_cube) { return uint32_t((units + per_cube - 1) / per_cube); }

// ---- formatting and comparison -----------------------------------------------------------------

// How many comparisons the helpers have made in this process: a case that compares nothing fails.
uint64_t& comparison_count();
// Counts a check made with a plain EXPECT (an error kind, a count).
inline void note_check() { ++comparison_count(); }

std::string format_long_double(long double v);

template <class T>
std::string format_value(T v) {
  if constexpr (is_short_float_v<T>) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%04x", unsigned(v.bits));
    return format_long_double(wide(v)) + " (0x" + hex + ")";
  } else if constexpr (std::is_floating_point_v<T>) {
    return format_long_double(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_signed_v<T>) {
    return std::to_string(static_cast<long long>(v));
  } else {
    return std::to_string(static_cast<unsigned long long>(v));
  }
}

// A tolerance: a value passes when it is within `ulps` units in the last place, or when
// |actual - expected| <= abs + rel * |expected|. NaN matches NaN; infinities must match exactly.
struct Tol {
  double rel = 0;
  double abs = 0;
  int64_t ulps = 0;
  std::string describe() const;
};

inline Tol exact() { return {}; }

// Elementwise arithmetic: a few ulp (f32, f64), ~1e-3 relative (f16), ~1e-2 (bf16); exact integers.
template <class T>
Tol tol_arith() {
  if constexpr (std::is_same_v<T, float>) return {0, 0, 4};
  else if constexpr (std::is_same_v<T, double>) return {1e-12, 0, 4};
  else if constexpr (std::is_same_v<T, f16>) return {1e-3, 0, 1};
  else if constexpr (std::is_same_v<T, bf16>) return {1e-2, 0, 1};
  else return {};
}
// Transcendental functions: relative 1e-5 (f32) with a small absolute floor for results near 0.
template <class T>
Tol tol_math() {
  if constexpr (std::is_same_v<T, float>) return {1e-5, 1e-6, 4};
  else if constexpr (std::is_same_v<T, double>) return {1e-12, 1e-14, 4};
  else if constexpr (std::is_same_v<T, f16>) return {2e-3, 1e-4, 2};
  else if constexpr (std::is_same_v<T, bf16>) return {1e-2, 1e-3, 2};
  else return {};
}
// Reductions: the order of additions differs between backends, so the bound scales with the sum
// of magnitudes that went in.
template <class T>
Tol tol_reduce(long double magnitude) {
  double m = static_cast<double>(magnitude);
  if constexpr (std::is_same_v<T, float>) return {1e-5, 1e-5 * m, 4};
  else if constexpr (std::is_same_v<T, double>) return {1e-12, 1e-12 * m, 4};
  else if constexpr (std::is_same_v<T, f16>) return {1e-3, 1e-3 * m, 2};
  else if constexpr (std::is_same_v<T, bf16>) return {1e-2, 1e-2 * m, 2};
  else return {};
}

// Expressions a GPU may contract into fma (a * b + c): allow about two roundings at the scale of
// the terms (`magnitude`), whatever the result's size.
template <class T>
Tol tol_fused(double magnitude) {
  if constexpr (std::is_same_v<T, float>) return {1e-6, 0x1p-22 * magnitude, 4};
  else if constexpr (std::is_same_v<T, double>) return {1e-12, 0x1p-51 * magnitude, 4};
  else if constexpr (std::is_same_v<T, f16>) return {1e-3, 0x1p-9 * magnitude, 1};
  else if constexpr (std::is_same_v<T, bf16>) return {1e-2, 0x1p-6 * magnitude, 1};
  else return {};
}

// Distance in units in the last place between two finite floats of one type (ordered bits).
template <class T>
int64_t ulp_distance(T a, T b) {
  auto ordered = [](T x) -> int64_t {
    if constexpr (is_short_float_v<T>) {
      int64_t bits = x.bits;
      return (bits & 0x8000) ? -(bits & 0x7fff) : bits;
    } else if constexpr (std::is_same_v<T, float>) {
      int64_t bits = std::bit_cast<uint32_t>(x);
      return (bits & 0x80000000ll) ? -(bits & 0x7fffffffll) : bits;
    } else {
      uint64_t bits = std::bit_cast<uint64_t>(x);
      int64_t mag = static_cast<int64_t>(bits & 0x7fffffffffffffffull);
      return (bits >> 63) ? -mag : mag;
    }
  };
  int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

template <class T>
bool within(T expected, T actual, const Tol& tol) {
  if constexpr (is_float_v<T>) {
    long double e = wide(expected), a = wide(actual);
    if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a);
    if (e == a) return true;
    if (std::isinf(e) || std::isinf(a)) return false;
    if (tol.ulps > 0 && ulp_distance(expected, actual) <= tol.ulps) return true;
    return std::fabs(a - e) <= static_cast<long double>(tol.abs) + static_cast<long double>(tol.rel) * std::fabs(e);
  } else {
    return expected == actual;
  }
}

// Compares element by element; on mismatch adds one failure naming `what`, how many differ, and
// the first bad indices with expected and actual values. `care` (optional, one byte per element)
// marks the elements whose value the kernel defines.
template <class T>
bool expect_near(std::string_view what, const std::vector<T>& expected, const std::vector<T>& actual, Tol tol,
                 const std::vector<uint8_t>* care = nullptr) {
  ++comparison_count();
  if (expected.size() != actual.size()) {
    ADD_FAILURE() << what << ": expected " << expected.size() << " elements, read back " << actual.size();
    return false;
  }
  size_t bad = 0;
  std::string lines;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (care && !(*care)[i]) continue;
    if (within(expected[i], actual[i], tol)) continue;
    if (bad < 8) {
      lines += "\n  [" + std::to_string(i) + "] expected " + format_value(expected[i]) + ", actual " +
               format_value(actual[i]);
    }
    ++bad;
  }
  if (bad == 0) return true;
  ADD_FAILURE() << what << " (" << dtype_name<T>() << "): " << bad << " of " << expected.size()
                << " elements differ, tolerance " << tol.describe() << "; first bad:" << lines;
  return false;
}

template <class T>
bool expect_equal(std::string_view what, const std::vector<T>& expected, const std::vector<T>& actual) {
  return expect_near(what, expected, actual, exact());
}

// Byte-for-byte equality (bitcasts, untouched buffers).
bool expect_same_bytes(std::string_view what, const std::vector<unsigned char>& expected,
                       const std::vector<unsigned char>& actual);

}  // namespace kiln::suite
