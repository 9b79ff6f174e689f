// The tile ops: each checks what seed 04's recorder checks, in its words, then records through
// the kernel tracer. Widening (a rank-0 tile to any shape, length-1 dimensions of a tile of the
// same rank) is recorded as an explicit tile.broadcast, so the IR's elementwise ops see one shape.
#include <algorithm>

#include "kiln/ir/mma.h"
#include "kiln/ir/type_rules.h"
#include "names.h"
#include "recording.h"

namespace kiln::tile::detail {

namespace {

using K = ir::OpKind;

std::vector<uint32_t> dims(const ir::Type& t) {
  return std::vector<uint32_t>(t.shape.begin(), t.shape.begin() + t.rank);
}

ir::Type register_tile(ir::Scalar s, std::span<const uint32_t> shape) {
  std::array<uint32_t, 4> a{};
  for (size_t i = 0; i < shape.size() && i < 4; ++i) a[i] = shape[i];
  return ir::Type::tile(s, int(shape.size()), a);
}

std::string shape_list(std::span<const uint32_t> s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

void check_shape(Recording& r, const std::string& op, std::span<const uint32_t> shape) {
  if (shape.size() > 4)
    r.fail("record.tile_shape", op, "a tile has at most 4 dimensions, not " + std::to_string(shape.size()));
  for (uint32_t d : shape) {
    if (d == 0 || (d & (d - 1)) != 0) {
      r.fail("record.tile_shape", op, "tile dimensions are powers of two; " + shape_list(shape) + " is not");
    }
  }
}

ValueRef require_tile(Recording& r, const std::string& op, const ValueRef& v) {
  if (!v.type.is_register_tile()) r.fail("record.type", op, "takes a tile, not " + ir::to_string(v.type));
  return v;
}

std::string operand_name(size_t i, size_t n) {
  if (n == 2) return i == 0 ? "lhs" : "rhs";
  if (n == 3) return i == 0 ? "the condition" : i == 1 ? "lhs" : "rhs";
  return "operand " + std::to_string(i);
}

ValueRef widen(Recording& r, const ValueRef& v, std::span<const uint32_t> shape) {
  if (dims(v.type) == std::vector<uint32_t>(shape.begin(), shape.end())) return v;
  std::vector<int64_t> s(shape.begin(), shape.end());
  ValueRef ops[] = {v};
  return r.tracer().record(K::TileBroadcast, ops, ir::Type::none(), {{ir::AttrKey::Shape, ir::AttrValue::of_ints(s)}});
}

bool is_write(Role role) { return role != Role::In; }

void check_writes(Recording& r, const std::string& op, ParamRef p, bool through_cells) {
  Role role = r.decl(p.index).role;
  std::string who = "parameter " + std::to_string(p.index);
  if (!is_write(role)) r.fail("record.in_written", op, who + " is an In, and nothing writes an In");
  if (through_cells && role == Role::Shared) {
    r.fail("record.no_cells", op, who + " is a Shared, which has no cells; write it with store at an offset");
  }
  if (!through_cells && role == Role::Out) {
    r.fail("record.out_written_by_pointer", op,
           who +
               " is an Out, which is written through its cells alone (store_cell, store_sub); a parameter written "
               "any other way is a Shared");
  }
}

void check_reads_cells(Recording& r, const std::string& op, ParamRef p) {
  if (p.view < 0) {
    r.fail("record.no_cells", op,
           "parameter " + std::to_string(p.index) + " is a Shared, which has no cells; read it with load at an offset");
  }
}

// The cell index of each dimension: the block's for a dimension that follows the grid, the
// kernel's for a free one. `given` is one per dimension, or one per free dimension (seed 04's
// load_at(a, [k])).
std::vector<ValueRef> cell_indices(Recording& r, const std::string& op, ParamRef p, std::span<const ValueRef> given) {
  const Cells& c = r.view(p).cells;
  size_t free = size_t(std::count(c.axes().begin(), c.axes().end(), free_axis));
  if (given.size() != size_t(c.rank()) && given.size() != free) {
    r.fail("record.cell_index", op,
           "takes " + std::to_string(free) + " cell index(es) (one per free dimension) or " + std::to_string(c.rank()) +
               " (one per dimension) for " + c.text() + ", not " + std::to_string(given.size()));
  }
  std::vector<ValueRef> idx;
  size_t next = 0;
  for (int d = 0; d < c.rank(); ++d) {
    int a = c.axes()[size_t(d)];
    if (given.size() == size_t(c.rank())) {
      idx.push_back(given[size_t(d)]);
    } else if (a == free_axis) {
      idx.push_back(given[next++]);
    } else {
      idx.push_back(block_id(a));
    }
  }
  for (ValueRef& v : idx) {
    if (!(v.type == ir::Type::scalar_of(ir::Scalar::I32)))
      r.fail("record.type", op, "cell indices are i32, not " + ir::to_string(v.type));
  }
  return idx;
}

}  // namespace

std::vector<uint32_t> shape_of(const ValueRef& t) { return dims(t.type); }

std::vector<uint32_t> cell_shape(ParamRef p) {
  Recording& r = current();
  if (p.view < 0)
    r.fail("record.no_cells", "parameter " + std::to_string(p.index) + " is a Shared, which has no cells");
  std::vector<uint32_t> s;
  for (int64_t t : r.view(p).cells.tile()) s.push_back(uint32_t(t));
  return s;
}

ValueRef load_cell(ParamRef p) {
  Recording& r = current();
  check_reads_cells(r, "load_cell", p);
  ValueRef v[] = {r.view(p).value};
  return r.tracer().record(K::TileLoadCell, v, ir::Type::none());
}

ValueRef load_at(ParamRef p, std::span<const ValueRef> cell) {
  Recording& r = current();
  check_reads_cells(r, "load_at", p);
  std::vector<ValueRef> ops = {r.view(p).value};
  for (const ValueRef& i : cell_indices(r, "load_at", p, cell)) ops.push_back(i);
  return r.tracer().record(K::TileLoadAt, ops, ir::Type::none());
}

void store_cell(ParamRef p, const ValueRef& t) {
  Recording& r = current();
  check_writes(r, "store_cell", p, true);
  require_tile(r, "store_cell", t);
  ir::Type cell = r.view(p).value.type;
  if (dims(t.type) != dims(cell)) {
    r.fail("record.shape_mismatch", "store_cell", "stores " + tile_text(t.type) + " into a cell of " + tile_text(cell));
  }
  ValueRef ops[] = {r.view(p).value, t};
  r.tracer().record(K::TileStoreCell, ops, ir::Type::none());
}

void store_sub(ParamRef p, const ValueRef& t, std::span<const ValueRef> sub) {
  Recording& r = current();
  check_writes(r, "store_sub", p, true);
  require_tile(r, "store_sub", t);
  ir::Type cell = r.view(p).value.type;
  bool fits = t.type.rank == cell.rank;
  for (int d = 0; fits && d < cell.rank; ++d) fits = cell.shape[size_t(d)] % t.type.shape[size_t(d)] == 0;
  if (!fits) {
    r.fail("record.shape_mismatch", "store_sub",
           "stores " + tile_text(t.type) + ", which does not cut a cell of " + tile_text(cell) + " into whole parts");
  }
  if (sub.size() != size_t(cell.rank)) {
    r.fail("record.cell_index", "store_sub",
           "takes one part index per dimension of the cell (" + std::to_string(cell.rank) + "), not " +
               std::to_string(sub.size()));
  }
  r.note_part_width(p.index, t.type.shape[size_t(t.type.rank) - 1]);
  std::vector<ValueRef> ops = {r.view(p).value, t};
  ops.insert(ops.end(), sub.begin(), sub.end());
  r.tracer().record(K::TileStoreSub, ops, ir::Type::none());
}

namespace {

std::vector<ir::Attr> strides_attr(Recording& r, const std::string& op, std::span<const int64_t> strides, int rank) {
  if (strides.empty()) return {};
  if (strides.size() != size_t(rank)) {
    r.fail("record.strides", op,
           "takes one stride per dimension of the tile (" + std::to_string(rank) + "), not " +
               std::to_string(strides.size()));
  }
  return {{ir::AttrKey::Strides, ir::AttrValue::of_ints(std::vector<int64_t>(strides.begin(), strides.end()))}};
}

// An access's extent: none (every element), or one i32 per dimension of its tile.
void check_extent(Recording& r, const std::string& op, std::span<const ValueRef> extent, int rank) {
  if (!extent.empty() && extent.size() != size_t(rank)) {
    r.fail("record.extent", op,
           "takes an extent of one index per dimension of the tile (" + std::to_string(rank) + ") or none, not " +
               std::to_string(extent.size()));
  }
  for (const ValueRef& e : extent) {
    if (!(e.type == ir::Type::scalar_of(ir::Scalar::I32)))
      r.fail("record.type", op, "extents are i32, not " + ir::to_string(e.type));
  }
}

// Writes at computed addresses go to a Shared parameter: not an In, not an Out (written through
// its cells alone).
void check_addressed_write(Recording& r, const std::string& op, ParamRef p, const ValueRef& t) {
  check_writes(r, op, p, false);
  require_tile(r, op, t);
  r.note_pointer_access(p.index);
}

// The element types an atomic combines (the IR's scalar atomics'), refused below the typed API.
void check_atomic_element(Recording& r, const std::string& op, ir::OpKind kind, ParamRef p) {
  ir::Scalar s = r.decl(p.index).element;
  if (!ir::atomic_takes(kind, s)) {
    r.fail("record.type", op,
           "parameter " + std::to_string(p.index) + " holds " + std::string(ir::scalar_name(s)) + ", and " + op +
               (kind == K::TileAtomicAdd || kind == K::TileScatterAdd ? " takes i32, u32, i64, u64, f32 and f64"
                                                                      : " takes i32, u32, i64 and u64"));
  }
}

std::string addressed_name(ir::OpKind kind) { return cuda_tile_name(kind, ir::Scalar::I32); }

}  // namespace

ValueRef load(ParamRef p, const ValueRef& offset, std::span<const uint32_t> shape, std::span<const int64_t> strides,
              std::span<const ValueRef> extent, Pad pad) {
  Recording& r = current();
  check_shape(r, "load", shape);
  check_extent(r, "load", extent, int(shape.size()));
  ir::Scalar element = r.decl(p.index).element;
  if (!ir::is_float(element) && pad != Pad::zero && pad != Pad::neg_zero) {
    r.fail("record.type", "load",
           "pads with " + std::string(ir::to_string(pad)) + ", which " + std::string(ir::scalar_name(element)) +
               " does not hold; integers pad with zero");
  }
  r.note_pointer_access(p.index);
  std::vector<ValueRef> ops = {r.array(p.index), offset};
  ops.insert(ops.end(), extent.begin(), extent.end());
  std::vector<ir::Attr> attrs = strides_attr(r, "load", strides, int(shape.size()));
  if (pad != Pad::zero) attrs.push_back(ir::attr<ir::AttrKey::Pad>(pad));
  return r.tracer().record(K::TileLoad, ops, register_tile(element, shape), std::move(attrs));
}

namespace {
// store and the atomics at an offset: one recording, the atomics' element types checked.
void write_at(ir::OpKind kind, ParamRef p, const ValueRef& offset, const ValueRef& t, std::span<const int64_t> strides,
              std::span<const ValueRef> extent) {
  Recording& r = current();
  const std::string op = addressed_name(kind);
  check_addressed_write(r, op, p, t);
  if (kind != K::TileStore) check_atomic_element(r, op, kind, p);
  check_extent(r, op, extent, t.type.rank);
  std::vector<ValueRef> ops = {r.array(p.index), offset, t};
  ops.insert(ops.end(), extent.begin(), extent.end());
  r.tracer().record(kind, ops, ir::Type::none(), strides_attr(r, op, strides, t.type.rank));
}
}  // namespace

void store(ParamRef p, const ValueRef& offset, const ValueRef& t, std::span<const int64_t> strides,
           std::span<const ValueRef> extent) {
  write_at(K::TileStore, p, offset, t, strides, extent);
}

void atomic(ir::OpKind kind, ParamRef p, const ValueRef& offset, const ValueRef& t, std::span<const int64_t> strides,
            std::span<const ValueRef> extent) {
  write_at(kind, p, offset, t, strides, extent);
}

void scatter(ir::OpKind kind, ParamRef p, const ValueRef& offsets, const ValueRef& values,
             std::span<const ValueRef> extent) {
  Recording& r = current();
  const std::string op = addressed_name(kind);
  check_addressed_write(r, op, p, values);
  if (kind != K::TileScatter) check_atomic_element(r, op, kind, p);
  require_tile(r, op, offsets);
  if (offsets.type.scalar != ir::Scalar::I32)
    r.fail("record.type", op, "offsets are i32, not " + tile_text(offsets.type));
  if (dims(offsets.type) != dims(values.type)) {
    r.fail("record.shape_mismatch", op,
           "offsets are " + tile_text(offsets.type) + ", values " + tile_text(values.type) + ": one offset per value");
  }
  check_extent(r, op, extent, values.type.rank);
  std::vector<ValueRef> ops = {r.array(p.index), offsets, values};
  ops.insert(ops.end(), extent.begin(), extent.end());
  r.tracer().record(kind, ops, ir::Type::none());
}

// Per dimension, the lanes of the cell (block ids, or `cell`, as load_cell and load_at pick it)
// that lie inside the extent: extent - cell index x tile (the tile or more in a whole cell), the
// tile for a dyn_dim extent, which the grid gives in whole cells.
std::vector<ValueRef> cell_extent(ParamRef p, std::span<const ValueRef> cell) {
  Recording& r = current();
  if (p.view < 0)
    r.fail("record.no_cells", "cell_extent",
           "parameter " + std::to_string(p.index) + " is a Shared, which has no cells");
  const Cells& c = r.view(p).cells;
  std::vector<ValueRef> idx;
  if (cell.empty()) {
    for (int a : c.axes()) idx.push_back(a == free_axis ? index_constant(0) : block_id(a));
  } else {
    idx = cell_indices(r, "cell_extent", p, cell);
  }
  std::vector<ValueRef> out;
  for (int d = 0; d < c.rank(); ++d) {
    int64_t e = c.extent()[size_t(d)], t = c.tile()[size_t(d)];
    if (e == dyn_dim) {
      out.push_back(index_constant(int32_t(t)));
      continue;
    }
    ValueRef first[] = {idx[size_t(d)], index_constant(int32_t(t))};
    ValueRef start = r.tracer().record(K::Mul, first, ir::Type::none());
    ValueRef rest[] = {index_constant(int32_t(e)), start};
    out.push_back(r.tracer().record(K::Sub, rest, ir::Type::none()));
  }
  return out;
}

ParamRef retile(ParamRef p, std::vector<int64_t> extent, std::vector<int64_t> tile) {
  Recording& r = current();
  if (p.view < 0)
    r.fail("record.no_cells", "parameter " + std::to_string(p.index) + " is a Shared, which has no cells to retile");
  Cells c = Cells(std::move(extent), std::move(tile)).pad(r.view(p).cells.padding());
  if (c.tile().size() != c.extent().size() || c.extent().empty() || c.extent().size() > 4) {
    r.fail("record.cells", "retile", "extent and tile need one entry per dimension, 1 to 4 of them");
  }
  std::vector<int> along;
  for (size_t d = 0; d < c.extent().size(); ++d)
    along.push_back(d < r.view(p).cells.axes().size() ? r.view(p).cells.axes()[d] : free_axis);
  c = c.along(along);
  for (int64_t t : c.tile()) {
    if (t <= 0 || (t & (t - 1)) != 0)
      r.fail("record.tile_shape", "retile",
             "tile dimensions are powers of two; " + c.text() + " has " + std::to_string(t));
  }
  return r.add_view(p.index, c);
}

ValueRef full(ir::Scalar s, std::span<const uint32_t> shape, const ir::AttrValue& v) {
  Recording& r = current();
  check_shape(r, "constant", shape);
  return r.tracer().record(K::TileFull, {}, register_tile(s, shape), {{ir::AttrKey::Value, v}});
}

ValueRef elementwise(ir::OpKind kind, std::span<const ValueRef> operands) {
  Recording& r = current();
  ir::Scalar s = operands.back().type.scalar;
  std::string op = cuda_tile_name(kind, s);
  for (const ValueRef& v : operands) require_tile(r, op, v);
  // The shape the op is declared with: its first operand's, widened by each later one that
  // widens it; an operand that neither widens nor is widened is refused.
  std::vector<uint32_t> declared = dims(operands.front().type);
  for (size_t i = 1; i < operands.size(); ++i) {
    std::vector<uint32_t> s2 = dims(operands[i].type);
    if (s2.empty() || s2 == declared) continue;
    if (declared.empty()) {
      declared = s2;
      continue;
    }
    bool ok = s2.size() == declared.size();
    for (size_t d = 0; ok && d < s2.size(); ++d) ok = s2[d] == declared[d] || s2[d] == 1 || declared[d] == 1;
    if (!ok) {
      ir::Type want = operands[i].type;
      want.rank = uint8_t(declared.size());
      want.shape = {};
      for (size_t d = 0; d < declared.size(); ++d) want.shape[d] = declared[d];
      r.fail("record.shape_mismatch", op,
             operand_name(i, operands.size()) + " is " + tile_text(operands[i].type) + ", declared " + tile_text(want));
    }
    for (size_t d = 0; d < s2.size(); ++d) declared[d] = std::max(declared[d], s2[d]);
  }
  std::vector<ValueRef> ops;
  for (const ValueRef& v : operands) ops.push_back(widen(r, v, declared));
  return r.tracer().record(kind, ops, ir::Type::none());
}

ValueRef cast(const ValueRef& t, ir::Scalar to) {
  Recording& r = current();
  require_tile(r, cuda_tile_name(K::Cast, t.type.scalar, to), t);
  if (t.type.scalar == to) return t;
  ValueRef ops[] = {t};
  return r.tracer().record(K::Cast, ops, t.type.tile_of(to));
}

ValueRef broadcast(const ValueRef& t, std::span<const uint32_t> shape) {
  Recording& r = current();
  require_tile(r, "broadcast", t);
  check_shape(r, "broadcast", shape);
  std::vector<uint32_t> from = dims(t.type);
  bool ok = from.empty() || from.size() == shape.size();
  for (size_t d = 0; ok && !from.empty() && d < from.size(); ++d) ok = from[d] == shape[d] || from[d] == 1;
  if (!ok) {
    r.fail("record.shape_mismatch", "broadcast",
           "widens " + tile_text(t.type) + " to " + shape_list(shape) +
               "; only a rank-0 tile, or length-1 dimensions of a tile of the same rank, widen");
  }
  return widen(r, t, shape);
}

ValueRef reduce(ir::OpKind kind, const ValueRef& t, int dim, bool keepdims) {
  Recording& r = current();
  require_tile(r, "reduce", t);
  int rank = t.type.rank;
  if (rank == 0)
    r.fail("record.shape_mismatch", "reduce", "reduces " + tile_text(t.type) + ", which has no dimension to reduce");
  int d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank) {
    r.fail("record.dim", "reduce", "dim " + std::to_string(dim) + " is not a dimension of " + tile_text(t.type));
  }
  ValueRef ops[] = {t};
  return r.tracer().record(
      kind, ops, ir::Type::none(),
      {{ir::AttrKey::Dim, ir::AttrValue::of_int(d)}, {ir::AttrKey::Keepdims, ir::AttrValue::of_bool(keepdims)}});
}

ValueRef transpose(const ValueRef& t) {
  Recording& r = current();
  require_tile(r, "permute", t);
  if (t.type.rank != 2)
    r.fail("record.shape_mismatch", "permute", "transposes tiles of rank 2, not " + tile_text(t.type));
  ValueRef ops[] = {t};
  return r.tracer().record(K::TileTranspose, ops, ir::Type::none());
}

ValueRef mma(const ValueRef& a, const ValueRef& b, const ValueRef& c) {
  Recording& r = current();
  std::string op = cuda_tile_name(K::TileMma, c.type.scalar);
  for (const ValueRef* v : {&a, &b, &c}) {
    require_tile(r, op, *v);
    if (v->type.rank != 2) r.fail("record.shape_mismatch", op, "multiplies tiles of rank 2, not " + tile_text(v->type));
  }
  ir::Scalar ab = a.type.scalar, cs = c.type.scalar;
  if (ab != b.type.scalar || !ir::mma_format(ab, cs)) {
    r.fail("record.mma_format", op,
           std::string(ir::scalar_name(ab)) + " x " + std::string(ir::scalar_name(b.type.scalar)) + " into " +
               std::string(ir::scalar_name(cs)) + " is not a format of mma; it takes " + ir::mma_formats_text() +
               " (tf32 and the 8-bit floats f8e4m3 and f8e5m2 are not kiln element types)");
  }
  if (a.type.shape[1] != b.type.shape[0]) {
    r.fail("record.mma_shape", op,
           "lhs is " + tile_text(a.type) + " with k = " + std::to_string(a.type.shape[1]) + ", rhs is " +
               tile_text(b.type) + " with k = " + std::to_string(b.type.shape[0]));
  }
  if (c.type.shape[0] != a.type.shape[0] || c.type.shape[1] != b.type.shape[1]) {
    r.fail("record.mma_shape", op,
           "the accumulator is " + tile_text(c.type) + ", declared " +
               tile_text(register_tile(cs, std::vector<uint32_t>{a.type.shape[0], b.type.shape[1]})));
  }
  ValueRef ops[] = {a, b, c};
  return r.tracer().record(K::TileMma, ops, ir::Type::none());
}

ValueRef block_id(int axis) {
  Recording& r = current();
  if (axis < 0 || axis > 2)
    r.fail("record.axis", "get_tile_block_id", "grid axes are 0, 1 and 2, not " + std::to_string(axis));
  return r.tracer().builtin(K::TileBlockId, axis);
}

ValueRef index_constant(int32_t v) {
  return current().tracer().constant(ir::Type::scalar_of(ir::Scalar::I32), ir::AttrValue::of_int(v));
}

ValueRef var_decl(const ValueRef& init) {
  Recording& r = current();
  require_tile(r, "var", init);
  ValueRef v = r.tracer().var_decl(init.type);
  r.tracer().var_store(v, init);
  return v;
}

ValueRef var_load(const ValueRef& var) { return current().tracer().var_load(var); }

void var_store(const ValueRef& var, const ValueRef& t) {
  Recording& r = current();
  ir::Type held = var.type.element();
  if (!(t.type == held)) {
    r.fail("record.shape_mismatch", "var",
           "assigns " + tile_text(t.type) + " to a var of " + tile_text(held) +
               "; a carried tile keeps its shape and type");
  }
  r.tracer().var_store(var, t);
}

}  // namespace kiln::tile::detail
