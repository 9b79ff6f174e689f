// Constants, vector shuffling, builtins and vars: planning and executors of the ops that move bytes
// or compute positions, independent of arithmetic.
#include <cstring>

#include "backends/cpu/lanes.h"
#include "backends/cpu/planner.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

// vector.splat: T is the lane's storage, W the result's lanes. The operand is varying, or the op
// runs for one unit (a splat of a uniform scalar is uniform).
template <class T, uint32_t W>
uint32_t splat_instr(Exec& e, const Instr& in, uint32_t pc) {
  const T* a = e.slot<T>(in.as<Lanes>().scalar.slot);
  unsigned char* d = e.slot<unsigned char>(in.dst.slot);
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
InstrFn splat_for_width(uint32_t width) {
  switch (width) {
    case 2: return &splat_instr<T, 2>;
    case 4: return &splat_instr<T, 4>;
    case 8: return &splat_instr<T, 8>;
    default: return &splat_instr<T, 16>;
  }
}

uint32_t extract_instr(Exec& e, const Instr& in, uint32_t pc) {
  const Lanes& x = in.as<Lanes>();
  const unsigned char* a = e.slot<unsigned char>(x.vector.slot);
  unsigned char* d = e.slot<unsigned char>(in.dst.slot);
  const uint32_t b = x.lane_bytes, w = x.width;
  for_active(e, [&](uint32_t u) { std::memcpy(d + size_t(u) * b, a + (size_t(u) * w + x.lane) * b, b); });
  return pc + 1;
}

// vector.insert: copy the vector, replace one lane; either operand may be uniform.
uint32_t insert_instr(Exec& e, const Instr& in, uint32_t pc) {
  const Lanes& x = in.as<Lanes>();
  unsigned char* d = e.slot<unsigned char>(in.dst.slot);
  const uint32_t b = x.lane_bytes, w = x.width;
  for_active(e, [&](uint32_t u) {
    std::memmove(d + size_t(u) * w * b, unit_bytes(e, x.vector, u, w * b), size_t(w) * b);
    std::memcpy(d + (size_t(u) * w + x.lane) * b, unit_bytes(e, x.scalar, u, b), b);
  });
  return pc + 1;
}

// vector.construct: the lanes are the plan's operand list; each may be uniform.
uint32_t construct_instr(Exec& e, const Instr& in, uint32_t pc) {
  const Construct& x = in.as<Construct>();
  const std::vector<Ref>& lanes = e.plan->operand_lists[x.list];
  unsigned char* d = e.slot<unsigned char>(in.dst.slot);
  const uint32_t b = x.lane_bytes, w = x.width;
  for_active(e, [&](uint32_t u) {
    for (uint32_t l = 0; l < w; ++l) std::memcpy(d + (size_t(u) * w + l) * b, unit_bytes(e, lanes[l], u, b), b);
  });
  return pc + 1;
}

uint32_t var_load_instr(Exec& e, const Instr& in, uint32_t pc) {
  const VarCopy& x = in.as<VarCopy>();
  const unsigned char* v = e.slot<unsigned char>(x.var);
  unsigned char* d = e.slot<unsigned char>(in.dst.slot);
  const uint32_t b = x.bytes;
  if (e.all_active) {
    std::memcpy(d, v, size_t(b) * e.units);
  } else {
    for_active(e, [&](uint32_t u) { std::memcpy(d + size_t(u) * b, v + size_t(u) * b, b); });
  }
  return pc + 1;
}

uint32_t axis_of(const ir::Dim3& d, int axis) { return axis == 0 ? d.x : axis == 1 ? d.y : d.z; }

template <OpKind K>
uint32_t builtin_instr(Exec& e, const Instr& in, uint32_t pc) {
  uint32_t* d = e.slot<uint32_t>(in.dst.slot);
  const ir::Dim3& dim = e.cube_dim;
  const ir::Dim3& pos = e.cube_pos;
  const ir::Dim3& count = e.cube_count;
  const int axis = in.as<Builtin>().axis;
  uint32_t cube_linear = pos.x + pos.y * count.x + pos.z * count.x * count.y;
  uint32_t units = e.units;
  if (axis < 0 && (K == OpKind::AbsolutePos || K == OpKind::UnitPos)) {
    // The common case, written so that it vectorises.
    uint32_t base = K == OpKind::AbsolutePos ? cube_linear * uint32_t(dim.total()) : 0;
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
      case OpKind::CubeDim: v = axis < 0 ? uint32_t(dim.total()) : axis_of(dim, axis); break;
      case OpKind::CubeCount: v = axis < 0 ? count.x * count.y * count.z : axis_of(count, axis); break;
      case OpKind::AbsolutePos:
        v = axis < 0 ? cube_linear * uint32_t(dim.total()) + u : axis_of(pos, axis) * axis_of(dim, axis) + unit_axis;
        break;
      case OpKind::PlaneDim: v = ir::Target::kPlaneWidth; break;
      case OpKind::UnitPosPlane: v = u % ir::Target::kPlaneWidth; break;
      default: break;
    }
    d[u] = v;
  }
  return pc + 1;
}

