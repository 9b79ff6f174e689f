// Reductions over dims. `dims` empty means every dim; negative dims count from the end. With
// keepdim the reduced dims stay, of size 1; without, they go. Results are new, contiguous tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/tensor/tensor.h"

namespace kiln {

// Sums: floats in their own type (f16 and bf16 summed in f32); bool, u8, i32 and i64 into i64,
// as PyTorch does.
Tensor sum(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor prod(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Floats only (Error{tensor.unsupported_dtype} otherwise); the mean of nothing is NaN.
Tensor mean(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// The largest and smallest values (NaN wins, as in PyTorch); of nothing, Error{tensor.empty_reduction}.
Tensor amax(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& t, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// The position (i64) of the first largest / smallest value along `dim`.
Tensor argmax(const Tensor& t, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& t, int64_t dim, bool keepdim = false);

}  // namespace kiln
