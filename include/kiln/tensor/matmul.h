// Batched, strided matrix products.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/tensor/tensor.h"

namespace kiln {

// lhs [..., m, k] x rhs [..., k, n] -> [..., m, n], the batch dims broadcast. Operands are read
// through their strides: a transposed view costs no copy. Error{tensor.shape_mismatch} when the
// inner sizes differ or the batch dims do not broadcast; Error{tensor.dtype_mismatch} when the
// element types differ.
//
// The kernel is autotune's choice (kiln/autotune.h) among the variants that can compute the call:
// the tile layer's block products (tensor cores for f16 and bf16 on sm_80+; a block of 16 or
// more in every size, operands whose matrices are dense rows or dense columns, 16-byte aligned)
// and "naive", one unit per output element, which takes everything.
Tensor matmul(const Tensor& lhs, const Tensor& rhs);
// The variants that can compute matmul(lhs, rhs), autotune's candidates for it: "tile 128x128 k32
// s3" (block rows x columns, k step, prefetch stages), ..., "naive" last.
std::vector<std::string> matmul_variants(const Tensor& lhs, const Tensor& rhs);
// matmul by the named variant, untimed. Error{tensor.bad_variant} when the call has none of that
// name (the message lists those it has).
Tensor matmul(const Tensor& lhs, const Tensor& rhs, std::string_view variant);

}  // namespace kiln
