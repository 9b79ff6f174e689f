// launch<K>(client, count, dim, vector_size, args...): runs kernel K. On the calling thread it
// only checks and binds the arguments, builds the KernelId and submits; the device's cache
// traces and compiles K once per id. launch() runs in checked mode (an index at or past len()
// reads zero and writes nothing); launch_unchecked() does not guard accesses.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "kiln/dsl/kernel.h"
#include "kiln/error.h"
#include "kiln/backend/binding.h"
#include "kiln/runtime/client.h"

namespace kiln {

struct CubeCount {
  uint32_t x = 1, y = 1, z = 1;
  CubeCount(uint32_t x_ = 1, uint32_t y_ = 1, uint32_t z_ = 1) : x(x_), y(y_), z(z_) {}  // NOLINT
};
struct CubeDim {
  uint32_t x = 1, y = 1, z = 1;
  CubeDim(uint32_t x_ = 1, uint32_t y_ = 1, uint32_t z_ = 1) : x(x_), y(y_), z(z_) {}  // NOLINT
};

// The argument for a TensorArg<T> parameter: memory plus shape and strides (in elements).
struct TensorBinding {
  Handle handle;
  uint8_t rank = 0;
  std::array<uint32_t, 8> shape{};
  std::array<uint32_t, 8> stride{};
};
inline TensorBinding tensor_arg(Handle h, std::initializer_list<uint32_t> shape, std::initializer_list<uint32_t> stride) {
  if (shape.size() != stride.size() || shape.size() > 8) {
    throw Error("launch.bad_argument", "a tensor argument needs as many strides as dims, at most 8");
  }
  TensorBinding t;
  t.handle = std::move(h);
  t.rank = static_cast<uint8_t>(shape.size());
  std::copy(shape.begin(), shape.end(), t.shape.begin());
  std::copy(stride.begin(), stride.end(), t.stride.begin());
  return t;
}

namespace runtime {

// The non-template rest of a launch: handles' owners and aliasing, dims, the cache, the backend.
void submit(const Client& client, KernelId& id, ir::Kernel (*define)(const KernelId&), CubeCount count,
            CubeDim dim, std::span<backend::ArgBinding> args, std::span<const Handle* const> handles);
// "x: Slice<const f32>" for messages.
std::string describe_param(std::string_view name, int kind, bool read_only, bool vector, ir::Scalar s);
}  // namespace runtime

}  // namespace kiln

#include "kiln/runtime/launch_impl.h"

namespace kiln {

template <KernelFunction K, class... Args>
void launch(const Client& client, CubeCount count, CubeDim dim, int vector_size, const Args&... args) {
  detail::launch_kernel<K>(client, count, dim, vector_size, ir::ExecMode::Checked, args...);
}

template <KernelFunction K, class... Args>
void launch_unchecked(const Client& client, CubeCount count, CubeDim dim, int vector_size, const Args&... args) {
  detail::launch_kernel<K>(client, count, dim, vector_size, ir::ExecMode::Unchecked, args...);
}

}  // namespace kiln
