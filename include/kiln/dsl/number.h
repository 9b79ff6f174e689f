// A C++ number written where a proxy's element type is expected (beside a proxy, assigned to one,
// a range bound, a tile literal), and which of those conversions are refused because they could
// change the value: docs/decisions/026-no-silent-narrowing.md has the rule and its reasons.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "kiln/dsl/trace.h"
#include "kiln/element.h"

namespace kiln::detail {

// A constant of element type T, recorded in the current trace.
template <Element T>
dsl::ValueRef literal(T v) {
  ir::Type t = ir::Type::scalar_of(scalar_of<T>());
  ir::AttrValue a;
  if constexpr (std::is_same_v<T, bool>) {
    a = ir::AttrValue::of_bool(v);
  } else if constexpr (ir::is_short_float_type<T>) {
    a = ir::AttrValue::of_float(static_cast<double>(static_cast<float>(v)));
  } else if constexpr (std::is_floating_point_v<T>) {
    a = ir::AttrValue::of_float(static_cast<double>(v));
  } else {
    a = ir::AttrValue::of_int(static_cast<int64_t>(v));
  }
  return dsl::Tracer::current().constant(t, a);
}

// The C++ numbers a kernel may write: bool, the integer types, float, double, f16, bf16.
template <class L>
concept Literal = std::is_arithmetic_v<L> || ir::is_short_float_type<L>;
template <class L>
concept FloatingLiteral = ir::is_float_type<L>;
template <class L>
concept IntegerLiteral = std::is_integral_v<L> && !std::is_same_v<L, bool>;

// How a C++ number of type L goes into element type E.
enum class NumberFit {
  none,                   // L is not a C++ number
  always,                 // every value of L is a value of E (int16_t into int32_t, any integer into float)
  constant_in_range,      // an integer type that may not fit (int into uint32_t): a constant in E's range
  floating_into_integer,  // refused: the fraction would go
  bool_and_number,        // refused: a bool is not a number, nor a number a bool
};

// v is a value of the integer type E (char types included, which std::in_range leaves out).
template <class E, class L>
constexpr bool integer_fits(L v) {
  using Lim = std::numeric_limits<E>;
  if constexpr (std::is_signed_v<L>) {
    const intmax_t w = v;
    if (w < 0) return std::is_signed_v<E> && w >= static_cast<intmax_t>(Lim::min());
    return static_cast<uintmax_t>(w) <= static_cast<uintmax_t>(Lim::max());
  } else {
    return static_cast<uintmax_t>(v) <= static_cast<uintmax_t>(Lim::max());
  }
}

template <class L, class E>
constexpr NumberFit number_fit() {
  if constexpr (!Literal<L>) {
    return NumberFit::none;
  } else if constexpr (std::is_same_v<L, bool> || std::is_same_v<E, bool>) {
    return std::is_same_v<L, E> ? NumberFit::always : NumberFit::bool_and_number;
  } else if constexpr (FloatingLiteral<E>) {
    return NumberFit::always;
  } else if constexpr (FloatingLiteral<L>) {
    return NumberFit::floating_into_integer;
  } else {
    using Lim = std::numeric_limits<L>;
    return integer_fits<E>(Lim::min()) && integer_fits<E>(Lim::max()) ? NumberFit::always
                                                                      : NumberFit::constant_in_range;
  }
}

template <class L, class E>
constexpr NumberFit fit_of = number_fit<std::remove_cvref_t<L>, E>();

// A variable the kernel changes while tracing (`for (int k = 0; ...)`): never a constant.
template <class L>
constexpr bool mutable_variable = std::is_lvalue_reference_v<L> && !std::is_const_v<std::remove_reference_t<L>>;

template <class>
constexpr bool never = false;

// Called only while a constant is evaluated, where calling a function that is not constexpr is a
// compile error: its name is the diagnostic.
void integer_literal_out_of_range_of_the_proxy_type();

#define KILN_FLOATING_INTO_INTEGER                                                                        \
  "a floating-point value does not convert implicitly to an integer (or bool) proxy: the fraction would " \
  "go. Write an integer, or convert explicitly: cast<int32_t>(2.5) (cast<T> with the proxy's type)"
#define KILN_BOOL_AND_NUMBER                                                                       \
  "a C++ bool does not convert to a number proxy, nor a number to a bool proxy: write true/false " \
  "beside a bool proxy, a number beside a number one, or use select(c, 1, 0) / cast<T>()"
#define KILN_RUNTIME_INTEGER                                                                          \
  "a run-time C++ integer whose type may not fit the proxy's element type (an int beside a uint32_t " \
  "proxy) does not convert implicitly: convert it explicitly (uint32_t(n)), or give it the proxy's type"

// A C++ number where a proxy of element E is expected: beside one in an operation, assigned to
// one, a range bound, a tile literal. Implicit from any number that E holds without change; a
// number that could change does not compile, at the line that wrote it:
//   - floating-point into an integer or bool E: a static_assert (KILN_FLOATING_INTO_INTEGER);
//   - bool into a number E, a number into bool: a static_assert (KILN_BOOL_AND_NUMBER);
//   - an integer type that may not fit E (int into uint32_t, uint32_t into int32_t): the value must
//     be a constant expression in E's range (a consteval constructor; out of range it calls
//     integer_literal_out_of_range_of_the_proxy_type()); a variable changed while tracing is a
//     static_assert (KILN_RUNTIME_INTEGER).
// It holds the value as written (integers exactly, floats as a double) and records it as E where
// the operation is recorded.
template <Element E>
class Number {
 public:
  template <class L>
  requires(fit_of<L, E> == NumberFit::always) Number(L&& v) {  // NOLINT: implicit on purpose
    using B = std::remove_cvref_t<L>;
    if constexpr (FloatingLiteral<B>) {
      kind_ = Kind::Floating;
      f_ = static_cast<double>(static_cast<std::conditional_t<std::is_floating_point_v<B>, B, float>>(v));
    } else {
      set_integer(v);
    }
  }
  template <class L>
  requires(fit_of<L, E> == NumberFit::constant_in_range && !mutable_variable<L>) consteval Number(L&& v) {  // NOLINT
    set_integer(v);
    if (!integer_fits<E>(v)) integer_literal_out_of_range_of_the_proxy_type();
  }
  template <class L>
  requires(fit_of<L, E> == NumberFit::constant_in_range && mutable_variable<L>) Number(L&&) {  // NOLINT
    static_assert(never<L>, KILN_RUNTIME_INTEGER);
  }
  template <class L>
  requires(fit_of<L, E> == NumberFit::floating_into_integer) Number(L&&) {  // NOLINT
    static_assert(never<L>, KILN_FLOATING_INTO_INTEGER);
  }
  template <class L>
  requires(fit_of<L, E> == NumberFit::bool_and_number) Number(L&&) {  // NOLINT
    static_assert(never<L>, KILN_BOOL_AND_NUMBER);
  }

