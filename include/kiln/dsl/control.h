// Run-time control flow: If/Else, For over a range with loop attributes, While, Break, Continue,
// Terminate. Each body is a C++ lambda; what it records lands in the region. Plain C++ if/for/while
// still work on C++ values: they run while tracing (compile-time specialisation).
#pragma once

#include <exception>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/dsl/expr.h"
#include "kiln/dsl/memory.h"

namespace kiln {

namespace detail {
template <class C>
dsl::ValueRef condition_ref(const C& c) {
  static_assert(Proxy<C> && std::is_same_v<proxy_element_t<C>, bool> && !proxy_is_vector<C>,
                "a run-time condition is a proxy bool (Expr<bool>); for a C++ bool use a C++ if");
  return read_ref(c);
}
}  // namespace detail

// What If() returns: attach .Else(...) or .ElseIf(...). An ElseIf records its if inside the else
// region of the previous one; those else regions stay open until the chain ends (its last Else,
// or the end of the statement).
class IfChain {
 public:
  explicit IfChain(size_t handle) : handle_(handle) {}
  IfChain(IfChain&& other) noexcept : handle_(other.handle_), outer_(std::move(other.outer_)) { other.outer_.clear(); }
  IfChain(const IfChain&) = delete;
  IfChain& operator=(const IfChain&) = delete;
  ~IfChain() { close_outer(); }

  template <class F>
  void Else(F&& body) {
    dsl::Tracer& t = dsl::Tracer::current();
    t.begin_else(handle_);
    std::forward<F>(body)();
    t.end_else(handle_);
    close_outer();
  }

  template <class C, class F>
  IfChain ElseIf(const C& cond, F&& body);

 private:
  void close_outer() {
    if (outer_.empty()) return;
    std::vector<size_t> outer = std::move(outer_);
    outer_.clear();
    if (std::uncaught_exceptions() > 0) return;  // the trace is failing; leave its regions alone
    for (size_t i = outer.size(); i-- > 0;) dsl::Tracer::current().end_else(outer[i]);
  }

  size_t handle_;
  std::vector<size_t> outer_;  // ifs whose else region holds this one, outermost first
};

// Records an `if` whose then-region is `body`. Chain .Else(...) or .ElseIf(...).
template <class C, class F>
IfChain If(const C& cond, F&& body) {
  dsl::Tracer& t = dsl::Tracer::current();
  size_t h = t.begin_if(detail::condition_ref(cond));
  std::forward<F>(body)();
  t.end_then(h);
  return IfChain(h);
}

template <class C, class F>
IfChain IfChain::ElseIf(const C& cond, F&& body) {
  dsl::ValueRef c = detail::condition_ref(cond);  // reading a Var or an element records a load here
  dsl::Tracer::current().begin_else_if(handle_, c);
  IfChain inner = If(Expr<bool>(c), std::forward<F>(body));
  inner.outer_ = std::move(outer_);
  outer_.clear();
  inner.outer_.push_back(handle_);
  return inner;
}

// A run-time loop range [lo, hi) by step, with loop attributes.
template <class I>
class Range {
 public:
  Range(dsl::ValueRef lo, dsl::ValueRef hi, dsl::ValueRef step) : lo_(lo), hi_(hi), step_(step) {}

  // Unroll by `n` (a C++ integer, or a constant proxy): n >= 1.
  Range unroll(int64_t n) const {
    return with([&](dsl::LoopAttrs& a) { set("unroll", a.unroll, n); });
  }
  template <Proxy P>
  Range unroll(const P& n) const {
    return unroll(dsl::Tracer::current().loop_attribute("unroll", read_ref(n)));
  }
  Range unroll_full() const {
    return with([](dsl::LoopAttrs& a) { a.unroll_full = true; });
  }
  // Software-pipeline the loop's loads `n` iterations ahead: n >= 0.
  Range prefetch_stages(int64_t n) const {
    return with([&](dsl::LoopAttrs& a) { set("prefetch_stages", a.prefetch_stages, n); });
  }
  template <Proxy P>
  Range prefetch_stages(const P& n) const {
    return prefetch_stages(dsl::Tracer::current().loop_attribute("prefetch_stages", read_ref(n)));
  }

