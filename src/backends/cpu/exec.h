// The state of one cube while the interpreter runs it, and the helpers instructions share.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "backends/cpu/plan.h"
#include "backend/backend.h"

namespace kiln::cpu {

struct Exec {
  const Plan* plan = nullptr;
  const backend::ArgBinding* args = nullptr;
  unsigned char* regs = nullptr;    // register file: plan->register_bytes
  unsigned char* shared = nullptr;  // shared memory: plan->shared_bytes
  uint8_t* cur = nullptr;           // active mask, one byte per unit
  uint8_t* terminated = nullptr;    // units that ran `terminate`
  uint8_t* frames = nullptr;        // 3 masks per control depth: saved, m1 (else/broken), m2 (continued)
  uint32_t units = 0;
  bool all_active = true;           // cur has every unit set (a fast path for lane loops)
  ir::Dim3 cube_pos, cube_count, cube_dim;

  template <class T>
  T* slot(uint32_t offset) const {
    return reinterpret_cast<T*>(regs + offset);
  }
  uint8_t* saved(int depth) const { return frames + (size_t(depth) * 3 + 0) * units; }
  uint8_t* m1(int depth) const { return frames + (size_t(depth) * 3 + 1) * units; }
  uint8_t* m2(int depth) const { return frames + (size_t(depth) * 3 + 2) * units; }

  // Recomputes all_active; returns whether any unit is active.
  bool refresh() {
    const uint32_t count = units;
    const uint8_t* c = cur;
    uint32_t n = 0;
    for (uint32_t u = 0; u < count; ++u) n += c[u];
    all_active = n == count;
    return n != 0;
  }
};

// Calls f(u) for every active unit u.
// The loop bounds are copied out of `e` first: stores through the slot pointers could otherwise
// alias them, which stops the compiler from vectorising.
template <class F>
inline void for_active(const Exec& e, F&& f) {
  const uint32_t n = e.units;
  if (e.all_active) {
    for (uint32_t u = 0; u < n; ++u) f(u);
  } else {
    const uint8_t* cur = e.cur;
    for (uint32_t u = 0; u < n; ++u) {
      if (cur[u]) f(u);
    }
  }
}

// "unit 6 of cube (0, 0, 0)"
std::string unit_text(const Exec& e, uint32_t unit);
// "kernel 'add' (unchecked): op #3 'load' in unit 6 of cube (0, 0, 0)"
std::string where(const Exec& e, const Instr& in, uint32_t unit);
// The name of the array an access reaches: "argument 0 'x'", "shared array of op #2".
std::string array_text(const Exec& e, const Instr& in);

[[noreturn]] void fail_bounds(const Exec& e, const Instr& in, uint32_t unit, uint64_t index, uint64_t len);
[[noreturn]] void fail(const Exec& e, const Instr& in, uint32_t unit, const std::string& kind, const std::string& what);

// Reads lane `i` of an integer slot of scalar `s` as an unsigned 64-bit index (negative signed
// values become huge, hence out of range).
uint64_t read_index(const Exec& e, uint32_t slot, ir::Scalar s, uint32_t i);

// Instruction pickers, one family per file.
InstrFn pick_arith(ir::OpKind kind, ir::Scalar s);          // arith.cpp: arithmetic, bitwise, compare
InstrFn pick_select(ir::Scalar s);                          // arith.cpp
InstrFn pick_math(ir::OpKind kind, ir::Scalar s);           // math.cpp
InstrFn pick_cast(ir::Scalar from, ir::Scalar to);          // cast.cpp
InstrFn pick_const(ir::Scalar s);                           // values.cpp
InstrFn pick_vector(ir::OpKind kind);                       // values.cpp
InstrFn pick_splat(uint32_t scalar_bytes, uint32_t width);  // values.cpp
InstrFn pick_builtin(ir::OpKind kind);                      // values.cpp
// memory.cpp: len, shape, load, store; `bytes` and `index` specialise loads and stores
InstrFn pick_memory(ir::OpKind kind, ArraySpace space, uint32_t bytes = 0, ir::Scalar index = ir::Scalar::U32);
InstrFn pick_atomic(ir::OpKind kind, ir::Scalar s, ArraySpace space);  // atomic.cpp
InstrFn pick_plane(ir::OpKind kind, ir::Scalar s);          // plane.cpp
InstrFn pick_control(ir::OpKind kind, ir::Scalar s);        // control.cpp (also for/while pieces below)

// Control pieces that have no single IR op.
uint32_t exec_if_else(Exec& e, const Instr& in, uint32_t pc);
uint32_t exec_if_end(Exec& e, const Instr& in, uint32_t pc);
uint32_t exec_loop_begin(Exec& e, const Instr& in, uint32_t pc);
InstrFn pick_for_test(ir::Scalar s);
InstrFn pick_for_next(ir::Scalar s);
uint32_t exec_while_head(Exec& e, const Instr& in, uint32_t pc);
uint32_t exec_loop_next(Exec& e, const Instr& in, uint32_t pc);
uint32_t exec_loop_end(Exec& e, const Instr& in, uint32_t pc);
uint32_t exec_debug_print(Exec& e, const Instr& in, uint32_t pc);

}  // namespace kiln::cpu
