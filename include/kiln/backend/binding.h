// A bound kernel argument as backends receive it (part of the backend interface). Fixed-size so
// that binding allocates nothing.
#pragma once

#include <array>
#include <cstdint>

#include "kiln/ir/kernel.h"

namespace kiln::backend {

// Indexed by kernel parameter: comptime arguments are no kernel parameters, and a launch binds
// each argument at its parameter's index from the start (runtime/launch_binding.h).
struct ArgBinding {
  enum class Kind : uint8_t { Buffer, Tensor, Scalar };
  Kind kind = Kind::Scalar;
  uint64_t address = 0;  // device address of the first visible element (buffers, tensors)
  uint64_t bytes = 0;    // visible bytes
  uint32_t len = 0;      // visible elements (vectors for vector buffers)
  uint8_t rank = 0;
  std::array<uint32_t, 8> shape{};
  std::array<uint32_t, 8> stride{};
  alignas(8) std::array<unsigned char, 8> scalar{};  // the value's bytes, little-endian
};

struct LaunchDims {
  ir::Dim3 count;
  ir::Dim3 dim;
};

}  // namespace kiln::backend
