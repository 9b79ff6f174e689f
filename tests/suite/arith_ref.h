// Host references for docs/ir.md's arithmetic, bitwise and cast semantics, written from the
// document (not from the CPU backend): integers wrap, MIN / -1 is MIN and its rem 0, shifts at or
// past the bit width give 0 or the sign fill, float min/max drop a NaN operand, float to int
// truncates and saturates with NaN -> 0.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "suite_check.h"

namespace kiln::suite::ref {

// A float op computed exactly enough and rounded once to T: f64 natively, narrower floats in long
// double (innocuous double rounding for + - * / since 64 >= 2p + 2).
template <class T, class F>
T float_op(T a, T b, F f) {
  if constexpr (std::is_same_v<T, double>) return f(a, b);
  else return narrow<T>(f(wide(a), wide(b)));
}

template <class T>
T add(T a, T b) {
  if constexpr (is_float_v<T>) return float_op(a, b, [](auto x, auto y) { return x + y; });
  else return static_cast<T>(uint64_t(a) + uint64_t(b));
}
template <class T>
T sub(T a, T b) {
  if constexpr (is_float_v<T>) return float_op(a, b, [](auto x, auto y) { return x - y; });
  else return static_cast<T>(uint64_t(a) - uint64_t(b));
}
template <class T>
T mul(T a, T b) {
  if constexpr (is_float_v<T>) return float_op(a, b, [](auto x, auto y) { return x * y; });
  else return static_cast<T>(uint64_t(a) * uint64_t(b));
}
// Integers: b must not be 0.
template <class T>
T div(T a, T b) {
  if constexpr (is_float_v<T>) {
    return float_op(a, b, [](auto x, auto y) { return x / y; });
  } else if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
    return static_cast<T>(int64_t(a) / int64_t(b));
  } else {
    return static_cast<T>(uint64_t(a) / uint64_t(b));
  }
}
template <class T>
T rem(T a, T b) {
  if constexpr (is_float_v<T>) {
    return float_op(a, b, [](auto x, auto y) { return std::fmod(x, y); });
  } else if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == T(-1)) return T(0);
    return static_cast<T>(int64_t(a) % int64_t(b));
  } else {
    return static_cast<T>(uint64_t(a) % uint64_t(b));
  }
}
template <class T>
T min(T a, T b) {
  if constexpr (is_float_v<T>) {
    if (is_nan(a)) return b;
    if (is_nan(b)) return a;
    return wide(b) < wide(a) ? b : a;
  } else {
    return b < a ? b : a;
  }
}
template <class T>
T max(T a, T b) {
  if constexpr (is_float_v<T>) {
    if (is_nan(a)) return b;
    if (is_nan(b)) return a;
    return wide(a) < wide(b) ? b : a;
  } else {
    return a < b ? b : a;
  }
}
template <class T>
T neg(T a) {
  if constexpr (is_float_v<T>) return narrow<T>(-wide(a));
  else return static_cast<T>(uint64_t(0) - uint64_t(a));
}
template <class T>
T abs(T a) {
  if constexpr (is_float_v<T>) return narrow<T>(std::fabs(wide(a)));
  else if constexpr (std::is_signed_v<T>) return a < 0 ? neg(a) : a;
  else return a;
}
template <class T>
T fma(T a, T b, T c) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) return std::fma(a, b, c);
  else return narrow<T>(std::fma(wide(a), wide(b), wide(c)));  // the product of halves is exact
}

template <class T>
constexpr unsigned bits_of() {
  return unsigned(sizeof(T) * 8);
}
// The amount is read as unsigned; at or past the width: 0, or the sign fill for signed >>.
template <class T>
T shl(T a, T n) {
  using U = std::make_unsigned_t<T>;
  U amount = static_cast<U>(n);
  if (amount >= bits_of<T>()) return T(0);
  return static_cast<T>(uint64_t(a) << amount);
}
template <class T>
T shr(T a, T n) {
  using U = std::make_unsigned_t<T>;
  U amount = static_cast<U>(n);
  if constexpr (std::is_signed_v<T>) {
    if (amount >= bits_of<T>()) return a < 0 ? T(-1) : T(0);
    int64_t v = a;  // arithmetic: divide by 2^amount rounding toward -inf
    return static_cast<T>(v >= 0 ? v / (int64_t(1) << amount) : -((-(v + 1)) / (int64_t(1) << amount)) - 1);
  } else {
    if (amount >= bits_of<T>()) return T(0);
    return static_cast<T>(uint64_t(a) >> amount);
  }
}
template <class T>
uint32_t popcount(T a) {
  uint64_t u = static_cast<std::make_unsigned_t<T>>(a);
  uint32_t c = 0;
  for (; u; u &= u - 1) ++c;
  return c;
}
template <class T>
uint32_t leading_zeros(T a) {
  uint64_t u = static_cast<std::make_unsigned_t<T>>(a);
  uint32_t n = 0;
  for (int b = int(bits_of<T>()) - 1; b >= 0 && !((u >> b) & 1); --b) ++n;
  return n;
}
template <class T>
uint32_t trailing_zeros(T a) {
  uint64_t u = static_cast<std::make_unsigned_t<T>>(a);
  uint32_t n = 0;
  for (int b = 0; b < int(bits_of<T>()) && !((u >> b) & 1); ++b) ++n;
  return n;
}

// docs/ir.md `cast`: to bool is != 0 (NaN is not 0); int to int wraps; int or float to a float
// rounds to nearest even (exactly: long double holds every 64-bit integer); float to int truncates
// toward zero, saturates, NaN gives 0.
template <class To, class From>
To cast(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_float_v<From>) return wide(v) != 0;
    else return v != From(0);
  } else if constexpr (is_float_v<To>) {
    if constexpr (std::is_same_v<From, bool>) return narrow<To>(v ? 1.0L : 0.0L);
    else if constexpr (is_float_v<From>) return narrow<To>(wide(v));
    else return narrow<To>(static_cast<long double>(v));
  } else if constexpr (is_float_v<From>) {
    long double x = wide(v);
    if (std::isnan(x)) return To(0);
    x = std::trunc(x);
    if (x <= static_cast<long double>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (x >= static_cast<long double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  } else if constexpr (std::is_same_v<From, bool>) {
    return v ? To(1) : To(0);
  } else {
    return static_cast<To>(v);  // C++20: modular, extending by the source's signedness
  }
}

}  // namespace kiln::suite::ref
