// KernelId: everything that makes two launches of a kernel compile differently. Equal ids share
// one compiled kernel; data and Scalar<T> arguments are not in it, so they never recompile.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <typeinfo>

#include "kiln/ir/kernel.h"

namespace kiln {

inline constexpr int kMaxParams = 16;
inline constexpr int kMaxComptime = 8;

// A comptime argument's value: its scalar type and bits (enums as their underlying integer).
struct ComptimeBits {
  ir::Scalar type = ir::Scalar::Bool;
  bool is_enum = false;
  uint64_t bits = 0;
  friend bool operator==(const ComptimeBits&, const ComptimeBits&) = default;
  std::string to_string() const;
};

// Fixed-size on purpose: building and hashing an id on the launch path allocates nothing.
struct KernelId {
  const std::type_info* type = nullptr;  // the kernel's C++ type (template arguments included)
  std::string_view name;                 // K::name
  ir::Dim3 cube_dim;
  ir::ExecMode mode = ir::ExecMode::Checked;
  ir::AddressType address = ir::AddressType::U32;
  ir::FastMath fast_math;                // K::fast_math: kernels that differ in it compile apart
  uint8_t vector_width = 1;
  uint8_t param_count = 0;
  uint8_t comptime_count = 0;
  std::array<ir::Scalar, kMaxParams> element{};  // each parameter's element scalar
  std::array<uint8_t, kMaxParams> rank{};        // tensor parameters' rank
  std::array<uint8_t, kMaxParams> alias{};       // buffers: 1 + the lowest other parameter sharing its memory, or 0
  std::array<ComptimeBits, kMaxComptime> comptime{};
  uint64_t hash = 0;  // set by finalize()

  void finalize();
  bool operator==(const KernelId& o) const;
  // "add{mode=checked, cube_dim=[6,1,1], vector=1, address=u32, comptime0=true, hash=...}" for logs.
  std::string to_string() const;
};

struct KernelIdHash {
  size_t operator()(const KernelId& id) const { return static_cast<size_t>(id.hash); }
};

// The comptime bits of a C++ value.
template <class T>
ComptimeBits comptime_bits(T v) {
  ComptimeBits b;
  if constexpr (std::is_enum_v<T>) {
    b.is_enum = true;
    b.type = ir::Scalar::I64;
    b.bits = static_cast<uint64_t>(static_cast<int64_t>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    b.type = ir::Scalar::Bool;
    b.bits = v ? 1 : 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    b.type = ir::Scalar::F64;
    double d = static_cast<double>(v);
    std::memcpy(&b.bits, &d, sizeof d);
  } else if constexpr (std::is_signed_v<T>) {
    b.type = ir::Scalar::I64;
    b.bits = static_cast<uint64_t>(static_cast<int64_t>(v));
  } else {
    b.type = ir::Scalar::U64;
    b.bits = static_cast<uint64_t>(v);
  }
  return b;
}

template <class T>
T comptime_value(const ComptimeBits& b) {
  if constexpr (std::is_enum_v<T>) {
    return static_cast<T>(static_cast<int64_t>(b.bits));
  } else if constexpr (std::is_same_v<T, bool>) {
    return b.bits != 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    double d;
    std::memcpy(&d, &b.bits, sizeof d);
    return static_cast<T>(d);
  } else {
    return static_cast<T>(b.bits);
  }
}

}  // namespace kiln