  // The value in E: exact for integers, one rounding for floats (f16 and bf16 from an integer
  // round once, as a cast on the device does).
  E value() const {
    if constexpr (std::is_same_v<E, bool>) {
      return i_ != 0;
    } else if constexpr (ir::is_short_float_type<E>) {
      if (kind_ == Kind::Signed) return E::from_integer(i_);
      if (kind_ == Kind::Unsigned) return E::from_integer(u_);
      return E(f_);
    } else {
      if (kind_ == Kind::Signed) return static_cast<E>(i_);
      if (kind_ == Kind::Unsigned) return static_cast<E>(u_);
      return static_cast<E>(f_);
    }
  }
  // The constant, recorded in the current trace.
  dsl::ValueRef ref() const { return literal<E>(value()); }
  // The value as an attribute of E's kind, as the tile layer's `tile.full` holds it: integers
  // exact, floats as written (the tile layer rounds to E where it lowers).
  ir::AttrValue attr() const {
    if constexpr (std::is_same_v<E, bool>) {
      return ir::AttrValue::of_bool(i_ != 0);
    } else if constexpr (FloatingLiteral<E>) {
      if (kind_ == Kind::Signed) return ir::AttrValue::of_float(static_cast<double>(i_));
      if (kind_ == Kind::Unsigned) return ir::AttrValue::of_float(static_cast<double>(u_));
      return ir::AttrValue::of_float(f_);
    } else {
      return ir::AttrValue::of_int(kind_ == Kind::Signed ? i_ : static_cast<int64_t>(u_));
    }
  }
  bool positive() const { return kind_ == Kind::Signed ? i_ > 0 : kind_ == Kind::Unsigned ? u_ > 0 : f_ > 0; }
  std::string text() const {
    return kind_ == Kind::Signed     ? std::to_string(i_)
           : kind_ == Kind::Unsigned ? std::to_string(u_)
                                     : std::to_string(f_);
  }

