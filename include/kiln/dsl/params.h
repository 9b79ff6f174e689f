// Scalar parameters: Scalar<T> is a run-time value (changing it never recompiles); Comptime<T> is
// a C++ value fixed when the kernel is compiled (it enters the KernelId).
#pragma once

#include <type_traits>

#include "kiln/dsl/expr.h"

namespace kiln {

template <class T>
class Scalar {
  static_assert(Element<T>, "Scalar<T> needs a kiln element type");

 public:
  using element_type = T;
  explicit Scalar(dsl::ValueRef r) : ref_(r) {}
  Expr<T> get() const { return Expr<T>(ref_); }
  operator Expr<T>() const { return get(); }  // NOLINT
  const dsl::ValueRef& ref() const { return ref_; }

 private:
  dsl::ValueRef ref_;
};

template <class T>
struct proxy_traits<Scalar<T>> {
  static constexpr bool is_proxy = true;
  static constexpr bool is_vector = false;
  using element = T;
  static dsl::ValueRef read(const Scalar<T>& s) { return s.ref(); }
};

// Comptime values are bools, integers, floats or enums.
template <class T>
concept ComptimeValue = std::is_arithmetic_v<T> || std::is_enum_v<T>;

template <ComptimeValue T>
class Comptime {
 public:
  using value_type = T;
  constexpr Comptime(T v) : v_(v) {}           // NOLINT
  constexpr operator T() const { return v_; }  // NOLINT: a C++ value, for C++ control flow
  constexpr T get() const { return v_; }

 private:
  T v_;
};

// Marks a launch argument as compile-time: launch<K>(..., comptime(true)).
template <ComptimeValue T>
constexpr Comptime<T> comptime(T v) {
  return Comptime<T>(v);
}

}  // namespace kiln
