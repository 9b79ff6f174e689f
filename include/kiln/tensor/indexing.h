// Ops that take positions from an index tensor (i32 or i64). Every index is checked on the device
// before anything is read or written through it: a bad one is reported as
// Error{tensor.index_out_of_range} naming the op, the dim, the index and the size, at the next
// read or sync of the client (at once on the CPU); the op's kernel then writes nothing, so a
// destination is left as it was. As burn's ops (seed 03's backend), scatter and select_assign add
// their values; a position named twice receives both, in a fixed order (no atomics: the same
// result on every run and device).
#pragma once

#include <cstdint>

#include "kiln/tensor/tensor.h"

namespace kiln {

// out[i][j] = t[indices[i][j]][j] along dim 0 (likewise for any dim); out has indices' shape,
// whose other dims must not exceed t's.
Tensor gather(const Tensor& t, int64_t dim, const Tensor& indices);
// A copy of t with values[i][j] added at [indices[i][j]][j] along dim 0 (likewise for any dim);
// indices and values have one shape, whose other dims must not exceed t's.
Tensor scatter(const Tensor& t, int64_t dim, const Tensor& indices, const Tensor& values);
// The slices of t at positions `indices` (1-D) along dim: PyTorch's index_select, burn's select.
Tensor select(const Tensor& t, int64_t dim, const Tensor& indices);
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& indices);
// A copy of t with values' slices added at positions `indices` (1-D) along dim; values has t's
// shape with that dim as long as indices.
Tensor select_assign(const Tensor& t, int64_t dim, const Tensor& indices, const Tensor& values);

}  // namespace kiln
