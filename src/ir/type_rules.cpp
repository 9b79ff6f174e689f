// The rule of each op's result type (type_rules.h). Each op's row in op_kinds.h names one rule
// here; result_type() first checks what the row's operand letters say, so a rule sees operands of
// the right kinds and the right number and checks only what is particular to its ops.
#include "kiln/ir/type_rules.h"

#include <iterator>
#include <vector>

#include "kiln/ir/mma.h"

namespace kiln::ir {

namespace {

using K = OpKind;

std::string ts(const Type& t) { return to_string(t); }
Type u32() { return Type::scalar_of(Scalar::U32); }
Type boolean() { return Type::scalar_of(Scalar::Bool); }

TypeResult ok(const Type& t) { return {t, {}}; }
TypeResult none() { return {Type::none(), {}}; }
TypeResult error(std::string why) { return {Type::none(), std::move(why)}; }

// "operands have different types" when the types differ; empty when not.
std::string differing(std::span<const Type> types) {
  for (const Type& t : types) {
    if (!(t == types.front())) return "operands have different types: " + ts(types.front()) + " and " + ts(t);
  }
  return {};
}
std::string differing(const Type& a, const Type& b) {
  const Type both[] = {a, b};
  return differing(both);
}

// The type every operand of an op of like operands has (arith, bitwise, compare, math), once
// `differing` found none that differs.
const Type& common(const TypeQuery& q) { return q.operands.front(); }

std::string role(OpKind k, size_t i);

// --- values ---

// Whether a constant's payload is of its scalar's kind (bool, float, integer).
bool value_fits(Scalar s, const AttrValue& v) {
  return s == Scalar::Bool ? v.tag == AttrValue::Tag::Bool
         : is_float(s)     ? v.tag == AttrValue::Tag::Float
                           : v.tag == AttrValue::Tag::Int;
}

TypeResult rule_constant(const TypeQuery& q) {
  const Type& t = q.stated;
  const AttrValue* v = q.attr(AttrKey::Value);
  if (!t.is_value()) return error("a constant is a scalar or vector value, not " + ts(t));
  if (!value_fits(t.scalar, *v)) return error("value does not match type " + ts(t));
  return ok(t);
}

TypeResult rule_arith(const TypeQuery& q) {
  if (auto d = differing(q.operands); !d.empty()) return error(d);
  const Type& a = common(q);
  if (q.operands.size() == 1) {
    if (a.scalar == Scalar::Bool || (q.kind == K::Neg && is_unsigned_int(a.scalar))) {
      return error("not defined on " + ts(a));
    }
    return ok(a);
  }
  if (a.scalar == Scalar::Bool) return error("arithmetic is not defined on bool");
  return ok(a);
}

TypeResult rule_fma(const TypeQuery& q) {
  if (auto d = differing(q.operands); !d.empty()) return error(d);
  if (!common(q).is_float()) return error("fma takes floats, not " + ts(common(q)));
  return ok(common(q));
}

// and, or, xor, not (integers or bools); shl, shr (integers).
TypeResult rule_bitwise(const TypeQuery& q) {
  if (auto d = differing(q.operands); !d.empty()) return error(d);
  const Type& a = common(q);
  bool shift = q.kind == K::Shl || q.kind == K::Shr;
  if (!(a.is_int() || (!shift && a.is_bool()))) {
    return error("takes integers" + std::string(shift ? "" : " or bools") + ", not " + ts(a));
  }
  return ok(a);
}

// Counts of bits: u32 per lane.
TypeResult rule_bit_count(const TypeQuery& q) {
  const Type& a = q.operand(ops::Unary::x);
  if (!a.is_int()) return error("takes integers, not " + ts(a));
  return ok(a.with_scalar(Scalar::U32));
}

TypeResult rule_compare(const TypeQuery& q) {
  if (auto d = differing(q.operands); !d.empty()) return error(d);
  return ok(common(q).with_scalar(Scalar::Bool));
}

TypeResult rule_select(const TypeQuery& q) {
  const Type& c = q.operand(ops::Select::condition);
  const Type& v = q.operand(ops::Select::if_true);
  if (auto d = differing(v, q.operand(ops::Select::if_false)); !d.empty()) return error(d);
  if (!c.is_bool() || (c.width != 1 && c.width != v.width)) {
    return error("the condition must be bool with 1 or " + std::to_string(v.width) + " lanes, is " + ts(c));
  }
  return ok(v);
}

TypeResult rule_cast(const TypeQuery& q) {
  const Type& from = q.operand(ops::Unary::x);
  if (!q.stated.is_value() || q.stated.width != from.width) {
    return error("casts " + ts(from) + " to " + ts(q.stated) + ": lanes must agree");
  }
  return ok(q.stated);
}

TypeResult rule_bitcast(const TypeQuery& q) {
  const Type& from = q.operand(ops::Unary::x);
  if (!q.stated.is_value() || q.stated.element_bytes() != from.element_bytes()) {
    return error("bitcasts " + ts(from) + " to " + ts(q.stated) + ": sizes must agree");
  }
  return ok(q.stated);
}

// exp, log, sqrt, pow, ...: floats to the same type.
TypeResult rule_float_math(const TypeQuery& q) {
  if (auto d = differing(q.operands); !d.empty()) return error(d);
  if (!common(q).is_float()) return error("takes floats, not " + ts(common(q)));
  return ok(common(q));
}

// isnan, isinf: floats to bool with the same lanes.
TypeResult rule_float_predicate(const TypeQuery& q) {
  const Type& x = q.operand(ops::Unary::x);
  if (!x.is_float()) return error("takes floats, not " + ts(x));
  return ok(x.with_scalar(Scalar::Bool));
}

// --- vectors ---

TypeResult rule_vector_construct(const TypeQuery& q) {
  std::span<const Type> lanes = q.operands_from(ops::VectorConstruct::lanes);
  if (auto d = differing(lanes); !d.empty()) return error(d);
  if (!lanes.front().is_scalar()) return error("takes scalars");
  size_t n = lanes.size();
  if (n < 2 || !Target::valid_vector_width(int(n))) {
    return error("takes one of " + Target::vector_widths_text(2) + " lanes, has " + std::to_string(n));
  }
  return ok(Type::vector_of(lanes.front().scalar, static_cast<int>(n)));
}

std::string lane_outside(const TypeQuery& q, const Type& v) {
  int64_t lane = q.get<AttrKey::Lane>(-1);
  if (lane < 0 || lane >= v.width) return "lane " + std::to_string(lane) + " is outside " + ts(v);
  return {};
}

TypeResult rule_vector_extract(const TypeQuery& q) {
  const Type& v = q.operand(ops::Unary::x);
  if (!v.is_vector()) return error("takes a vector, not " + ts(v));
  if (auto e = lane_outside(q, v); !e.empty()) return error(e);
  return ok(Type::scalar_of(v.scalar));
}

TypeResult rule_vector_insert(const TypeQuery& q) {
  const Type& v = q.operand(ops::VectorInsert::vector);
  const Type& x = q.operand(ops::VectorInsert::value);
  if (!v.is_vector()) return error("takes a vector, not " + ts(v));
  if (!(x == Type::scalar_of(v.scalar))) return error("inserts " + ts(x) + " into " + ts(v));
  if (auto e = lane_outside(q, v); !e.empty()) return error(e);
  return ok(v);
}

TypeResult rule_vector_splat(const TypeQuery& q) {
  const Type& s = q.operand(ops::Unary::x);
  if (!s.is_scalar()) return error("splats a scalar, not " + ts(s));
  if (!q.stated.is_vector() || q.stated.scalar != s.scalar) return error("result must be a vector of " + ts(s));
  return ok(q.stated);
}

// --- launch builtins and arrays ---

TypeResult rule_builtin(const TypeQuery& q) {
  if (const AttrValue* a = q.attr(AttrKey::Axis); a && (a->i < 0 || a->i > 2)) {
    return error("axis must be 0, 1 or 2");
  }
  return ok(u32());
}

TypeResult rule_length(const TypeQuery&) { return ok(u32()); }

TypeResult rule_tensor_dim(const TypeQuery& q) {
  const Type& a = q.operand(ops::Array::array);
  if (a.kind != TypeKind::Tensor) return error("takes a tensor, not " + ts(a));
  int64_t dim = q.get<AttrKey::Dim>(-1);
  if (dim < 0 || dim >= a.rank) {
    return error("dim " + std::to_string(dim) + " is outside a tensor of rank " + std::to_string(a.rank));
  }
  return ok(u32());
}

// --- memory ---

// What every load, store and atomic shares: the values it writes are elements of the array; a
// write needs a writable array; `checked` is for global arrays only.
std::string array_access(const TypeQuery& q, const Type& a, bool writes, std::span<const Type> values) {
  if (is_barrier(a.scalar))
    return "a barrier is reached by the mbarrier ops only, not loaded, stored or atomically changed";
  if (writes && a.is_global() && a.access == Access::ReadOnly) {
    return "writes read-only " + ts(a) + (q.array_name.empty() ? "" : " '" + std::string(q.array_name) + "'");
  }
  for (const Type& v : values) {
    if (!(v == a.element())) return "value has type " + ts(v) + ", the array holds " + ts(a.element());
  }
  if (q.get<AttrKey::Checked>() && !a.is_global()) return "only global buffer accesses carry 'checked'";
  return {};
}

// A vector's width of more than one lane (a wide access's lanes, a loop's vectorize).
bool wide_width(int64_t w) { return w > 1 && Target::valid_vector_width(int(w)); }

// A wide access {lanes = W} (passes/vectorize makes them): the W elements from the index of a
// global array of scalars, as one vector<W x T>. It takes no mask and is never `checked`: the pass
// that makes one tests the whole range in bounds once, before the loop (docs/ir.md).
std::string wide_access(const TypeQuery& q, const Type& a, int64_t lanes, bool masked) {
  if (!wide_width(lanes)) return "lanes must be one of " + Target::vector_widths_text(2);
  if (!a.is_global() || a.width != 1) return "a wide access reads a global array of scalars, not " + ts(a);
  if (masked) return "a wide access takes no mask";
  if (q.get<AttrKey::Checked>()) return "a wide access is never 'checked' (its range is tested before the loop)";
  return {};
}

TypeResult rule_load(const TypeQuery& q) {
  const Type& a = q.operand(ops::Load::array);
  if (const AttrValue* w = q.attr(AttrKey::Lanes)) {
    const bool masked = q.operands.size() > size_t(ops::Load::mask);
    if (auto e = wide_access(q, a, w->i, masked); !e.empty()) return error(e);
    return ok(Type::vector_of(a.scalar, int(w->i)));
  }
  if (auto e = array_access(q, a, false, {}); !e.empty()) return error(e);
  return ok(a.element());
}

TypeResult rule_store(const TypeQuery& q) {
  const Type& a = q.operand(ops::Store::array);
  const Type& value = q.operand(ops::Store::value);
  if (const AttrValue* w = q.attr(AttrKey::Lanes)) {
    const bool masked = q.operands.size() > size_t(ops::Store::mask);
    if (auto e = wide_access(q, a, w->i, masked); !e.empty()) return error(e);
    if (a.access == Access::ReadOnly) return error("writes read-only " + ts(a));
    Type want = Type::vector_of(a.scalar, int(w->i));
    if (!(value == want)) {
      return error("a wide store of " + std::to_string(w->i) + " lanes stores " + ts(want) + ", not " + ts(value));
    }
    return none();
  }
  const Type values[] = {value};
  if (auto e = array_access(q, a, true, values); !e.empty()) return error(e);
  return none();
}

TypeResult rule_shared_alloc(const TypeQuery& q) {
  if (q.stated.kind != TypeKind::Shared || q.stated.length == 0)
    return error("result must be a shared array of length > 0");
  if (q.get<AttrKey::Overlay>(0) < 0) {
    return error("overlay must be a group number, 0 or greater");
  }
  return ok(q.stated);
}

TypeResult rule_local_alloc(const TypeQuery& q) {
  if (q.stated.kind != TypeKind::Local || q.stated.length == 0)
    return error("result must be a local array of length > 0");
  return ok(q.stated);
}

TypeResult rule_atomic(const TypeQuery& q) {
  const Type& a = q.operand(ops::Atomic::array);
  if (!(a.is_global() || a.kind == TypeKind::Shared)) {
    return error("atomics work on global buffers and shared arrays, not " + ts(a));
  }
  if (a.width != 1) return error("atomics work on scalar elements, not " + ts(a.element()));
  if (!atomic_takes(q.kind, a.scalar))
    return error("no atomic " + std::string(op_name(q.kind).substr(7)) + " on " + ts(a.element()));
  std::vector<Type> values;
  if (q.kind == K::AtomicCas) {
    values = {q.operand(ops::AtomicCas::expected), q.operand(ops::AtomicCas::desired)};
  } else {
    values = {q.operand(ops::Atomic::value)};
  }
  if (auto e = array_access(q, a, true, values); !e.empty()) return error(e);
  return ok(a.element());
}

// --- mbarriers ---

// Every mbarrier op: a shared array of barriers, an integer index, and (but arrive) a u32 count,
// byte count or parity. try_wait gives a bool.
TypeResult rule_mbarrier(const TypeQuery& q) {
  const Type& a = q.operand(ops::Mbarrier::array);
  if (a.kind != TypeKind::Shared || !is_barrier(a.scalar) || a.width != 1) {
    return error("takes a shared array of barrier, not " + ts(a));
  }
  if (q.operands.size() > size_t(ops::MbarrierCount::count)) {
    const Type& n = q.operands[ops::MbarrierCount::count];
    if (!(n == u32())) return error(role(q.kind, ops::MbarrierCount::count) + " must be u32, is " + ts(n));
  }
  return q.kind == K::MbarrierTryWait ? ok(boolean()) : none();
}

// --- plane ops ---

TypeResult rule_plane_numeric(const TypeQuery& q) {
  const Type& x = q.operand(ops::Unary::x);
  if (x.scalar == Scalar::Bool) return error("takes numbers, not bool");
  return ok(x);
}
TypeResult rule_plane_vote(const TypeQuery&) { return ok(boolean()); }
TypeResult rule_plane_ballot(const TypeQuery&) { return ok(u32()); }
TypeResult rule_plane_elect(const TypeQuery&) { return ok(boolean()); }
TypeResult rule_plane_lane(const TypeQuery& q) { return ok(q.operand(ops::PlaneLane::value)); }

// --- vars ---

TypeResult rule_var_decl(const TypeQuery& q) {
  if (q.stated.kind != TypeKind::Var) return error("result must be a var");
  return ok(q.stated);
}
TypeResult rule_var_load(const TypeQuery& q) { return ok(q.operand(ops::VarLoad::var).element()); }
TypeResult rule_var_store(const TypeQuery& q) {
  const Type &var = q.operand(ops::VarStore::var), &value = q.operand(ops::VarStore::value);
  if (!(value == var.element())) return error("stores " + ts(value) + " into " + ts(var));
  return none();
}

// --- control and debug ---

TypeResult rule_no_result(const TypeQuery&) { return none(); }

TypeResult rule_loop_bounds(const TypeQuery& q) {
  const Type bounds[] = {q.operand(ops::For::lower_bound), q.operand(ops::For::upper_bound), q.operand(ops::For::step)};
  if (auto d = differing(bounds); !d.empty()) return error(d);
  if (const AttrValue* u = q.attr(AttrKey::Unroll); u && u->i < 1) {
    return error("Loop attribute unroll must be 1 or greater");
  }
  if (const AttrValue* p = q.attr(AttrKey::PrefetchStages); p && p->i < 0) {
    return error("Loop attribute prefetch_stages must be 0 or greater");
  }
  if (const AttrValue* v = q.attr(AttrKey::Vectorize); v && !wide_width(v->i)) {
    return error("Loop attribute vectorize must be one of " + Target::vector_widths_text(2));
  }
  return none();
}

// check.trips lo, hi {loop = N}: the bounds of the at_least_once loop it stands before.
TypeResult rule_check_trips(const TypeQuery& q) {
  if (auto d = differing(q.operand(ops::Bounds::lower_bound), q.operand(ops::Bounds::upper_bound)); !d.empty()) {
    return error(d);
  }
  if (q.get<AttrKey::Loop>() < 1) return error("needs loop = N (1 or greater): which at_least_once loop it checks");
  return none();
}

TypeResult rule_debug_print(const TypeQuery& q) {
  if (q.operands.size() > 16) return error("prints at most 16 values, has " + std::to_string(q.operands.size()));
  for (size_t i = 0; i < q.operands.size(); ++i) {
    if (!q.operands[i].is_scalar())
      return error("prints scalars; operand " + std::to_string(i) + " is " + ts(q.operands[i]));
  }
  return none();
}

// copy.async shared, index, global, index [, mask]: one 4-, 8- or 16-byte element of the global
// array (the sizes cp.async copies) into as many scalars of the shared array.
TypeResult rule_copy_async(const TypeQuery& q) {
  const Type &dst = q.operand(ops::CopyAsync::shared), &src = q.operand(ops::CopyAsync::global);
  const int64_t bytes = src.is_global() ? src.element_bytes() : 0;
  if (dst.kind != TypeKind::Shared || !src.is_global() || dst.scalar != src.scalar || dst.width != 1 ||
      (bytes != 4 && bytes != 8 && bytes != 16)) {
    return error("copies a 4-, 8- or 16-byte element of a global array into a shared array of its scalar, not " +
                 ts(src) + " into " + ts(dst));
  }
  return none();
}

TypeResult rule_copy_async_wait(const TypeQuery& q) {
  if (int64_t p = q.get<AttrKey::Pending>(); p < 0 || p > 7) return error("needs pending = 0 to 7");
  return none();
}

// --- the tile layer ---

std::string shape_text(const Type& t) {
  std::string s = "[";
  for (int i = 0; i < t.rank; ++i) s += (i ? ", " : "") + std::to_string(t.shape[size_t(i)]);
  return s + "]";
}

bool same_shape(const Type& a, const Type& b) { return a.rank == b.rank && a.shape == b.shape; }

// A tile's dimensions are powers of two, at most 4 of them: the lowering splits each over units,
// vector lanes and tensor-core fragments by halving (docs/decisions/019-tile-layer.md).
std::string tile_shape_error(const Type& t) {
  for (int i = 0; i < t.rank; ++i) {
    uint32_t d = t.shape[size_t(i)];
    if (d == 0 || (d & (d - 1)) != 0) return "tile dimensions are powers of two; " + shape_text(t) + " is not";
  }
  return {};
}

TypeResult rule_tile_view(const TypeQuery& q) {
  const Type& a = q.operand(ops::Array::array);
  if (!a.is_global()) return error("views a global array, not " + ts(a));
  const Type& t = q.stated;
  if (!t.is_tile() || t.space != MemorySpace::Global || t.scalar != a.scalar) {
    return error("a view of " + ts(a) + " is a global tile of " + std::string(scalar_name(a.scalar)) + ", not " +
                 ts(t));
  }
  if (auto e = tile_shape_error(t); !e.empty()) return error(e);
  std::span<const int64_t> extent = q.get<AttrKey::Extent>(), tile = q.get<AttrKey::Tile>(),
                           along = q.get<AttrKey::Along>();
  size_t rank = t.rank;
  if (extent.size() != rank || tile.size() != rank || along.size() != rank) {
    return error("needs extent, tile and along with one entry per dimension of " + ts(t));
  }
  for (size_t i = 0; i < rank; ++i) {
    if (tile[i] != int64_t(t.shape[i]))
      return error("tile " + std::to_string(tile[i]) + " in dimension " + std::to_string(i) + " is not the view's");
    if (extent[i] < -1 || extent[i] == 0)
      return error("extent in dimension " + std::to_string(i) + " must be positive or -1 (taken from the grid)");
    if (along[i] < -1 || along[i] > 2)
      return error("along names grid axis 0, 1 or 2, or -1 (free), not " + std::to_string(along[i]));
    if (extent[i] == -1 && along[i] == -1)
      return error("a dimension whose extent the grid gives must follow a grid axis");
  }
  return ok(t);
}

// load_cell (view) and load_at (view, one index per free dimension).
TypeResult rule_tile_load_view(const TypeQuery& q) {
  const Type& v = q.operand(ops::TileLoadAt::view);
  if (v.space != MemorySpace::Global) return error("loads from a view (a global tile), not " + ts(v));
  if (q.kind == OpKind::TileLoadAt) {
    if (size_t cells = q.operands_from(ops::TileLoadAt::cell).size(); cells != size_t(v.rank)) {
      return error("takes one cell index per dimension of " + ts(v) +
                   " (those that follow the grid are ignored), has " + std::to_string(cells));
    }
  }
  Type r = v;
  r.space = MemorySpace::Registers;
  return ok(r);
}

// store_cell (view, tile) and store_sub (view, tile, one sub-tile index per dimension).
TypeResult rule_tile_store_view(const TypeQuery& q) {
  const Type& v = q.operand(ops::TileStoreSub::view);
  const Type& t = q.operand(ops::TileStoreSub::tile);
  if (v.space != MemorySpace::Global) return error("stores into a view (a global tile), not " + ts(v));
  if (!t.is_register_tile() || t.scalar != v.scalar) return error("stores " + ts(t) + " into " + ts(v));
  if (q.kind == OpKind::TileStoreCell) {
    if (!same_shape(t, v)) return error("stores " + ts(t) + " into a cell of " + ts(v));
    return none();
  }
  if (t.rank != v.rank) return error("stores " + ts(t) + " into a part of a cell of " + ts(v) + ": ranks differ");
  for (int i = 0; i < t.rank; ++i) {
    if (t.shape[size_t(i)] > v.shape[size_t(i)]) return error("stores " + ts(t) + ", larger than a cell of " + ts(v));
  }
  if (q.operands_from(ops::TileStoreSub::part).size() != size_t(v.rank)) {
    return error("takes one sub-tile index per dimension of " + ts(v));
  }
  return none();
}

std::string strides_error(const TypeQuery& q, const Type& t) {
  const AttrValue* s = q.attr(AttrKey::Strides);
  if (s && s->ints.size() != size_t(t.rank)) {
    return "strides need one entry per dimension of " + ts(t);
  }
  return {};
}

// An access's extent: none, or one i32 per dimension of the tile it bounds.
std::string extent_error(std::span<const Type> extent, const Type& t) {
  if (!extent.empty() && extent.size() != size_t(t.rank)) {
    return "takes an extent of one i32 per dimension of " + ts(t) + " or none, not " + std::to_string(extent.size());
  }
  for (const Type& e : extent) {
    if (!(e == Type::scalar_of(Scalar::I32))) return "extents are i32, not " + ts(e);
  }
  return {};
}

// load (array, element offset, extent...) {strides, pad}: a tile read at an address the kernel computes.
TypeResult rule_tile_load_ptr(const TypeQuery& q) {
  const Type& a = q.operand(ops::TileLoad::array);
  const Type& t = q.stated;
  if (!a.is_global()) return error("reads a global array, not " + ts(a));
  if (!t.is_register_tile() || t.scalar != a.scalar) return error("reads " + ts(t) + " from " + ts(a));
  if (auto e = tile_shape_error(t); !e.empty()) return error(e);
  if (auto e = strides_error(q, t); !e.empty()) return error(e);
  if (auto e = extent_error(q.operands_from(ops::TileLoad::extent), t); !e.empty()) return error(e);
  return ok(t);
}

// store (array, element offset, tile, extent...) {strides}.
TypeResult rule_tile_store_ptr(const TypeQuery& q) {
  const Type& a = q.operand(ops::TileStore::array);
  const Type& t = q.operand(ops::TileStore::tile);
  if (!a.is_global() || a.access != Access::ReadWrite) return error("writes a read-write global array, not " + ts(a));
  if (!t.is_register_tile() || t.scalar != a.scalar) return error("stores " + ts(t) + " into " + ts(a));
  if (auto e = strides_error(q, t); !e.empty()) return error(e);
  if (auto e = extent_error(q.operands_from(ops::TileStore::extent), t); !e.empty()) return error(e);
  return none();
}

// atomic_add/max/min (array, element offset, tile, extent...) {strides}: a store's addressing, on
// the element types the scalar atomics take.
TypeResult rule_tile_atomic(const TypeQuery& q) {
  TypeResult r = rule_tile_store_ptr(q);
  if (!r.ok()) return r;
  const Type& a = q.operand(ops::TileStore::array);
  if (a.width != 1 || !atomic_takes(q.kind, a.scalar))
    return error("no " + std::string(op_name(q.kind).substr(5)) + " on " + ts(a));
  return none();
}

// scatter and scatter_add/max/min (array, offsets, values, extent...): values[i, j, ..] at
// offsets[i, j, ..], the offsets an i32 tile of the values' shape.
TypeResult rule_tile_scatter(const TypeQuery& q) {
  const Type& a = q.operand(ops::TileScatter::array);
  const Type& o = q.operand(ops::TileScatter::offsets);
  const Type& v = q.operand(ops::TileScatter::values);
  if (!a.is_global() || a.access != Access::ReadWrite) return error("writes a read-write global array, not " + ts(a));
  if (!v.is_register_tile() || v.scalar != a.scalar) return error("stores " + ts(v) + " into " + ts(a));
  if (!o.is_register_tile() || o.scalar != Scalar::I32 || !same_shape(o, v)) {
    return error("takes offsets of i32 in the values' shape, " + shape_text(v) + ", not " + ts(o));
  }
  if (q.kind != K::TileScatter && (a.width != 1 || !atomic_takes(q.kind, a.scalar))) {
    return error("no " + std::string(op_name(q.kind).substr(5)) + " on " + ts(a));
  }
  if (auto e = extent_error(q.operands_from(ops::TileScatter::extent), v); !e.empty()) return error(e);
  return none();
}

TypeResult rule_tile_full(const TypeQuery& q) {
  const Type& t = q.stated;
  const AttrValue* v = q.attr(AttrKey::Value);
  if (!t.is_register_tile()) return error("makes a register tile, not " + ts(t));
  if (auto e = tile_shape_error(t); !e.empty()) return error(e);
  if (!value_fits(t.scalar, *v)) return error("value does not match type " + ts(t));
  return ok(t);
}

// Widens length-1 dimensions of a tile of the same rank, or a rank-0 tile to any shape.
TypeResult rule_tile_broadcast(const TypeQuery& q) {
  const Type& t = q.operand(ops::TileUnary::tile);
  std::span<const int64_t> shape = q.get<AttrKey::Shape>();
  if (!t.is_register_tile()) return error("widens a register tile, not " + ts(t));
  if (shape.size() > 4) return error("a tile has at most 4 dimensions");
  std::array<uint32_t, 4> dims{};
  for (size_t i = 0; i < shape.size(); ++i) dims[i] = static_cast<uint32_t>(shape[i]);
  Type r = Type::tile(t.scalar, int(shape.size()), dims);
  if (auto e = tile_shape_error(r); !e.empty()) return error(e);
  if (t.rank != 0) {
    if (t.rank != r.rank) return error("widens " + ts(t) + " to " + shape_text(r) + ": ranks differ");
    for (int i = 0; i < t.rank; ++i) {
      if (t.shape[size_t(i)] != 1 && t.shape[size_t(i)] != r.shape[size_t(i)]) {
        return error("widens " + ts(t) + " to " + shape_text(r) + ": only length-1 dimensions widen");
      }
    }
  }
  return ok(r);
}

// reduce_sum/max/min {dim, keepdims}: dim is counted from 0 (the recorder resolves -1).
TypeResult rule_tile_reduce(const TypeQuery& q) {
  const Type& t = q.operand(ops::TileUnary::tile);
  if (!t.is_register_tile() || t.rank == 0) return error("reduces a register tile of rank 1 or more, not " + ts(t));
  if (t.scalar == Scalar::Bool) return error("does not reduce bools");
  int64_t dim = q.get<AttrKey::Dim>(-1);
  if (dim < 0 || dim >= t.rank) return error("dim " + std::to_string(dim) + " is not a dimension of " + ts(t));
  bool keep = q.get<AttrKey::Keepdims>();
  Type r = t;
  if (keep) {
    r.shape[size_t(dim)] = 1;
  } else {
    for (int i = int(dim); i + 1 < t.rank; ++i) r.shape[size_t(i)] = t.shape[size_t(i) + 1];
    r.shape[size_t(t.rank) - 1] = 0;
    r.rank = uint8_t(t.rank - 1);
  }
  return ok(r);
}

TypeResult rule_tile_transpose(const TypeQuery& q) {
  const Type& t = q.operand(ops::TileUnary::tile);
  if (!t.is_tile() || t.space == MemorySpace::Global || t.rank != 2)
    return error("transposes a register or shared tile of rank 2, not " + ts(t));
  Type r = t;
  std::swap(r.shape[0], r.shape[1]);
  // A shared tile stays where it is, read the other way round: its layout is the operand's with
  // `columns` toggled, which the stated type names (the verifier compares the two).
  if (t.space == MemorySpace::Shared && (!q.stated.is_tile() || q.stated.layout == 0))
    return error("transposes a shared tile into the stated shared tile's layout, stated none");
  return ok(r);
}

// The operand's values in the stated type's layout: both register tiles of one shape and scalar,
// of two layouts (the same layout is no change, and no layout yet is none to change).
TypeResult rule_tile_convert_layout(const TypeQuery& q) {
  const Type& t = q.operand(ops::TileUnary::tile);
  const Type& to = q.stated;
  if (!t.is_register_tile() || !to.is_register_tile() || to.scalar != t.scalar || !same_shape(t, to)) {
    return error("converts a register tile to the same tile in another layout, not " + ts(t) + " to " + ts(to));
  }
  if (t.layout == 0 || to.layout == 0)
    return error("converts between two assigned layouts: " + ts(t) + " to " + ts(to));
  if (t.layout == to.layout) return error("converts " + ts(t) + " to its own layout");
  return ok(to);
}

TypeResult rule_tile_mma(const TypeQuery& q) {
  const Type &a = q.operand(ops::TileMma::a), &b = q.operand(ops::TileMma::b), &c = q.operand(ops::TileMma::c);
  // The factors in registers, or staged in shared memory (passes/tile/pipeline_loops); the
  // accumulator in registers.
  for (const Type* t : {&a, &b}) {
    if (!t->is_tile() || t->space == MemorySpace::Global || t->rank != 2)
      return error("multiplies register or shared tiles of rank 2, not " + ts(*t));
  }
  if (!c.is_register_tile() || c.rank != 2) return error("accumulates into a register tile of rank 2, not " + ts(c));
  // The formats are mma.h's table (seed 04's): the factors share a format, the accumulator may be wider.
  if (a.scalar != b.scalar || !mma_format(a.scalar, c.scalar)) {
    return error("takes " + std::string(scalar_name(a.scalar)) + " x " + std::string(scalar_name(b.scalar)) + " into " +
                 std::string(scalar_name(c.scalar)) + "; the formats are " + mma_formats_text() +
                 " (tf32 and the 8-bit floats are not kiln element types)");
  }
  if (a.shape[1] != b.shape[0]) {
    return error("lhs " + ts(a) + " has k = " + std::to_string(a.shape[1]) + " and rhs " + ts(b) +
                 " has k = " + std::to_string(b.shape[0]));
  }
  if (c.shape[0] != a.shape[0] || c.shape[1] != b.shape[1]) {
    return error("the accumulator " + ts(c) + " is not m x n = " + std::to_string(a.shape[0]) + " x " +
                 std::to_string(b.shape[1]));
  }
  // planes = [pm, pn]: the product's placement (passes/tile/place_products), pm x pn planes of the
  // cube each owning an (m / pm) x (n / pn) part; a_fragments: a is read from registers, which
  // needs every plane to own whole rows.
  if (q.attr(AttrKey::Planes)) {
    std::span<const int64_t> p = q.get<AttrKey::Planes>();
    auto pow2 = [](int64_t v) { return v >= 1 && (v & (v - 1)) == 0; };
    if (p.size() != 2 || !pow2(p[0]) || !pow2(p[1]) || a.shape[0] % p[0] != 0 || b.shape[1] % p[1] != 0) {
      return error("planes must be [pm, pn], powers of two dividing m = " + std::to_string(a.shape[0]) +
                   " and n = " + std::to_string(b.shape[1]));
    }
    if (q.get<AttrKey::AFragments>() && p[1] != 1) {
      return error("a_fragments needs planes = [pm, 1] (each plane owning whole rows), not [" + std::to_string(p[0]) +
                   ", " + std::to_string(p[1]) + "]");
    }
  } else if (q.get<AttrKey::AFragments>()) {
    return error("a_fragments needs planes = [pm, 1]");
  }
  return ok(c);
}

TypeResult rule_tile_block_id(const TypeQuery& q) {
  int64_t axis = q.get<AttrKey::Axis>(-1);
  if (axis < 0 || axis > 2) return error("needs axis 0, 1 or 2");
  return ok(Type::scalar_of(Scalar::I32));
}

// mma.sync a, a_offset, b, b_offset, acc {shape = [m, n, k], planes = [pm, pn], pitches = [lda, ldb],
// b_columns}: with b_columns, b is stored as its columns, an n x k tile with rows ldb apart.
// The instruction is mma.h's m16n8k16: its factor formats, accumulators and block shape.
TypeResult rule_mma_sync(const TypeQuery& q) {
  const MmaInstruction& in = kMmaSyncM16N8K16;
  const Type &a = q.operand(ops::MmaSync::a), &b = q.operand(ops::MmaSync::b), &acc = q.operand(ops::MmaSync::acc);
  if (a.kind != TypeKind::Shared || b.kind != TypeKind::Shared || a.scalar != b.scalar || a.width != 1 ||
      b.width != 1 || !mma_instruction(a.scalar, in.c)) {
    return error("multiplies shared arrays of " + std::string(scalar_name(in.factors[0])) + " or " +
                 std::string(scalar_name(in.factors[1])) + ", not " + ts(a) + " and " + ts(b));
  }
  if (acc.kind != TypeKind::Local || acc.scalar != in.c || acc.width != 1) {
    return error("accumulates into a local array of " + std::string(scalar_name(in.c)) + ", not " + ts(acc));
  }
  std::span<const int64_t> shape = q.get<AttrKey::Shape>(), planes = q.get<AttrKey::Planes>(),
                           pitch = q.get<AttrKey::Pitches>();
  if (shape.size() != 3 || planes.size() != 2 || pitch.size() != 2) {
    return error("needs shape = [m, n, k], planes = [pm, pn] and pitches = [lda, ldb]");
  }
  int64_t m = shape[0], n = shape[1], k = shape[2], wm = planes[0], wn = planes[1];
  const bool b_columns = q.get<AttrKey::BColumns>();
  const int64_t bm = in.m, bn = in.n, bk = in.k, esize = scalar_bytes(a.scalar);
  if (wm < 1 || wn < 1 || m % (bm * wm) != 0 || n % (bn * wn) != 0 || k % bk != 0 || pitch[0] < k ||
      pitch[1] < (b_columns ? k : n) || (pitch[0] * esize) % 16 != 0 || (pitch[1] * esize) % 16 != 0) {
    return error("takes m a multiple of " + std::to_string(bm) + " wm, n of " + std::to_string(bn) + " wn, k of " +
                 std::to_string(bk) +
                 ", and row pitches of whole 16 bytes at least k and n (k for b stored as columns)");
  }
  const int64_t slots = mma_sync_slots(in, uint32_t(m), uint32_t(n), uint32_t(wm), uint32_t(wn));
  if (int64_t(acc.length) != slots) {
    return error("each unit holds " + std::to_string(slots) + " accumulators, not " + std::to_string(acc.length));
  }
  return none();
}

// tile.slot array, offset: the shared tile at element `offset` of a shared array, in the array's
// shared layout (the stated type; the verifier checks that the two name one layout).
TypeResult rule_tile_slot(const TypeQuery& q) {
  const Type& a = q.operand(ops::TileSlot::array);
  const Type& t = q.stated;
  if (a.kind != TypeKind::Shared || a.width != 1) return error("takes a tile of a shared array, not of " + ts(a));
  if (!t.is_tile() || t.space != MemorySpace::Shared || t.scalar != a.scalar || t.rank < 1 || t.rank > 2) {
    return error("a slot of " + ts(a) + " is a shared tile of " + std::string(scalar_name(a.scalar)) +
                 " of rank 1 or 2, not " + ts(t));
  }
  if (auto e = tile_shape_error(t); !e.empty()) return error(e);
  if (t.layout == 0 || t.layout != a.layout)
    return error("a slot takes its array's shared layout: " + ts(t) + " of " + ts(a));
  return ok(t);
}

// tile.read t: a shared tile's elements in registers.
TypeResult rule_tile_read(const TypeQuery& q) {
  const Type& t = q.operand(ops::TileUnary::tile);
  if (!t.is_tile() || t.space != MemorySpace::Shared) return error("reads a shared tile, not " + ts(t));
  if (const AttrValue* lanes = q.attr(AttrKey::Lanes); lanes && !Target::valid_vector_width(int(lanes->i)))
    return error("lanes is a vector width (" + Target::vector_widths_text() + "), not " + std::to_string(lanes->i));
  Type r = t;
  r.space = MemorySpace::Registers;
  return ok(r);
}

// The shared array a copy or a stage writes: rows as its shared layout lays them.
std::string staging_error(const Type& a, const Type& t) {
  if (a.kind != TypeKind::Shared || a.width != 1 || a.scalar != t.scalar || a.layout == 0)
    return "writes " + ts(t) + " into a shared array of its element with a shared layout, not " + ts(a);
  if (t.rank < 1 || t.rank > 2) return "writes a tile of rank 1 or 2, not " + ts(t);
  return {};
}

// tile.copy_cell array, offset, view, valid, cell...: one cell index per dimension of the view.
TypeResult rule_tile_copy_cell(const TypeQuery& q) {
  const Type& v = q.operand(ops::TileCopyCell::view);
  if (v.space != MemorySpace::Global) return error("copies from a view (a global tile), not " + ts(v));
  if (auto e = staging_error(q.operand(ops::TileCopyCell::array), v); !e.empty()) return error(e);
  if (size_t cells = q.operands_from(ops::TileCopyCell::cell).size(); cells != size_t(v.rank)) {
    return error("takes one cell index per dimension of " + ts(v) + ", has " + std::to_string(cells));
  }
  return none();
}

// tile.stage array, offset, tile: a register tile's rows into a shared array.
TypeResult rule_tile_stage(const TypeQuery& q) {
  const Type& t = q.operand(ops::TileStage::tile);
  if (!t.is_register_tile()) return error("stages a register tile, not " + ts(t));
  if (auto e = staging_error(q.operand(ops::TileStage::array), t); !e.empty()) return error(e);
  return none();
}

// mma.sync.a_frag a, b, b_offset, acc {shape = [m, n, k], planes = [pm, 1], pitches = [ldb],
// b_columns}: mma.sync with a in registers, a local array of each unit's elements of the m x k
// factor in the accumulator layout of an m x k product over the same pm x 1 planes (mma.h).
TypeResult rule_mma_sync_frag_a(const TypeQuery& q) {
  const MmaInstruction& in = kMmaSyncM16N8K16;
  const Type &a = q.operand(ops::MmaSyncFragA::a), &b = q.operand(ops::MmaSyncFragA::b),
             &acc = q.operand(ops::MmaSyncFragA::acc);
  if (a.kind != TypeKind::Local || b.kind != TypeKind::Shared || a.scalar != b.scalar || a.width != 1 || b.width != 1 ||
      !mma_instruction(a.scalar, in.c)) {
    return error("multiplies a local array by a shared array of " + std::string(scalar_name(in.factors[0])) + " or " +
                 std::string(scalar_name(in.factors[1])) + ", not " + ts(a) + " and " + ts(b));
  }
  if (acc.kind != TypeKind::Local || acc.scalar != in.c || acc.width != 1) {
    return error("accumulates into a local array of " + std::string(scalar_name(in.c)) + ", not " + ts(acc));
  }
  std::span<const int64_t> shape = q.get<AttrKey::Shape>(), planes = q.get<AttrKey::Planes>(),
                           pitch = q.get<AttrKey::Pitches>();
  if (shape.size() != 3 || planes.size() != 2 || pitch.size() != 1 || planes[1] != 1) {
    return error("needs shape = [m, n, k], planes = [pm, 1] and pitches = [ldb]");
  }
  int64_t m = shape[0], n = shape[1], k = shape[2], wm = planes[0];
  const bool b_columns = q.get<AttrKey::BColumns>();
  const int64_t bm = in.m, bn = in.n, bk = in.k, esize = scalar_bytes(b.scalar);
  if (wm < 1 || m % (bm * wm) != 0 || n % bn != 0 || k % bk != 0 || pitch[0] < (b_columns ? k : n) ||
      (pitch[0] * esize) % 16 != 0) {
    return error("takes m a multiple of " + std::to_string(bm) + " pm, n of " + std::to_string(bn) + ", k of " +
                 std::to_string(bk) + ", and a row pitch of whole 16 bytes at least n (k for b stored as columns)");
  }
  const int64_t a_slots = mma_sync_slots(in, uint32_t(m), uint32_t(k), uint32_t(wm), 1);
  if (int64_t(a.length) != a_slots) {
    return error("each unit holds " + std::to_string(a_slots) + " elements of a, not " + std::to_string(a.length));
  }
  const int64_t slots = mma_sync_slots(in, uint32_t(m), uint32_t(n), uint32_t(wm), 1);
  if (int64_t(acc.length) != slots) {
    return error("each unit holds " + std::to_string(slots) + " accumulators, not " + std::to_string(acc.length));
  }
  return none();
}

// wgmma.mma_async a, a_offset, b, b_offset, acc {shape = [64, n, k]}: factors of one format in
// shared arrays, offsets integers, acc each unit's n / 2 f32 accumulators. The arrays' layouts
// (rows of one swizzle span) are the verifier's to check: a type names its layout by number.
TypeResult rule_wgmma(const TypeQuery& q) {
  // The register-A form (mma_async.a_frag) takes a local array where the other takes a shared one
  // and its offset; b, b_offset and acc line up otherwise.
  const bool frag = q.kind == K::WgmmaMmaAsyncFragA;
  using M = ops::MmaSync;
  using F = ops::MmaSyncFragA;
  const Type &a = frag ? q.operand(F::a) : q.operand(M::a), &b = frag ? q.operand(F::b) : q.operand(M::b),
             &acc = frag ? q.operand(F::acc) : q.operand(M::acc);
  if (frag && (a.kind != TypeKind::Local || b.kind != TypeKind::Shared || a.scalar != b.scalar || a.width != 1 ||
               b.width != 1 || (a.scalar != Scalar::BF16 && a.scalar != Scalar::F16))) {
    return error("multiplies a local array by a shared array, both of bf16 or f16, not " + ts(a) + " and " + ts(b));
  }
  if (!frag && (a.kind != TypeKind::Shared || b.kind != TypeKind::Shared || a.scalar != b.scalar || a.width != 1 ||
                b.width != 1 || !wgmma_factor(a.scalar))) {
    return error("multiplies two shared arrays of one of " + wgmma_factors_text() + ", not " + ts(a) + " and " + ts(b));
  }
  std::vector<size_t> offsets{frag ? size_t(F::b_offset) : size_t(M::b_offset)};
  if (!frag) offsets.insert(offsets.begin(), size_t(M::a_offset));
  for (size_t slot : offsets) {
    const Type& o = q.operands[slot];  // by position: the two signatures name b_offset at 2 and 3
    if (!o.is_value() || o.width != 1 || !is_int(o.scalar)) {
      return error(role(q.kind, slot) + " must be a scalar integer, is " + ts(o));
    }
  }
  std::span<const int64_t> shape = q.get<AttrKey::Shape>();
  const int64_t step = kWgmmaStepBytes / scalar_bytes(a.scalar);
  if (shape.size() != 3 || shape[0] != kWgmmaRows || shape[1] < 8 || shape[1] > 256 || shape[1] % 8 != 0 ||
      shape[2] < step || shape[2] % step != 0) {
    return error("needs shape = [64, n, k] with n 8 to 256 in steps of 8 and k a multiple of " + std::to_string(step) +
                 " (32 bytes of " + std::string(scalar_name(a.scalar)) + ")");
  }
  if (frag && int64_t(a.length) != shape[2] / 2) {
    return error("each unit holds " + std::to_string(shape[2] / 2) + " elements of a (8 per 16 of k), not " +
                 std::to_string(a.length));
  }
  if (acc.kind != TypeKind::Local || acc.scalar != Scalar::F32 || acc.width != 1 ||
      int64_t(acc.length) != shape[1] / 2) {
    return error("accumulates into each unit's local array of " + std::to_string(shape[1] / 2) + " f32, not " +
                 ts(acc));
  }
  return none();
}

// wgmma.fence acc... and wgmma.wait_group acc... {pending = n}: accumulator arrays (local f32; a
// fence also names the register-A form's local arrays of bf16 or f16), whose writes come before the
// fence, and which the products the wait completes write.
TypeResult rule_wgmma_accumulators(const TypeQuery& q) {
  if (q.kind == K::WgmmaWaitGroup) {
    if (int64_t p = q.get<AttrKey::Pending>(); p < 0 || p > 7) return error("needs pending = 0 to 7");
  }
  for (const Type& t : q.operands_from(ops::WgmmaAccumulators::accumulators)) {
    const bool a_fragment = q.kind == K::WgmmaFence && (t.scalar == Scalar::BF16 || t.scalar == Scalar::F16);
    if (t.kind != TypeKind::Local || (t.scalar != Scalar::F32 && !a_fragment) || t.width != 1) {
      return error(q.kind == K::WgmmaFence
                       ? "names accumulator arrays (local arrays of f32) and register factors (of bf16 or f16), not " +
                             ts(t)
                       : "names accumulator arrays (local arrays of f32), not " + ts(t));
    }
  }
  return none();
}

// --- the table and the schema check ---

using Rule = TypeResult (*)(const TypeQuery&);
constexpr Rule kRules[] = {
#define KILN_X(e, text, family, signature, result, attrs, rule, regions, traits) &rule_##rule,
    KILN_IR_OPS(KILN_X)
#undef KILN_X
};

// What an operand is for, in messages, by its name in the op's signature: "the index must be a
// scalar integer, is f32", "the lower bound ...".
std::string role(OpKind k, size_t i) {
  std::string name(op_info(k).operand_name(i));
  for (char& c : name) c = c == '_' ? ' ' : c;
  return "the " + name;
}

// How messages name what an attribute's type holds.
std::string attr_type_text(AttrType t) {
  switch (t) {
    case AttrType::Flag: return "a flag";
    case AttrType::Int: return "an integer";
    case AttrType::Number: return "a number";
    case AttrType::String: return "a string";
    case AttrType::Ints: return "an array of integers";
    case AttrType::Pad: return "a padding value (zero, neg_zero, pos_inf, neg_inf, nan)";
  }
  return "?";
}

// The attributes the op's row declares, and only those, each of its key's type.
std::string attrs_error(const TypeQuery& q) {
  const OpInfo& info = op_info(q.kind);
  for (const Attr& a : q.attrs) {
    std::string name(attr_name(a.key));
    if (!info.takes(a.key)) return "takes no attribute '" + name + "'";
    if (!attr_value_fits(attr_type(a.key), a.value))
      return "attribute '" + name + "' must be " + attr_type_text(attr_type(a.key));
  }
  for (int k = 0; k < kAttrKeyCount; ++k) {
    if (info.needs(AttrKey(k)) && !q.attr(AttrKey(k)))
      return "needs the attribute '" + std::string(attr_name(AttrKey(k))) + "'";
  }
  return {};
}

// An elementwise op over register tiles of one shape: the op's rule applied to the elements, the
// result a tile of that shape. The tile layer widens operands (broadcast) before it records one.
TypeResult lift_to_tiles(const TypeQuery& q, const Type& shape) {
  std::vector<Type> elements;
  for (size_t i = 0; i < q.operands.size(); ++i) {
    const Type& t = q.operands[i];
    if (!t.is_register_tile())
      return error("operand " + std::to_string(i) + " is " + ts(t) + ", not a tile like the others");
    if (!same_shape(t, shape)) return error("operands have different shapes: " + ts(shape) + " and " + ts(t));
    elements.push_back(Type::scalar_of(t.scalar));
  }
  // Every operand in the first one's layout, which the result takes.
  const Type& first = q.operands.front();
  for (const Type& t : q.operands) {
    if (t.layout != first.layout) {
      return error("operands have different layouts: " + ts(first) + " and " + ts(t) +
                   " (a layout changes by tile.convert_layout)");
    }
  }
  TypeQuery inner = q;
  inner.operands = elements;
  if (q.stated.is_tile()) {
    if (!same_shape(q.stated, shape)) return error("gives " + ts(q.stated) + " from " + ts(shape));
    inner.stated = Type::scalar_of(q.stated.scalar);
  }
  TypeResult r = kRules[static_cast<size_t>(q.kind)](inner);
  if (!r.ok()) return r;
  return ok(shape.with_layout(first.layout).tile_of(r.type.scalar));
}

// The schema's part of typing: operand counts are the verifier's structure check, so here each
// operand only meets its letter, and each attribute its declaration (attrs_error).
std::string schema_error(const TypeQuery& q) {
  const OpInfo& info = op_info(q.kind);
  for (size_t i = 0; i < q.operands.size(); ++i) {
    const Type& t = q.operands[i];
    char letter = info.operand_kind(i);
    switch (letter) {
      case 'v':
        // A var may hold a register tile (a tile::Var a loop carries), so var.store takes one too.
        if (!t.is_value() && !(t.is_register_tile() && (elementwise(q.kind) || q.kind == K::VarStore))) {
          return "operand " + std::to_string(i) + " is " + ts(t) + ", not a value";
        }
        break;
      case 't':
        if (!t.is_tile()) return "operand " + std::to_string(i) + " is " + ts(t) + ", not a tile";
        break;
      case 'i':
        if (!t.is_scalar() || !is_int(t.scalar)) return role(q.kind, i) + " must be a scalar integer, is " + ts(t);
        break;
      case 'b':
      case 'm':
        if (!(t == boolean())) return role(q.kind, i) + " must be bool, is " + ts(t);
        break;
      case 'u':
        if (!(t == u32())) return role(q.kind, i) + " must be u32, is " + ts(t);
        break;
      case 'a':
        if (!t.is_array()) return "takes an array (buffer, tensor, shared or local), not " + ts(t);
        break;
      case 'x':
        if (t.kind != TypeKind::Var) return "takes a var, not " + ts(t);
        break;
      case 'c':
        if (!(t.is_value() || (t.is_tile() && t.space == MemorySpace::Registers))) {
          return "carries " + ts(t) + "; control flow carries scalars, vectors and register tiles";
        }
        break;
      default: return "operand " + std::to_string(i) + " is one more than the op takes";
    }
  }
  return {};
}

}  // namespace

bool elementwise(OpKind k) {
  switch (op_family(k)) {
    case OpFamily::Arith:
    case OpFamily::Bitwise:
    case OpFamily::Compare:
    case OpFamily::Select:
    case OpFamily::Cast:
    case OpFamily::Math: return true;
    default: return false;
  }
}

std::string operand_count_error(OpKind kind, size_t count) {
  const SignatureInfo& info = op_info(kind).operands();
  int n = static_cast<int>(count);
  if (n >= info.min_operands && (info.max_operands < 0 || n <= info.max_operands)) return {};
  std::string want = info.min_operands == info.max_operands ? std::to_string(info.min_operands)
                     : info.max_operands < 0
                         ? std::to_string(info.min_operands) + " or more"
                         : std::to_string(info.min_operands) + " to " + std::to_string(info.max_operands);
  return "takes " + want + " operands, has " + std::to_string(n);
}

TypeResult result_type(const TypeQuery& q) {
  if (auto e = operand_count_error(q.kind, q.operands.size()); !e.empty()) return error(e);
  if (auto e = schema_error(q); !e.empty()) return error(e);
  if (auto e = attrs_error(q); !e.empty()) return error(e);
  if (elementwise(q.kind)) {
    for (const Type& t : q.operands) {
      if (t.is_tile()) return lift_to_tiles(q, t);
    }
  }
  TypeResult r = kRules[static_cast<size_t>(q.kind)](q);
  if (r.ok() && is_barrier(r.type.scalar) && !r.type.is_none() && r.type.kind != TypeKind::Shared) {
    return error("gives " + ts(r.type) + ": a barrier is never a value, and its arrays are shared ones only");
  }
  // A tile op's result takes the layout its stated type names (a pass assigns them; 0 before),
  // whatever its operands' are: the rules say what a result is, the layout pass where it sits.
  if (r.ok() && r.type.is_tile() && op_family(q.kind) == OpFamily::Tile) {
    r.type.layout = q.stated.is_tile() ? q.stated.layout : 0;
  }
  return r;
}

}  // namespace kiln::ir
