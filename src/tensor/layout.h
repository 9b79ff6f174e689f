// Layout arithmetic of the tensor library, on shapes and strides alone: broadcasting, the order
// in which an elementwise op walks memory, and the folding of dims that a walk can take as one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/tensor/tensor.h"

namespace kiln::tensor {

// The shape two operands broadcast to (right-aligned; a dim of 1 stretches).
// Error{tensor.shape_mismatch} naming both shapes and the op when a pair of dims differs and
// neither is 1.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& op);

// `t`'s strides seen at shape `out` (which t's shape broadcasts to): stride 0 on stretched and new
// leading dims.
Strides broadcast_strides(const Shape& shape, const Strides& strides, const Shape& out);

// True when two different positions of the view reach the same element (a stride 0 on a dim
// longer than 1, or dims whose strides interleave).
bool self_overlapping(const Shape& shape, const Strides& strides);

// The dims from the outermost in memory to the innermost: by stride, larger first; a dim of size
// 1 and ties keep their logical order. Row-major order is 0, 1, ..., rank - 1.
std::vector<int> memory_order(const Shape& shape, const Strides& strides);

// The row-major strides of `shape` laid out in memory `order` (outermost first).
Strides strides_in_order(const Shape& shape, const std::vector<int>& order);

// An elementwise walk: one shape (row-major, the last dim fastest) and each operand's strides on
// it. fold() merges a dim into the next outer one wherever every operand allows it, so that
// operands contiguous in the walk's order walk as one dim; dims of size 1 go.
struct Walk {
  Shape shape;
  std::vector<Strides> strides;  // one per operand

  // The walk of `shape` over operands of these strides, dims visited in `order`.
  static Walk in_order(const Shape& shape, const std::vector<Strides>& strides, const std::vector<int>& order);
  void fold();
};

}  // namespace kiln::tensor
