// Constants, vector shuffling, bitcasts and builtins: instructions that move bytes or compute
// positions, independent of arithmetic.
#include <cstring>

#include "backends/cpu/lanes.h"
#include "kiln/error.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

// Constants fill every unit's lanes (their value does not depend on the mask).
template <class T>
uint32_t const_instr(Exec& e, const Instr& in, uint32_t pc) {
  T v;
  if constexpr (std::is_same_v<T, bool>) v = in.imm != 0;
  else if constexpr (is_float_v<T>) v = num<T>::put(static_cast<typename num<T>::calc>(in.fimm));
  else v = static_cast<T>(in.imm);
  T* d = e.slot<T>(in.dst);
  const uint32_t n = e.units * in.width;
  for (uint32_t i = 0; i < n; ++i) d[i] = v;
  return pc + 1;
}

// vector.splat: in.bytes is the scalar's size, in.width the result's lanes.
template <class T, uint32_t W>
uint32_t splat_instr(Exec& e, const Instr& in, uint32_t pc) {
  const T* a = e.slot<T>(in.a);
  unsigned char* d = e.slot<unsigned char>(in.dst);
  // One row of W copies, then a fixed-size copy per unit. (The direct nested loop made GCC 13.3
  // fail with an internal compiler error in expand_expr_real_2.)
  for_active(e, [&](uint32_t u) {
    T row[W];
    for (uint32_t l = 0; l < W; ++l) row[l] = a[u];
    std::memcpy(d + size_t(u) * sizeof row, row, sizeof row);
  });
  return pc + 1;
}

template <class T>
InstrFn pick_splat_width(uint32_t width) {
  switch (width) {
    case 2: return &splat_instr<T, 2>;
    case 4: return &splat_instr<T, 4>;
    case 8: return &splat_instr<T, 8>;
    default: return &splat_instr<T, 16>;
  }
}

// vector.extract: in.imm is the lane, in.width the source's lanes.
uint32_t extract_instr(Exec& e, const Instr& in, uint32_t pc) {
  const unsigned char* a = e.slot<unsigned char>(in.a);
  unsigned char* d = e.slot<unsigned char>(in.dst);
  uint32_t b = in.bytes, w = in.width;
  for_active(e, [&](uint32_t u) { std::memcpy(d + size_t(u) * b, a + (size_t(u) * w + uint32_t(in.imm)) * b, b); });
  return pc + 1;
}

// vector.insert: copy the vector, replace one lane.
uint32_t insert_instr(Exec& e, const Instr& in, uint32_t pc) {
  const unsigned char* v = e.slot<unsigned char>(in.a);
  const unsigned char* s = e.slot<unsigned char>(in.b);
  unsigned char* d = e.slot<unsigned char>(in.dst);
  uint32_t b = in.bytes, w = in.width;
  for_active(e, [&](uint32_t u) {
    std::memmove(d + size_t(u) * w * b, v + size_t(u) * w * b, size_t(w) * b);
    std::memcpy(d + (size_t(u) * w + uint32_t(in.imm)) * b, s + size_t(u) * b, b);
  });
  return pc + 1;
}

// vector.construct: the operand slots are the plan's operand list in.imm.
uint32_t construct_instr(Exec& e, const Instr& in, uint32_t pc) {
  const std::vector<uint32_t>& lanes = e.plan->operand_lists[size_t(in.imm)];
  unsigned char* d = e.slot<unsigned char>(in.dst);
  uint32_t b = in.bytes, w = in.width;
  for_active(e, [&](uint32_t u) {
    for (uint32_t l = 0; l < w; ++l) std::memcpy(d + (size_t(u) * w + l) * b, e.slot<unsigned char>(lanes[l]) + size_t(u) * b, b);
  });
  return pc + 1;
}

// bitcast and var.load/var.store-like copies: in.bytes per unit.
uint32_t copy_instr(Exec& e, const Instr& in, uint32_t pc) {
  const unsigned char* a = e.slot<unsigned char>(in.a);
  unsigned char* d = e.slot<unsigned char>(in.dst);
  uint32_t b = in.bytes;
  if (e.all_active) {
    std::memmove(d, a, size_t(b) * e.units);
  } else {
    for_active(e, [&](uint32_t u) { std::memmove(d + size_t(u) * b, a + size_t(u) * b, b); });
  }
  return pc + 1;
}

