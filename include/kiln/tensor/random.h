// Random tensors from a seed: element i is a function of (seed, i) alone (a counter-based
// generator, splitmix64), so the same seed gives the same tensor on every device and for any
// launch shape.
#pragma once

#include <cstdint>

#include "kiln/tensor/tensor.h"

namespace kiln {

// Uniform in [lo, hi): as many random bits as the type's significand holds (53 for f64, 24 for
// f32, 11 for f16, 8 for bf16), scaled in f64 and rounded to the type; a draw that rounds to hi is
// the type's last value below it. Floating-point types only (Error{tensor.unsupported_dtype});
// lo < hi (Error{tensor.bad_range}).
Tensor uniform(const Client& client, const Shape& shape, DType dtype, double lo, double hi, uint64_t seed);
// Normal with `mean` and `std`, by the Box-Muller transform computed in f64 and rounded once to
// `dtype`. Floating-point types only.
Tensor normal(const Client& client, const Shape& shape, DType dtype, double mean, double std, uint64_t seed);

}  // namespace kiln