  // Run the body on `w` consecutive iterations at a time (2, 4, 8 or 16): passes/vectorize makes
  // it a loop over vectors with wide loads and stores where the body allows, and logs why not
  // where it does not (KILN_LOG=compile); the results are the same either way (docs/ir.md).
  Range vectorize(int64_t w) const {
    return with([&](dsl::LoopAttrs& a) { set("vectorize", a.vectorize, w); });
  }
  template <Proxy P>
  Range vectorize(const P& w) const {
    return vectorize(dsl::Tracer::current().loop_attribute("vectorize", read_ref(w)));
  }
  // A promise that lo < hi when the loop starts, so that its first test can go. A checked launch
  // whose bounds break it fails with loop.zero_trips; in unchecked mode the promise is the caller's.
  Range at_least_once() const {
    return with([](dsl::LoopAttrs& a) { a.at_least_once = true; });
  }

  const dsl::ValueRef& lo() const { return lo_; }
  const dsl::ValueRef& hi() const { return hi_; }
  const dsl::ValueRef& step() const { return step_; }
  const dsl::LoopAttrs& attrs() const { return attrs_; }

 private:
  template <class Fn>
  Range with(Fn&& fn) const {
    Range r = *this;
    fn(r.attrs_);
    return r;
  }
  static void set(const char* name, int64_t& field, int64_t value) {
    dsl::Tracer::current().check_loop_attribute(name, value);
    field = value;
  }

  dsl::ValueRef lo_, hi_, step_;
  dsl::LoopAttrs attrs_;
};

namespace detail {
template <class I>
Range<I> make_range(const Operand<I>& lo, const Operand<I>& hi, const Operand<I>& step) {
  static_assert(std::is_integral_v<I> && !std::is_same_v<I, bool>, "range() takes integers");
  if (step.is_number() && !step.positive()) {
    dsl::Tracer::current().fail("trace.loop_step", ir::OpKind::For,
                                "the step " + step.text() + " must be greater than 0");
  }
  // One statement each: C++ leaves the order of function arguments unspecified, and the IR would
  // follow it.
  dsl::ValueRef l = lo.ref();
  dsl::ValueRef h = hi.ref();
  dsl::ValueRef s = step.ref();
  return Range<I>(l, h, s);
}
}  // namespace detail

// range(lo, hi [, step]): the bounds and the step are integer proxies of one type I, or C++
// numbers that take I as detail::Number allows (`range(0, n)` for a uint32_t n; never -1 beside
// it). With no proxy among lo and hi, I is lo's C++ type.
template <Proxy B>
Range<proxy_element_t<B>> range(const detail::Operand<proxy_element_t<B>>& lo, const B& hi,
                                const detail::Operand<proxy_element_t<B>>& step = 1) {
  return detail::make_range<proxy_element_t<B>>(lo, hi, step);
}
template <Proxy A>
Range<proxy_element_t<A>> range(const A& lo, const detail::NumberFor<A>& hi,
                                const detail::Operand<proxy_element_t<A>>& step = 1) {
  return detail::make_range<proxy_element_t<A>>(lo, hi, step);
}
template <detail::IntegerLiteral A>
Range<A> range(const A& lo, const detail::Number<std::type_identity_t<A>>& hi,
               const detail::Operand<std::type_identity_t<A>>& step = 1) {
  return detail::make_range<A>(detail::Number<A>(lo), hi, step);
}

// Records a run-time `for` over `r`; `body(i)` receives the induction value.
template <class I, class F>
void For(const Range<I>& r, F&& body) {
  dsl::Tracer& t = dsl::Tracer::current();
  dsl::ValueRef i = t.begin_for(r.lo(), r.hi(), r.step(), r.attrs());
  std::forward<F>(body)(Expr<I>(i));
  t.end_for();
}

// Records a run-time `while`: `cond()` is traced into the condition region, `body()` into the body.
template <class C, class F>
void While(C&& cond, F&& body) {
  dsl::Tracer& t = dsl::Tracer::current();
  t.begin_while();
  auto c = std::forward<C>(cond)();
  t.while_condition(detail::condition_ref(c));
  std::forward<F>(body)();
  t.end_while();
}

// Leave the innermost run-time loop (active units only).
inline void Break() { dsl::Tracer::current().break_loop(); }
// Go to the next iteration of the innermost run-time loop.
inline void Continue() { dsl::Tracer::current().continue_loop(); }
// End this unit's work in the kernel.
inline void Terminate() { dsl::Tracer::current().terminate(); }

}  // namespace kiln