 private:
  template <Element>
  friend class Operand;
  Number() = default;  // for an Operand that holds a proxy instead

 private:
  enum class Kind : uint8_t { Signed, Unsigned, Floating };
  template <class L>
  constexpr void set_integer(const L& v) {
    if constexpr (std::is_signed_v<L> || std::is_same_v<L, bool>) {
      kind_ = Kind::Signed;
      i_ = static_cast<int64_t>(v);
    } else {
      kind_ = Kind::Unsigned;
      u_ = static_cast<uint64_t>(v);
    }
  }

  Kind kind_ = Kind::Signed;
  int64_t i_ = 0;
  uint64_t u_ = 0;
  double f_ = 0;
};

// A proxy made from a C++ number (`Expr<T> e = n`, `Var<T> v = n`, an Expr<T> argument, a Tile's
// number): a constructor's parameter is never a constant expression, and C++ allows only one
// user-defined conversion in copy-initialisation, so no Number can check the value there. The
// number's type must hold only values of T (any integer for a float T); assignments and operands,
// which take a Number, also take constants in range.
#define KILN_MADE_FROM_INTEGER                                                                              \
  "a proxy made from a C++ number (Expr<T> e = n, Var<T> v = n, an Expr<T> argument) takes a number whose " \
  "type always fits T, as its value is not a constant there: write it in T's type (0u for uint32_t, "       \
  "uint8_t(200)), or assign it after the declaration (`Var<uint8_t> v; v = 200;` checks the range)"
template <Element T, class L>
Number<T> made_from(const L& v) {
  constexpr NumberFit f = number_fit<L, T>();
  static_assert(f != NumberFit::floating_into_integer, KILN_FLOATING_INTO_INTEGER);
  static_assert(f != NumberFit::bool_and_number, KILN_BOOL_AND_NUMBER);
  static_assert(f != NumberFit::constant_in_range, KILN_MADE_FROM_INTEGER);
  if constexpr (f == NumberFit::always) {
    return Number<T>(v);
  } else {
    return made_from<T>(T{});  // not reached: a static_assert above has failed
  }
}

// cast<To>(v) of a C++ number: always allowed, with the IR's cast rule (float to integer truncates
// toward zero and saturates, NaN gives 0; integers wrap; to bool is != 0), so that a C++ cast's
// undefined cases never reach the kernel.
template <Element To, Literal L>
To convert_number(const L& v) {
  if constexpr (ir::is_short_float_type<L>) {
    return convert_number<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != 0;
  } else if constexpr (std::is_same_v<To, f16> || std::is_same_v<To, bf16>) {
    if constexpr (std::is_same_v<L, bool>) return To::from_integer(v ? 1 : 0);
    else if constexpr (std::is_integral_v<L>) return To::from_integer(v);
    else return To(static_cast<double>(v));
  } else if constexpr (std::is_floating_point_v<To> || std::is_integral_v<L>) {
    return static_cast<To>(v);
  } else {
    // floating-point into an integer
    if (v != v) return To(0);
    if (v <= static_cast<L>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (v >= static_cast<L>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  }
}

}  // namespace kiln::detail
