// Value proxies: Expr<T> (a traced scalar) and Vector<T> (a traced vector whose width comes from
// the launch), the C++ operators on them, and the traits that let slices' elements, Vars and
// scalar parameters take part in the same expressions.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "kiln/dsl/number.h"
#include "kiln/dsl/trace.h"
#include "kiln/element.h"

namespace kiln {

template <class T>
class Expr;
template <class T>
class Vector;

// ---- proxy traits ------------------------------------------------------------------------------
// A proxy is anything that stands for a traced value: Expr, Vector, an element of a slice or
// array, a Var, a Scalar parameter. proxy_traits<P> gives its element type, whether it is a
// vector, and how to read it as a ValueRef (which may record a load).

template <class P>
struct proxy_traits {
  static constexpr bool is_proxy = false;
  static constexpr bool is_vector = false;  // clang reads it for non-proxies too, in overload checks
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

namespace detail {
// A C++ number beside the proxy A: it takes A's element type (number.h says which numbers do).
template <class A>
using NumberFor = Number<proxy_element_t<A>>;

// A scalar operand whose element type the call fixes (a range bound or step, an atomic's value, a
// vector lane, a plane lane): a proxy of element E, or a C++ number as Number<E> takes it. It keeps
// the proxy and reads it when ref() is called, so the caller records its operands in order.
template <Element E>
class Operand {
 public:
  // Number's constructors, each forwarded (GCC 12 does not keep consteval on an inherited one).
  // The number is a member, not a base: clang 14 crashes generating code for a consteval
  // constructor of a class that has a base.
  template <class L>
  requires(fit_of<L, E> == NumberFit::constant_in_range && !mutable_variable<L>) consteval Operand(L&& v)
      : number_(static_cast<L&&>(v)) {}  // NOLINT: implicit on purpose
  template <class L>
  requires(fit_of<L, E> != NumberFit::none && !(fit_of<L, E> == NumberFit::constant_in_range && !mutable_variable<L>))
      Operand(L&& v)
      : number_(static_cast<L&&>(v)) {}        // NOLINT
  Operand(const Number<E>& n) : number_(n) {}  // NOLINT
  template <Proxy P>
  Operand(const P& p) : proxy_(&p), read_(&read_proxy<P>) {  // NOLINT: implicit on purpose
    static_assert(std::is_same_v<proxy_element_t<P>, E>,
                  "the proxy's element type differs from the one this operand takes; use cast<T>()");
  }
  dsl::ValueRef ref() const { return read_ ? read_(proxy_) : number_.ref(); }
  // A C++ number (not a proxy): its value is known while tracing, as number() says.
  bool is_number() const { return read_ == nullptr; }
  const Number<E>& number() const { return number_; }
  bool positive() const { return number_.positive(); }
  std::string text() const { return number_.text(); }

 private:
  template <class P>
  static dsl::ValueRef read_proxy(const void* p) {
    return read_ref(*static_cast<const P*>(p));
  }
  Number<E> number_;
  const void* proxy_ = nullptr;
  dsl::ValueRef (*read_)(const void*) = nullptr;
};
}  // namespace detail

// ---- Expr<T>: a traced scalar ----------------------------------------------------------------

template <class T>
class Expr {
  static_assert(Element<T>, "Expr<T> needs a kiln element type: bool, (u)int8..64_t, f16, bf16, float, double");

 public:
  using element_type = T;

