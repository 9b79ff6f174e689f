// Value proxies: Expr<T> (a traced scalar) and Vector<T> (a traced vector whose width comes from
// the launch), the C++ operators on them, and the traits that let slices' elements, Vars and
// scalar parameters take part in the same expressions.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "kiln/dsl/trace.h"
#include "kiln/element.h"

namespace kiln {

template <class T>
class Expr;
template <class T>
class Vector;

namespace detail {

template <Element T>
dsl::ValueRef literal(T v) {
  ir::Type t = ir::Type::scalar_of(scalar_of<T>());
  ir::AttrValue a;
  if constexpr (std::is_same_v<T, bool>) {
    a = ir::AttrValue::of_bool(v);
  } else if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) {
    a = ir::AttrValue::of_float(static_cast<double>(static_cast<float>(v)));
  } else if constexpr (std::is_floating_point_v<T>) {
    a = ir::AttrValue::of_float(static_cast<double>(v));
  } else {
    a = ir::AttrValue::of_int(static_cast<int64_t>(v));
  }
  return dsl::Tracer::current().constant(t, a);
}

// A C++ number written next to a proxy: converted to the proxy's element type.
template <class L>
concept Literal = std::is_arithmetic_v<L> || std::is_same_v<L, f16> || std::is_same_v<L, bf16>;

template <Element T, Literal L>
dsl::ValueRef literal_as(const L& v) {
  constexpr bool half_out = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
  constexpr bool half_in = std::is_same_v<L, f16> || std::is_same_v<L, bf16>;
  if constexpr (half_in) {
    return literal_as<T>(static_cast<float>(v));
  } else if constexpr (half_out && std::is_same_v<L, bool>) {
    return literal<T>(T(v ? 1.0f : 0.0f));
  } else if constexpr (half_out && std::is_integral_v<L>) {
    return literal<T>(T::from_integer(v));  // one rounding, as a cast on the device does
  } else if constexpr (half_out) {
    return literal<T>(T(static_cast<double>(v)));
  } else {
    return literal<T>(static_cast<T>(v));
  }
}

}  // namespace detail

// ---- proxy traits ------------------------------------------------------------------------------
// A proxy is anything that stands for a traced value: Expr, Vector, an element of a slice or
// array, a Var, a Scalar parameter. proxy_traits<P> gives its element type, whether it is a
// vector, and how to read it as a ValueRef (which may record a load).

template <class P>
struct proxy_traits {
  static constexpr bool is_proxy = false;
};

template <class P>
concept Proxy = proxy_traits<std::remove_cvref_t<P>>::is_proxy;

template <class P>
using proxy_element_t = typename proxy_traits<std::remove_cvref_t<P>>::element;

template <class P>
constexpr bool proxy_is_vector = proxy_traits<std::remove_cvref_t<P>>::is_vector;

template <Proxy P>
dsl::ValueRef read_ref(const P& p) {
  return proxy_traits<std::remove_cvref_t<P>>::read(p);
}

// An operand of a proxy operation: a proxy, or a C++ number that takes the other side's type.
template <class A, class E>
dsl::ValueRef operand_ref(const A& a) {
  if constexpr (Proxy<A>) {
    return read_ref(a);
  } else {
    return detail::literal_as<E>(a);
  }
}

// ---- Expr<T>: a traced scalar ----------------------------------------------------------------

template <class T>
class Expr {
  static_assert(Element<T>, "Expr<T> needs a kiln element type: bool, (u)int8..64_t, f16, bf16, float, double");

 public:
  using element_type = T;

  // A C++ value becomes a constant.
  Expr(T value) : ref_(detail::literal<T>(value)) {}  // NOLINT: implicit on purpose
  template <detail::Literal L>
    requires(!std::is_same_v<L, T> && !std::is_same_v<T, bool> && !std::is_same_v<L, bool>)
  Expr(L value) : ref_(detail::literal_as<T>(value)) {}  // NOLINT
  // Any scalar proxy of the same element type (a slice element, a Var, a Scalar parameter).
  template <Proxy P>
    requires(std::is_same_v<proxy_element_t<P>, T> && !proxy_is_vector<P> && !std::is_same_v<std::remove_cvref_t<P>, Expr>)
  Expr(const P& p) : ref_(read_ref(p)) {}  // NOLINT
  explicit Expr(dsl::ValueRef r) : ref_(r) {}
  Expr(const Expr& other) : ref_(other.ref_) {}
  // Rebinds the name, in the region it was made in (else Error{trace.rebind}: use Var<T>).
  Expr& operator=(const Expr& other) {
    dsl::Tracer::current().check_rebind(region_);
    ref_ = other.ref_;
    return *this;
  }

  const dsl::ValueRef& ref() const { return ref_; }

  // A proxy bool never becomes a C++ bool: a C++ `if` on it would pick one branch while tracing
  // and silently drop the other. Use If(...) for run-time branches.
  explicit operator bool() const = delete;

