// lower_tiles' core: the blocked layout, emitting ops, the scratch and ring arrays and which of
// them share bytes, the block order, and the coordinates a unit holds (docs/decisions/019, 020).
#include "passes/tile/lower/lowerer.h"

#include "kiln/error.h"
#include "kiln/ir/type_rules.h"

namespace kiln::passes::tile_lowering {

// Row-major over `shape`, the last dimension fastest: `vec` consecutive elements of a row in one
// unit's first slots (one vector access), then the lanes, then the planes, then the unit's further
// slots. Units past the tile's elements repeat it (their bits name nothing).
Layout blocked(const Type& t, uint32_t units, int vec) {
  Layout l;
  l.rank = t.rank;
  l.shape = t.shape;
  std::vector<Target> bits;
  for (int d = t.rank - 1; d >= 0; --d) {
    for (int k = 0; k < log2_of(t.shape[size_t(d)]); ++k) bits.push_back({d, k});
  }
  size_t next = 0;
  int vbits = t.rank == 0 ? 0 : std::min(log2_of(uint64_t(vec)), log2_of(t.shape[size_t(t.rank) - 1]));
  for (int i = 0; i < vbits; ++i) l.slot.push_back(bits[next++]);
  for (int i = 0; i < log2_of(units); ++i) l.unit.push_back(next < bits.size() ? bits[next++] : Target{});
  while (next < bits.size()) l.slot.push_back(bits[next++]);
  return l;
}

void Lowerer::run() {
  Region out;
  b_.enter(out);
  unit_ = b_.emit(K::UnitPos, {}, u32());
  block_positions();
  region(k_.body);
  b_.leave();
  // The scratch arrays go first, sized for their largest use.
  std::unordered_map<Value, int64_t> overlay = plan_overlays();
  auto overlaid = [&](Op& alloc) {
    if (auto it = overlay.find(alloc.result); it != overlay.end())
      alloc.attrs.push_back({AttrKey::Overlay, AttrValue::of_int(it->second)});
  };
  std::vector<Op> top;
  for (auto& [scalar, s] : scratch_) {
    Op alloc;
    alloc.kind = K::SharedAlloc;
    alloc.result = s.array;
    alloc.type = Type::shared(Type::scalar_of(scalar), std::max<uint32_t>(s.length, 1));
    k_.value_types[s.array] = alloc.type;
    overlaid(alloc);
    top.push_back(std::move(alloc));
  }
  for (const Owned& o : own_) {
    if (o.declared) continue;  // the kernel's own shared.alloc, copied into the body below
    Op alloc;
    alloc.kind = K::SharedAlloc;
    alloc.result = o.array;
    alloc.type = Type::shared(Type::scalar_of(o.scalar), o.length);
    overlaid(alloc);
    top.push_back(std::move(alloc));
  }
  for (Op& op : out.ops) {
    if (op.kind == K::SharedAlloc) overlaid(op);
    top.push_back(std::move(op));
  }
  k_.body.ops = std::move(top);
}

Value Lowerer::emit(OpKind kind, std::initializer_list<Value> operands, std::vector<Attr> attrs, Type stated) {
  std::vector<Value> ops(operands);
  return emit_span(kind, ops, std::move(attrs), stated);
}

Value Lowerer::emit_span(OpKind kind, std::span<const Value> operands, std::vector<Attr> attrs, Type stated) {
  std::vector<Type> types;
  for (Value v : operands) types.push_back(k_.type_of(v));
  std::sort(attrs.begin(), attrs.end(), [](const Attr& a, const Attr& b) { return a.key < b.key; });
  TypeResult r = result_type(TypeQuery{kind, types, attrs, stated, ""});
  if (!r.ok())
    throw Error("passes.lower_tiles",
                "kernel '" + k_.name + "': lowering made a bad '" + std::string(op_name(kind)) + "': " + r.error);
  return b_.emit(kind, operands, op_info(kind).has_result() ? r.type : Type::none(), std::move(attrs));
}

Value Lowerer::constant(Scalar s, double v) {
  AttrValue a = s == Scalar::Bool ? AttrValue::of_bool(v != 0)
                : is_float(s)     ? AttrValue::of_float(v)
                                  : AttrValue::of_int(int64_t(v));
  return b_.constant(Type::scalar_of(s), a);
}

Value Lowerer::as_u32(Value v) {
  if (k_.type_of(v) == u32()) return v;
  return emit(K::Cast, {v}, {}, u32());
}

Value Lowerer::own_shared(Scalar s, uint64_t length) {
  Value v = k_.new_value(Type::shared(Type::scalar_of(s), uint32_t(length)));
  own_.push_back({s, v, uint32_t(length)});
  return v;
}

Value Lowerer::scratch(Scalar s, uint64_t length) {
  auto it = scratch_.find(s);
  if (it == scratch_.end()) {
    Value v = k_.new_value(Type::shared(Type::scalar_of(s), 1));
    Scratch fresh{v, 0, {}};
    for (const Owned& o : own_) {
      if (o.top_level && o.ended) fresh.after_rings.push_back(o.array);
    }
    it = scratch_.emplace(s, std::move(fresh)).first;
  }
  it->second.length = std::max<uint32_t>(it->second.length, uint32_t(length));
  return it->second.array;
}

// Which arrays share bytes (docs/decisions/020): a scratch array first used after a top-level
// pipelined loop has ended (every copy into its rings waited for) is never live with those rings
// again, and the barrier every scratch use begins with orders it after the last product's
// reads. So the largest such scratch array takes the largest such ring's bytes, and so on down:
// a matmul's output relayout costs no shared memory beyond its rings, which keeps deeper
// pipelines at two or three blocks per SM. Arrays of one overlay group start at the same byte.
std::unordered_map<Value, int64_t> Lowerer::plan_overlays() const {
  std::vector<const Scratch*> scratches;
  for (const auto& [scalar, s] : scratch_) {
    if (!s.after_rings.empty()) scratches.push_back(&s);
  }
  auto bytes_of = [this](const Scratch* s) { return uint64_t(s->length) * scalar_bytes(k_.type_of(s->array).scalar); };
  std::sort(scratches.begin(), scratches.end(),
            [&](const Scratch* a, const Scratch* b) { return bytes_of(a) > bytes_of(b); });
  std::unordered_map<Value, int64_t> group;
  // New groups are numbered past any the kernel already has (IR written with overlays).
  int64_t next = 0;
  for (const Op& op : k_.body.ops) {
    if (const AttrValue* g = op.kind == K::SharedAlloc ? op.attr(AttrKey::Overlay) : nullptr)
      next = std::max(next, g->i + 1);
  }
  for (const Scratch* s : scratches) {
    const Owned* best = nullptr;
    for (const Owned& o : own_) {
      bool allowed = std::find(s->after_rings.begin(), s->after_rings.end(), o.array) != s->after_rings.end();
      uint64_t bytes = uint64_t(o.length) * scalar_bytes(o.scalar);
      if (allowed && !group.count(o.array) && (!best || bytes > uint64_t(best->length) * scalar_bytes(best->scalar)))
        best = &o;
    }
    if (!best) continue;
    group[best->array] = next;
    group[s->array] = next++;
  }
  return group;
}

// The block's position on each grid axis (u32), emitted once at the top of the kernel (dce drops
// the unused). A kernel with products numbers its blocks in groups (docs/decisions/020): the
// hardware launches blocks in order of x first, so blocks next to each other in time would share
// one column of output blocks and read every row panel of A; in groups of G rows, the blocks that
// run together cover a G x (width) patch whose factors stay in L2. The mapping is a bijection of
// the grid (identity when either axis has one block), so no program can tell.
void Lowerer::block_positions() {
  for (int a = 0; a < 3; ++a) block_pos_[size_t(a)] = emit(K::CubePos, {}, {{AttrKey::Axis, AttrValue::of_int(a)}});
  uint32_t g = group_rows(k_.body);
  if (g <= 1) return;
  Value nx = emit(K::CubeCount, {}, {{AttrKey::Axis, AttrValue::of_int(0)}});
  Value ny = emit(K::CubeCount, {}, {{AttrKey::Axis, AttrValue::of_int(1)}});
  Value lin = add(block_pos_[0], mul(block_pos_[1], nx));
  Value per_group = mul(c32(g), ny);
  Value first = mul(emit(K::Div, {lin, per_group}), c32(g));
  Value rows = emit(K::Min, {emit(K::Sub, {nx, first}), c32(g)});
  Value within = emit(K::Rem, {lin, per_group});
  block_pos_[0] = add(first, emit(K::Rem, {within, rows}));
  block_pos_[1] = emit(K::Div, {within, rows});
}

uint32_t Lowerer::group_rows(const Region& r) {
  for (const Op& op : r.ops) {
    if (op.kind == K::TileMma) return kBlockGroupRows;
    for (const Region& inner : op.regions)
      if (uint32_t g = group_rows(inner)) return g;
  }
  return 0;
}

// The part of coordinate `dim` that the unit's position gives (u32).
Value Lowerer::unit_coord(const Layout& l, int dim) {
  Value c = kNoValue;
  for (size_t i = 0; i < l.unit.size(); ++i) {
    const Target& t = l.unit[i];
    if (t.dim != dim) continue;
    // Runs of consecutive unit bits that name consecutive coordinate bits cost one shift and mask.
    size_t j = i;
    while (j + 1 < l.unit.size() && l.unit[j + 1].dim == dim && l.unit[j + 1].bit == l.unit[j].bit + 1) ++j;
    Value part = emit(K::And, {emit(K::Shr, {unit_, c32(i)}), c32((1u << (j - i + 1)) - 1)});
    if (t.bit > 0) part = emit(K::Shl, {part, c32(uint32_t(t.bit))});
    c = c == kNoValue ? part : emit(K::Or, {c, part});
    i = j;
  }
  return c == kNoValue ? c32(0) : c;
}

uint32_t Lowerer::slot_coord(const Layout& l, size_t slot, int dim) {
  uint32_t c = 0;
  for (size_t i = 0; i < l.slot.size(); ++i) {
    if (l.slot[i].dim == dim && ((slot >> i) & 1)) c |= 1u << l.slot[i].bit;
  }
  return c;
}

// True on the units that own their elements: those whose bits that name nothing are zero.
Value Lowerer::owner(const Layout& l) {
  uint32_t none = 0;
  for (size_t i = 0; i < l.unit.size(); ++i) {
    if (l.unit[i].none()) none |= 1u << i;
  }
  if (none == 0) return kNoValue;
  return emit(K::Eq, {emit(K::And, {unit_, c32(none)}), c32(0)});
}

Value Lowerer::both(Value a, Value b) {
  if (a == kNoValue) return b;
  if (b == kNoValue) return a;
  return emit(K::And, {a, b});
}

}  // namespace kiln::passes::tile_lowering
