// Arrays a kernel indexes: slices of global buffers, tensors, shared and local arrays. Indexing
// gives an ElementRef, the element as an lvalue: reading it records a load, assigning it a store;
// a copy of it is the element's value.
#pragma once

#include <cstdint>
#include <new>
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

// An element of an array, with the semantics `y[i]` has in CUDA C++.
//
// `y[i]` is an lvalue naming the element: reading it records a load where it is read, assigning
// it (`y[i] = v`, `y[i] += v`) records a store and no other load, atomics take it. It lives as
// long as the trace (ArrayBase::operator[] places it in the tracer's storage), so
// `auto& r = y[i]` and `auto&& r = y[i]` are references to the element, as they are in CUDA.
//
// A copy is a value: `auto old = y[i]` holds the element's value where `old` is initialised (the
// copy records the load there; DCE removes it when nothing reads it). Assigning a copy rebinds it
// and touches no memory, as `float old = y[i]; old = v;` does. docs/decisions/011 has the why.
template <class T>
class ElementRef {
  using info = detail::array_element<T>;

 public:
  using scalar = typename info::scalar;
  using value_proxy = result_proxy_t<scalar, info::is_vector>;

  // A copy of an element is its value, loaded here; a copy of a copy shares the value.
  ElementRef(const ElementRef& other) : value_(other.get().ref()), region_(dsl::Tracer::current_region()) {}

  // Whether this names an element of an array (what `y[i]` gives), not a copy of its value.
  bool is_element() const { return value_.id == ir::kNoValue; }
  // The element's value: a load recorded now for an element; the value held for a copy.
  value_proxy get() const {
    if (!is_element()) return value_proxy(value_);
    return value_proxy(dsl::Tracer::current().load(array_, index_));
  }
  operator value_proxy() const { return get(); }  // NOLINT: reading an element is a load

  // Stores into an element (writing a Slice<const T> element is Error{trace.read_only}); rebinds
  // a copy. Either way the result is the value assigned, so `a[i] = b[j] = 0` works.
  template <Proxy V>
  value_proxy operator=(const V& v) {
    static_assert(std::is_same_v<proxy_element_t<V>, scalar>, "the value's element type differs; use cast<T>()");
    static_assert(info::is_vector || !proxy_is_vector<V>, "a vector does not fit in a scalar element");
    return assign(read_ref(v));
  }
  // A C++ number, as detail::Number takes it: `y[i] = 0` on a uint32_t slice, never `= 2.5` on an
  // integer one.
  value_proxy operator=(detail::Number<scalar> v) { return assign(v.ref()); }
  value_proxy operator=(const ElementRef& other) { return assign(other.get().ref()); }

#define KILN_ELEMENT_COMPOUND(op)          \
  template <Proxy V>                       \
  value_proxy operator op##=(const V& v) { \
    return *this = get() op v;             \
  }                                        \
  value_proxy operator op##=(detail::Number<scalar> v) { return *this = get() op v; }
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

  // Where the element is; for a copy, nothing.
  const dsl::ValueRef& array() const { return array_; }
  const dsl::ValueRef& index() const { return index_; }

 private:
  template <class>
  friend class ArrayBase;
  ElementRef(dsl::ValueRef array, dsl::ValueRef index) : array_(array), index_(index) {}

  value_proxy assign(dsl::ValueRef v) {
    if (is_element()) {
      dsl::Tracer::current().store(array_, index_, v);
    } else {
      dsl::Tracer::current().check_rebind(region_);  // a copy is a value: Var<T> carries one out of a region
      value_ = v;
    }
    return value_proxy(v);
  }

  dsl::ValueRef array_;
  dsl::ValueRef index_;
  dsl::ValueRef value_;  // a copy's value; none for an element
  uint32_t region_ = 0;  // where a copy was made
};

template <class T>
struct proxy_traits<ElementRef<T>> {
  static constexpr bool is_proxy = true;
  static constexpr bool is_vector = detail::array_element<T>::is_vector;
  using element = typename detail::array_element<T>::scalar;
  static dsl::ValueRef read(const ElementRef<T>& e) { return e.get().ref(); }
};

