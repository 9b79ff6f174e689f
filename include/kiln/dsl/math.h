// Math on proxies: min, max, abs, fma, select, casts, and the float functions. Each takes Expr,
// Vector, or any proxy (slice elements, Vars), mixed with C++ numbers that the proxy's type holds
// (detail::Number).
#pragma once

#include "kiln/dsl/expr.h"

namespace kiln {

#define KILN_UNARY_FN(fn, kind)                \
  template <Proxy A>                           \
  auto fn(const A& a) {                        \
    return detail::unary(ir::OpKind::kind, a); \
  }
KILN_UNARY_FN(abs, Abs)
KILN_UNARY_FN(exp, Exp)
KILN_UNARY_FN(exp2, Exp2)
KILN_UNARY_FN(log, Log)
KILN_UNARY_FN(log2, Log2)
KILN_UNARY_FN(sqrt, Sqrt)
KILN_UNARY_FN(rsqrt, Rsqrt)
KILN_UNARY_FN(recip, Recip)
KILN_UNARY_FN(sin, Sin)
KILN_UNARY_FN(cos, Cos)
KILN_UNARY_FN(tan, Tan)
KILN_UNARY_FN(tanh, Tanh)
KILN_UNARY_FN(erf, Erf)
KILN_UNARY_FN(floor, Floor)
KILN_UNARY_FN(ceil, Ceil)
KILN_UNARY_FN(round, Round)
KILN_UNARY_FN(trunc, Trunc)
#undef KILN_UNARY_FN

template <Proxy A>
auto isnan(const A& a) {
  return result_proxy_t<bool, proxy_is_vector<A>>(dsl::Tracer::current().unary(ir::OpKind::IsNan, read_ref(a)));
}
template <Proxy A>
auto isinf(const A& a) {
  return result_proxy_t<bool, proxy_is_vector<A>>(dsl::Tracer::current().unary(ir::OpKind::IsInf, read_ref(a)));
}
// Set bits; leading zero bits; trailing zero bits (the bit width for 0). The result is u32 with
// the operand's lanes.
template <Proxy A>
auto popcount(const A& a) {
  return result_proxy_t<uint32_t, proxy_is_vector<A>>(dsl::Tracer::current().unary(ir::OpKind::Popcount, read_ref(a)));
}
template <Proxy A>
auto leading_zeros(const A& a) {
  return result_proxy_t<uint32_t, proxy_is_vector<A>>(
      dsl::Tracer::current().unary(ir::OpKind::LeadingZeros, read_ref(a)));
}
template <Proxy A>
auto trailing_zeros(const A& a) {
  return result_proxy_t<uint32_t, proxy_is_vector<A>>(
      dsl::Tracer::current().unary(ir::OpKind::TrailingZeros, read_ref(a)));
}

KILN_PROXY_BINARY(min, binary, Min, pair_result_t, number_result_t)
KILN_PROXY_BINARY(max, binary, Max, pair_result_t, number_result_t)
KILN_PROXY_BINARY(pow, binary, Pow, pair_result_t, number_result_t)
// The magnitude of a with the sign bit of b (NaNs included).
KILN_PROXY_BINARY(copysign, binary, CopySign, pair_result_t, number_result_t)

namespace detail {
template <class E, bool V>
result_proxy_t<E, V> fma_refs(const dsl::ValueRef& a, const dsl::ValueRef& b, const dsl::ValueRef& c) {
  return result_proxy_t<E, V>(dsl::Tracer::current().fma(a, b, c));
}
template <class... Ps>
constexpr bool any_vector = (vec<std::remove_cvref_t<Ps>> || ...);
}  // namespace detail

// a * b + c with one rounding. Each operand is a proxy or a C++ number (which takes the proxies'
// type); operands are read in order, one statement each (function arguments are evaluated in no
// fixed order).
template <class A, class B, class C>
requires ProxyPair<A, B> && ProxyPair<A, C>
auto fma(const A& a, const B& b, const C& c) {
  dsl::ValueRef ra = read_ref(a), rb = read_ref(b);
  return detail::fma_refs<proxy_element_t<A>, detail::any_vector<A, B, C>>(ra, rb, read_ref(c));
}
template <class A, class B>
requires ProxyPair<A, B>
auto fma(const A& a, const B& b, detail::NumberFor<A> c) {
  dsl::ValueRef ra = read_ref(a), rb = read_ref(b);
  return detail::fma_refs<proxy_element_t<A>, detail::any_vector<A, B>>(ra, rb, c.ref());
}
template <class A, class C>
requires ProxyPair<A, C>
auto fma(const A& a, detail::NumberFor<A> b, const C& c) {
  dsl::ValueRef ra = read_ref(a), rb = b.ref();
  return detail::fma_refs<proxy_element_t<A>, detail::any_vector<A, C>>(ra, rb, read_ref(c));
}
template <class B, class C>
requires ProxyPair<B, C>
auto fma(detail::NumberFor<B> a, const B& b, const C& c) {
  dsl::ValueRef ra = a.ref(), rb = read_ref(b);
  return detail::fma_refs<proxy_element_t<B>, detail::any_vector<B, C>>(ra, rb, read_ref(c));
}
template <Proxy A>
auto fma(const A& a, detail::NumberFor<A> b, detail::NumberFor<A> c) {
  dsl::ValueRef ra = read_ref(a), rb = b.ref();
  return detail::fma_refs<proxy_element_t<A>, detail::any_vector<A>>(ra, rb, c.ref());
}
template <Proxy B>
auto fma(detail::NumberFor<B> a, const B& b, detail::NumberFor<B> c) {
  dsl::ValueRef ra = a.ref(), rb = read_ref(b);
  return detail::fma_refs<proxy_element_t<B>, detail::any_vector<B>>(ra, rb, c.ref());
}
template <Proxy C>
auto fma(detail::NumberFor<C> a, detail::NumberFor<C> b, const C& c) {
  dsl::ValueRef ra = a.ref(), rb = b.ref();
  return detail::fma_refs<proxy_element_t<C>, detail::any_vector<C>>(ra, rb, read_ref(c));
}

// cond ? a : b, lane by lane; both sides are evaluated. a and b are proxies of one type, or one
// of them a C++ number.
namespace detail {
template <class E, bool V>
result_proxy_t<E, V> select_refs(const dsl::ValueRef& c, const dsl::ValueRef& a, const dsl::ValueRef& b) {
  return result_proxy_t<E, V>(dsl::Tracer::current().select(c, a, b));
}
}  // namespace detail
template <Proxy C, class A, class B>
requires ProxyPair<A, B>
auto select(const C& cond, const A& a, const B& b) {
  dsl::ValueRef rc = read_ref(cond), ra = read_ref(a);
  return detail::select_refs<proxy_element_t<A>, detail::any_vector<C, A, B>>(rc, ra, read_ref(b));
}
template <Proxy C, Proxy A>
auto select(const C& cond, const A& a, detail::NumberFor<A> b) {
  dsl::ValueRef rc = read_ref(cond), ra = read_ref(a);
  return detail::select_refs<proxy_element_t<A>, detail::any_vector<C, A>>(rc, ra, b.ref());
}
template <Proxy C, Proxy B>
auto select(const C& cond, detail::NumberFor<B> a, const B& b) {
  dsl::ValueRef rc = read_ref(cond), ra = a.ref();
  return detail::select_refs<proxy_element_t<B>, detail::any_vector<C, B>>(rc, ra, read_ref(b));
}

// Value conversion (rounding to nearest for floats, truncation toward zero for float to int).
template <Element To, Proxy A>
auto cast(const A& a) {
  return result_proxy_t<To, proxy_is_vector<A>>(dsl::Tracer::current().cast(read_ref(a), scalar_of<To>()));
}
// A C++ number becomes a constant of type To, converted explicitly: any number, by the IR's cast
// rule (detail::convert_number), so cast<int32_t>(2.5) is 2.
template <Element To, detail::Literal L>
Expr<To> cast(const L& v) {
  return Expr<To>(detail::literal<To>(detail::convert_number<To>(v)));
}
// Reinterpret the bits as To (same size).
template <Element To, Proxy A>
auto bitcast(const A& a) {
  return result_proxy_t<To, proxy_is_vector<A>>(dsl::Tracer::current().bitcast(read_ref(a), scalar_of<To>()));
}

// A vector of the given lanes (2, 4, 8 or 16 scalars of T): each a scalar proxy of T or a C++
// number as detail::Number takes it. Lanes are read in order.
namespace detail {
template <Element T, size_t N>
Vector<T> vector_of(const Operand<T> (&lanes)[N]) {
  dsl::ValueRef refs[N];
  for (size_t i = 0; i < N; ++i) refs[i] = lanes[i].ref();
  return Vector<T>(dsl::Tracer::current().vector_construct(refs));
}
}  // namespace detail
template <Element T>
Vector<T> vector_of(detail::Operand<T> l0, detail::Operand<T> l1) {
  return detail::vector_of<T>({l0, l1});
}
template <Element T>
Vector<T> vector_of(detail::Operand<T> l0, detail::Operand<T> l1, detail::Operand<T> l2, detail::Operand<T> l3) {
  return detail::vector_of<T>({l0, l1, l2, l3});
}
template <Element T>
Vector<T> vector_of(detail::Operand<T> l0, detail::Operand<T> l1, detail::Operand<T> l2, detail::Operand<T> l3,
                    detail::Operand<T> l4, detail::Operand<T> l5, detail::Operand<T> l6, detail::Operand<T> l7) {
  return detail::vector_of<T>({l0, l1, l2, l3, l4, l5, l6, l7});
}
template <Element T>
Vector<T> vector_of(detail::Operand<T> l0, detail::Operand<T> l1, detail::Operand<T> l2, detail::Operand<T> l3,
                    detail::Operand<T> l4, detail::Operand<T> l5, detail::Operand<T> l6, detail::Operand<T> l7,
                    detail::Operand<T> l8, detail::Operand<T> l9, detail::Operand<T> l10, detail::Operand<T> l11,
                    detail::Operand<T> l12, detail::Operand<T> l13, detail::Operand<T> l14, detail::Operand<T> l15) {
  return detail::vector_of<T>({l0, l1, l2, l3, l4, l5, l6, l7, l8, l9, l10, l11, l12, l13, l14, l15});
}

}  // namespace kiln
