// The tensor library's elementwise ops. Each launches one kiln kernel on the operands' client.
//
// Operands broadcast (right-aligned; a dim of 1 stretches, with stride 0). The result goes into
// the memory of an operand given by std::move when that operand holds the only handle to its
// memory (can_mut), does not overlap itself and already has the result's shape and element type:
// the left one first, then the right one. Otherwise the result gets new memory, laid out in the
// order that the operands of the result's shape vote for by their bytes (a tie keeps row-major),
// so that an op on transposed tensors writes a transposed result and walks every operand in
// memory order.
#pragma once

#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/runtime/launch.h"
#include "kiln/tensor/tensor.h"

namespace kiln {

// An operand of an elementwise op: a tensor lent (const Tensor&), a tensor given (Tensor&&, whose
// memory the op may reuse), or a number (converted to the other operand's element type; a value
// that the type cannot hold is an error).
class Operand {
 public:
  Operand(const Tensor& t) : lent_(&t) {}  // NOLINT
  Operand(Tensor&& t) : given_(&t) {}      // NOLINT
  template <class N>
  requires detail::kNumber<N> Operand(N v) : scalar_(detail::tagged(v)), is_scalar_(true) {}  // NOLINT
  // A number whose type is known at run time.
  explicit Operand(const ScalarValue& v) : scalar_(v), is_scalar_(true) {}

  bool is_scalar() const { return is_scalar_; }
  // Given by std::move: the op may write its result into the tensor's memory.
  bool owned() const { return given_ != nullptr; }
  const Tensor& tensor() const { return given_ ? *given_ : *lent_; }
  // The tensor itself when given (taken from the caller only now, once the op has succeeded: a
  // failed op leaves the caller's tensor as it was), a copy sharing its memory when lent.
  Tensor take() {
    if (given_) return std::move(*given_);
    return *lent_;
  }
  const ScalarValue& scalar() const { return scalar_; }

 private:
  // Neither is copied: the operand lives for the op's call, within the caller's expression,
  // while the tensor does (a temporary too, to the end of the full expression).
  const Tensor* lent_ = nullptr;
  Tensor* given_ = nullptr;
  ScalarValue scalar_{};
  bool is_scalar_ = false;
};

// Arithmetic, in the operands' element type (they must agree: Error{tensor.dtype_mismatch}).
Tensor add(Operand a, Operand b);
Tensor sub(Operand a, Operand b);
Tensor mul(Operand a, Operand b);
Tensor div(Operand a, Operand b);
Tensor rem(Operand a, Operand b);
Tensor pow(Operand a, Operand b);  // floats
Tensor max(Operand a, Operand b);
Tensor min(Operand a, Operand b);

// Comparisons: bool tensors.
Tensor eq(Operand a, Operand b);
Tensor ne(Operand a, Operand b);
Tensor lt(Operand a, Operand b);
Tensor le(Operand a, Operand b);
Tensor gt(Operand a, Operand b);
Tensor ge(Operand a, Operand b);

// a where the bool tensor `condition` is true, else b (the three broadcast; a and b share an
// element type, a number takes the other's). Error{tensor.dtype_mismatch} for a condition that is
// not bool.
Tensor where(Operand condition, Operand a, Operand b);

// One operand.
Tensor neg(Operand a);
Tensor abs(Operand a);
Tensor exp(Operand a);
Tensor log(Operand a);
Tensor sqrt(Operand a);
Tensor tanh(Operand a);
Tensor erf(Operand a);
Tensor sigmoid(Operand a);
Tensor relu(Operand a);
Tensor gelu(Operand a);  // the erf form: x / 2 * (1 + erf(x / sqrt(2)))
// Writes `value` (broadcast to dest's shape, converted to its element type) into the elements
// that `dest` views: the one op that writes into a tensor's memory by request, not ownership
// (PyTorch's dest.copy_(value)). Error{tensor.overlapping_destination} for an expanded view.
void assign(const Tensor& dest, const Tensor& value);
// Tensors joined along `dim` (their other dims equal), or stacked along a new dim `dim`: one copy
// kernel per input into new memory.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim);
// The values converted to `dtype` (new memory unless the type is the same: then the tensor itself).
Tensor cast(Operand a, DType dtype);

namespace detail {
template <class T>
inline constexpr bool kTensorOperand = std::is_same_v<std::remove_cvref_t<T>, Tensor>;
template <class T>
inline constexpr bool kOperand = kTensorOperand<T> || kNumber<std::remove_cvref_t<T>>;
template <class A, class B>
concept TensorOperands = kOperand<A> && kOperand<B> &&(kTensorOperand<A> || kTensorOperand<B>);
}  // namespace detail

// a + b, a - b, ...: a tensor given by std::move may take the result (see above).
#define KILN_TENSOR_OPERATOR(op, fn)                                       \
  template <class A, class B>                                              \
  requires detail::TensorOperands<A, B> Tensor operator op(A&& a, B&& b) { \
    return fn(Operand(std::forward<A>(a)), Operand(std::forward<B>(b)));   \
  }
KILN_TENSOR_OPERATOR(+, add)
KILN_TENSOR_OPERATOR(-, sub)
KILN_TENSOR_OPERATOR(*, mul)
KILN_TENSOR_OPERATOR(/, div)
KILN_TENSOR_OPERATOR(%, rem)
// a < b, a == b, ...: bool tensors, as lt(a, b), eq(a, b) (elementwise, never one bool).
KILN_TENSOR_OPERATOR(<, lt)
KILN_TENSOR_OPERATOR(<=, le)
KILN_TENSOR_OPERATOR(>, gt)
KILN_TENSOR_OPERATOR(>=, ge)
KILN_TENSOR_OPERATOR(==, eq)
KILN_TENSOR_OPERATOR(!=, ne)
#undef KILN_TENSOR_OPERATOR

template <class A>
requires detail::kTensorOperand<A> Tensor operator-(A&& a) { return neg(Operand(std::forward<A>(a))); }

}  // namespace kiln
