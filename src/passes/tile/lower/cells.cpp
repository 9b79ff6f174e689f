// lower_tiles' memory ops: loads and stores of cells as masked vector accesses with padding, and
// loads, stores, atomics and scatters at computed addresses (Shared parameters).
#include <limits>

#include "passes/tile/lower/lowerer.h"

namespace kiln::passes::tile_lowering {

Lowerer::CellAccess Lowerer::cell_access(Value view) {
  const Op& v = *views_.at(view);
  CellAccess c;
  c.array = v.operand(ops::Array::array);
  c.vec = k_.type_of(c.array).width;
  auto ints = [&](std::span<const int64_t> s) { return std::vector<int64_t>(s.begin(), s.end()); };
  c.extent = ints(v.get<AttrKey::Extent>());
  c.tile = ints(v.get<AttrKey::Tile>());
  c.along = ints(v.get<AttrKey::Along>());
  c.pad = v.get<AttrKey::Pad>();
  return c;
}

// The extent of dimension d (u32): the recorded one, or grid x tile for a dyn_dim.
Value Lowerer::extent_of(const CellAccess& c, size_t d) {
  if (c.extent[d] >= 0) return c32(uint64_t(c.extent[d]));
  return mul(emit(K::CubeCount, {}, {{AttrKey::Axis, AttrValue::of_int(c.along[d])}}), c32(uint64_t(c.tile[d])));
}

double Lowerer::pad_value(Pad pad) {
  switch (pad) {
    case Pad::neg_inf: return -std::numeric_limits<double>::infinity();
    case Pad::pos_inf: return std::numeric_limits<double>::infinity();
    case Pad::nan: return std::numeric_limits<double>::quiet_NaN();
    case Pad::neg_zero: return -0.0;
    case Pad::zero: return 0.0;
  }
  return 0.0;
}

Lowerer::Addressing Lowerer::address(const CellAccess& c, const Layout& l, std::span<const Value> cell,
                                     std::span<const Value> sub_offset) {
  size_t rank = c.extent.size();
  // Strides of the row-major extent.
  std::vector<Value> stride(rank);
  Value s = c32(1);
  for (size_t d = rank; d-- > 0;) {
    stride[d] = s;
    if (d > 0) s = mul(s, extent_of(c, d));
  }
  // Per dimension: the first coordinate this unit touches, and whether a lane can fall past the extent.
  std::vector<Value> start(rank);
  std::vector<bool> guard(rank);
  for (size_t d = 0; d < rank; ++d) {
    // One emitting call a statement: the order of a call's arguments is the compiler's, and the
    // kernel's text (its cache key, the goldens) must not depend on it.
    Value cell_d = as_u32(cell[d]);
    Value first = mul(cell_d, c32(uint64_t(c.tile[d])));
    if (!sub_offset.empty()) first = add(first, sub_offset[d]);
    start[d] = add(first, unit_coord(l, int(d)));
    bool ragged = c.extent[d] >= 0 && c.extent[d] % c.tile[d] != 0;
    guard[d] = ragged || c.along[d] < 0;  // a free dimension's index comes from the kernel
  }
  Addressing a;
  size_t vec = size_t(c.vec);
  // With whole vectors along the last dimension (its extent and tile), the index is summed in
  // vectors rather than divided down from elements: a division of a sum hides its parts from
  // the compiler, while a sum in vectors lets the terms a loop does not change hoist out of it
  // and the rest step by a constant (a pipelined product's copies are mostly this arithmetic).
  const size_t last = rank - 1;
  const bool in_vectors = vec > 1 && rank > 0 && sub_offset.empty() && c.tile[last] % int64_t(vec) == 0 &&
                          (c.extent[last] < 0 || c.extent[last] % int64_t(vec) == 0);
  std::vector<Value> vstride;
  Value last_start = kNoValue;  // in vectors
  if (in_vectors) {
    Value vec_extent = c.extent[last] >= 0
                           ? c32(uint64_t(c.extent[last]) / vec)
                           : mul(emit(K::CubeCount, {}, {{AttrKey::Axis, AttrValue::of_int(c.along[last])}}),
                                 c32(uint64_t(c.tile[last]) / vec));
    vstride.resize(rank);
    Value vs = c32(1);
    for (size_t d = rank; d-- > 0;) {
      vstride[d] = vs;
      if (d > 0) vs = mul(vs, d == last ? vec_extent : extent_of(c, d));
    }
    // The unit's first column is a whole vector (the layout's low column bits are slot bits).
    Value cell_last = as_u32(cell[last]);
    Value cell_first = mul(cell_last, c32(uint64_t(c.tile[last]) / vec));
    last_start = add(cell_first, emit(K::Shr, {unit_coord(l, int(last)), c32(uint64_t(log2_of(uint32_t(vec))))}));
  }
  for (size_t j = 0; j < l.slots(); j += vec) {
    Value idx = kNoValue;
    Value mask = kNoValue;
    for (size_t d = 0; d < rank; ++d) {
      Value coord = add(start[d], c32(slot_coord(l, j, int(d))));
      Value term = !in_vectors ? mul(coord, stride[d])
                   : d == last ? add(last_start, c32(slot_coord(l, j, int(d)) / vec))
                               : mul(coord, vstride[d]);
      idx = idx == kNoValue ? term : add(idx, term);
      if (guard[d]) mask = both(mask, emit(K::Lt, {coord, extent_of(c, d)}));
    }
    if (vec > 1 && !in_vectors) idx = emit(K::Div, {idx, c32(vec)});
    a.chunk_index.push_back(idx);
    a.chunk_mask.push_back(mask);
  }
  return a;
}

// The cell an access reads or writes: load_at's indices, the block's own cell for the others.
std::vector<Value> Lowerer::cell_indices(const Op& op, const CellAccess& c) {
  if (op.kind == K::TileLoadAt) {
    std::span<const Value> cell = op.operands_from(ops::TileLoadAt::cell);
    return std::vector<Value>(cell.begin(), cell.end());
  }
  std::vector<Value> idx;
  for (int64_t a : c.along) idx.push_back(a < 0 ? c32(0) : block_pos_[size_t(a)]);
  return idx;
}

void Lowerer::load_cell(const Op& op) {
  CellAccess c = cell_access(op.operand(ops::TileLoadAt::view));
  Layout l = blocked(op.type, units_, c.vec);
  std::vector<Value> cell = cell_indices(op, c);
  Addressing a = address(c, l, cell, {});
  Scalar s = op.type.scalar;
  Value pad = c.pad == Pad::zero ? kNoValue : constant(s, pad_value(c.pad));
  Tiled r;
  r.type = op.type;
  r.layout = l;
  for (size_t ch = 0; ch < a.chunk_index.size(); ++ch) {
    Value mask = a.chunk_mask[ch];
    Value v = mask == kNoValue ? emit(K::Load, {c.array, a.chunk_index[ch]})
                               : emit(K::Load, {c.array, a.chunk_index[ch], mask});
    for (int lane = 0; lane < c.vec; ++lane) {
      Value x = c.vec == 1 ? v : emit(K::VectorExtract, {v}, {{AttrKey::Lane, AttrValue::of_int(lane)}});
      if (pad != kNoValue && mask != kNoValue) x = emit(K::Select, {mask, x, pad});
      r.slots.push_back(x);
    }
  }
  set_result(op, r);
}

void Lowerer::store_cell(const Op& op) {
  CellAccess c = cell_access(op.operand(ops::TileStoreSub::view));
  const Tiled& t = tile(op.operand(ops::TileStoreSub::tile));
  const Type tt = k_.type_of(op.operand(ops::TileStoreSub::tile));  // a copy: emitting grows value_types
  Layout l = blocked(tt, units_, c.vec);
  std::vector<Value> slots = present(t, l);
  std::vector<Value> cell = cell_indices(op, c);
  std::vector<Value> sub;
  if (op.kind == K::TileStoreSub) {
    std::span<const Value> part = op.operands_from(ops::TileStoreSub::part);
    for (size_t d = 0; d < part.size(); ++d) {
      Value part_d = as_u32(part[d]);
      sub.push_back(mul(part_d, c32(tt.shape[d])));
    }
  }
  Addressing a = address(c, l, cell, sub);
  Value mine = owner(l);
  for (size_t ch = 0; ch < a.chunk_index.size(); ++ch) {
    Value v;
    if (c.vec == 1) {
      v = slots[ch];
    } else {
      std::vector<Value> lanes(slots.begin() + long(ch) * c.vec, slots.begin() + long(ch + 1) * c.vec);
      v = emit_span(K::VectorConstruct, lanes);
    }
    Value mask = both(a.chunk_mask[ch], mine);
    if (mask == kNoValue) emit(K::Store, {c.array, a.chunk_index[ch], v});
    else emit(K::Store, {c.array, a.chunk_index[ch], v, mask});
  }
}

// tile.load, tile.store and the atomics at an element offset with strides, and the scatters at
// the offsets a tile holds (Shared parameters): scalar accesses, flagged `checked` so that checked
// mode bounds them (a launch of a kernel with any runs checked: Entry::launch).
std::vector<Value> Lowerer::pointer_index(const Op& op, const Type& t, const Layout& l, Value offset) {
  std::array<uint32_t, 4> stride = row_major(t);
  std::span<const int64_t> strides = op.get<AttrKey::Strides>();
  for (size_t d = 0; d < strides.size(); ++d) stride[d] = uint32_t(strides[d]);
  Value base = add(as_u32(offset), unit_linear(l, stride));
  std::vector<Value> idx;
  for (size_t j = 0; j < l.slots(); ++j) idx.push_back(add(base, c32(slot_linear(l, j, stride))));
  return idx;
}

// An extent's bound per dimension (u32, a negative extent as 0) and the unit's part of each
// coordinate in `l`; none without an extent.
Lowerer::ExtentBounds Lowerer::extent_bounds(const Layout& l, std::span<const Value> extent) {
  ExtentBounds b;
  for (size_t d = 0; d < extent.size(); ++d) {
    b.bound.push_back(as_u32(emit(K::Max, {extent[d], b_.const_int(Scalar::I32, 0)})));
    b.unit.push_back(unit_coord(l, int(d)));
  }
  return b;
}

// True where slot `slot`'s element lies inside the extent; kNoValue when there is none.
Value Lowerer::extent_mask(const Layout& l, const ExtentBounds& b, size_t slot) {
  Value mask = kNoValue;
  for (size_t d = 0; d < b.bound.size(); ++d) {
    Value coord = add(b.unit[d], c32(slot_coord(l, slot, int(d))));
    mask = both(mask, emit(K::Lt, {coord, b.bound[d]}));
  }
  return mask;
}

void Lowerer::pointer_load(const Op& op) {
  Layout l = blocked(op.type, units_, 1);
  Tiled r;
  r.type = op.type;
  r.layout = l;
  ExtentBounds bounds = extent_bounds(l, op.operands_from(ops::TileLoad::extent));
  const Pad pad = op.get<AttrKey::Pad>(Pad::zero);
  const Value array = op.operand(ops::TileLoad::array);
  std::vector<Value> idx = pointer_index(op, op.type, l, op.operand(ops::TileLoad::offset));
  // A masked-off load gives zero; another padding value replaces it.
  Value fill = pad == Pad::zero || bounds.bound.empty() ? kNoValue : constant(op.type.scalar, pad_value(pad));
  for (size_t j = 0; j < idx.size(); ++j) {
    std::vector<Attr> checked = {ir::attr<AttrKey::Checked>(true)};
    Value mask = extent_mask(l, bounds, j);
    Value v =
        mask == kNoValue ? emit(K::Load, {array, idx[j]}, checked) : emit(K::Load, {array, idx[j], mask}, checked);
    if (fill != kNoValue) v = emit(K::Select, {mask, v, fill});
    r.slots.push_back(v);
  }
  set_result(op, r);
}

namespace {
// The scalar op each addressed tile write is, one per element.
OpKind element_write(OpKind k) {
  switch (k) {
    case K::TileAtomicAdd:
    case K::TileScatterAdd: return K::AtomicAdd;
    case K::TileAtomicMax:
    case K::TileScatterMax: return K::AtomicMax;
    case K::TileAtomicMin:
    case K::TileScatterMin: return K::AtomicMin;
    default: return K::Store;
  }
}
}  // namespace

// One write per element the unit owns (a layout whose unit bits name nothing repeats elements on
// several units: only one of them writes, or an atomic would count it twice), inside the extent.
void Lowerer::write_elements(OpKind kind, Value array, const Layout& l, const std::vector<Value>& idx,
                             const std::vector<Value>& values, std::span<const Value> extent) {
  ExtentBounds bounds = extent_bounds(l, extent);
  Value mine = owner(l);
  for (size_t j = 0; j < idx.size(); ++j) {
    std::vector<Attr> checked = {ir::attr<AttrKey::Checked>(true)};
    Value mask = both(mine, extent_mask(l, bounds, j));
    if (mask == kNoValue) emit(element_write(kind), {array, idx[j], values[j]}, checked);
    else emit(element_write(kind), {array, idx[j], values[j], mask}, checked);
  }
}

// tile.store and tile.atomic_*: at an offset with strides.
void Lowerer::pointer_store(const Op& op) {
  const Value array = op.operand(ops::TileStore::array), t = op.operand(ops::TileStore::tile);
  const Type tt = k_.type_of(t);  // a copy: emitting grows value_types
  Layout l = blocked(tt, units_, 1);
  std::vector<Value> slots = present(tile(t), l);
  std::vector<Value> idx = pointer_index(op, tt, l, op.operand(ops::TileStore::offset));
  write_elements(op.kind, array, l, idx, slots, op.operands_from(ops::TileStore::extent));
}

// tile.scatter and tile.scatter_*: each value at the offset beside it, both tiles in one layout.
void Lowerer::scatter(const Op& op) {
  using S = ops::TileScatter;
  const Value array = op.operand(S::array), values = op.operand(S::values);
  const Type vt = k_.type_of(values);  // a copy: emitting grows value_types
  Layout l = blocked(vt, units_, 1);
  std::vector<Value> slots = present(tile(values), l);
  std::vector<Value> idx = present(tile(op.operand(S::offsets)), l);
  for (Value& i : idx) i = as_u32(i);
  write_elements(op.kind, array, l, idx, slots, op.operands_from(S::extent));
}

}  // namespace kiln::passes::tile_lowering
