// Random tensors from a seed: element i is a function of (seed, i) alone (a counter-based
// generator, splitmix64), so the same seed gives the same tensor on every device and for any
// launch shape.
#pragma once

#include <cstdint>

#include "kiln/tensor/tensor.h"

namespace kiln {

// Uniform in [lo, hi): 24 random bits for f32, f16 and bf16 (then rounded to the type), 53 for
// f64. Floating-point types only (Error{tensor.unsupported_dtype}).
Tensor uniform(const Client& client, const Shape& shape, DType dtype, double lo, double hi, uint64_t seed);
// Normal with `mean` and `std`, by the Box-Muller transform computed in f64 and rounded once to
// `dtype`. Floating-point types only.
Tensor normal(const Client& client, const Shape& shape, DType dtype, double mean, double std, uint64_t seed);

}  // namespace kiln
