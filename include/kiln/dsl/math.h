// Math on proxies: min, max, abs, fma, select, casts, and the float functions. Each takes Expr,
// Vector, or any proxy (slice elements, Vars), mixed with C++ numbers of the proxy's type.
#pragma once

#include "kiln/dsl/expr.h"

namespace kiln {

#define KILN_UNARY_FN(fn, kind)                     \
  template <Proxy A>                                \
  auto fn(const A& a) {                             \
    return detail::unary(ir::OpKind::kind, a);      \
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

template <class A, class B>
  requires ProxyPair<A, B>
auto min(const A& a, const B& b) {
  return detail::binary(ir::OpKind::Min, a, b);
}
template <class A, class B>
  requires ProxyPair<A, B>
auto max(const A& a, const B& b) {
  return detail::binary(ir::OpKind::Max, a, b);
}
template <class A, class B>
  requires ProxyPair<A, B>
auto pow(const A& a, const B& b) {
  return detail::binary(ir::OpKind::Pow, a, b);
}
// The magnitude of a with the sign bit of b (NaNs included).
template <class A, class B>
  requires ProxyPair<A, B>
auto copysign(const A& a, const B& b) {
  return detail::binary(ir::OpKind::CopySign, a, b);
}

namespace detail {
template <class... Ps>
struct first_proxy_element;
template <class P, class... Ps>
struct first_proxy_element<P, Ps...> {
  using type = typename first_proxy_element<Ps...>::type;
};
template <Proxy P, class... Ps>
struct first_proxy_element<P, Ps...> {
  using type = proxy_element_t<P>;
};
}  // namespace detail

// a * b + c with one rounding.
template <class A, class B, class C>
  requires(Proxy<A> || Proxy<B> || Proxy<C>)
auto fma(const A& a, const B& b, const C& c) {
  using E = typename detail::first_proxy_element<A, B, C>::type;
  constexpr bool v = detail::vec<A> || detail::vec<B> || detail::vec<C>;
  // Operands in order, one statement each (function arguments are evaluated in no fixed order).
  dsl::ValueRef ra = operand_ref<A, E>(a);
  dsl::ValueRef rb = operand_ref<B, E>(b);
  dsl::ValueRef rc = operand_ref<C, E>(c);
  return result_proxy_t<E, v>(dsl::Tracer::current().fma(ra, rb, rc));
}

// cond ? a : b, lane by lane; both sides are evaluated.
template <class C, class A, class B>
  requires Proxy<C> && ProxyPair<A, B>
auto select(const C& cond, const A& a, const B& b) {
  using E = pair_element_t<A, B>;
  constexpr bool v = detail::vec<A> || detail::vec<B> || proxy_is_vector<C>;
  dsl::ValueRef rc = read_ref(cond);
  dsl::ValueRef ra = operand_ref<A, E>(a);
  dsl::ValueRef rb = operand_ref<B, E>(b);
  return result_proxy_t<E, v>(dsl::Tracer::current().select(rc, ra, rb));
}

// Value conversion (rounding to nearest for floats, truncation toward zero for float to int).
template <Element To, Proxy A>
auto cast(const A& a) {
  return result_proxy_t<To, proxy_is_vector<A>>(dsl::Tracer::current().cast(read_ref(a), scalar_of<To>()));
}
// A C++ number becomes a constant of type To.
template <Element To, detail::Literal L>
Expr<To> cast(const L& v) {
  return Expr<To>(detail::literal_as<To>(v));
}
// Reinterpret the bits as To (same size).
template <Element To, Proxy A>
auto bitcast(const A& a) {
  return result_proxy_t<To, proxy_is_vector<A>>(dsl::Tracer::current().bitcast(read_ref(a), scalar_of<To>()));
}

// A vector of the given lanes (2, 4, 8 or 16 scalars of one type).
template <Element T, class... Ls>
Vector<T> vector_of(const Ls&... lanes) {
  dsl::ValueRef refs[] = {operand_ref<Ls, T>(lanes)...};
  return Vector<T>(dsl::Tracer::current().vector_construct(refs));
}

}  // namespace kiln
