// Small pieces every tensor op uses: the element types the library takes, new memory, kernel
// arguments from shapes and strides, and the launch shape of a walk.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kiln/runtime/launch.h"
#include "kiln/tensor/tensor.h"

namespace kiln::tensor {

// Error{tensor.unsupported_dtype} unless the library takes `d` (f16, bf16, f32, f64, i32, i64,
// u8, bool).
void check_supported(std::string_view op, DType d);

// A tensor of new memory with these strides (which must cover exactly numel elements).
Tensor allocate(const Client& client, const Shape& shape, const Strides& strides, DType dtype);

// A kernel's tensor argument. Error{tensor.too_large} when a dim or stride does not fit the
// kernels' 32-bit indices, or the rank passes 8.
TensorBinding binding(const Handle& h, std::span<const int64_t> shape, std::span<const int64_t> strides,
                      const char* op);

uint32_t checked_u32(int64_t v, const char* op, const char* what);

// One unit per element, 256 to a cube.
LaunchConfig linear_config(int64_t count);

}  // namespace kiln::tensor