 private:
  dsl::ValueRef ref_;
  uint32_t region_ = dsl::Tracer::current_region();  // where this name was made
};

// ---- Vector<T>: a traced vector ----------------------------------------------------------------
// Its width is the launch's vector width for parameters; a Vector made from a scalar has width 1
// and broadcasts to whatever vector it meets.

template <class T>
class Vector {
  static_assert(Element<T>, "Vector<T> needs a kiln element type");

 public:
  using element_type = T;

  Vector(const Expr<T>& scalar) : ref_(scalar.ref()) {}  // NOLINT: broadcasts
  Vector(T value) : ref_(detail::literal<T>(value)) {}   // NOLINT
  template <Proxy P>
    requires(std::is_same_v<proxy_element_t<P>, T> && !std::is_same_v<std::remove_cvref_t<P>, Vector> &&
             !std::is_same_v<std::remove_cvref_t<P>, Expr<T>>)
  Vector(const P& p) : ref_(read_ref(p)) {}  // NOLINT
  explicit Vector(dsl::ValueRef r) : ref_(r) {}
  Vector(const Vector& other) : ref_(other.ref_) {}
  // Rebinds the name, in the region it was made in (else Error{trace.rebind}: use Var<T>).
  Vector& operator=(const Vector& other) {
    dsl::Tracer::current().check_rebind(region_);
    ref_ = other.ref_;
    return *this;
  }

  const dsl::ValueRef& ref() const { return ref_; }
  int width() const { return ref_.type.width; }

  // Lane `i` (a C++ integer: lanes are chosen while tracing).
  Expr<T> operator[](int lane) const { return Expr<T>(dsl::Tracer::current().vector_extract(ref_, lane)); }
  // A copy with lane `i` replaced.
  Vector with_lane(int lane, const Expr<T>& v) const {
    return Vector(dsl::Tracer::current().vector_insert(ref_, v.ref(), lane));
  }

  explicit operator bool() const = delete;

 private:
  dsl::ValueRef ref_;
  uint32_t region_ = dsl::Tracer::current_region();  // where this name was made
};

template <class T>
struct proxy_traits<Expr<T>> {
  static constexpr bool is_proxy = true;
  static constexpr bool is_vector = false;
  using element = T;
  static dsl::ValueRef read(const Expr<T>& e) { return e.ref(); }
};

template <class T>
struct proxy_traits<Vector<T>> {
  static constexpr bool is_proxy = true;
  static constexpr bool is_vector = true;
  using element = T;
  static dsl::ValueRef read(const Vector<T>& v) { return v.ref(); }
};

// The proxy type an operation on element E returns: a Vector when any operand is one.
template <class E, bool IsVector>
using result_proxy_t = std::conditional_t<IsVector, Vector<E>, Expr<E>>;

// ---- operand pairs ----------------------------------------------------------------------------

namespace detail {

template <class A, class B>
struct pair_element {
  using type = void;
};
template <Proxy A, Proxy B>
struct pair_element<A, B> {
  using type = std::conditional_t<std::is_same_v<proxy_element_t<A>, proxy_element_t<B>>, proxy_element_t<A>, void>;
};
template <Proxy A, Literal B>
  requires(!Proxy<B>)
struct pair_element<A, B> {
  using type = proxy_element_t<A>;
};
template <Literal A, Proxy B>
  requires(!Proxy<A>)
struct pair_element<A, B> {
  using type = proxy_element_t<B>;
};

template <class A>
constexpr bool vec = [] {
  if constexpr (Proxy<A>) return proxy_is_vector<A>;
  else return false;
}();

}  // namespace detail

// Two operands make a pair when at least one is a proxy and their element types agree (a C++
// number takes the proxy's type). Mixed element types do not compile: use cast<T>().
template <class A, class B>
concept ProxyPair = (Proxy<A> || Proxy<B>) && (Proxy<A> || detail::Literal<A>) && (Proxy<B> || detail::Literal<B>) &&
                    !std::is_void_v<typename detail::pair_element<std::remove_cvref_t<A>, std::remove_cvref_t<B>>::type>;

template <class A, class B>
using pair_element_t = typename detail::pair_element<std::remove_cvref_t<A>, std::remove_cvref_t<B>>::type;

template <class A, class B>
using pair_result_t = result_proxy_t<pair_element_t<A, B>, detail::vec<std::remove_cvref_t<A>> || detail::vec<std::remove_cvref_t<B>>>;

template <class A, class B>
using pair_compare_t = result_proxy_t<bool, detail::vec<std::remove_cvref_t<A>> || detail::vec<std::remove_cvref_t<B>>>;

