// Arrays a kernel indexes: slices of global buffers, tensors, shared and local arrays. Indexing
// gives an ElementRef: reading it records a load, assigning it records a store.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kiln/dsl/expr.h"

namespace kiln {

namespace detail {

// The element of an array parameter: T, const T, Vector<T> or const Vector<T>.
template <class T>
struct array_element {
  using value = std::remove_const_t<T>;  // the C++ element type (a scalar)
  using scalar = value;
  static constexpr bool is_vector = false;
  static constexpr bool read_only = std::is_const_v<T>;
};
template <class T>
struct array_element<Vector<T>> {
  using value = Vector<T>;
  using scalar = T;
  static constexpr bool is_vector = true;
  static constexpr bool read_only = false;
};
template <class T>
struct array_element<const Vector<T>> : array_element<Vector<T>> {
  static constexpr bool read_only = true;
};

// An index: an integer proxy or a C++ integer (which becomes a u32 constant).
template <class I>
dsl::ValueRef index_ref(const I& i) {
  if constexpr (Proxy<I>) {
    static_assert(std::is_integral_v<proxy_element_t<I>> && !std::is_same_v<proxy_element_t<I>, bool>,
                  "an index must be an integer proxy");
    return read_ref(i);
  } else {
    static_assert(std::is_integral_v<I>, "an index must be an integer");
    return literal<uint32_t>(static_cast<uint32_t>(i));
  }
}

template <class I>
concept Index = (Proxy<I> && std::is_integral_v<proxy_element_t<I>>) || std::is_integral_v<I>;

}  // namespace detail

// A reference to one element of an array: reads record a load, assignments a store.
template <class T>
class ElementRef {
  using info = detail::array_element<T>;

 public:
  using scalar = typename info::scalar;
  using value_proxy = result_proxy_t<scalar, info::is_vector>;

  ElementRef(dsl::ValueRef array, dsl::ValueRef index) : array_(array), index_(index) {}

  value_proxy load() const { return value_proxy(dsl::Tracer::current().load(array_, index_)); }
  operator value_proxy() const { return load(); }  // NOLINT: reading an element is a load

  // Writing a Slice<const T> element is Error{trace.read_only}, reported with the op.
  template <class V>
    requires(Proxy<V> || detail::Literal<V>)
  const ElementRef& operator=(const V& v) const {
    dsl::Tracer::current().store(array_, index_, operand_ref<V, scalar>(v));
    return *this;
  }
  const ElementRef& operator=(const ElementRef& other) const {
    dsl::Tracer::current().store(array_, index_, other.load().ref());
    return *this;
  }
  ElementRef(const ElementRef&) = default;

#define KILN_ELEMENT_COMPOUND(op)                          \
  template <class V>                                       \
    requires(Proxy<V> || detail::Literal<V>)               \
  const ElementRef& operator op##=(const V& v) const {     \
    return *this = load() op v;                            \
  }
  KILN_ELEMENT_COMPOUND(+)
  KILN_ELEMENT_COMPOUND(-)
  KILN_ELEMENT_COMPOUND(*)
  KILN_ELEMENT_COMPOUND(/)
  KILN_ELEMENT_COMPOUND(%)
  KILN_ELEMENT_COMPOUND(&)
  KILN_ELEMENT_COMPOUND(|)
  KILN_ELEMENT_COMPOUND(^)
  KILN_ELEMENT_COMPOUND(<<)
  KILN_ELEMENT_COMPOUND(>>)
#undef KILN_ELEMENT_COMPOUND

  const dsl::ValueRef& array() const { return array_; }
  const dsl::ValueRef& index() const { return index_; }

 private:
  dsl::ValueRef array_;
  dsl::ValueRef index_;
};

template <class T>
struct proxy_traits<ElementRef<T>> {
  static constexpr bool is_proxy = true;
  static constexpr bool is_vector = detail::array_element<T>::is_vector;
  using element = typename detail::array_element<T>::scalar;
  static dsl::ValueRef read(const ElementRef<T>& e) { return e.load().ref(); }
};

// The common face of every array: indexing and len().
template <class T>
class ArrayBase {
 public:
  explicit ArrayBase(dsl::ValueRef array) : array_(array) {}
  template <detail::Index I>
  ElementRef<T> operator[](const I& i) const {
    return ElementRef<T>(array_, detail::index_ref(i));
  }
  // The number of elements (of vectors, for a vector slice) the array shows.
  Expr<uint32_t> len() const { return Expr<uint32_t>(dsl::Tracer::current().len(array_)); }
  const dsl::ValueRef& ref() const { return array_; }