  // A C++ number becomes a constant; its type must hold only values of T (detail::made_from).
  template <detail::Literal L>
  Expr(const L& value) : ref_(detail::made_from<T>(value).ref()) {}  // NOLINT: implicit on purpose
  // Any scalar proxy of the same element type (a slice element, a Var, a Scalar parameter).
  template <Proxy P>
  requires(std::is_same_v<proxy_element_t<P>, T> && !proxy_is_vector<P> &&
           !std::is_same_v<std::remove_cvref_t<P>, Expr>) Expr(const P& p)
      : ref_(read_ref(p)) {}  // NOLINT
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
  template <detail::Literal L>
  Vector(const L& value) : ref_(detail::made_from<T>(value).ref()) {}  // NOLINT: a constant, broadcast
  template <Proxy P>
  requires(std::is_same_v<proxy_element_t<P>, T> && !std::is_same_v<std::remove_cvref_t<P>, Vector> &&
           !std::is_same_v<std::remove_cvref_t<P>, Expr<T>>) Vector(const P& p)
      : ref_(read_ref(p)) {}  // NOLINT
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
template <class A>
constexpr bool vec = [] {
  if constexpr (Proxy<A>) return proxy_is_vector<A>;
  else return false;
}();
}  // namespace detail

// Two proxies of one element type. Mixed element types do not compile: use cast<T>(). A C++
// number beside a proxy takes the proxy's type, as detail::Number allows: each operation has an
// overload for (proxy, number) and one for (number, proxy), whose number parameter is a Number.
template <class A, class B>
concept ProxyPair = Proxy<A> && Proxy<B> && std::is_same_v<proxy_element_t<A>, proxy_element_t<B>>;

template <class A, class B>
using pair_result_t =
    result_proxy_t<proxy_element_t<A>, detail::vec<std::remove_cvref_t<A>> || detail::vec<std::remove_cvref_t<B>>>;
template <class A, class B>
using pair_compare_t = result_proxy_t<bool, detail::vec<std::remove_cvref_t<A>> || detail::vec<std::remove_cvref_t<B>>>;
// What an operation on the proxy A and a number gives.
template <class A>
using number_result_t = result_proxy_t<proxy_element_t<A>, proxy_is_vector<A>>;
template <class A>
using number_compare_t = result_proxy_t<bool, proxy_is_vector<A>>;

namespace detail {
// Operands are read (which may record a load) and numbers recorded left to right.
template <class R>
R binary_refs(ir::OpKind kind, const dsl::ValueRef& ra, const dsl::ValueRef& rb) {
  return R(dsl::Tracer::current().binary(kind, ra, rb));
}
template <class A, class B>
requires ProxyPair<A, B> pair_result_t<A, B> binary(ir::OpKind kind, const A& a, const B& b) {
  dsl::ValueRef ra = read_ref(a);
  return binary_refs<pair_result_t<A, B>>(kind, ra, read_ref(b));
}
template <Proxy A>
number_result_t<A> binary(ir::OpKind kind, const A& a, const NumberFor<A>& b) {
  dsl::ValueRef ra = read_ref(a);
  return binary_refs<number_result_t<A>>(kind, ra, b.ref());
}
template <Proxy B>
number_result_t<B> binary(ir::OpKind kind, const NumberFor<B>& a, const B& b) {
  dsl::ValueRef ra = a.ref();
  return binary_refs<number_result_t<B>>(kind, ra, read_ref(b));
}
template <class A, class B>
requires ProxyPair<A, B> pair_compare_t<A, B> compare(ir::OpKind kind, const A& a, const B& b) {
  dsl::ValueRef ra = read_ref(a);
  return binary_refs<pair_compare_t<A, B>>(kind, ra, read_ref(b));
}
template <Proxy A>
number_compare_t<A> compare(ir::OpKind kind, const A& a, const NumberFor<A>& b) {
  dsl::ValueRef ra = read_ref(a);
  return binary_refs<number_compare_t<A>>(kind, ra, b.ref());
}
template <Proxy B>
number_compare_t<B> compare(ir::OpKind kind, const NumberFor<B>& a, const B& b) {
  dsl::ValueRef ra = a.ref();
  return binary_refs<number_compare_t<B>>(kind, ra, read_ref(b));
}
template <Proxy A>
result_proxy_t<proxy_element_t<A>, proxy_is_vector<A>> unary(ir::OpKind kind, const A& a) {
  return result_proxy_t<proxy_element_t<A>, proxy_is_vector<A>>(dsl::Tracer::current().unary(kind, read_ref(a)));
}
}  // namespace detail

// An operator or function `fn` of two operands, for (proxy, proxy), (proxy, number) and
// (number, proxy); `how` is detail::binary or detail::compare, `R`/`NR` the result types. It stays
// defined: math.h makes min, max, pow and copysign with it.
#define KILN_PROXY_BINARY(fn, how, kind, R, NR)                                                               \
  template <class A, class B>                                                                                 \
  requires ProxyPair<A, B> R<A, B> fn(const A& a, const B& b) { return detail::how(ir::OpKind::kind, a, b); } \
  template <Proxy A>                                                                                          \
  NR<A> fn(const A& a, detail::NumberFor<A> b) {                                                              \
    return detail::how(ir::OpKind::kind, a, b);                                                               \
  }                                                                                                           \
  template <Proxy B>                                                                                          \
  NR<B> fn(detail::NumberFor<B> a, const B& b) {                                                              \
    return detail::how(ir::OpKind::kind, a, b);                                                               \
  }

#define KILN_BINARY_OPERATOR(op, kind) KILN_PROXY_BINARY(operator op, binary, kind, pair_result_t, number_result_t)
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
namespace detail {
template <class P>
concept BoolProxy = Proxy<P> && std::is_same_v < proxy_element_t<P>,
bool > ;
}  // namespace detail
// The number beside a bool proxy is taken by its exact type: a C++ bool converts to bool without a
// user-defined conversion, and a Number parameter would tie with the built-in `bool && bool`
// (which reaches the proxy through its deleted operator bool).
#define KILN_LOGIC_OPERATOR(op, kind)                                    \
  template <detail::BoolProxy A, detail::BoolProxy B>                    \
  pair_result_t<A, B> operator op(const A& a, const B& b) {              \
    return detail::binary(ir::OpKind::kind, a, b);                       \
  }                                                                      \
  template <detail::BoolProxy A, detail::Literal L>                      \
  number_result_t<A> operator op(const A& a, const L& b) {               \
    return detail::binary(ir::OpKind::kind, a, detail::Number<bool>(b)); \
  }                                                                      \
  template <detail::Literal L, detail::BoolProxy B>                      \
  number_result_t<B> operator op(const L& a, const B& b) {               \
    return detail::binary(ir::OpKind::kind, detail::Number<bool>(a), b); \
  }
KILN_LOGIC_OPERATOR(&&, And)
KILN_LOGIC_OPERATOR(||, Or)
#undef KILN_LOGIC_OPERATOR

#define KILN_COMPARE_OPERATOR(op, kind) KILN_PROXY_BINARY(operator op, compare, kind, pair_compare_t, number_compare_t)
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
#define KILN_COMPOUND(op, kind)                                                                                \
  template <class T, class B>                                                                                  \
  requires ProxyPair<Expr<T>, B> &&(!detail::vec<std::remove_cvref_t<B>>)Expr<T>& operator op##=(Expr<T>& a,   \
                                                                                                 const B& b) { \
    a = detail::binary(ir::OpKind::kind, a, b);                                                                \
    return a;                                                                                                  \
  }                                                                                                            \
  template <class T>                                                                                           \
  Expr<T>& operator op##=(Expr<T>& a, detail::Number<std::type_identity_t<T>> b) {                             \
    a = detail::binary(ir::OpKind::kind, a, b);                                                                \
    return a;                                                                                                  \
  }                                                                                                            \
  template <class T, class B>                                                                                  \
  requires ProxyPair<Vector<T>, B> Vector<T>                                                                   \
  &operator op##=(Vector<T>& a, const B& b) {                                                                  \
    a = detail::binary(ir::OpKind::kind, a, b);                                                                \
    return a;                                                                                                  \
  }                                                                                                            \
  template <class T>                                                                                           \
  Vector<T>& operator op##=(Vector<T>& a, detail::Number<std::type_identity_t<T>> b) {                         \
    a = detail::binary(ir::OpKind::kind, a, b);                                                                \
    return a;                                                                                                  \
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
