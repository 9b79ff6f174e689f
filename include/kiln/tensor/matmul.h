// Batched, strided matrix products.
#pragma once

#include "kiln/tensor/tensor.h"

namespace kiln {

// lhs [..., m, k] x rhs [..., k, n] -> [..., m, n], the batch dims broadcast. Operands are read
// through their strides: a transposed view costs no copy. Error{tensor.shape_mismatch} when the
// inner sizes differ or the batch dims do not broadcast; Error{tensor.dtype_mismatch} when the
// element types differ.
Tensor matmul(const Tensor& lhs, const Tensor& rhs);

}  // namespace kiln
