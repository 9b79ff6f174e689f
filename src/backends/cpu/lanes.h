// Lane loops and the storage/compute types the CPU interpreter uses for each IR scalar.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/cpu/exec.h"
#include "kiln/element.h"
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

// A value of T as the interpreter computes with it: its compute scalar's C++ type (ir/scalars.h:
// f16 and bf16 are stored as their 16 bits and computed in float, rounded back after each op).
template <class T>
struct num {
  using calc = ir::scalar_t<ir::compute_scalar(scalar_of<T>())>;
  static calc get(T v) { return static_cast<calc>(v); }
  static T put(calc v) { return T(v); }
};

// Float min and max give the other operand where one is NaN, a signalling one too (docs/ir.md, as
// CUDA's fminf and fmaxf do): C's fmin and fmax give NaN for a signalling NaN, which an f16 or
// bf16 NaN widened to f32, or an f32 or f64 one loaded from memory, can be (the fuzzer found it).
template <class C>
C float_min(C x, C y) {
  return std::isnan(x) ? y : std::isnan(y) ? x : std::fmin(x, y);
}
template <class C>
C float_max(C x, C y) {
  return std::isnan(x) ? y : std::isnan(y) ? x : std::fmax(x, y);
}

template <class T>
constexpr bool is_short_float_v = ir::is_short_float_type<T>;
template <class T>
constexpr bool is_float_v = ir::is_float_type<T>;

// An executor for `kind` on `s`, or Error{compile.unsupported} when the family has none.
inline InstrFn require(InstrFn fn, ir::OpKind kind, ir::Scalar s) {
  if (!fn) {
    throw Error("compile.unsupported", "the CPU backend has no '" + std::string(ir::op_name(kind)) + "' on " +
                                           std::string(ir::scalar_name(s)));
  }
  return fn;
}

}  // namespace kiln::cpu
