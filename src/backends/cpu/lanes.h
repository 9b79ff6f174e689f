// Lane loops and the storage/compute types the CPU interpreter uses for each IR scalar.
#pragma once

#include <cstdint>
#include <type_traits>

#include "backends/cpu/exec.h"
#include "kiln/half.h"

namespace kiln::cpu {

// Calls f(i) for every element i (unit * width + lane) of the active units.
template <class F>
inline void for_lanes(const Exec& e, uint32_t width, F&& f) {
  const uint32_t units = e.units;
  if (e.all_active) {
    const uint32_t n = units * width;
    for (uint32_t i = 0; i < n; ++i) f(i);
  } else {
    const uint8_t* cur = e.cur;
    for (uint32_t u = 0; u < units; ++u) {
      if (!cur[u]) continue;
      for (uint32_t l = 0; l < width; ++l) f(u * width + l);
    }
  }
}

// f16 and bf16 are stored as their 16 bits and computed in float, rounded back after each op.
template <class T>
struct num {
  using calc = T;
  static calc get(T v) { return v; }
  static T put(calc v) { return v; }
};
template <>
struct num<f16> {
  using calc = float;
  static calc get(f16 v) { return static_cast<float>(v); }
  static f16 put(calc v) { return f16(v); }
};
template <>
struct num<bf16> {
  using calc = float;
  static calc get(bf16 v) { return static_cast<float>(v); }
  static bf16 put(calc v) { return bf16(v); }
};

template <class T>
constexpr bool is_half_v = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;

// Calls fn.template operator()<T>() with T the storage type of scalar s.
template <class Fn>
auto dispatch_scalar(ir::Scalar s, Fn&& fn) {
  switch (s) {
    case ir::Scalar::Bool: return fn.template operator()<bool>();
    case ir::Scalar::I8: return fn.template operator()<int8_t>();
    case ir::Scalar::I16: return fn.template operator()<int16_t>();
    case ir::Scalar::I32: return fn.template operator()<int32_t>();
    case ir::Scalar::I64: return fn.template operator()<int64_t>();
    case ir::Scalar::U8: return fn.template operator()<uint8_t>();
    case ir::Scalar::U16: return fn.template operator()<uint16_t>();
    case ir::Scalar::U32: return fn.template operator()<uint32_t>();
    case ir::Scalar::U64: return fn.template operator()<uint64_t>();
    case ir::Scalar::F16: return fn.template operator()<f16>();
    case ir::Scalar::BF16: return fn.template operator()<bf16>();
    case ir::Scalar::F32: return fn.template operator()<float>();
    case ir::Scalar::F64: return fn.template operator()<double>();
  }
  return fn.template operator()<bool>();
}

}  // namespace kiln::cpu
