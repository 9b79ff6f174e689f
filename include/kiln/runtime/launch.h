// Launching a kernel. One run-time entry, launch(client, kernel, config, args), takes a kernel
// reference (a C++ kernel type, kernel_ref<K>(); or a program recorded at run time,
// kernel_ref(ir::Kernel)) and its arguments as a list; on the calling thread it only checks and
// binds the arguments, builds the KernelId and submits, and the device's cache traces and compiles
// the kernel once per id. launch<K>(client, count, dim, vector_size, args...) is its typed front:
// it refuses at compile time what can never bind (decision 006), then calls the entry.
// launch() runs in checked mode (an index at or past len() reads zero and writes nothing);
// launch_unchecked() does not guard accesses.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <span>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "kiln/dsl/kernel.h"
#include "kiln/error.h"
#include "kiln/kernel_ref.h"
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
inline TensorBinding tensor_arg(Handle h, std::initializer_list<uint32_t> shape,
                                std::initializer_list<uint32_t> stride) {
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

// A number whose type is known at run time: an element type and the value's bytes. A launch
// converts it to its parameter's type when the value survives (300 does not fit a u8, 2.5 no
// integer), as launch<K> does with a C++ number.
struct ScalarValue {
  ir::Scalar type = ir::Scalar::I32;
  alignas(8) std::array<unsigned char, 8> bits{};

  template <Element T>
  static ScalarValue of(T v) {
    ScalarValue s;
    s.type = scalar_of<T>();
    std::memcpy(s.bits.data(), &v, sizeof v);
    return s;
  }
};

namespace detail {

template <class A>
inline constexpr bool kNumber = std::is_arithmetic_v<A> || ir::is_short_float_type<A>;

// A C++ number as a tagged value: a kiln element as itself; another integer type (long long, char)
// as the element of its width and signedness, which holds every value; long double as f64 (one
// rounding); an enum as i64, its comptime bits.
template <class A>
ScalarValue tagged(A v) {
  if constexpr (Element<A>) {
    return ScalarValue::of(v);
  } else if constexpr (std::is_enum_v<A>) {
    return ScalarValue::of(static_cast<int64_t>(v));
  } else if constexpr (std::is_floating_point_v<A>) {
    return ScalarValue::of(static_cast<double>(v));
  } else if constexpr (std::is_signed_v<A>) {
    using E4 = std::conditional_t<sizeof(A) == 4, int32_t, int64_t>;
    using E = std::conditional_t<sizeof(A) == 1, int8_t, std::conditional_t<sizeof(A) == 2, int16_t, E4>>;
    return ScalarValue::of(static_cast<E>(v));
  } else {
    using E4 = std::conditional_t<sizeof(A) == 4, uint32_t, uint64_t>;
    using E = std::conditional_t<sizeof(A) == 1, uint8_t, std::conditional_t<sizeof(A) == 2, uint16_t, E4>>;
    return ScalarValue::of(static_cast<E>(v));
  }
}

}  // namespace detail

// One launch argument: a Handle (a Slice parameter), a TensorBinding (a TensorArg), a number or a
// ScalarValue (a Scalar), comptime(v) or Arg::comptime_value (a Comptime). An Arg refers to the
// handle or tensor binding it was made from, which must live until the launch returns: a list
// written in the launch call is fine.
class Arg {
 public:
  enum class Kind : uint8_t { Buffer, Tensor, Scalar, Comptime };

  Arg(const Handle& h) noexcept : kind_(Kind::Buffer), handle_(&h) {}         // NOLINT
  Arg(const TensorBinding& t) noexcept : kind_(Kind::Tensor), tensor_(&t) {}  // NOLINT
  Arg(ScalarValue v) noexcept : kind_(Kind::Scalar), value_(v) {}             // NOLINT
  template <class T>
  requires detail::kNumber<T> Arg(T v)
  noexcept : Arg(detail::tagged(v)) {}  // NOLINT
  template <ComptimeValue T>
  Arg(Comptime<T> c) noexcept  // NOLINT
      : kind_(Kind::Comptime), value_(detail::tagged(c.get())) {
    if constexpr (std::is_enum_v<T>) enum_type_ = &typeid(T);
  }
  // A comptime value whose type is chosen at run time.
  static Arg comptime_value(ScalarValue v) noexcept {
    Arg a(v);
    a.kind_ = Kind::Comptime;
    return a;
  }

  Kind kind() const { return kind_; }
  const Handle* handle() const { return handle_; }
  const TensorBinding* tensor() const { return tensor_; }
  const ScalarValue& value() const { return value_; }
  const std::type_info* enum_type() const { return enum_type_; }

 private:
  Kind kind_;
  const Handle* handle_ = nullptr;
  const TensorBinding* tensor_ = nullptr;
  ScalarValue value_{};
  const std::type_info* enum_type_ = nullptr;
};

struct LaunchConfig {
  CubeCount count;
  CubeDim dim;
  int vector_size = 1;
  ir::ExecMode mode = ir::ExecMode::Checked;
};

// The run-time launch entry. Checks each argument against its parameter (Error{launch.arity},
// {launch.kind_mismatch}, {launch.type_mismatch}, {launch.bad_argument}, {handle.invalid},
// {launch.foreign_handle}, {launch.bad_dims}; decision 006), then submits. A launch that fails
// before it runs leaves every buffer as it was.
void launch(const Client& client, const KernelRef& kernel, const LaunchConfig& config, std::span<const Arg> args);
inline void launch(const Client& client, const KernelRef& kernel, const LaunchConfig& config,
                   std::initializer_list<Arg> args) {
  launch(client, kernel, config, std::span<const Arg>(args.begin(), args.size()));
}

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
