// lower_tiles' value ops: elementwise, constants and widenings, transposes, reductions, and
// products (tensor cores through mma.sync on sm_80+, exact loops in the same layout elsewhere).
#include "kiln/error.h"
#include "passes/tile/lower/lowerer.h"

namespace kiln::passes::tile_lowering {

Tiled& Lowerer::tile(Value v) {
  auto it = tiles_.find(v);
  if (it == tiles_.end())
    throw Error("passes.lower_tiles", "kernel '" + k_.name + "': a tile value was used before it was lowered");
  return it->second;
}

std::optional<Layout> Lowerer::named_layout(const Type& t) const {
  const TileLayout* named = t.is_register_tile() ? k_.layout_of(t) : nullptr;
  if (!named) return std::nullopt;
  if (named->kind != TileLayout::Kind::Fragment || named->fragment.unit.size() > size_t(unit_bits_)) {
    throw Error("passes.lower_tiles", "kernel '" + k_.name + "': " + to_string(t) + " names " + to_string(*named) +
                                          ", not a fragment layout over at most the cube's " + std::to_string(units_) +
                                          " units");
  }
  Layout l = named->fragment;
  l.unit.resize(size_t(unit_bits_));  // further units hold copies
  return l;
}

void Lowerer::set_result(const Op& op, Tiled r) {
  if (std::optional<Layout> want = named_layout(op.type); want && placed(r) && r.layout != *want) {
    r.slots = present(r, *want);
    r.layout = *want;
  }
  tiles_[op.result] = std::move(r);
}

std::unordered_map<Value, Layout> Lowerer::placed_layouts() const {
  std::unordered_map<Value, Layout> out;
  for (const auto& [v, t] : tiles_) {
    if (placed(t) && t.type.is_register_tile()) out.emplace(v, t.layout);
  }
  return out;
}

// The layout an elementwise op computes in: its first operand's that has one.
// The first operand's layout that has one: a placed tile's, or a staged one's as its load would
// have placed it (so a pipeline leaves every layout, and every reduction's order, as it was).
std::optional<Layout> Lowerer::common_layout(std::span<const Value> operands) {
  // A loop's guess gives way to any settled layout (the running max of flash attention takes the
  // layout its block's row max was reduced into, which the loop then carries).
  for (bool guesses : {false, true}) {
    for (Value v : operands) {
      const Tiled& t = tile(v);
      if (t.guessed != guesses) continue;
      if (placed(t)) return t.layout;
      if (t.staged && !t.widen_of) return loaded_layout(t.type, *t.staged);
    }
  }
  return std::nullopt;
}

void Lowerer::elementwise(const Op& op) {
  std::optional<Layout> l = named_layout(op.type);
  if (!l) l = common_layout(op.operands);
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
      set_result(op, r);
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
  set_result(op, r);
}

void Lowerer::full(const Op& op) {
  Tiled r;
  r.type = op.type;
  r.splat = true;
  r.slots.push_back(b_.constant(Type::scalar_of(op.type.scalar), *op.attr(AttrKey::Value)));
  set_result(op, r);
}

void Lowerer::widen(const Op& op) {
  Tiled r;
  r.type = op.type;
  const Tiled& src = tile(op.operand(ops::TileUnary::tile));
  if (src.splat) {
    r = src;
    r.type = op.type;
  } else {
    r.widen_of = std::make_shared<Tiled>(src);
  }
  set_result(op, r);
}

// The layout the result's type names (a layout pass wrote it), over the cube's units: a layout of
// fewer unit bits leaves the further units holding copies.
void Lowerer::convert_layout(const Op& op) {
  const TileLayout* named = k_.layout_of(op.type);
  if (!named || named->kind != TileLayout::Kind::Fragment) {
    throw Error("passes.lower_tiles", "kernel '" + k_.name + "': tile.convert_layout to " + to_string(op.type) +
                                          " names no fragment layout of the kernel's table");
  }
  Layout want = named->fragment;
  if (want.unit.size() > size_t(unit_bits_)) {
    throw Error("passes.lower_tiles", "kernel '" + k_.name + "': tile.convert_layout to " + to_string(*named) +
                                          " spreads the tile over " + std::to_string(size_t(1) << want.unit.size()) +
                                          " units; the cube has " + std::to_string(units_));
  }
  want.unit.resize(size_t(unit_bits_));
  Tiled r;
  r.type = op.type;
  r.layout = want;
  r.slots = present(tile(op.operand(ops::TileUnary::tile)), want);
  set_result(op, r);
}

void Lowerer::transpose(const Op& op) {
  const Tiled& src = tile(op.operand(ops::TileUnary::tile));
  Tiled r = src;
  r.type = op.type;
  if (src.splat) {
    set_result(op, r);
    return;
  }
  // A staged factor stays where it is, read the other way round (mma reads a staged b stored as
  // columns with plain ldmatrix).
  if (src.staged && !src.widen_of) {
    r.staged->columns = !src.staged->columns;
    set_result(op, r);
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
  set_result(op, r);
}

Value Lowerer::combine(OpKind k, Value a, Value b) {
  OpKind c = k == K::TileReduceSum ? K::Add : k == K::TileReduceMax ? K::Max : K::Min;
  return emit(c, {a, b});
}

void Lowerer::reduce(const Op& op) {
  Tiled src = in_slots(tile(op.operand(ops::TileUnary::tile)));
  int dim = int(op.get<AttrKey::Dim>());
  bool keep = op.get<AttrKey::Keepdims>();
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
  std::vector<size_t> plane_bits;
  for (size_t i = 0; i < l.unit.size(); ++i) {
    if (l.unit[i].dim != dim) continue;
    if (i < kLaneBits) {
      for (Value& a : acc) a = combine(op.kind, a, emit(K::PlaneShuffleXor, {a, c32(1u << i)}));
    } else {
      plane_bits.push_back(i);
    }
  }
  // 3. Planes, through shared memory: every unit writes its partial, then folds those of the
  // units that differ from it only in the plane bits along dim, in the same order everywhere.
  if (!plane_bits.empty()) {
    Value buf = scratch(op.type.scalar, uint64_t(nres) * units_);
    emit(K::SyncCube, {});
    for (size_t r = 0; r < nres; ++r) emit(K::Store, {buf, add(c32(r * units_), unit_), acc[r]});
    emit(K::SyncCube, {});
    uint32_t mask = 0;
    for (size_t i : plane_bits) mask |= 1u << i;
    Value others = emit(K::And, {unit_, c32(~mask & (units_ - 1))});
    for (size_t r = 0; r < nres; ++r) {
      Value total = kNoValue;
      for (size_t w = 0; w < (size_t(1) << plane_bits.size()); ++w) {
        uint32_t bits = 0;
        for (size_t b = 0; b < plane_bits.size(); ++b) bits |= uint32_t((w >> b) & 1) << plane_bits[b];
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
  set_result(op, res);
}

// The layout of tensor cores' accumulators is mma.h's mma_sync_element, which the device
// library's kiln_mma_sync implements: every unit bit and slot bit moves an accumulator along one
// bit of its row or column, which this reads off it one bit at a time.
Layout Lowerer::mma_layout(const MmaInstruction& in, const Type& t, int wm, int wn) {
  const uint32_t m = t.shape[0], n = t.shape[1];
  auto bit_of = [&](MmaElement e) -> Target {
    const uint32_t v = e.row | e.col;
    if ((e.row != 0) == (e.col != 0) || (v & (v - 1)) != 0) {
      throw Error("passes.lower_tiles", "the accumulator layout of " + std::string(in.name) + " is not bit-linear");
    }
    return {e.row != 0 ? 0 : 1, log2_of(v)};
  };
  Layout l;
  l.rank = 2;
  l.shape = t.shape;
  const uint32_t slots = mma_sync_slots(in, m, n, uint32_t(wm), uint32_t(wn));
  for (uint32_t b = 1; b < slots; b <<= 1) l.slot.push_back(bit_of(mma_sync_element(in, m, n, wm, wn, 0, b)));
  const uint32_t units = ir::Target::kPlaneWidth * uint32_t(wm * wn);
  for (uint32_t b = 1; b < units; b <<= 1) l.unit.push_back(bit_of(mma_sync_element(in, m, n, wm, wn, b, 0)));
  return l;
}

// c + a x b. The factors go to shared memory row-major, b possibly as its columns (rows padded by 16 bytes on the
// tensor-core path, so that ldmatrix's eight rows fall in different banks). On a CUDA GPU of
// sm_80 or later, tensor cores multiply (mma.sync, through the device library); elsewhere each
// unit accumulates its slots of c exactly over k in a run-time loop, in the order k = 0, 1, ...,
// in the same layout, so the CPU checks everything but the instruction.
void Lowerer::mma(const Op& op) {
  const Value a = op.operand(ops::TileMma::a), b = op.operand(ops::TileMma::b);
  const Type ta = k_.type_of(a), tb = k_.type_of(b);  // copies: emitting grows value_types
  uint32_t m = ta.shape[0], kk = ta.shape[1], n = tb.shape[1];
  const MmaPlan plan = plan_mma(op);
  Tiled c = tile(op.operand(ops::TileMma::c));
  Layout lc = plan.fragments() ? mma_layout(*plan.instruction, op.type, plan.wm, plan.wn)
              : !placed(c)     ? blocked(op.type, units_, 1)
                               : c.layout;
  std::vector<Value> acc = present(c, lc);
  uint32_t lda = plan.fragments() ? kk + 8 : kk, ldb = plan.fragments() ? n + 8 : n;
  // A factor already in shared memory (a shared tile: a pipelined loop's slot, or a factor kept
  // resident) is read there when its rows are as the product wants them; the others are written
  // into the scratch array (a at 0, b after it). b may be staged as its columns (the transposed
  // view of a loaded tile: x @ w.T), rows of k padded alike; mma reads it so without moving it.
  Tiled fa = tile(a), fb = tile(b);
  bool a_ready = fa.staged && !fa.staged->columns && fa.staged->pitch == lda;
  bool b_ready =
      fb.staged && (fb.staged->columns ? fb.staged->pitch == lda : fb.staged->pitch == ldb);  // columns of k: a's pitch
  if (!plan.fragments()) {
    // The exact loops read a staged factor in place at whatever pitch it has (a ring's rows are
    // whole 16-byte chunks, which a product's own rows need not be).
    if (fa.staged && !fa.staged->columns) a_ready = true, lda = fa.staged->pitch;
    if (fb.staged) b_ready = true, ldb = fb.staged->pitch;
  }
  const bool b_columns = b_ready && fb.staged->columns;
  if (b_columns && plan.fragments()) ldb = lda;  // rows of k, padded as a's
  Scalar cs = op.type.scalar;
  const bool tensor_cores = plan.fragments() && tensor_core_instruction(ta.scalar, cs, k_.facts.target);
  // a from registers (place_products' a_fragments): its elements in the layout of an m x k product
  // over the same planes, which is the layout they have when they are such a product's result;
  // elsewhere (the exact loop reads any row) a goes through shared memory as before.
  const bool a_in_registers = tensor_cores && op.get<AttrKey::AFragments>();
  if (a_in_registers) a_ready = true;  // nothing of a to write
  uint64_t b_at = a_ready ? 0 : uint64_t(m) * lda;
  Value sa = a_in_registers ? kNoValue : a_ready ? fa.staged->array : stage(fa, 0, lda);
  Value a_off = a_in_registers ? kNoValue : a_ready ? fa.staged->offset : c32(0);
  Value sb = b_ready ? fb.staged->array : stage(fb, b_at, ldb, /*first=*/a_ready);
  Value b_off = b_ready ? fb.staged->offset : c32(b_at);
  // The factors written here must be seen by every unit; factors a pipeline copied were seen at
  // its iteration's barrier. No barrier is needed after the product: every later writer of the
  // scratch array (and of a ring slot) passes one first.
  if (!(a_ready && b_ready)) emit(K::SyncCube, {});
  std::vector<Value> results;
  if (a_in_registers) {
    const Layout la = mma_layout(*plan.instruction, ta, plan.wm, 1);
    std::vector<Value> av = present(fa, la);
    Value a_local = b_.emit(K::LocalAlloc, {}, Type::local(Type::scalar_of(ta.scalar), uint32_t(av.size())));
    for (size_t j = 0; j < av.size(); ++j) emit(K::Store, {a_local, c32(j), av[j]});
    Value local = b_.emit(K::LocalAlloc, {}, Type::local(Type::scalar_of(cs), uint32_t(acc.size())));
    for (size_t j = 0; j < acc.size(); ++j) emit(K::Store, {local, c32(j), acc[j]});
    std::vector<Attr> attrs = {ir::attr<AttrKey::Planes>({plan.wm, 1}), ir::attr<AttrKey::Shape>({m, n, kk}),
                               ir::attr<AttrKey::Pitches>({ldb})};
    if (b_columns) attrs.push_back(ir::attr<AttrKey::BColumns>(true));
    emit(K::MmaSyncFragA, {a_local, sb, b_off, local}, attrs);
    for (size_t j = 0; j < acc.size(); ++j) results.push_back(emit(K::Load, {local, c32(j)}));
  } else if (tensor_cores) {
    Value local = b_.emit(K::LocalAlloc, {}, Type::local(Type::scalar_of(cs), uint32_t(acc.size())));
    for (size_t j = 0; j < acc.size(); ++j) emit(K::Store, {local, c32(j), acc[j]});
    std::vector<Attr> attrs = {ir::attr<AttrKey::Planes>({plan.wm, plan.wn}), ir::attr<AttrKey::Shape>({m, n, kk}),
                               ir::attr<AttrKey::Pitches>({lda, ldb})};
    if (b_columns) attrs.push_back(ir::attr<AttrKey::BColumns>(true));
    emit(K::MmaSync, {sa, a_off, sb, b_off, local}, attrs);
    for (size_t j = 0; j < acc.size(); ++j) results.push_back(emit(K::Load, {local, c32(j)}));
  } else {
    results = exact_product(acc, lc, sa, a_off, sb, b_off, lda, ldb, kk, cs, b_columns);
  }
  Tiled r;
  r.type = op.type;
  r.layout = lc;
  r.slots = results;
  set_result(op, r);
}

// for k in [0, K): acc_j += a[i_j, k] * b[k, j_j], the products in the accumulator's type.
std::vector<Value> Lowerer::exact_product(const std::vector<Value>& acc, const Layout& lc, Value sa, Value a_off,
                                          Value sb, Value b_off, uint32_t lda, uint32_t ldb, uint32_t kk, Scalar cs,
                                          bool b_columns) {
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
  // b[k, j] at k * ldb + j, or, stored as columns, at j * ldb + k.
  Value bcol = b_columns ? add(mul(col, c32(ldb)), b_off) : add(col, b_off);
  Value krow = b_columns ? k : mul(k, c32(ldb));
  std::vector<Value> next;
  for (size_t j = 0; j < acc.size(); ++j) {
    uint32_t i0 = slot_coord(lc, j, 0), j0 = slot_coord(lc, j, 1);
    Value av = emit(K::Load, {sa, add(add(arow, c32(uint64_t(i0) * lda)), k)});
    Value bv = emit(K::Load, {sb, add(add(krow, bcol), c32(b_columns ? uint64_t(j0) * ldb : j0))});
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
Value Lowerer::stage(const Tiled& t0, uint64_t at, uint32_t pitch, bool first) {
  Value buf = scratch(t0.type.scalar, at + uint64_t(t0.type.shape[0]) * pitch);
  if (at == 0 || first) emit(K::SyncCube, {});
  write_rows(t0, buf, c32(at), pitch);
  return buf;
}

// The tile's elements into `buf` from element `at`, row-major, rows `pitch` apart (a tile of rank
// 1 is one row), each by its owner.
void Lowerer::write_rows(const Tiled& t0, Value buf, Value at, uint32_t pitch) {
  Tiled t = in_slots(t0);
  std::array<uint32_t, 4> stride =
      t.type.rank == 1 ? std::array<uint32_t, 4>{1, 0, 0, 0} : std::array<uint32_t, 4>{pitch, 1, 0, 0};
  Value mine = owner(t.layout);
  Value base = add(unit_linear(t.layout, stride), at);
  for (size_t j = 0; j < t.layout.slots(); ++j) {
    Value idx = add(base, c32(slot_linear(t.layout, j, stride)));
    if (mine == kNoValue) emit(K::Store, {buf, idx, t.slots[j]});
    else emit(K::Store, {buf, idx, t.slots[j], mine});
  }
}

}  // namespace kiln::passes::tile_lowering