void constant(Planner& p, const ir::Op& op) {
  const ir::AttrValue* v = op.attr(ir::AttrKey::Value);
  const double f = v->tag == ir::AttrValue::Tag::Float ? v->f : double(v->i);
  ir::visit_scalar(op.type.scalar, [&]<class T>() {
    T x;
    if constexpr (std::is_same_v<T, bool>) x = v->i != 0;
    else if constexpr (is_float_v<T>) x = num<T>::put(static_cast<typename num<T>::calc>(f));
    else x = static_cast<T>(v->i);
    p.constant(op, &x);
  });
}

}  // namespace

// var.store, and a value carried by control flow (control.cpp): the slot is per unit; a uniform
// value is copied into each active unit's.
uint32_t var_store_instr(Exec& e, const Instr& in, uint32_t pc) {
  const VarCopy& x = in.as<VarCopy>();
  unsigned char* v = e.slot<unsigned char>(x.var);
  const uint32_t b = x.bytes;
  if (e.all_active && !x.value.uniform) {
    std::memcpy(v, e.slot<unsigned char>(x.value.slot), size_t(b) * e.units);
  } else {
    for_active(e, [&](uint32_t u) { std::memcpy(v + size_t(u) * b, unit_bytes(e, x.value, u, b), b); });
  }
  return pc + 1;
}

bool plan_values(Planner& p, const ir::Op& op) {
  const uint32_t lane_bytes = uint32_t(ir::scalar_bytes(op.type.scalar));
  switch (op.kind) {
    case OpKind::Const: constant(p, op); return true;
    case OpKind::VectorSplat: {
      InstrFn fn = lane_bytes == 1   ? splat_for_width<uint8_t>(op.type.width)
                   : lane_bytes == 2 ? splat_for_width<uint16_t>(op.type.width)
                   : lane_bytes == 4 ? splat_for_width<uint32_t>(op.type.width)
                                     : splat_for_width<uint64_t>(op.type.width);
      p.emit(op, fn, Lanes{{}, p.operand(op, ir::ops::Unary::x), 0, op.type.width, lane_bytes});
      return true;
    }
    case OpKind::VectorExtract:
      p.emit(op, &extract_instr,
             Lanes{p.operand(op, ir::ops::Unary::x),
                   {},
                   uint32_t(op.get<ir::AttrKey::Lane>()),
                   p.operand_type(op, ir::ops::Unary::x).width,
                   lane_bytes});
      return true;
    case OpKind::VectorInsert:
      p.emit(op, &insert_instr,
             Lanes{p.operand(op, ir::ops::VectorInsert::vector), p.operand(op, ir::ops::VectorInsert::value),
                   uint32_t(op.get<ir::AttrKey::Lane>()), op.type.width, lane_bytes});
      return true;
    case OpKind::VectorConstruct: {
      std::vector<Ref> lanes;
      for (ir::Value v : op.operands_from(ir::ops::VectorConstruct::lanes)) lanes.push_back(p.ref(v));
      p.plan().operand_lists.push_back(std::move(lanes));
      p.emit(op, &construct_instr, Construct{uint32_t(p.plan().operand_lists.size() - 1), op.type.width, lane_bytes});
      return true;
    }
    case OpKind::AbsolutePos:
      p.emit(op, &builtin_instr<OpKind::AbsolutePos>, Builtin{int32_t(op.attr_int(ir::AttrKey::Axis, -1))});
      return true;
    case OpKind::UnitPos:
      p.emit(op, &builtin_instr<OpKind::UnitPos>, Builtin{int32_t(op.attr_int(ir::AttrKey::Axis, -1))});
      return true;
    case OpKind::CubePos:
      p.emit(op, &builtin_instr<OpKind::CubePos>, Builtin{int32_t(op.attr_int(ir::AttrKey::Axis, -1))});
      return true;
    case OpKind::CubeDim:
      p.emit(op, &builtin_instr<OpKind::CubeDim>, Builtin{int32_t(op.attr_int(ir::AttrKey::Axis, -1))});
      return true;
    case OpKind::CubeCount:
      p.emit(op, &builtin_instr<OpKind::CubeCount>, Builtin{int32_t(op.attr_int(ir::AttrKey::Axis, -1))});
      return true;
    case OpKind::PlaneDim: p.emit(op, &builtin_instr<OpKind::PlaneDim>, Builtin{-1}); return true;
    case OpKind::UnitPosPlane: p.emit(op, &builtin_instr<OpKind::UnitPosPlane>, Builtin{-1}); return true;
    case OpKind::VarDecl:
      p.define_var(op.result, p.alloc(uint64_t(p.plan().units) * uint64_t(op.type.element_bytes())));
      return true;
    case OpKind::VarLoad:
      p.emit(op, &var_load_instr,
             VarCopy{{}, p.var_slot(op.operand(ir::ops::VarLoad::var)), uint32_t(op.type.element_bytes())});
      return true;
    case OpKind::VarStore:
      p.emit(op, &var_store_instr,
             VarCopy{p.operand(op, ir::ops::VarStore::value), p.var_slot(op.operand(ir::ops::VarStore::var)),
                     uint32_t(p.operand_type(op, ir::ops::VarStore::value).element_bytes())});
      return true;
    default: return false;
  }
}

}  // namespace kiln::cpu
