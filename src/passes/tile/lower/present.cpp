// A lowered tile in the layout its user wants: as it is, widened for free where the layouts allow,
// read from a pipeline's ring, or moved through shared memory.
#include "passes/tile/lower/lowerer.h"

namespace kiln::passes::tile_lowering {

// The layout `want` of a tile of shape want.shape, as `from` (of a shape that widens to it)
// would be without moving data; nullopt when it is not.
bool Lowerer::free_widen(const Layout& from, const Layout& want, std::vector<size_t>& slot_of) {
  auto widened = [&](int d) {
    return d >= 0 && from.rank == want.rank && from.shape[size_t(d)] == 1 && want.shape[size_t(d)] != 1;
  };
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

// `t` with its values in slots: itself when placed, else in the blocked layout; a staged tile in
// the layout its load would have given it (transposed where it is read as columns), so that a
// pipeline changes when a tile arrives and never the order a reduction adds it in.
Tiled Lowerer::in_slots(const Tiled& t) {
  if (placed(t)) return t;
  Tiled r;
  r.type = t.type;
  r.layout = blocked(t.type, units_, 1);
  if (t.staged && !t.widen_of) r.layout = loaded_layout(t.type, *t.staged);
  r.slots = present(t, r.layout);
  return r;
}

Layout Lowerer::loaded_layout(const Type& t, const Tiled::Staged& st) const {
  if (!st.columns) return blocked(t, units_, st.vec);
  Type loaded = t;
  std::swap(loaded.shape[0], loaded.shape[1]);
  Layout l = blocked(loaded, units_, st.vec);
  std::swap(l.shape[0], l.shape[1]);
  for (auto* bits : {&l.slot, &l.unit}) {
    for (Target& b : *bits) {
      if (!b.none()) b.dim = 1 - b.dim;
    }
  }
  return l;
}

std::vector<Value> Lowerer::present(const Tiled& t, const Layout& want) {
  if (t.staged) return read_staged(*t.staged, want);
  if (t.splat) return std::vector<Value>(want.slots(), t.slots[0]);
  if (t.widen_of) return present_widened(*t.widen_of, want);
  if (t.layout == want) return t.slots;
  return relayout(t, want);
}

std::vector<Value> Lowerer::present_widened(const Tiled& src, const Layout& want) {
  if (src.staged) {
    Tiled m = src;
    m.staged.reset();
    m.layout = loaded_layout(src.type, *src.staged);
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
std::vector<Value> Lowerer::relayout(const Tiled& t, const Layout& want) {
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
std::vector<Value> Lowerer::read_staged(const Tiled::Staged& st, const Layout& want) {
  std::array<uint32_t, 4> stride =
      st.columns ? std::array<uint32_t, 4>{1, st.pitch, 0, 0} : std::array<uint32_t, 4>{st.pitch, 1, 0, 0};
  Value base = add(st.offset, unit_linear(want, stride));
  std::vector<Value> out;
  for (size_t j = 0; j < want.slots(); ++j)
    out.push_back(emit(K::Load, {st.array, add(base, c32(slot_linear(want, j, stride)))}));
  return out;
}

std::array<uint32_t, 4> Lowerer::row_major(const Type& t) {
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
// puts rows on lanes (mma's accumulators, eight rows a plane) writes 8 ways serialised. Answers
// the strides and the elements the array needs.
std::pair<std::array<uint32_t, 4>, uint64_t> Lowerer::row_major_padded(const Type& t) {
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
Value Lowerer::unit_linear(const Layout& l, const std::array<uint32_t, 4>& stride, std::optional<Type> within) {
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

uint32_t Lowerer::slot_linear(const Layout& l, size_t slot, const std::array<uint32_t, 4>& stride) {
  uint32_t off = 0;
  for (int d = 0; d < l.rank; ++d) off += slot_coord(l, slot, d) * stride[size_t(d)];
  return off;
}

}  // namespace kiln::passes::tile_lowering
