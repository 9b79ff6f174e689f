// Tile<T>: a traced tile of T in the cube's registers, and what a tile kernel computes with:
// elementwise arithmetic and math (operands widen by seed 04's rule: a rank-0 tile to any shape,
// length-1 dimensions of a tile of the same rank), reductions with dim and keepdims, mma, full,
// broadcast, to<U>(), transpose(), block ids and run-time loops (d_range) that carry tile::Vars.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "kiln/dsl/control.h"
#include "kiln/dsl/expr.h"
#include "kiln/tile/record.h"

namespace kiln::tile {

template <Element T>
class Tile {
 public:
  using element_type = T;
  explicit Tile(dsl::ValueRef r) : ref_(r) {}
  // A C++ number: a rank-0 tile, which widens to whatever it meets. Its type must hold only values
  // of T (kiln::detail::made_from); beside a tile in an operator it may be any constant T holds.
  template <kiln::detail::Literal L>
  Tile(const L& v) : Tile(kiln::detail::made_from<T>(v)) {}  // NOLINT: implicit on purpose
  explicit Tile(const kiln::detail::Number<T>& v) : ref_(detail::full(scalar_of<T>(), {}, v.attr())) {}

  const dsl::ValueRef& ref() const { return ref_; }
  std::vector<uint32_t> shape() const { return detail::shape_of(ref_); }
  int rank() const { return static_cast<int>(shape().size()); }

  // The same values in another element type (cuda_tile's ftof/itof/...: rounding to nearest even).
  template <Element U>
  Tile<U> to() const {
    return Tile<U>(detail::cast(ref_, scalar_of<U>()));
  }
  // Rows and columns swapped (rank 2).
  Tile transpose() const { return Tile(detail::transpose(ref_)); }

