// Ops over one dim that take each row whole: each is one kernel, a cube per row, its units
// striding over the row and combining through plane ops and shared memory.
#pragma once

#include <cstdint>

#include "kiln/tensor/tensor.h"

namespace kiln {

// exp(x - max) / sum(exp(x - max)) along `dim` (floats).
Tensor softmax(const Tensor& x, int64_t dim);
// (x - max) - log(sum(exp(x - max))) along `dim` (floats).
Tensor log_softmax(const Tensor& x, int64_t dim);
// (x - mean) / sqrt(var + eps) * weight + bias over the last dim (the biased variance, as
// PyTorch's layer_norm); weight and bias of the last dim's length, each optional (an empty Tensor).
Tensor layer_norm(const Tensor& x, const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), double eps = 1e-5);

}  // namespace kiln
