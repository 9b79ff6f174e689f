// Run-time scalar conversion: a dispatch over the element types of the value and the parameter,
// each pair by the same template rule.
#include "runtime/scalar_convert.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

namespace kiln::runtime {

namespace {

// A into T unless the value would change (300 into u8, 2.5 into an integer); floats narrow with
// rounding.
template <class T, class A>
bool scalar_fits(const A& a, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (std::is_same_v<A, bool>) {
      out = a;
      return true;
    } else {
      return false;
    }
  } else if constexpr (ir::is_short_float_type<T>) {
    // One rounding from the value given, as numbers in kernels get (dsl/number.h, Number::value).
    if constexpr (ir::is_short_float_type<A>) out = T(static_cast<float>(a));
    else if constexpr (std::is_same_v<A, bool>) out = T(a ? 1.0f : 0.0f);
    else if constexpr (std::is_integral_v<A>) out = T::from_integer(a);
    else out = T(static_cast<double>(a));
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (ir::is_short_float_type<A>) out = static_cast<T>(static_cast<float>(a));
    else out = static_cast<T>(a);
    return true;
  } else {
    // integer parameter
    if constexpr (std::is_same_v<A, bool> || ir::is_short_float_type<A>) {
      return false;
    } else if constexpr (std::is_floating_point_v<A>) {
      // Bounds as powers of two, exact in A: T's max rounds up to 2^digits in a float, and a value
      // equal to that would pass a `<= max` test and overflow the conversion.
      const A upper = std::ldexp(A(1), std::numeric_limits<T>::digits);
      const A lower = std::is_signed_v<T> ? -upper : A(0);
      if (!(a == std::trunc(a)) || a < lower || a >= upper) return false;
      out = static_cast<T>(a);
      return true;
    } else {
      if (!std::in_range<T>(a)) return false;
      out = static_cast<T>(a);
      return true;
    }
  }
}

}  // namespace

bool convert_scalar(const ScalarValue& v, ir::Scalar to, ScalarValue& out) {
  if (v.type == to) {
    out = v;
    return true;
  }
  return ir::visit_scalar(v.type, [&]<class A>() {
    A a;
    std::memcpy(&a, v.bits.data(), sizeof a);
    return ir::visit_scalar(to, [&]<class T>() {
      T t{};
      if (!scalar_fits<T>(a, t)) return false;
      out = ScalarValue::of(t);
      return true;
    });
  });
}

ComptimeBits comptime_bits_of(const ScalarValue& v) {
  return ir::visit_scalar(v.type, [&]<class T>() {
    T x;
    std::memcpy(&x, v.bits.data(), sizeof x);
    if constexpr (ir::is_short_float_type<T>) {
      // No comptime parameter converts to these (Comptime<T> takes arithmetic types and enums); the
      // dispatch names every element, so this branch still has to say something.
      return comptime_bits(static_cast<float>(x));
    } else {
      return comptime_bits(x);
    }
  });
}

}  // namespace kiln::runtime
