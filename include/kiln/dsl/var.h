// Var<T>: a mutable local. Assigning a Var inside a run-time region is how a value leaves the
// region (a loop's accumulator, a branch's result).
#pragma once

#include "kiln/dsl/expr.h"
#include "kiln/dsl/memory.h"

namespace kiln {

// Var<T> holds a scalar T; Var<Vector<T>> holds a vector of the launch's vector width.
template <class T>
class Var {
  using info = detail::array_element<T>;

 public:
  using scalar = typename info::scalar;
  using value_proxy = result_proxy_t<scalar, info::is_vector>;

  // Declared without a value: reading it before an assignment on every path is
  // Error{trace.unassigned_var}.
  Var() : var_(declare()) {}
  template <Proxy P>
  Var(const P& init) : var_(declare()) {  // NOLINT: `Var<float> acc = x[i];`
    *this = init;
  }
  // From a C++ number: its type must hold only values of the Var's (detail::made_from): `= 0.0f`,
  // `= 0u` for a Var<uint32_t>. Assigning afterwards (`v = 200`) also takes a constant in range.
  template <detail::Literal L>
  Var(const L& init) : var_(declare()) {  // NOLINT: `Var<float> acc = 0.0f;`
    store(detail::made_from<scalar>(init).ref());
  }
  // A copy is a new Var holding the other's current value.
  Var(const Var& other) : var_(declare()) { *this = other.get(); }

  value_proxy get() const { return value_proxy(dsl::Tracer::current().var_load(var_)); }
  operator value_proxy() const { return get(); }  // NOLINT

  template <Proxy P>
  Var& operator=(const P& v) {
    return store(read_ref(v));
  }
  Var& operator=(detail::Number<scalar> v) { return store(v.ref()); }
  // The copy assignment takes a non-const Var&: one taking const Var& would also take a number,
  // through a temporary Var, and make `v = 0` ambiguous with the Number overload. A const Var
  // goes through the proxy overload, which stores its value the same way.
  Var& operator=(Var& other) { return store(other.get().ref()); }

#define KILN_VAR_COMPOUND(op)       \
  template <Proxy P>                \
  Var& operator op##=(const P& v) { \
    return *this = get() op v;      \
  }                                 \
  Var& operator op##=(detail::Number<scalar> v) { return *this = get() op v; }
  KILN_VAR_COMPOUND(+)
  KILN_VAR_COMPOUND(-)
  KILN_VAR_COMPOUND(*)
  KILN_VAR_COMPOUND(/)
  KILN_VAR_COMPOUND(%)
  KILN_VAR_COMPOUND(&)
  KILN_VAR_COMPOUND(|)
  KILN_VAR_COMPOUND(^)
  KILN_VAR_COMPOUND(<<)
  KILN_VAR_COMPOUND(>>)
#undef KILN_VAR_COMPOUND

  const dsl::ValueRef& ref() const { return var_; }

 private:
  Var& store(const dsl::ValueRef& v) {
    dsl::Tracer::current().var_store(var_, v);
    return *this;
  }
  static dsl::ValueRef declare() {
    dsl::Tracer& t = dsl::Tracer::current();
    return t.var_decl(detail::element_type<T>(t.vector_width()));
  }
  dsl::ValueRef var_;
};

template <class T>
struct proxy_traits<Var<T>> {
  static constexpr bool is_proxy = true;
  static constexpr bool is_vector = detail::array_element<T>::is_vector;
  using element = typename detail::array_element<T>::scalar;
  static dsl::ValueRef read(const Var<T>& v) { return v.get().ref(); }
};

}  // namespace kiln
