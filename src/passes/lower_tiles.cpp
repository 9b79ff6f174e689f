// lower_tiles: the tile layer's ops become kiln's ordinary ops, so both backends run tile kernels
// and the CPU stays the oracle (docs/decisions/019-tile-layer.md).
//
// A register tile is spread over the cube's U units by a layout. Every tile dimension is a power
// of two, so a layout is a map of bits: each bit of a unit's position (lane bits 0-4, then warp
// bits) and each bit of a unit's slot number names one bit of one coordinate, or none (the units
// that differ only in that bit hold the same elements). A unit holds 2^(slot bits) elements, each
// an SSA value. Elementwise ops between tiles of one layout are one op per slot; a layout change
// goes through shared memory; a reduction combines a unit's own slots, then lanes by shuffles,
// then warps through shared memory; a transpose only renames dimensions.
//
// Loads and stores of cells are vector accesses of the parameter's width (chosen at record time so
// that a vector never straddles a row or the extent), masked where a cell can reach past the
// extent; a masked-off lane reads the padding value. Block ids are cube positions.
#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "kiln/error.h"
#include "kiln/ir/builder.h"
#include "kiln/ir/type_rules.h"
#include "kiln/passes/passes.h"

namespace kiln::passes {

namespace {

using namespace ir;
using K = OpKind;

constexpr uint32_t kLaneBits = 5;  // a plane is 32 units (docs/ir.md)

int log2_of(uint64_t v) {
  int b = 0;
  while ((uint64_t(1) << b) < v) ++b;
  return b;
}

// Where one input bit (of the unit position or of the slot number) goes: bit `bit` of coordinate
// `dim`, or nowhere (dim -1).
struct Target {
  int dim = -1;
  int bit = 0;
  bool none() const { return dim < 0; }
  friend bool operator==(const Target&, const Target&) = default;
};

struct Layout {
  int rank = 0;
  std::array<uint32_t, 4> shape{};
  std::vector<Target> slot;  // slot bit i
  std::vector<Target> unit;  // unit bit i
  size_t slots() const { return size_t(1) << slot.size(); }
  friend bool operator==(const Layout&, const Layout&) = default;
};

// Row-major over `shape`, the last dimension fastest: `vec` consecutive elements of a row in one
// unit's first slots (one vector access), then the lanes, then the warps, then the unit's further
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

// A lowered register tile.
struct Tiled {
  Type type;
  bool splat = false;  // every element is slots[0] (a constant tile)
  Layout layout;
  std::vector<Value> slots;
  // A widening (tile.broadcast) not yet placed: it takes the layout its user wants.
  std::shared_ptr<Tiled> widen_of;
  // A factor a pipelined loop copied into shared memory (rows `pitch` elements apart, from element
  // `offset` of `array`): mma reads it there; anything else reads it into registers.
  struct Staged {
    Value array;
    Value offset;
    uint32_t pitch;
  };
  std::optional<Staged> staged;
};

// Whether a tile's values sit in its layout's slots (not a constant, a pending widening, or a
// factor staged in shared memory).
bool placed(const Tiled& t) { return !t.splat && !t.widen_of && !t.staged; }

class Lowerer {
 public:
  Lowerer(Kernel& k, uint32_t units) : k_(k), b_(k), units_(units), unit_bits_(log2_of(units)) {}

  void run() {
    Region out;
    b_.enter(out);
    unit_ = b_.emit(K::UnitPos, {}, u32());
    block_positions();
    region(k_.body);
    b_.leave();
    // The scratch arrays go first, sized for their largest use.
    std::unordered_map<Value, int64_t> overlay = plan_overlays();
    auto overlaid = [&](Op& alloc) {
      if (auto it = overlay.find(alloc.result); it != overlay.end()) alloc.attrs.push_back({AttrKey::Overlay, AttrValue::of_int(it->second)});
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
      Op alloc;
      alloc.kind = K::SharedAlloc;
      alloc.result = o.array;
      alloc.type = Type::shared(Type::scalar_of(o.scalar), o.length);
      overlaid(alloc);
      top.push_back(std::move(alloc));
    }
    for (Op& op : out.ops) top.push_back(std::move(op));
    k_.body.ops = std::move(top);
  }

 private:
  // ---- emitting ----------------------------------------------------------------------------

  static Type u32() { return Type::scalar_of(Scalar::U32); }

  Value emit(OpKind kind, std::initializer_list<Value> operands, std::vector<Attr> attrs = {}, Type stated = Type::none()) {
    std::vector<Value> ops(operands);
    return emit_span(kind, ops, std::move(attrs), stated);
  }
  Value emit_span(OpKind kind, std::span<const Value> operands, std::vector<Attr> attrs = {}, Type stated = Type::none()) {
    std::vector<Type> types;
    for (Value v : operands) types.push_back(k_.type_of(v));
    std::sort(attrs.begin(), attrs.end(), [](const Attr& a, const Attr& b) { return a.key < b.key; });
    TypeResult r = result_type(TypeQuery{kind, types, attrs, stated, ""});
    if (!r.ok()) throw Error("passes.lower_tiles", "kernel '" + k_.name + "': lowering made a bad '" + std::string(op_name(kind)) + "': " + r.error);
    return b_.emit(kind, operands, op_info(kind).has_result() ? r.type : Type::none(), std::move(attrs));
  }
  Value constant(Scalar s, double v) {
    AttrValue a = s == Scalar::Bool ? AttrValue::of_bool(v != 0) : is_float(s) ? AttrValue::of_float(v) : AttrValue::of_int(int64_t(v));
    return b_.constant(Type::scalar_of(s), a);
  }
  Value c32(uint64_t v) { return b_.const_int(Scalar::U32, int64_t(v)); }
  Value add(Value a, Value b) { return emit(K::Add, {a, b}); }
  Value mul(Value a, Value b) { return emit(K::Mul, {a, b}); }
  Value as_u32(Value v) {
    if (k_.type_of(v) == u32()) return v;
    return emit(K::Cast, {v}, {}, u32());
  }