// The common face of every array: indexing and len().
template <class T>
class ArrayBase {
 public:
  explicit ArrayBase(dsl::ValueRef array) : array_(array) {}
  // The element at `i`: an lvalue, as in CUDA C++, that lives until the trace ends.
  // Not for barriers: only the mbarrier ops reach one (kiln/dsl/barrier.h).
  template <detail::Index I>
  requires(!std::is_same_v<T, Mbarrier>) ElementRef<T>
  &operator[](const I& i) const {
    static_assert(std::is_trivially_destructible_v<ElementRef<T>>, "the tracer's storage never destroys");
    dsl::ValueRef index = detail::index_ref(i);
    void* at = dsl::Tracer::current().storage(sizeof(ElementRef<T>), alignof(ElementRef<T>));
    return *::new (at) ElementRef<T>(array_, index);
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

// A cube-shared array of fixed length, one per cube. With a swizzle, it is rows of one swizzle span
// (32, 64 or 128 bytes) whose 16-byte chunks are permuted as Hopper's bulk copies and warp-group
// products read them (kiln/dsl/wgmma.h: swizzled_index gives where element (row, col) lies).
template <class T>
class SharedArray : public ArrayBase<T> {
 public:
  explicit SharedArray(int64_t length)
      : ArrayBase<T>(dsl::Tracer::current().alloc(
            ir::OpKind::SharedAlloc, detail::element_type<T>(dsl::Tracer::current().vector_width()), length)) {}
  SharedArray(int64_t length, ir::Swizzle swizzle)
      : ArrayBase<T>(dsl::Tracer::current().alloc(
            ir::OpKind::SharedAlloc, detail::element_type<T>(1), length,
            dsl::Tracer::current().kernel().layout_number(ir::TileLayout::of(ir::SharedLayout{
                uint32_t(swizzle) / uint32_t(sizeof(T)), swizzle, ir::swizzle_alignment(swizzle), false})))) {}
};

// A unit-private array of fixed length.
template <class T>
class LocalArray : public ArrayBase<T> {
 public:
  explicit LocalArray(int64_t length)
      : ArrayBase<T>(dsl::Tracer::current().alloc(
            ir::OpKind::LocalAlloc, detail::element_type<T>(dsl::Tracer::current().vector_width()), length)) {}
};

// All units of the cube meet here; shared memory written before is visible after.
inline void sync_cube() { dsl::Tracer::current().sync(ir::OpKind::SyncCube); }
// All units of the plane meet here.
inline void sync_plane() { dsl::Tracer::current().sync(ir::OpKind::SyncPlane); }
// This unit's memory accesses before it are seen by every cube before those after it (CUDA's
// __threadfence): put one between data another cube reads and the atomic that says it is ready,
// and one between seeing that atomic and reading the data.
inline void fence_device() { dsl::Tracer::current().sync(ir::OpKind::FenceDevice); }

// ---- atomics on an element: the result is the element's old value ----------------------------

// An atomic takes the element itself (`a[i]`, or a reference to it), never a copy of its value:
// nothing is loaded before the atomic, and `auto e = a[i]; atomic_add(e, 1u);` is an error, as
// atomicAdd on a local copy would be pointless in CUDA.

namespace detail {
template <class T>
void check_atomic_target(ir::OpKind kind, const ElementRef<T>& e) {
  if (!e.is_element()) {
    dsl::Tracer::current().fail("trace.not_an_element", kind,
                                "takes an array element (`a[i]`, or `auto& e = a[i]`), not a copy of one: "
                                "`auto e = a[i]` holds the element's value, as in CUDA C++");
  }
}

template <class T>
using atomic_operand = Operand<typename array_element<T>::scalar>;

template <class T>
Expr<typename array_element<T>::scalar> atomic(ir::OpKind kind, const ElementRef<T>& e, const atomic_operand<T>& v) {
  using S = typename array_element<T>::scalar;
  static_assert(!array_element<T>::is_vector, "atomics work on scalar elements");
  check_atomic_target(kind, e);
  return Expr<S>(dsl::Tracer::current().atomic(kind, e.array(), e.index(), v.ref()));
}
}  // namespace detail

// The value is a proxy of the element's type or a C++ number as detail::Number takes it.
#define KILN_ATOMIC(fn, kind)                                           \
  template <class T>                                                    \
  auto fn(const ElementRef<T>& e, const detail::atomic_operand<T>& v) { \
    return detail::atomic(ir::OpKind::kind, e, v);                      \
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
template <class T>
auto atomic_cas(const ElementRef<T>& e, const detail::atomic_operand<T>& expected,
                const detail::atomic_operand<T>& desired) {
  using S = typename detail::array_element<T>::scalar;
  detail::check_atomic_target(ir::OpKind::AtomicCas, e);
  dsl::ValueRef d = desired.ref();
  return Expr<S>(dsl::Tracer::current().atomic(ir::OpKind::AtomicCas, e.array(), e.index(), expected.ref(), &d));
}

}  // namespace kiln