 protected:
  dsl::ValueRef array_;
};

// A global buffer parameter: Slice<const T> is read-only, Slice<T> read-write. T is a scalar or
// Vector<F> (elements of the launch's vector width).
template <class T>
class Slice : public ArrayBase<T> {
 public:
  using element = T;
  using ArrayBase<T>::ArrayBase;
};

// A global buffer with a shape and strides of a compile-time rank. Indexing is linear; shape()
// and stride() read the launch's metadata.
template <class T>
class TensorArg : public ArrayBase<T> {
 public:
  using element = T;
  using ArrayBase<T>::ArrayBase;
  int rank() const { return this->array_.type.rank; }
  Expr<uint32_t> shape(int dim) const {
    return Expr<uint32_t>(dsl::Tracer::current().tensor_meta(ir::OpKind::TensorShape, this->array_, dim));
  }
  Expr<uint32_t> stride(int dim) const {
    return Expr<uint32_t>(dsl::Tracer::current().tensor_meta(ir::OpKind::TensorStride, this->array_, dim));
  }
};

namespace detail {
template <class T>
ir::Type element_type(int launch_width) {
  using info = array_element<T>;
  return ir::Type::vector_of(scalar_of<typename info::scalar>(), info::is_vector ? launch_width : 1);
}
}  // namespace detail

// A cube-shared array of fixed length, one per cube.
template <class T>
class SharedArray : public ArrayBase<T> {
 public:
  explicit SharedArray(int64_t length)
      : ArrayBase<T>(dsl::Tracer::current().alloc(ir::OpKind::SharedAlloc,
                                                  detail::element_type<T>(dsl::Tracer::current().vector_width()),
                                                  length)) {}
};

// A unit-private array of fixed length.
template <class T>
class LocalArray : public ArrayBase<T> {
 public:
  explicit LocalArray(int64_t length)
      : ArrayBase<T>(dsl::Tracer::current().alloc(ir::OpKind::LocalAlloc,
                                                  detail::element_type<T>(dsl::Tracer::current().vector_width()),
                                                  length)) {}
};

// All units of the cube meet here; shared memory written before is visible after.
inline void sync_cube() { dsl::Tracer::current().sync(ir::OpKind::SyncCube); }
// All units of the plane meet here.
inline void sync_plane() { dsl::Tracer::current().sync(ir::OpKind::SyncPlane); }

// ---- atomics on an element: the result is the element's old value ----------------------------

namespace detail {
template <class T, class V>
Expr<typename array_element<T>::scalar> atomic(ir::OpKind kind, const ElementRef<T>& e, const V& v) {
  using S = typename array_element<T>::scalar;
  static_assert(!array_element<T>::is_vector, "atomics work on scalar elements");
  return Expr<S>(dsl::Tracer::current().atomic(kind, e.array(), e.index(), operand_ref<V, S>(v)));
}
}  // namespace detail

#define KILN_ATOMIC(fn, kind)                                   \
  template <class T, class V>                                   \
  auto fn(const ElementRef<T>& e, const V& v) {                 \
    return detail::atomic(ir::OpKind::kind, e, v);              \
  }
KILN_ATOMIC(atomic_add, AtomicAdd)
KILN_ATOMIC(atomic_sub, AtomicSub)
KILN_ATOMIC(atomic_min, AtomicMin)
KILN_ATOMIC(atomic_max, AtomicMax)
KILN_ATOMIC(atomic_and, AtomicAnd)
KILN_ATOMIC(atomic_or, AtomicOr)
KILN_ATOMIC(atomic_xor, AtomicXor)
KILN_ATOMIC(atomic_exchange, AtomicExchange)
#undef KILN_ATOMIC

// Compare and swap: writes `desired` when the element equals `expected`; returns the old value.
template <class T, class A, class B>
auto atomic_cas(const ElementRef<T>& e, const A& expected, const B& desired) {
  using S = typename detail::array_element<T>::scalar;
  dsl::ValueRef d = operand_ref<B, S>(desired);
  return Expr<S>(dsl::Tracer::current().atomic(ir::OpKind::AtomicCas, e.array(), e.index(),
                                               operand_ref<A, S>(expected), &d));
}

}  // namespace kiln