uint32_t axis_of(const ir::Dim3& d, int axis) { return axis == 0 ? d.x : axis == 1 ? d.y : d.z; }

// in.flag: an axis is given in in.imm; otherwise the builtin is linear.
template <OpKind K>
uint32_t builtin_instr(Exec& e, const Instr& in, uint32_t pc) {
  uint32_t* d = e.slot<uint32_t>(in.dst);
  const ir::Dim3& dim = e.cube_dim;
  const ir::Dim3& pos = e.cube_pos;
  const ir::Dim3& count = e.cube_count;
  int axis = in.flag ? int(in.imm) : -1;
  uint32_t cube_linear = pos.x + pos.y * count.x + pos.z * count.x * count.y;
  uint32_t units = e.units;
  if (axis < 0 && (K == OpKind::AbsolutePos || K == OpKind::UnitPos)) {
    // The common case, written so that it vectorises.
    uint32_t base = K == OpKind::AbsolutePos ? cube_linear * units : 0;
    for (uint32_t u = 0; u < units; ++u) d[u] = base + u;
    return pc + 1;
  }
  for (uint32_t u = 0; u < units; ++u) {
    uint32_t ux = u % dim.x, uy = (u / dim.x) % dim.y, uz = u / (dim.x * dim.y);
    uint32_t unit_axis = axis == 0 ? ux : axis == 1 ? uy : uz;
    uint32_t v = 0;
    switch (K) {
      case OpKind::UnitPos: v = axis < 0 ? u : unit_axis; break;
      case OpKind::CubePos: v = axis < 0 ? cube_linear : axis_of(pos, axis); break;
      case OpKind::CubeDim: v = axis < 0 ? units : axis_of(dim, axis); break;
      case OpKind::CubeCount: v = axis < 0 ? count.x * count.y * count.z : axis_of(count, axis); break;
      case OpKind::AbsolutePos:
        v = axis < 0 ? cube_linear * units + u : axis_of(pos, axis) * axis_of(dim, axis) + unit_axis;
        break;
      case OpKind::PlaneDim: v = 32; break;
      case OpKind::UnitPosPlane: v = u % 32; break;
      default: break;
    }
    d[u] = v;
  }
  return pc + 1;
}

}  // namespace

InstrFn pick_const(ir::Scalar s) {
  return dispatch_scalar(s, []<class T>() -> InstrFn { return &const_instr<T>; });
}

InstrFn pick_vector(OpKind kind) {
  switch (kind) {
    case OpKind::VectorSplat: return nullptr;  // by element size: pick_splat
    case OpKind::VectorExtract: return &extract_instr;
    case OpKind::VectorInsert: return &insert_instr;
    case OpKind::VectorConstruct: return &construct_instr;
    case OpKind::Bitcast:
    case OpKind::VarLoad: return &copy_instr;
    default: return nullptr;
  }
}

InstrFn pick_splat(uint32_t bytes, uint32_t width) {
  switch (bytes) {
    case 1: return pick_splat_width<uint8_t>(width);
    case 2: return pick_splat_width<uint16_t>(width);
    case 4: return pick_splat_width<uint32_t>(width);
    default: return pick_splat_width<uint64_t>(width);
  }
}

InstrFn pick_builtin(OpKind kind) {
  switch (kind) {
    case OpKind::AbsolutePos: return &builtin_instr<OpKind::AbsolutePos>;
    case OpKind::UnitPos: return &builtin_instr<OpKind::UnitPos>;
    case OpKind::CubePos: return &builtin_instr<OpKind::CubePos>;
    case OpKind::CubeDim: return &builtin_instr<OpKind::CubeDim>;
    case OpKind::CubeCount: return &builtin_instr<OpKind::CubeCount>;
    case OpKind::PlaneDim: return &builtin_instr<OpKind::PlaneDim>;
    case OpKind::UnitPosPlane: return &builtin_instr<OpKind::UnitPosPlane>;
    default: return nullptr;
  }
}

}  // namespace kiln::cpu