 private:
  dsl::ValueRef ref_;
};

// The index arithmetic of a kernel (block ids, loop counters, offsets) is i32, as in cuda_tile.
using Index = Expr<int32_t>;

// The position of the running block along grid axis 0, 1 or 2.
inline Index block_id(int axis) { return Index(detail::block_id(axis)); }

namespace detail {
template <Element T>
Tile<T> binary(ir::OpKind k, const Tile<T>& a, const Tile<T>& b) {
  ValueRef ops[] = {a.ref(), b.ref()};
  return Tile<T>(elementwise(k, ops));
}
template <Element T>
Tile<T> unary(ir::OpKind k, const Tile<T>& a) {
  ValueRef ops[] = {a.ref()};
  return Tile<T>(elementwise(k, ops));
}
template <Element T>
Tile<bool> compare(ir::OpKind k, const Tile<T>& a, const Tile<T>& b) {
  ValueRef ops[] = {a.ref(), b.ref()};
  return Tile<bool>(elementwise(k, ops));
}
}  // namespace detail

// Each operator takes two tiles of T, or a tile and a C++ number (a rank-0 tile) that T holds, as
// kiln::detail::Number takes it: `t * 2.0` on a float tile, `t + 2` on an integer one, never
// `t + 2.5` there.
template <Element T>
using TileNumber = kiln::detail::Number<std::type_identity_t<T>>;
#define KILN_TILE_BINARY(op, kind)                          \
  template <Element T>                                      \
  Tile<T> operator op(const Tile<T>& a, const Tile<T>& b) { \
    return detail::binary(ir::OpKind::kind, a, b);          \
  }                                                         \
  template <Element T>                                      \
  Tile<T> operator op(const Tile<T>& a, TileNumber<T> b) {  \
    return detail::binary(ir::OpKind::kind, a, Tile<T>(b)); \
  }                                                         \
  template <Element T>                                      \
  Tile<T> operator op(TileNumber<T> a, const Tile<T>& b) {  \
    return detail::binary(ir::OpKind::kind, Tile<T>(a), b); \
  }
KILN_TILE_BINARY(+, Add)
KILN_TILE_BINARY(-, Sub)
KILN_TILE_BINARY(*, Mul)
KILN_TILE_BINARY(/, Div)
#undef KILN_TILE_BINARY

#define KILN_TILE_COMPARE(op, kind)                            \
  template <Element T>                                         \
  Tile<bool> operator op(const Tile<T>& a, const Tile<T>& b) { \
    return detail::compare(ir::OpKind::kind, a, b);            \
  }                                                            \
  template <Element T>                                         \
  Tile<bool> operator op(const Tile<T>& a, TileNumber<T> b) {  \
    return detail::compare(ir::OpKind::kind, a, Tile<T>(b));   \
  }
KILN_TILE_COMPARE(<, Lt)
KILN_TILE_COMPARE(<=, Le)
KILN_TILE_COMPARE(>, Gt)
KILN_TILE_COMPARE(>=, Ge)
KILN_TILE_COMPARE(==, Eq)
KILN_TILE_COMPARE(!=, Ne)
#undef KILN_TILE_COMPARE

template <Element T>
Tile<T> operator-(const Tile<T>& a) {
  return detail::unary(ir::OpKind::Neg, a);
}

// Named forms, as seed 04 writes them.
template <Element T>
Tile<T> add(const Tile<T>& a, const Tile<T>& b) {
  return a + b;
}
template <Element T>
Tile<T> sub(const Tile<T>& a, const Tile<T>& b) {
  return a - b;
}
template <Element T>
Tile<T> mul(const Tile<T>& a, const Tile<T>& b) {
  return a * b;
}
template <Element T>
Tile<T> div(const Tile<T>& a, const Tile<T>& b) {
  return a / b;
}
template <Element T>
Tile<T> max(const Tile<T>& a, const Tile<T>& b) {
  return detail::binary(ir::OpKind::Max, a, b);
}
template <Element T>
Tile<T> min(const Tile<T>& a, const Tile<T>& b) {
  return detail::binary(ir::OpKind::Min, a, b);
}
template <Element T>
Tile<T> pow(const Tile<T>& a, const Tile<T>& b) {
  return detail::binary(ir::OpKind::Pow, a, b);
}
template <Element T>
Tile<T> where(const Tile<bool>& c, const Tile<T>& a, const Tile<T>& b) {
  dsl::ValueRef ops[] = {c.ref(), a.ref(), b.ref()};
  return Tile<T>(detail::elementwise(ir::OpKind::Select, ops));
}

#define KILN_TILE_MATH(name, kind)             \
  template <Element T>                         \
  Tile<T> name(const Tile<T>& a) {             \
    return detail::unary(ir::OpKind::kind, a); \
  }
KILN_TILE_MATH(exp, Exp)
KILN_TILE_MATH(exp2, Exp2)
KILN_TILE_MATH(log, Log)
KILN_TILE_MATH(log2, Log2)
KILN_TILE_MATH(sqrt, Sqrt)
KILN_TILE_MATH(rsqrt, Rsqrt)
KILN_TILE_MATH(tanh, Tanh)
KILN_TILE_MATH(erf, Erf)
KILN_TILE_MATH(sin, Sin)
KILN_TILE_MATH(cos, Cos)
KILN_TILE_MATH(abs, Abs)
KILN_TILE_MATH(neg, Neg)
KILN_TILE_MATH(floor, Floor)
KILN_TILE_MATH(ceil, Ceil)
#undef KILN_TILE_MATH

// Reductions along `dim` (default: the last). Without keepdims the dimension goes; with it, it
// stays with length 1, which is how a reduction says which axis it widens back along.
struct Reduce {
  int dim = -1;
  bool keepdims = false;
};
template <Element T>
Tile<T> reduce_sum(const Tile<T>& t, Reduce r = {}) {
  return Tile<T>(detail::reduce(ir::OpKind::TileReduceSum, t.ref(), r.dim, r.keepdims));
}
template <Element T>
Tile<T> reduce_max(const Tile<T>& t, Reduce r = {}) {
  return Tile<T>(detail::reduce(ir::OpKind::TileReduceMax, t.ref(), r.dim, r.keepdims));
}
template <Element T>
Tile<T> reduce_min(const Tile<T>& t, Reduce r = {}) {
  return Tile<T>(detail::reduce(ir::OpKind::TileReduceMin, t.ref(), r.dim, r.keepdims));
}

// c + a x b over the last dimension of a and the first of b (cuda_tile's mmaf). The formats are
// seed 04's table: f16 into f16 or f32; bf16 and f32 into f32; f64 into f64.
template <Element A, Element C>
Tile<C> mma(const Tile<A>& a, const Tile<A>& b, const Tile<C>& c) {
  return Tile<C>(detail::mma(a.ref(), b.ref(), c.ref()));
}

// A tile of `shape` holding `v` everywhere (a number T holds, as kiln::detail::Number takes it:
// full<int32_t>(s, 2.5) does not compile); zeros<T>(shape).
template <Element T>
Tile<T> full(std::initializer_list<uint32_t> shape, TileNumber<T> v) {
  std::vector<uint32_t> s(shape);
  return Tile<T>(detail::full(scalar_of<T>(), s, v.attr()));
}
template <Element T>
Tile<T> zeros(std::initializer_list<uint32_t> shape) {
  return full<T>(shape, T{});
}
// A rank-0 tile: f_const(F64, 1.0) is constant<double>(1.0).
template <Element T>
Tile<T> constant(TileNumber<T> v) {
  return Tile<T>(v);
}
// Explicit widening, where no elementwise op does it (seed 04's broadcast(t, shape)).
template <Element T>
Tile<T> broadcast(const Tile<T>& t, std::initializer_list<uint32_t> shape) {
  std::vector<uint32_t> s(shape);
  return Tile<T>(detail::broadcast(t.ref(), s));
}

// A tile that a run-time loop carries: `Var<float> acc = zeros(c);` then `acc = mma(..., acc)` in
// the body. Its shape and type never change.
template <Element T>
class Var {
 public:
  Var(const Tile<T>& init) : var_(detail::var_decl(init.ref())) {}  // NOLINT
  Var(const Var& other) : Var(other.get()) {}
  Var& operator=(const Tile<T>& t) {
    detail::var_store(var_, t.ref());
    return *this;
  }
  Var& operator=(const Var& other) { return *this = other.get(); }
  Tile<T> get() const { return Tile<T>(detail::var_load(var_)); }
  operator Tile<T>() const { return get(); }  // NOLINT

 private:
  dsl::ValueRef var_;
};

// A run-time loop over [lo, hi): For(d_range(0, n), [&](Index k) { ... }). The bounds are Index
// proxies or C++ numbers that an int32_t holds (as kiln::detail::Number takes them). Its
// attributes (prefetch_stages, unroll) are kiln's Range ones.
inline Range<int32_t> d_range(const kiln::detail::Operand<int32_t>& lo, const kiln::detail::Operand<int32_t>& hi) {
  return kiln::detail::make_range<int32_t>(lo, hi, 1);
}
using kiln::For;

}  // namespace kiln::tile

namespace kiln::tile {
template <Element A, Element C>
Tile<C> mma(const Tile<A>& a, const Tile<A>& b, const Var<C>& c) {
  return mma(a, b, c.get());
}
}  // namespace kiln::tile
