// Layout arithmetic of the tensor library, on shapes and strides alone: broadcasting, the order
// in which an elementwise op walks memory, and the folding of dims that a walk can take as one.
// On every op's path, so it works in fixed-capacity lists (Dims, DimOrder) that allocate nothing.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "kiln/error.h"
#include "kiln/tensor/tensor.h"

namespace kiln::tensor {

// The most dims a tensor op walks (Error{tensor.too_large} past it).
inline constexpr size_t kMaxDims = 16;

// A list of at most kMaxDims values, held inline.
template <class T>
class Small {
 public:
  Small() = default;
  Small(size_t n, T value) {
    check(n);
    n_ = n;
    for (size_t i = 0; i < n; ++i) v_[i] = value;
  }
  Small(std::span<const T> values) {  // NOLINT: a shape or strides as they come
    check(values.size());
    n_ = values.size();
    for (size_t i = 0; i < n_; ++i) v_[i] = values[i];
  }
  void push_back(T value) {
    check(n_ + 1);
    v_[n_++] = value;
  }
  void pop_back() { --n_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  T& operator[](size_t i) { return v_[i]; }
  const T& operator[](size_t i) const { return v_[i]; }
  T& back() { return v_[n_ - 1]; }
  const T& back() const { return v_[n_ - 1]; }
  T* begin() { return v_.data(); }
  T* end() { return v_.data() + n_; }
  const T* begin() const { return v_.data(); }
  const T* end() const { return v_.data() + n_; }
  const T* data() const { return v_.data(); }
  std::span<const T> span() const { return {v_.data(), n_}; }
  operator std::span<const T>() const { return span(); }  // NOLINT: where a shape or strides are read
  friend bool operator==(const Small& a, const Small& b) {
    if (a.n_ != b.n_) return false;
    for (size_t i = 0; i < a.n_; ++i) {
      if (a.v_[i] != b.v_[i]) return false;
    }
    return true;
  }

 private:
  static void check(size_t n) {
    if (n > kMaxDims)
      throw Error("tensor.too_large", "a tensor op walks at most 16 dims; this one has " + std::to_string(n));
  }
  std::array<T, kMaxDims> v_;  // the first n_ are set: no zeroing of the rest on every op
  size_t n_ = 0;
};

using Dims = Small<int64_t>;  // a shape or strides
using DimOrder = Small<int>;  // dims, outermost in memory first

// The shape two operands broadcast to (right-aligned; a dim of 1 stretches).
// Error{tensor.shape_mismatch} naming both shapes and the op when a pair of dims differs and
// neither is 1.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& op);

// A tensor's strides seen at shape `out` (which its shape broadcasts to): stride 0 on stretched
// and new leading dims.
Dims broadcast_strides(std::span<const int64_t> shape, std::span<const int64_t> strides, std::span<const int64_t> out);

// True when two different positions of the view reach the same element (a stride 0 on a dim
// longer than 1, or dims whose strides interleave).
bool self_overlapping(std::span<const int64_t> shape, std::span<const int64_t> strides);

// The dims from the outermost in memory to the innermost: by stride, larger first; dims of size
// 1 and ties keep their logical places. Row-major order is 0, 1, ..., rank - 1.
DimOrder memory_order(std::span<const int64_t> shape, std::span<const int64_t> strides);
DimOrder row_major_order(size_t rank);

// The row-major strides of `shape` laid out in memory `order` (outermost first).
Strides strides_in_order(const Shape& shape, const DimOrder& order);

// An elementwise walk: one shape (row-major, the last dim fastest) and each operand's strides on
// it. fold() merges a dim into the next outer one wherever every operand allows it, so that
// operands contiguous in the walk's order walk as one dim; dims of size 1 go.
struct Walk {
  static constexpr size_t kMaxOperands = 16;  // a fused chain's inputs and outputs
  Dims shape;
  std::array<Dims, kMaxOperands> strides;  // the first `operands`
  size_t operands = 0;

  // The walk of `shape` over operands of these strides, dims visited in `order`.
  static Walk in_order(std::span<const int64_t> shape, std::span<const Dims> strides, const DimOrder& order);
  void fold();
};

}  // namespace kiln::tensor
