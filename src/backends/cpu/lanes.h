// Lane loops and the storage/compute types the CPU interpreter uses for each IR scalar.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/cpu/exec.h"
#include "kiln/error.h"
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

// Calls f(i, j) for every element i (unit * width + lane) of the active units, where j is
// i % kRowLanes: the element of a uniform operand's row that holds i's lane (plan.h). With
// RowReads, a full cube runs in blocks of kRowLanes elements, so that j is the inner loop's
// counter and a row read is a plain vector load.
template <bool RowReads, class F>
inline void for_elements(const Exec& e, uint32_t width, F&& f) {
  const uint32_t units = e.units;
  if (e.all_active) {
    const uint32_t n = units * width;
    if constexpr (!RowReads) {
      for (uint32_t i = 0; i < n; ++i) f(i, i);
    } else {
      uint32_t i = 0;
      for (; i + kRowLanes <= n; i += kRowLanes) {
        for (uint32_t j = 0; j < kRowLanes; ++j) f(i + j, j);
      }
      for (uint32_t j = 0; i + j < n; ++j) f(i + j, j);
    }
  } else {
    const uint8_t* cur = e.cur;
    for (uint32_t u = 0; u < units; ++u) {
      if (!cur[u]) continue;
      for (uint32_t l = 0; l < width; ++l) {
        const uint32_t i = u * width + l;
        f(i, i % kRowLanes);
      }
    }
  }
}

// An operand of an elementwise executor inside for_elements: `a(i, j)` is its element i. A varying
// operand is read in place; a uniform one from a copy of its row on the stack, which tells the
// compiler that stores to the result cannot change it, so that the loop vectorises (read in place,
// the row is reloaded after every store: three times slower).
template <class T, bool Uniform>
struct Operand;
template <class T>
struct Operand<T, false> {
  const T* p;
  Operand(const Exec& e, Ref r) : p(e.slot<T>(r.slot)) {}
  const T& operator()(uint32_t i, uint32_t) const { return p[i]; }
};
template <class T>
struct Operand<T, true> {
  T row[kRowLanes];
  Operand(const Exec& e, Ref r) { std::memcpy(static_cast<void*>(row), e.slot<T>(r.slot), sizeof row); }
  const T& operator()(uint32_t, uint32_t j) const { return row[j]; }
};

// Picks F<Uniform...> by which operands a varying result reads from rows.
template <template <bool, bool> class F>
InstrFn by_rows(bool a, bool b) {
  return a ? (b ? &F<true, true>::run : &F<true, false>::run) : (b ? &F<false, true>::run : &F<false, false>::run);
}
template <template <bool, bool, bool> class F>
InstrFn by_rows(bool a, bool b, bool c) {
  return a ? (b ? (c ? &F<true, true, true>::run : &F<true, true, false>::run)
                : (c ? &F<true, false, true>::run : &F<true, false, false>::run))
           : (b ? (c ? &F<false, true, true>::run : &F<false, true, false>::run)
                : (c ? &F<false, false, true>::run : &F<false, false, false>::run));
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

// An executor for `kind` on `s`, or Error{compile.unsupported} when the family has none.
inline InstrFn require(InstrFn fn, ir::OpKind kind, ir::Scalar s) {
  if (!fn) {
    throw Error("compile.unsupported", "the CPU backend has no '" + std::string(ir::op_name(kind)) + "' on " +
                                           std::string(ir::scalar_name(s)));
  }
  return fn;
}

}  // namespace kiln::cpu