namespace detail {
template <class A, class B>
pair_result_t<A, B> binary(ir::OpKind kind, const A& a, const B& b) {
  using E = pair_element_t<A, B>;
  dsl::ValueRef ra = operand_ref<A, E>(a);
  dsl::ValueRef rb = operand_ref<B, E>(b);
  return pair_result_t<A, B>(dsl::Tracer::current().binary(kind, ra, rb));
}
template <class A, class B>
pair_compare_t<A, B> compare(ir::OpKind kind, const A& a, const B& b) {
  using E = pair_element_t<A, B>;
  dsl::ValueRef ra = operand_ref<A, E>(a);
  dsl::ValueRef rb = operand_ref<B, E>(b);
  return pair_compare_t<A, B>(dsl::Tracer::current().binary(kind, ra, rb));
}
template <Proxy A>
result_proxy_t<proxy_element_t<A>, proxy_is_vector<A>> unary(ir::OpKind kind, const A& a) {
  return result_proxy_t<proxy_element_t<A>, proxy_is_vector<A>>(dsl::Tracer::current().unary(kind, read_ref(a)));
}
}  // namespace detail

#define KILN_BINARY_OPERATOR(op, kind)                    \
  template <class A, class B>                             \
    requires ProxyPair<A, B>                              \
  pair_result_t<A, B> operator op(const A& a, const B& b) { \
    return detail::binary(ir::OpKind::kind, a, b);        \
  }
KILN_BINARY_OPERATOR(+, Add)
KILN_BINARY_OPERATOR(-, Sub)
KILN_BINARY_OPERATOR(*, Mul)
KILN_BINARY_OPERATOR(/, Div)
KILN_BINARY_OPERATOR(%, Rem)
KILN_BINARY_OPERATOR(&, And)
KILN_BINARY_OPERATOR(|, Or)
KILN_BINARY_OPERATOR(^, Xor)
KILN_BINARY_OPERATOR(<<, Shl)
KILN_BINARY_OPERATOR(>>, Shr)
#undef KILN_BINARY_OPERATOR

// && and || on proxy bools record `and` / `or`: both sides are evaluated (a proxy cannot
// short-circuit). Guard a load with If() when its index may be out of range in unchecked mode.
template <class A, class B>
  requires ProxyPair<A, B> && std::is_same_v<pair_element_t<A, B>, bool>
pair_result_t<A, B> operator&&(const A& a, const B& b) {
  return detail::binary(ir::OpKind::And, a, b);
}
template <class A, class B>
  requires ProxyPair<A, B> && std::is_same_v<pair_element_t<A, B>, bool>
pair_result_t<A, B> operator||(const A& a, const B& b) {
  return detail::binary(ir::OpKind::Or, a, b);
}

#define KILN_COMPARE_OPERATOR(op, kind)                      \
  template <class A, class B>                                \
    requires ProxyPair<A, B>                                 \
  pair_compare_t<A, B> operator op(const A& a, const B& b) { \
    return detail::compare(ir::OpKind::kind, a, b);          \
  }
KILN_COMPARE_OPERATOR(==, Eq)
KILN_COMPARE_OPERATOR(!=, Ne)
KILN_COMPARE_OPERATOR(<, Lt)
KILN_COMPARE_OPERATOR(<=, Le)
KILN_COMPARE_OPERATOR(>, Gt)
KILN_COMPARE_OPERATOR(>=, Ge)
#undef KILN_COMPARE_OPERATOR

template <Proxy A>
auto operator-(const A& a) {
  return detail::unary(ir::OpKind::Neg, a);
}
template <Proxy A>
auto operator!(const A& a) {
  static_assert(std::is_same_v<proxy_element_t<A>, bool>, "! takes a proxy bool; use ~ for integer bits");
  return detail::unary(ir::OpKind::Not, a);
}
template <Proxy A>
auto operator~(const A& a) {
  return detail::unary(ir::OpKind::Not, a);
}

// Compound assignment rebinds an Expr or Vector to the new value (like `x = x + y`).
#define KILN_COMPOUND(op, kind)                                                                \
  template <class T, class B>                                                                  \
    requires ProxyPair<Expr<T>, B> && (!detail::vec<std::remove_cvref_t<B>>)                   \
  Expr<T>& operator op##=(Expr<T>& a, const B& b) {                                            \
    a = detail::binary(ir::OpKind::kind, a, b);                                                \
    return a;                                                                                  \
  }                                                                                            \
  template <class T, class B>                                                                  \
    requires ProxyPair<Vector<T>, B>                                                           \
  Vector<T>& operator op##=(Vector<T>& a, const B& b) {                                        \
    a = detail::binary(ir::OpKind::kind, a, b);                                                \
    return a;                                                                                  \
  }
KILN_COMPOUND(+, Add)
KILN_COMPOUND(-, Sub)
KILN_COMPOUND(*, Mul)
KILN_COMPOUND(/, Div)
KILN_COMPOUND(%, Rem)
KILN_COMPOUND(&, And)
KILN_COMPOUND(|, Or)
KILN_COMPOUND(^, Xor)
KILN_COMPOUND(<<, Shl)
KILN_COMPOUND(>>, Shr)
#undef KILN_COMPOUND

using Bool = Expr<bool>;

}  // namespace kiln