  // Scratch shared memory, one array per element type, shared by every layout change and
  // reduction (each use is fenced by barriers, so they can reuse it).
  struct Scratch {
    Value array;
    uint32_t length = 0;
    // The rings whose loops had ended when this array was first used: it may share their bytes.
    std::vector<Value> after_rings;
  };
  // A shared array of its own (a pipeline's ring), not shared with other uses while its loop runs.
  struct Owned {
    Scalar scalar;
    Value array;
    uint32_t length;
    bool top_level = false;  // its loop stands in the kernel's body, so it runs once
    bool ended = false;      // that loop is lowered, and the copies into it waited for
  };
  Value own_shared(Scalar s, uint64_t length) {
    Value v = k_.new_value(Type::shared(Type::scalar_of(s), uint32_t(length)));
    own_.push_back({s, v, uint32_t(length)});
    return v;
  }
  Value scratch(Scalar s, uint64_t length) {
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
  std::unordered_map<Value, int64_t> plan_overlays() const {
    std::vector<const Scratch*> scratches;
    for (const auto& [scalar, s] : scratch_) {
      if (!s.after_rings.empty()) scratches.push_back(&s);
    }
    auto bytes_of = [this](const Scratch* s) { return uint64_t(s->length) * scalar_bytes(k_.type_of(s->array).scalar); };
    std::sort(scratches.begin(), scratches.end(), [&](const Scratch* a, const Scratch* b) { return bytes_of(a) > bytes_of(b); });
    std::unordered_map<Value, int64_t> group;
    // New groups are numbered past any the kernel already has (IR written with overlays).
    int64_t next = 0;
    for (const Op& op : k_.body.ops) {
      if (const AttrValue* g = op.kind == K::SharedAlloc ? op.attr(AttrKey::Overlay) : nullptr) next = std::max(next, g->i + 1);
    }
    for (const Scratch* s : scratches) {
      const Owned* best = nullptr;
      for (const Owned& o : own_) {
        bool allowed = std::find(s->after_rings.begin(), s->after_rings.end(), o.array) != s->after_rings.end();
        uint64_t bytes = uint64_t(o.length) * scalar_bytes(o.scalar);
        if (allowed && !group.count(o.array) && (!best || bytes > uint64_t(best->length) * scalar_bytes(best->scalar))) best = &o;
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
  void block_positions() {
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
  // Triton's default group height; 4 and 8 measured alike on the H200 (docs/perf.md).
  static constexpr uint32_t kBlockGroupRows = 8;
  static uint32_t group_rows(const Region& r) {
    for (const Op& op : r.ops) {
      if (op.kind == K::TileMma) return kBlockGroupRows;
      for (const Region& inner : op.regions)
        if (uint32_t g = group_rows(inner)) return g;
    }
    return 0;
  }

  // ---- coordinates --------------------------------------------------------------------------

  // The part of coordinate `dim` that the unit's position gives (u32).
  Value unit_coord(const Layout& l, int dim) {
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
  static uint32_t slot_coord(const Layout& l, size_t slot, int dim) {
    uint32_t c = 0;
    for (size_t i = 0; i < l.slot.size(); ++i) {
      if (l.slot[i].dim == dim && ((slot >> i) & 1)) c |= 1u << l.slot[i].bit;
    }
    return c;
  }
  // True on the units that own their elements: those whose bits that name nothing are zero.
  Value owner(const Layout& l) {
    uint32_t none = 0;
    for (size_t i = 0; i < l.unit.size(); ++i) {
      if (l.unit[i].none()) none |= 1u << i;
    }
    if (none == 0) return kNoValue;
    return emit(K::Eq, {emit(K::And, {unit_, c32(none)}), c32(0)});
  }
  Value both(Value a, Value b) {
    if (a == kNoValue) return b;
    if (b == kNoValue) return a;
    return emit(K::And, {a, b});
  }

  // ---- presenting a tile in a layout --------------------------------------------------------

  // The layout `want` of a tile of shape want.shape, as `from` (of a shape that widens to it)
  // would be without moving data; nullopt when it is not.
  static bool free_widen(const Layout& from, const Layout& want, std::vector<size_t>& slot_of) {
    auto widened = [&](int d) { return d >= 0 && from.rank == want.rank && from.shape[size_t(d)] == 1 && want.shape[size_t(d)] != 1; };
    if (from.rank != want.rank && from.rank != 0) return false;
    Layout expect;
    for (const Target& t : want.unit) expect.unit.push_back(from.rank == 0 || widened(t.dim) ? Target{} : t);
    std::vector<size_t> kept;
    for (size_t i = 0; i < want.slot.size(); ++i) {
      if (from.rank != 0 && !widened(want.slot[i].dim)) {
        expect.slot.push_back(want.slot[i]);
        kept.push_back(i);
      }
    }
    if (expect.unit != from.unit || expect.slot != from.slot) return false;
    slot_of.assign(want.slots(), 0);
    for (size_t j = 0; j < want.slots(); ++j) {
      size_t s = 0;
      for (size_t b = 0; b < kept.size(); ++b) s |= ((j >> kept[b]) & 1) << b;
      slot_of[j] = s;
    }
    return true;
  }

  // `t` with its values in slots: itself when placed, else in the blocked layout.
  Tiled in_slots(const Tiled& t) {
    if (placed(t)) return t;
    Tiled r;
    r.type = t.type;
    r.layout = blocked(t.type, units_, 1);
    r.slots = present(t, r.layout);
    return r;
  }

  std::vector<Value> present(const Tiled& t, const Layout& want) {
    if (t.staged) return read_staged(*t.staged, want);
    if (t.splat) return std::vector<Value>(want.slots(), t.slots[0]);
    if (t.widen_of) return present_widened(*t.widen_of, want);
    if (t.layout == want) return t.slots;
    return relayout(t, want);
  }

  std::vector<Value> present_widened(const Tiled& src, const Layout& want) {
    if (src.staged) {
      Tiled m = src;
      m.staged.reset();
      m.layout = blocked(src.type, units_, 1);
      m.slots = read_staged(*src.staged, m.layout);
      return present_widened(m, want);
    }
    if (src.splat) return std::vector<Value>(want.slots(), src.slots[0]);
    if (src.widen_of) return present_widened(*src.widen_of, want);
    std::vector<size_t> slot_of;
    if (free_widen(src.layout, want, slot_of)) {
      std::vector<Value> r;
      for (size_t s : slot_of) r.push_back(src.slots[s]);
      return r;
    }
    return relayout(src, want);
  }

  // Through shared memory: the owners write the tile row-major, every unit reads what `want`
  // gives it (coordinates of widened dimensions read index 0). Barriers on both sides of the
  // write keep the scratch array's uses apart.
  std::vector<Value> relayout(const Tiled& t, const Layout& want) {
    Scalar s = t.type.scalar;
    bool boolean = s == Scalar::Bool;
    Scalar held = boolean ? Scalar::U8 : s;
    auto [stride, elements] = row_major_padded(t.type);
    Value buf = scratch(held, elements);
    const Layout& from = t.layout;
    emit(K::SyncCube, {});
    Value mine = owner(from);
    Value base = unit_linear(from, stride);
    for (size_t j = 0; j < from.slots(); ++j) {
      Value v = t.slots[j];
      if (boolean) v = emit(K::Cast, {v}, {}, Type::scalar_of(Scalar::U8));
      Value at = add(base, c32(slot_linear(from, j, stride)));
      if (mine == kNoValue) emit(K::Store, {buf, at, v});
      else emit(K::Store, {buf, at, v, mine});
    }
    emit(K::SyncCube, {});
    // Reading: widened dimensions (length 1 in t, longer in want) stay at 0.
    Layout read = want;
    for (Target& x : read.unit) {
      if (x.dim >= 0 && t.type.rank > 0 && t.type.shape[size_t(x.dim)] == 1) x = Target{};
    }
    if (t.type.rank == 0) {
      for (Target& x : read.unit) x = Target{};
    }
    std::array<uint32_t, 4> rstride = stride;
    Value rbase = unit_linear(read, rstride, t.type);
    std::vector<Value> out;
    for (size_t j = 0; j < want.slots(); ++j) {
      uint32_t off = 0;
      for (int d = 0; d < t.type.rank; ++d) {
        if (t.type.shape[size_t(d)] == 1) continue;
        off += slot_coord(want, j, d) * rstride[size_t(d)];
      }
      Value v = emit(K::Load, {buf, add(rbase, c32(off))});
      if (boolean) v = emit(K::Cast, {v}, {}, Type::scalar_of(Scalar::Bool));
      out.push_back(v);
    }
    return out;
  }

  // Each unit reads its slots of a staged factor (the pipeline's wait and barrier came before).
  std::vector<Value> read_staged(const Tiled::Staged& st, const Layout& want) {
    std::array<uint32_t, 4> stride = {st.pitch, 1, 0, 0};
    Value base = add(st.offset, unit_linear(want, stride));
    std::vector<Value> out;
    for (size_t j = 0; j < want.slots(); ++j) out.push_back(emit(K::Load, {st.array, add(base, c32(slot_linear(want, j, stride)))}));
    return out;
  }

  static std::array<uint32_t, 4> row_major(const Type& t) {
    std::array<uint32_t, 4> s{};
    uint32_t n = 1;
    for (int d = t.rank - 1; d >= 0; --d) {
      s[size_t(d)] = n;
      n *= t.shape[size_t(d)];
    }
    return s;
  }
  // Row-major with each row (the last dimension) padded by 16 bytes when it spans a multiple of
  // 128 bytes: otherwise the same column of consecutive rows falls in one bank, and a layout that
  // puts rows on lanes (mma's accumulators, eight rows a warp) writes 8 ways serialised. Answers
  // the strides and the elements the array needs.
  static std::pair<std::array<uint32_t, 4>, uint64_t> row_major_padded(const Type& t) {
    if (t.rank < 2) return {row_major(t), t.tile_elements()};
    uint32_t bytes = scalar_bytes(t.scalar);
    uint32_t row = t.shape[size_t(t.rank - 1)];
    uint32_t pitch = (uint64_t(row) * bytes) % 128 == 0 ? row + 16 / bytes : row;
    std::array<uint32_t, 4> s{};
    uint64_t n = pitch;
    s[size_t(t.rank - 1)] = 1;
    for (int d = t.rank - 2; d >= 0; --d) {
      s[size_t(d)] = uint32_t(n);
      n *= t.shape[size_t(d)];
    }
    return {s, n};
  }
  // Σ unit coordinate x stride; with `within`, dimensions of length 1 in it are skipped.
  Value unit_linear(const Layout& l, const std::array<uint32_t, 4>& stride, std::optional<Type> within = std::nullopt) {
    Value sum = kNoValue;
    for (int d = 0; d < l.rank; ++d) {
      if (within && (within->rank == 0 || within->shape[size_t(d)] == 1)) continue;
      bool any = false;
      for (const Target& t : l.unit) any = any || t.dim == d;
      if (!any) continue;
      Value c = unit_coord(l, d);
      if (stride[size_t(d)] != 1) c = mul(c, c32(stride[size_t(d)]));
      sum = sum == kNoValue ? c : add(sum, c);
    }
    return sum == kNoValue ? c32(0) : sum;
  }
  static uint32_t slot_linear(const Layout& l, size_t slot, const std::array<uint32_t, 4>& stride) {
    uint32_t off = 0;
    for (int d = 0; d < l.rank; ++d) off += slot_coord(l, slot, d) * stride[size_t(d)];
    return off;
  }

  // ---- the ops ------------------------------------------------------------------------------

  Tiled& tile(Value v) {
    auto it = tiles_.find(v);
    if (it == tiles_.end()) throw Error("passes.lower_tiles", "kernel '" + k_.name + "': a tile value was used before it was lowered");
    return it->second;
  }

  // The layout an elementwise op computes in: its first operand's that has one.
  std::optional<Layout> common_layout(std::span<const Value> operands) {
    for (Value v : operands) {
      const Tiled& t = tile(v);
      if (placed(t)) return t.layout;
    }
    return std::nullopt;
  }

  void elementwise(const Op& op) {
    std::optional<Layout> l = common_layout(op.operands);
    Tiled r;
    r.type = op.type;
    if (!l) {
      bool all_splat = true;
      for (Value v : op.operands) all_splat = all_splat && tile(v).splat;
      if (all_splat) {
        std::vector<Value> ops;
        for (Value v : op.operands) ops.push_back(tile(v).slots[0]);
        r.splat = true;
        r.slots.push_back(emit_span(op.kind, ops, op.attrs, Type::scalar_of(op.type.scalar)));
        tiles_[op.result] = r;
        return;
      }
      l = blocked(op.type, units_, 1);
    }
    std::vector<std::vector<Value>> in;
    for (Value v : op.operands) in.push_back(present(tile(v), *l));
    r.layout = *l;
    for (size_t j = 0; j < l->slots(); ++j) {
      std::vector<Value> ops;
      for (auto& s : in) ops.push_back(s[j]);
      r.slots.push_back(emit_span(op.kind, ops, op.attrs, Type::scalar_of(op.type.scalar)));
    }
    tiles_[op.result] = r;
  }

  void full(const Op& op) {
    Tiled r;
    r.type = op.type;
    r.splat = true;
    r.slots.push_back(b_.constant(Type::scalar_of(op.type.scalar), *op.attr(AttrKey::Value)));
    tiles_[op.result] = r;
  }

  void widen(const Op& op) {
    Tiled r;
    r.type = op.type;
    const Tiled& src = tile(op.operands[0]);
    if (src.splat) {
      r = src;
      r.type = op.type;
    } else {
      r.widen_of = std::make_shared<Tiled>(src);
    }
    tiles_[op.result] = r;
  }

  void transpose(const Op& op) {
    const Tiled& src = tile(op.operands[0]);
    Tiled r = src;
    r.type = op.type;
    if (src.splat) {
      tiles_[op.result] = r;
      return;
    }
    if (!placed(src)) {
      r.widen_of.reset();
      r.staged.reset();
      r.layout = blocked(src.type, units_, 1);
      r.slots = present(src, r.layout);
    }
    std::swap(r.layout.shape[0], r.layout.shape[1]);
    for (auto* bits : {&r.layout.slot, &r.layout.unit}) {
      for (Target& t : *bits) {
        if (t.dim >= 0) t.dim = 1 - t.dim;
      }
    }
    tiles_[op.result] = r;
  }

  Value combine(OpKind k, Value a, Value b) {
    OpKind c = k == K::TileReduceSum ? K::Add : k == K::TileReduceMax ? K::Max : K::Min;
    return emit(c, {a, b});
  }

  void reduce(const Op& op) {
    Tiled src = in_slots(tile(op.operands[0]));
    int dim = int(op.attr_int(AttrKey::Dim));
    bool keep = op.flag(AttrKey::Keepdims);
    const Layout& l = src.layout;
    // 1. A unit's own slots along dim.
    std::vector<size_t> kept, folded;
    for (size_t i = 0; i < l.slot.size(); ++i) (l.slot[i].dim == dim ? folded : kept).push_back(i);
    size_t nres = size_t(1) << kept.size();
    std::vector<Value> acc(nres, kNoValue);
    for (size_t j = 0; j < l.slots(); ++j) {
      size_t r = 0;
      for (size_t b = 0; b < kept.size(); ++b) r |= ((j >> kept[b]) & 1) << b;
      acc[r] = acc[r] == kNoValue ? src.slots[j] : combine(op.kind, acc[r], src.slots[j]);
    }
    // 2. Lanes of a plane, by butterfly shuffles (each pair computes the same a + b, so every
    // lane ends with the same value).
    std::vector<size_t> warp_bits;
    for (size_t i = 0; i < l.unit.size(); ++i) {
      if (l.unit[i].dim != dim) continue;
      if (i < kLaneBits) {
        for (Value& a : acc) a = combine(op.kind, a, emit(K::PlaneShuffleXor, {a, c32(1u << i)}));
      } else {
        warp_bits.push_back(i);
      }
    }
    // 3. Warps, through shared memory: every unit writes its partial, then folds those of the
    // units that differ from it only in the warp bits along dim, in the same order everywhere.
    if (!warp_bits.empty()) {
      Value buf = scratch(op.type.scalar, uint64_t(nres) * units_);
      emit(K::SyncCube, {});
      for (size_t r = 0; r < nres; ++r) emit(K::Store, {buf, add(c32(r * units_), unit_), acc[r]});
      emit(K::SyncCube, {});
      uint32_t mask = 0;
      for (size_t i : warp_bits) mask |= 1u << i;
      Value others = emit(K::And, {unit_, c32(~mask & (units_ - 1))});
      for (size_t r = 0; r < nres; ++r) {
        Value total = kNoValue;
        for (size_t w = 0; w < (size_t(1) << warp_bits.size()); ++w) {
          uint32_t bits = 0;
          for (size_t b = 0; b < warp_bits.size(); ++b) bits |= uint32_t((w >> b) & 1) << warp_bits[b];
          Value v = emit(K::Load, {buf, add(c32(r * units_ + bits), others)});
          total = total == kNoValue ? v : combine(op.kind, total, v);
        }
        acc[r] = total;
      }
    }
    Tiled res;
    res.type = op.type;
    res.slots = acc;
    Layout& rl = res.layout;
    rl.rank = op.type.rank;
    rl.shape = op.type.shape;
    auto renumber = [&](Target t) {
      if (t.dim == dim) return Target{};
      if (!keep && t.dim > dim) --t.dim;
      return t;
    };
    for (size_t i : kept) rl.slot.push_back(renumber(l.slot[i]));
    for (const Target& t : l.unit) rl.unit.push_back(renumber(t));
    tiles_[op.result] = res;
  }

  // The layout of tensor cores' accumulators (mma.sync m16n8k16): in a warp's 16 x 8 tile, lane
  // bits 0-1 name columns 1-2 and lane bits 2-4 rows 0-2; slot bit 0 names column 0 and slot bit 1
  // row 3; further slot bits step over the warp's n-tiles, then its m-tiles; warp bits step over
  // the warps' columns, then their rows. The device library's kiln_mma_sync holds the same.
  static Layout mma_layout(const Type& t, int wm, int wn) {
    uint32_t m = t.shape[0], n = t.shape[1];
    int mt = log2_of(m / uint32_t(wm) / 16), nt = log2_of(n / uint32_t(wn) / 8);
    Layout l;
    l.rank = 2;
    l.shape = t.shape;
    l.slot = {{1, 0}, {0, 3}};
    for (int i = 0; i < nt; ++i) l.slot.push_back({1, 3 + i});
    for (int i = 0; i < mt; ++i) l.slot.push_back({0, 4 + i});
    l.unit = {{1, 1}, {1, 2}, {0, 0}, {0, 1}, {0, 2}};
    for (int i = 0; i < log2_of(uint64_t(wn)); ++i) l.unit.push_back({1, 3 + nt + i});
    for (int i = 0; i < log2_of(uint64_t(wm)); ++i) l.unit.push_back({0, 4 + mt + i});
    return l;
  }

  // How a product runs: on tensor cores' layout when its formats and shape allow (bf16 or f16 into
  // f32, m a multiple of 16 per warp row, n of 8 per warp column, k of 16, every warp busy), the
  // warps split between m and n to keep each warp's tile square; else the blocked layout.
  struct MmaPlan {
    bool fragments = false;
    int wm = 1, wn = 1;
  };
  MmaPlan plan_mma(Scalar ab, Scalar c, uint32_t m, uint32_t n, uint32_t k) const {
    MmaPlan p;
    if (!((ab == Scalar::BF16 || ab == Scalar::F16) && c == Scalar::F32) || m % 16 || n % 8 || k % 16) return p;
    uint32_t warps = units_ / 32;
    while (uint32_t(p.wm * p.wn) < warps) {
      bool rows = m / uint32_t(p.wm) / 16 >= 2 && (m / uint32_t(p.wm) >= n / uint32_t(p.wn) || n / uint32_t(p.wn) / 8 < 2);
      bool cols = n / uint32_t(p.wn) / 8 >= 2;
      if (rows) p.wm *= 2;
      else if (cols) p.wn *= 2;
      else return MmaPlan{};
    }
    p.fragments = true;
    return p;
  }

  // c + a x b. The factors go to shared memory row-major (rows padded by 16 bytes on the
  // tensor-core path, so that ldmatrix's eight rows fall in different banks). On a CUDA GPU of
  // sm_80 or later, tensor cores multiply (mma.sync, through the device library); elsewhere each
  // unit accumulates its slots of c exactly over k in a run-time loop, in the order k = 0, 1, ...,
  // in the same layout, so the CPU checks everything but the instruction.
  void mma(const Op& op) {
    const Type ta = k_.type_of(op.operands[0]), tb = k_.type_of(op.operands[1]);  // copies: emitting grows value_types
    uint32_t m = ta.shape[0], kk = ta.shape[1], n = tb.shape[1];
    MmaPlan plan = plan_mma(ta.scalar, op.type.scalar, m, n, kk);
    Tiled c = tile(op.operands[2]);
    Layout lc = plan.fragments ? mma_layout(op.type, plan.wm, plan.wn)
                : !placed(c)            ? blocked(op.type, units_, 1)
                                        : c.layout;
    std::vector<Value> acc = present(c, lc);
    uint32_t lda = plan.fragments ? kk + 8 : kk, ldb = plan.fragments ? n + 8 : n;
    // A factor a pipelined loop already copied into shared memory is read there; the others are
    // written into the scratch array (a at 0, b after it).
    const Tiled &fa = tile(op.operands[0]), &fb = tile(op.operands[1]);
    bool a_ready = fa.staged && fa.staged->pitch == lda, b_ready = fb.staged && fb.staged->pitch == ldb;
    uint64_t b_at = a_ready ? 0 : uint64_t(m) * lda;
    Value sa = a_ready ? fa.staged->array : stage(fa, 0, lda);
    Value a_off = a_ready ? fa.staged->offset : c32(0);
    Value sb = b_ready ? fb.staged->array : stage(fb, b_at, ldb, /*first=*/a_ready);
    Value b_off = b_ready ? fb.staged->offset : c32(b_at);
    // The factors written here must be seen by every unit; factors a pipeline copied were seen at
    // its iteration's barrier. No barrier is needed after the product: every later writer of the
    // scratch array (and of a ring slot) passes one first.
    if (!(a_ready && b_ready)) emit(K::SyncCube, {});
    Scalar cs = op.type.scalar;
    std::vector<Value> results;
    if (plan.fragments && k_.facts.target.cuda_at_least(80)) {
      Value local = b_.emit(K::LocalAlloc, {}, Type::local(Type::scalar_of(cs), uint32_t(acc.size())));
      for (size_t j = 0; j < acc.size(); ++j) emit(K::Store, {local, c32(j), acc[j]});
      emit(K::MmaSync, {sa, a_off, sb, b_off, local},
           {{AttrKey::Shape, AttrValue::of_ints({m, n, kk})},
            {AttrKey::Dims, AttrValue::of_ints({plan.wm, plan.wn})},
            {AttrKey::Strides, AttrValue::of_ints({lda, ldb})}});
      for (size_t j = 0; j < acc.size(); ++j) results.push_back(emit(K::Load, {local, c32(j)}));
    } else {
      results = exact_product(acc, lc, sa, a_off, sb, b_off, lda, ldb, kk, cs);
    }
    Tiled r;
    r.type = op.type;
    r.layout = lc;
    r.slots = results;
    tiles_[op.result] = r;
  }

  // for k in [0, K): acc_j += a[i_j, k] * b[k, j_j], the products in the accumulator's type.
  std::vector<Value> exact_product(const std::vector<Value>& acc, const Layout& lc, Value sa, Value a_off, Value sb, Value b_off,
                                   uint32_t lda, uint32_t ldb, uint32_t kk, Scalar cs) {
    Value row = unit_coord(lc, 0), col = unit_coord(lc, 1);
    std::vector<Value> inits = {c32(0), c32(kk), c32(1)};
    inits.insert(inits.end(), acc.begin(), acc.end());
    std::vector<Type> carried(acc.size(), Type::scalar_of(cs));
    std::vector<Value> results = b_.emit_results(K::For, inits, carried);
    Op& loop = b_.last();
    Region& body = loop.regions[0];
    Value k = k_.new_value(u32());
    body.args.push_back(k);
    std::vector<Value> args;
    for (size_t j = 0; j < acc.size(); ++j) {
      args.push_back(k_.new_value(Type::scalar_of(cs)));
      body.args.push_back(args.back());
    }
    b_.enter(body);
    Value arow = add(mul(row, c32(lda)), a_off);
    Value bcol = add(col, b_off);
    Value krow = mul(k, c32(ldb));
    std::vector<Value> next;
    for (size_t j = 0; j < acc.size(); ++j) {
      uint32_t i0 = slot_coord(lc, j, 0), j0 = slot_coord(lc, j, 1);
      Value av = emit(K::Load, {sa, add(add(arow, c32(uint64_t(i0) * lda)), k)});
      Value bv = emit(K::Load, {sb, add(add(krow, bcol), c32(j0))});
      if (k_.type_of(av).scalar != cs) {
        av = emit(K::Cast, {av}, {}, Type::scalar_of(cs));
        bv = emit(K::Cast, {bv}, {}, Type::scalar_of(cs));
      }
      next.push_back(emit(K::Fma, {av, bv, args[j]}));
    }
    emit_span(K::Yield, next);
    b_.leave();
    return results;
  }

  // Writes a factor into the scratch array of its type at `at`, rows `pitch` elements apart (the
  // first factor after a barrier: the array's last use may still be reading).
  Value stage(const Tiled& t0, uint64_t at, uint32_t pitch, bool first = false) {
    Tiled t = in_slots(t0);
    Value buf = scratch(t.type.scalar, at + uint64_t(t.type.shape[0]) * pitch);
    if (at == 0 || first) emit(K::SyncCube, {});
    std::array<uint32_t, 4> stride = {pitch, 1, 0, 0};
    Value mine = owner(t.layout);
    Value base = add(unit_linear(t.layout, stride), c32(at));
    for (size_t j = 0; j < t.layout.slots(); ++j) {
      Value idx = add(base, c32(slot_linear(t.layout, j, stride)));
      if (mine == kNoValue) emit(K::Store, {buf, idx, t.slots[j]});
      else emit(K::Store, {buf, idx, t.slots[j], mine});
    }
    return buf;
  }

  // ---- cells --------------------------------------------------------------------------------

  struct CellAccess {
    Value array;
    int vec;
    std::vector<int64_t> extent, tile, along;
    std::string pad;
  };
  CellAccess cell_access(Value view) {
    const Op& v = *views_.at(view);
    CellAccess c;
    c.array = v.operands[0];
    c.vec = k_.type_of(c.array).width;
    c.extent = v.attr(AttrKey::Extent)->ints;
    c.tile = v.attr(AttrKey::Tile)->ints;
    c.along = v.attr(AttrKey::Along)->ints;
    c.pad = v.attr(AttrKey::Pad)->s;
    return c;
  }
  // The extent of dimension d (u32): the recorded one, or grid x tile for a dyn_dim.
  Value extent_of(const CellAccess& c, size_t d) {
    if (c.extent[d] >= 0) return c32(uint64_t(c.extent[d]));
    return mul(emit(K::CubeCount, {}, {{AttrKey::Axis, AttrValue::of_int(c.along[d])}}), c32(uint64_t(c.tile[d])));
  }
  double pad_value(const std::string& pad) {
    if (pad == "neg_inf") return -std::numeric_limits<double>::infinity();
    if (pad == "pos_inf") return std::numeric_limits<double>::infinity();
    if (pad == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (pad == "neg_zero") return -0.0;
    return 0.0;
  }

  // Element index of each slot and the mask (kNoValue: always in range) of each vector chunk.
  struct Addressing {
    std::vector<Value> chunk_index;  // in vectors of the array's width
    std::vector<Value> chunk_mask;
  };
  Addressing address(const CellAccess& c, const Layout& l, std::span<const Value> cell, std::span<const Value> sub_offset) {
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
      Value first = mul(as_u32(cell[d]), c32(uint64_t(c.tile[d])));
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
      Value vec_extent = c.extent[last] >= 0 ? c32(uint64_t(c.extent[last]) / vec)
                                             : mul(emit(K::CubeCount, {}, {{AttrKey::Axis, AttrValue::of_int(c.along[last])}}),
                                                   c32(uint64_t(c.tile[last]) / vec));
      vstride.resize(rank);
      Value vs = c32(1);
      for (size_t d = rank; d-- > 0;) {
        vstride[d] = vs;
        if (d > 0) vs = mul(vs, d == last ? vec_extent : extent_of(c, d));
      }
      // The unit's first column is a whole vector (the layout's low column bits are slot bits).
      last_start = add(mul(as_u32(cell[last]), c32(uint64_t(c.tile[last]) / vec)),
                       emit(K::Shr, {unit_coord(l, int(last)), c32(uint64_t(log2_of(uint32_t(vec))))}));
    }
    for (size_t j = 0; j < l.slots(); j += vec) {
      Value idx = kNoValue;
      Value mask = kNoValue;
      for (size_t d = 0; d < rank; ++d) {
        Value coord = add(start[d], c32(slot_coord(l, j, int(d))));
        Value term = !in_vectors      ? mul(coord, stride[d])
                     : d == last      ? add(last_start, c32(slot_coord(l, j, int(d)) / vec))
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

  std::vector<Value> cell_indices(const Op& op, size_t first, const CellAccess& c) {
    std::vector<Value> idx;
    if (op.kind == K::TileLoadCell || op.kind == K::TileStoreCell || op.kind == K::TileStoreSub) {
      for (int64_t a : c.along) idx.push_back(a < 0 ? c32(0) : block_pos_[size_t(a)]);
      return idx;
    }
    for (size_t i = first; i < op.operands.size(); ++i) idx.push_back(op.operands[i]);
    return idx;
  }

  void load_cell(const Op& op) {
    CellAccess c = cell_access(op.operands[0]);
    Layout l = blocked(op.type, units_, c.vec);
    std::vector<Value> cell = cell_indices(op, 1, c);
    Addressing a = address(c, l, cell, {});
    Scalar s = op.type.scalar;
    Value pad = c.pad == "zero" ? kNoValue : constant(s, pad_value(c.pad));
    Tiled r;
    r.type = op.type;
    r.layout = l;
    for (size_t ch = 0; ch < a.chunk_index.size(); ++ch) {
      Value mask = a.chunk_mask[ch];
      Value v = mask == kNoValue ? emit(K::Load, {c.array, a.chunk_index[ch]}) : emit(K::Load, {c.array, a.chunk_index[ch], mask});
      for (int lane = 0; lane < c.vec; ++lane) {
        Value x = c.vec == 1 ? v : emit(K::VectorExtract, {v}, {{AttrKey::Lane, AttrValue::of_int(lane)}});
        if (pad != kNoValue && mask != kNoValue) x = emit(K::Select, {mask, x, pad});
        r.slots.push_back(x);
      }
    }
    tiles_[op.result] = r;
  }

  void store_cell(const Op& op) {
    CellAccess c = cell_access(op.operands[0]);
    const Tiled& t = tile(op.operands[1]);
    const Type tt = k_.type_of(op.operands[1]);  // a copy: emitting grows value_types
    Layout l = blocked(tt, units_, c.vec);
    std::vector<Value> slots = present(t, l);
    std::vector<Value> cell = cell_indices(op, 2, c);
    std::vector<Value> sub;
    if (op.kind == K::TileStoreSub) {
      for (size_t d = 0; d < c.extent.size(); ++d) sub.push_back(mul(as_u32(op.operands[2 + d]), c32(tt.shape[d])));
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

  // tile.load / tile.store at an element offset with strides (Shared parameters): scalar
  // accesses, flagged `checked` so that checked mode bounds them.
  std::vector<Value> pointer_index(const Op& op, const Type& t, const Layout& l, Value offset) {
    std::array<uint32_t, 4> stride = row_major(t);
    if (const AttrValue* s = op.attr(AttrKey::Strides)) {
      for (size_t d = 0; d < s->ints.size(); ++d) stride[d] = uint32_t(s->ints[d]);
    }
    Value base = add(as_u32(offset), unit_linear(l, stride));
    std::vector<Value> idx;
    for (size_t j = 0; j < l.slots(); ++j) idx.push_back(add(base, c32(slot_linear(l, j, stride))));
    return idx;
  }
  void pointer_load(const Op& op) {
    Layout l = blocked(op.type, units_, 1);
    Tiled r;
    r.type = op.type;
    r.layout = l;
    for (Value i : pointer_index(op, op.type, l, op.operands[1])) {
      r.slots.push_back(emit(K::Load, {op.operands[0], i}, {{AttrKey::Checked, AttrValue::of_bool(true)}}));
    }
    tiles_[op.result] = r;
  }
  void pointer_store(const Op& op) {
    const Type tt = k_.type_of(op.operands[2]);  // a copy: emitting grows value_types
    Layout l = blocked(tt, units_, 1);
    std::vector<Value> slots = present(tile(op.operands[2]), l);
    std::vector<Value> idx = pointer_index(op, tt, l, op.operands[1]);
    Value mine = owner(l);
    for (size_t j = 0; j < idx.size(); ++j) {
      std::vector<Attr> checked = {{AttrKey::Checked, AttrValue::of_bool(true)}};
      if (mine == kNoValue) emit(K::Store, {op.operands[0], idx[j], slots[j]}, checked);
      else emit(K::Store, {op.operands[0], idx[j], slots[j], mine}, checked);
    }
  }

  // ---- regions and control flow -------------------------------------------------------------

  static bool is_tile_type(const Type& t) { return t.is_tile(); }

  void region(const Region& r) {
    for (const Op& op : r.ops) one(op);
  }

  void one(const Op& op) {
    switch (op.kind) {
      case K::TileView: views_[op.result] = &op; return;
      case K::TileLoadCell: load_cell(op); return;
      case K::TileLoadAt:
        if (auto it = rings_.find(op.result); it != rings_.end()) {
          Tiled t;
          t.type = op.type;
          t.staged = Tiled::Staged{it->second.array, it->second.current, it->second.pitch};
          tiles_[op.result] = t;
          return;
        }
        load_cell(op);
        return;
      case K::TileStoreCell:
      case K::TileStoreSub: store_cell(op); return;
      case K::TileLoad: pointer_load(op); return;
      case K::TileStore: pointer_store(op); return;
      case K::TileFull: full(op); return;
      case K::TileBroadcast: widen(op); return;
      case K::TileReduceSum:
      case K::TileReduceMax:
      case K::TileReduceMin: reduce(op); return;
      case K::TileTranspose: transpose(op); return;
      case K::TileMma: mma(op); return;
      case K::TileBlockId: {
        // The cube's position on the axis, as i32; the op keeps its value number (later ops name it).
        Value p = block_pos_[size_t(op.attr_int(AttrKey::Axis))];
        Op c;
        c.kind = K::Cast;
        c.operands = {p};
        c.result = op.result;
        c.type = op.type;
        b_.region().ops.push_back(std::move(c));
        return;
      }
      default: break;
    }
    if (op.result != kNoValue && is_tile_type(op.type) && op.regions.empty()) {
      switch (op_family(op.kind)) {
        case OpFamily::Arith:
        case OpFamily::Bitwise:
        case OpFamily::Compare:
        case OpFamily::Select:
        case OpFamily::Cast:
        case OpFamily::Math: elementwise(op); return;
        default:
          throw Error("compile.unsupported", "kernel '" + k_.name + "': '" + std::string(op_name(op.kind)) +
                                                 "' makes a tile that lower_tiles cannot place (a tile var that promote_vars kept "
                                                 "in memory?)");
      }
    }
    if (op.kind == K::For) {
      lower_for(op);
      return;
    }
    bool carries_tiles = false;
    for (Value v : op.operands) carries_tiles = carries_tiles || is_tile_type(k_.type_of(v));
    for (Value v : op.results()) carries_tiles = carries_tiles || is_tile_type(k_.type_of(v));
    if (carries_tiles && (op.kind == K::Yield || op.kind == K::Continue || op.kind == K::Break)) {
      pass_on(op);
      return;
    }
    if (carries_tiles) {
      throw Error("compile.unsupported", "kernel '" + k_.name + "': '" + std::string(op_name(op.kind)) +
                                             "' carries a tile; tile kernels carry tiles through For loops only (assign a "
                                             "tile::Var in a For, not in an If or While)");
    }
    copy(op);
  }

  // A non-tile op: copied, its regions lowered in place.
  void copy(const Op& op) {
    Op c;
    c.kind = op.kind;
    c.result = op.result;
    c.type = op.type;
    c.more_results = op.more_results;
    c.operands = op.operands;
    c.attrs = op.attrs;
    b_.region().ops.push_back(std::move(c));
    Op& placed = b_.last();
    placed.regions.resize(op.regions.size());
    for (size_t i = 0; i < op.regions.size(); ++i) {
      placed.regions[i].args = op.regions[i].args;
      Region fresh;
      b_.enter(fresh);
      region(op.regions[i]);
      b_.leave();
      b_.last().regions[i].ops = std::move(fresh.ops);
    }
  }

  // The layouts a loop carries its tiles in: each yielded tile's own, found by lowering the body
  // once with a guess (the init's layout, or a blocked one for a constant) and again when the
  // yield disagrees; a value that still disagrees is converted at the yield.
  // ---- software pipelining (prefetch_stages) --------------------------------------------------
  //
  // A loop with prefetch_stages = S >= 2 copies the factors its tile products load (load_at whose
  // only users are mma) into a ring of S slots in shared memory, S - 1 iterations ahead: before the
  // loop the first S - 1 iterations' copies start; each iteration waits for its own, starts those
  // of iteration i + S - 1 into the slot the previous iteration used, and multiplies from its
  // slot. On CUDA sm_80+ the copies are cp.async (copy.async, committed per iteration, waited for
  // with S - 2 groups still in flight); elsewhere ordinary loads and stores, the same ring.
  struct Ring {
    const Op* load = nullptr;
    Value array = kNoValue;
    uint32_t pitch = 0, slot_elems = 0;
    Value current = kNoValue;  // this iteration's slot offset, while the body is lowered
  };

  bool async_copies() const { return k_.facts.target.cuda_at_least(80); }

  // Where v comes from, if it can be computed before the loop for another iteration: the
  // induction value, a value from outside the body, or pure scalar ops of those.
  bool clonable(Value v, const Region& body, const std::unordered_map<Value, const Op*>& def) const {
    if (v == body.args[0]) return true;
    auto it = def.find(v);
    if (it == def.end()) return std::find(body.args.begin(), body.args.end(), v) == body.args.end();
    const Op& o = *it->second;
    if (!o.has(kPure) || o.type.is_tile() || !o.regions.empty() || o.result_count() != 1) return false;
    for (Value x : o.operands) {
      if (!clonable(x, body, def)) return false;
    }
    return true;
  }
  // v at the iteration whose induction value is `at`, emitted here.
  Value clone_at(Value v, Value at, const Region& body, const std::unordered_map<Value, const Op*>& def,
                 std::unordered_map<Value, Value>& done) {
    if (v == body.args[0]) return at;
    auto it = def.find(v);
    if (it == def.end()) return v;
    if (auto d = done.find(v); d != done.end()) return d->second;
    const Op& o = *it->second;
    std::vector<Value> ops;
    for (Value x : o.operands) ops.push_back(clone_at(x, at, body, def, done));
    Value r = b_.emit(o.kind, ops, o.type, o.attrs);
    done[v] = r;
    return r;
  }

  // The loads of `op`'s body that the pipeline copies, with their rings (allocated here).
  void plan_rings(const Op& op, const std::unordered_map<Value, const Op*>& def) {
    int64_t stages = op.attr_int(AttrKey::PrefetchStages, -1);
    if (stages < 2) return;
    const Region& body = op.regions[0];
    // Users of each value in the body, at any depth.
    std::unordered_map<Value, std::vector<std::pair<const Op*, size_t>>> users;
    auto walk = [&](auto& self, const Region& r) -> void {
      for (const Op& o : r.ops) {
        for (size_t i = 0; i < o.operands.size(); ++i) users[o.operands[i]].push_back({&o, i});
        for (const Region& in : o.regions) self(self, in);
      }
    };
    walk(walk, body);
    for (const Op& l : body.ops) {
      if (l.kind != K::TileLoadAt || l.type.rank != 2) continue;
      CellAccess c = cell_access(l.operands[0]);
      if (c.pad != "zero" || c.vec * scalar_bytes(l.type.scalar) != 16) continue;
      bool ok = !users[l.result].empty();
      std::optional<uint32_t> pitch;
      for (auto [user, at] : users[l.result]) {
        if (user->kind != K::TileMma || at > 1) {
          ok = false;
          break;
        }
        const Type ta = k_.type_of(user->operands[0]), tb = k_.type_of(user->operands[1]);
        MmaPlan plan = plan_mma(ta.scalar, user->type.scalar, ta.shape[0], tb.shape[1], ta.shape[1]);
        uint32_t cols = l.type.shape[1];
        uint32_t p = plan.fragments ? cols + 8 : cols;
        if (pitch && *pitch != p) ok = false;
        pitch = p;
      }
      for (size_t i = 1; ok && i < l.operands.size(); ++i) ok = clonable(l.operands[i], body, def);
      if (!ok) continue;
      Ring r;
      r.load = &l;
      r.pitch = *pitch;
      r.slot_elems = l.type.shape[0] * r.pitch;
      r.array = own_shared(l.type.scalar, uint64_t(stages) * r.slot_elems);
      rings_[l.result] = r;
    }
  }

  // Starts the copies of `r`'s tile for the iteration whose induction value is `at` into the slot
  // at element `slot_offset`; `valid` false (past the loop's end) copies nothing.
  void issue_copies(const Ring& r, Value at, Value slot_offset, Value valid, const Region& body,
                    const std::unordered_map<Value, const Op*>& def) {
    const Op& l = *r.load;
    CellAccess c = cell_access(l.operands[0]);
    std::unordered_map<Value, Value> done;
    std::vector<Value> cell;
    for (size_t i = 1; i < l.operands.size(); ++i) cell.push_back(clone_at(l.operands[i], at, body, def, done));
    Layout lay = blocked(l.type, units_, c.vec);
    Addressing a = address(c, lay, cell, {});
    std::array<uint32_t, 4> stride = {r.pitch, 1, 0, 0};
    Value dst0 = add(slot_offset, unit_linear(lay, stride));
    for (size_t ch = 0; ch < a.chunk_index.size(); ++ch) {
      Value dst = add(dst0, c32(slot_linear(lay, ch * size_t(c.vec), stride)));
      Value mask = both(a.chunk_mask[ch], valid);
      if (async_copies()) {
        emit(K::CopyAsync, {r.array, dst, c.array, a.chunk_index[ch], mask});
      } else {
        Value v = emit(K::Load, {c.array, a.chunk_index[ch], mask});
        for (int lane = 0; lane < c.vec; ++lane) {
          Value x = emit(K::VectorExtract, {v}, {{AttrKey::Lane, AttrValue::of_int(lane)}});
          emit(K::Store, {r.array, add(dst, c32(uint32_t(lane))), x});
        }
      }
    }
  }

  void lower_for(const Op& op) {
    const Region& body = op.regions[0];
    size_t ninit = op.operands.size() - 3;
    std::unordered_map<Value, const Op*> def;
    for (const Op& o : body.ops) {
      for (Value v : o.results()) def[v] = &o;
    }
    plan_rings(op, def);
    // A loop in the kernel's own body runs once (trials lower only loops inside other loops).
    const bool top_level = !trial_ && &op >= k_.body.ops.data() && &op < k_.body.ops.data() + k_.body.ops.size();
    std::vector<const Ring*> rings;
    for (auto& [v, r] : rings_) {
      if (r.load->operands.size() && std::any_of(body.ops.begin(), body.ops.end(), [&](const Op& o) { return &o == r.load; })) {
        rings.push_back(&r);
      }
    }
    std::sort(rings.begin(), rings.end(), [](const Ring* a, const Ring* b) { return a->load < b->load; });
    int64_t stages = op.attr_int(AttrKey::PrefetchStages, -1);
    // The trials see the staged factors at offset 0.
    for (const Ring* r : rings) rings_[r->load->result].current = c32(0);
    std::vector<std::optional<Layout>> layout(ninit);
    for (size_t i = 0; i < ninit; ++i) {
      Value v = op.operands[3 + i];
      if (!is_tile_type(k_.type_of(v))) continue;
      const Tiled& t = tile(v);
      layout[i] = placed(t) ? t.layout : blocked(k_.type_of(v), units_, 1);
    }
    for (int attempt = 0; attempt < 3; ++attempt) {
      std::vector<std::optional<Layout>> yielded = trial_yield_layouts(op, layout);
      if (yielded == layout) break;
      for (size_t i = 0; i < ninit; ++i) {
        if (layout[i] && yielded[i]) layout[i] = yielded[i];
      }
    }
    // The loop proper.
    std::vector<Value> inits = {op.operands[0], op.operands[1], op.operands[2]};
    std::vector<Type> carried;
    std::vector<size_t> first(ninit);
    for (size_t i = 0; i < ninit; ++i) {
      Value v = op.operands[3 + i];
      first[i] = inits.size() - 3;
      if (!layout[i]) {
        inits.push_back(v);
        carried.push_back(k_.type_of(v));
        continue;
      }
      for (Value s : present(tile(v), *layout[i])) {
        inits.push_back(s);
        carried.push_back(Type::scalar_of(k_.type_of(v).scalar));
      }
    }
    // Non-tile carried values keep their numbers (later ops name them); each tile becomes slots.
    Op loop;
    loop.kind = K::For;
    loop.operands = inits;
    loop.attrs = op.attrs;
    loop.regions.resize(1);
    std::vector<Value> results;
    for (size_t i = 0, at = 0; i < ninit; ++i) {
      Value res = op.result_at(i);
      if (!layout[i]) {
        results.push_back(res);
        ++at;
        continue;
      }
      Tiled t;
      t.type = k_.type_of(res);
      t.layout = *layout[i];
      for (size_t j = 0; j < layout[i]->slots(); ++j) {
        t.slots.push_back(k_.new_value(carried[at++]));
        results.push_back(t.slots.back());
      }
      tiles_[res] = t;
    }
    if (!results.empty()) {
      loop.result = results[0];
      loop.type = k_.type_of(results[0]);
      loop.more_results.assign(results.begin() + 1, results.end());
    }
    Region& out = loop.regions[0];
    out.args.push_back(body.args[0]);
    for (size_t i = 0; i < ninit; ++i) {
      Value arg = body.args[1 + i];
      if (!layout[i]) {
        out.args.push_back(arg);
        continue;
      }
      Tiled t;
      t.type = k_.type_of(arg);
      t.layout = *layout[i];
      for (size_t j = 0; j < layout[i]->slots(); ++j) {
        t.slots.push_back(k_.new_value(carried[first[i] + j]));
        out.args.push_back(t.slots.back());
      }
      tiles_[arg] = t;
    }
    // The pipeline's prologue: the first S - 1 iterations' copies.
    Value lo = op.operands[0], hi = op.operands[1], step = op.operands[2];
    Type it = k_.type_of(lo);
    auto index_const = [&](int64_t v) { return b_.constant(it, AttrValue::of_int(v)); };
    if (!rings.empty()) {
      for (int64_t s = 0; s + 1 < stages; ++s) {
        Value at = emit(K::Add, {lo, emit(K::Mul, {step, index_const(s)})});
        Value valid = emit(K::Lt, {at, hi});
        for (const Ring* r : rings) issue_copies(*r, at, c32(uint64_t(s) * r->slot_elems), valid, body, def);
        if (async_copies()) emit(K::CopyAsyncCommit, {});
      }
    }
    loop_layouts_.push_back(layout);
    b_.enter(out);
    if (!rings.empty()) {
      // This iteration's copies have landed (S - 2 later groups may still fly); after the barrier
      // every unit is past the previous iteration, whose slot the next copies overwrite.
      if (async_copies()) emit(K::CopyAsyncWait, {}, {{AttrKey::Pending, AttrValue::of_int(stages - 2)}});
      emit(K::SyncCube, {});
      Value iv = body.args[0];
      Value n = as_u32(emit(K::Div, {emit(K::Sub, {iv, lo}), step}));  // iterations so far
      Value slot = emit(K::Rem, {n, c32(uint64_t(stages))});
      Value next_slot = emit(K::Rem, {add(n, c32(uint64_t(stages) - 1)), c32(uint64_t(stages))});
      Value ahead = emit(K::Add, {iv, emit(K::Mul, {step, index_const(stages - 1)})});
      Value valid = emit(K::Lt, {ahead, hi});
      for (const Ring* r : rings) {
        issue_copies(*r, ahead, mul(next_slot, c32(r->slot_elems)), valid, body, def);
        rings_[r->load->result].current = mul(slot, c32(r->slot_elems));
      }
      if (async_copies()) emit(K::CopyAsyncCommit, {});
    }
    region(body);
    b_.leave();
    loop_layouts_.pop_back();
    b_.region().ops.push_back(std::move(loop));
    // No copy may still be in flight when the loop is done (the last ones copied nothing, but
    // zero-filled their slots): then the rings' bytes may serve a later scratch use.
    if (!rings.empty() && async_copies()) emit(K::CopyAsyncWait, {}, {{AttrKey::Pending, AttrValue::of_int(0)}});
    for (const Ring* r : rings) {
      for (Owned& o : own_) {
        if (o.array == r->array) o.top_level = top_level, o.ended = true;
      }
    }
  }

  // Lowers the body into a scratch region and reports the layouts of what its yield passes on.
  std::vector<std::optional<Layout>> trial_yield_layouts(const Op& op, const std::vector<std::optional<Layout>>& layout) {
    const Region& body = op.regions[0];
    std::vector<std::optional<Layout>> yielded(layout.size());
    size_t mark = k_.value_types.size();
    auto saved = tiles_;
    auto saved_scratch = scratch_;
    for (size_t i = 0; i < layout.size(); ++i) {
      if (!layout[i]) continue;
      Tiled t;
      t.type = k_.type_of(body.args[1 + i]);
      t.layout = *layout[i];
      for (size_t j = 0; j < layout[i]->slots(); ++j) t.slots.push_back(k_.new_value(Type::scalar_of(t.type.scalar)));
      tiles_[body.args[1 + i]] = t;
    }
    Region scratch_region;
    b_.enter(scratch_region);
    loop_layouts_.push_back(layout);
    trial_ = true;
    try {
      for (const Op& o : body.ops) {
        if (o.kind == K::Yield) {
          for (size_t i = 0; i < layout.size(); ++i) {
            if (!layout[i]) continue;
            const Tiled& t = tile(o.operands[i]);
            if (placed(t)) yielded[i] = t.layout;
            else yielded[i] = layout[i];
          }
          break;
        }
        one(o);
      }
    } catch (...) {
      trial_ = false;
      loop_layouts_.pop_back();
      b_.leave();
      throw;
    }
    trial_ = false;
    loop_layouts_.pop_back();
    b_.leave();
    tiles_ = std::move(saved);
    scratch_ = std::move(saved_scratch);
    // The values the trial made are dropped with it; their numbers stay unused.
    (void)mark;
    for (size_t i = 0; i < layout.size(); ++i) {
      if (!yielded[i]) yielded[i] = layout[i];
    }
    return yielded;
  }

  // yield / continue / break of a loop that carries tiles: each tile passes on its slots in the
  // loop's layout.
  void pass_on(const Op& op) {
    if (loop_layouts_.empty()) {
      throw Error("compile.unsupported", "kernel '" + k_.name + "': '" + std::string(op_name(op.kind)) + "' carries a tile outside a For");
    }
    const auto& layout = loop_layouts_.back();
    std::vector<Value> ops;
    for (size_t i = 0; i < op.operands.size(); ++i) {
      Value v = op.operands[i];
      if (i < layout.size() && layout[i]) {
        for (Value s : present(tile(v), *layout[i])) ops.push_back(s);
      } else {
        ops.push_back(v);
      }
    }
    b_.emit(op.kind, ops, Type::none(), op.attrs);
  }

  Kernel& k_;
  Builder b_;
  uint32_t units_;
  int unit_bits_;
  Value unit_ = kNoValue;
  std::array<Value, 3> block_pos_{kNoValue, kNoValue, kNoValue};
  std::unordered_map<Value, Tiled> tiles_;
  std::unordered_map<Value, const Op*> views_;
  std::map<Scalar, Scratch> scratch_;
  std::vector<Owned> own_;
  std::unordered_map<Value, Ring> rings_;  // by the pipelined load's result
  std::vector<std::vector<std::optional<Layout>>> loop_layouts_;
  bool trial_ = false;
};

bool has_tile_ops(const Region& r) {
  for (const Op& op : r.ops) {
    if (op_family(op.kind) == OpFamily::Tile || op.type.is_tile()) return true;
    for (const Region& inner : op.regions) {
      if (has_tile_ops(inner)) return true;
    }
  }
  return false;
}

// The most elements of any tile, and of any product's result (0 without products).
void largest_tile(const Region& r, const Kernel& k, uint64_t& most, uint64_t& product) {
  for (const Op& op : r.ops) {
    if (op.kind == K::TileMma) product = std::max(product, op.type.tile_elements());
    for (Value v : op.results()) {
      const Type& t = k.type_of(v);
      if (t.is_tile()) most = std::max(most, t.tile_elements());
    }
    for (const Region& inner : op.regions) largest_tile(inner, k, most, product);
  }
}

}  // namespace

// Units from the largest tile (decision 019): about 8 elements per unit, between one plane (32)
// and 256 units. A kernel with products takes one plane per 64 x 64 of its largest product, from
// four planes to eight (decision 020): a plane's 64 x 64 accumulators read each factor fragment
// four times from registers, where 32 x 64 read half of them twice as often from shared memory.
uint32_t tile_units(const Kernel& k) {
  uint64_t most = 1, product = 0;
  largest_tile(k.body, k, most, product);
  if (product > 0) return uint32_t(std::clamp<uint64_t>(32 * (product / 4096), 128, 256));
  uint64_t u = 32;
  while (u < 256 && u * 8 < most) u *= 2;
  return uint32_t(u);
}

bool lower_tiles(Kernel& k) {
  if (!has_tile_ops(k.body)) return false;
  uint32_t units = k.facts.cube_dim.x;
  if (units < 32 || (units & (units - 1)) != 0 || units > 1024 || k.facts.cube_dim.y != 1 || k.facts.cube_dim.z != 1) {
    throw Error("passes.lower_tiles", "kernel '" + k.name + "': a tile kernel runs on cubes of [U, 1, 1] units, U a power of two from 32 "
                                      "to 1024 (tile_units gives " + std::to_string(tile_units(k)) + "), not [" +
                                          std::to_string(k.facts.cube_dim.x) + ", " + std::to_string(k.facts.cube_dim.y) + ", " +
                                          std::to_string(k.facts.cube_dim.z) + "]");
  }
  Lowerer(k, units).run();
  return true;
}

}  // namespace kiln::passes
