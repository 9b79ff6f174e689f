// lower_tiles' regions and loops: ops copied with their regions, For loops whose carried tiles
// become slots (the layouts settled by trial lowerings), and the prefetch_stages pipeline.
#include <unordered_set>

#include "kiln/error.h"
#include "passes/lower_tiles/lowerer.h"

namespace kiln::passes::tile_lowering {

void Lowerer::region(const Region& r) {
  for (const Op& op : r.ops) one(op);
}

void Lowerer::one(const Op& op) {
  switch (op.kind) {
    case K::TileView: views_[op.result] = &op; return;
    case K::TileLoadCell: load_cell(op); return;
    case K::TileLoadAt:
      if (auto it = rings_.find(op.result); it != rings_.end()) {
        Tiled t;
        t.type = op.type;
        t.staged = Tiled::Staged{it->second.array, it->second.current, it->second.pitch, false, it->second.vec};
        tiles_[op.result] = t;
        return;
      }
      load_cell(op);
      return;
    case K::TileStoreCell:
    case K::TileStoreSub: store_cell(op); return;
    case K::TileLoad: pointer_load(op); return;
    case K::TileStore:
    case K::TileAtomicAdd:
    case K::TileAtomicMax:
    case K::TileAtomicMin: pointer_store(op); return;
    case K::TileScatter:
    case K::TileScatterAdd:
    case K::TileScatterMax:
    case K::TileScatterMin: scatter(op); return;
    case K::TileFull: full(op); return;
    case K::TileBroadcast: widen(op); return;
    case K::TileReduceSum:
    case K::TileReduceMax:
    case K::TileReduceMin: reduce(op); return;
    case K::TileTranspose: transpose(op); return;
    case K::TileConvertLayout: convert_layout(op); return;
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
        throw Error("compile.unsupported",
                    "kernel '" + k_.name + "': '" + std::string(op_name(op.kind)) +
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
    throw Error("compile.unsupported",
                "kernel '" + k_.name + "': '" + std::string(op_name(op.kind)) +
                    "' carries a tile; tile kernels carry tiles through For loops only (assign a "
                    "tile::Var in a For, not in an If or While)");
  }
  copy(op);
}

// A non-tile op: copied, its regions lowered in place.
void Lowerer::copy(const Op& op) {
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

// Where v comes from, if it can be computed before the loop for another iteration: the
// induction value, a value from outside the body, or pure scalar ops of those.
bool Lowerer::clonable(Value v, const Region& body, const std::unordered_map<Value, const Op*>& def) const {
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
Value Lowerer::clone_at(Value v, Value at, const Region& body, const std::unordered_map<Value, const Op*>& def,
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
void Lowerer::plan_rings(const Op& op, const std::unordered_map<Value, const Op*>& def) {
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
    if (l.kind != K::TileLoadAt || l.type.rank < 1 || l.type.rank > 2) continue;
    // A copy zero-fills what is past the extent, and moves 4, 8 or 16 bytes (cp.async's sizes):
    // a view padded otherwise, or of narrower vectors, is loaded each iteration as before.
    CellAccess c = cell_access(l.operand(ops::TileLoadAt::view));
    const int bytes = c.vec * scalar_bytes(l.type.scalar);
    if (c.pad != Pad::zero || (bytes != 4 && bytes != 8 && bytes != 16)) continue;
    // Any user reads the staged tile (into the layout it wants, from this iteration's slot): a
    // product as a factor, or a transpose of it as its b (stored as the tile's columns: x @ w.T
    // reads w's rows), straight from shared memory.
    bool ok = !users[l.result].empty();
    std::vector<std::pair<const Op*, size_t>> products;
    for (auto [user, at] : users[l.result]) {
      if (user->kind == K::TileMma && at <= 1) {
        products.push_back({user, at});
      } else if (user->kind == K::TileTranspose) {
        for (auto [product, b_at] : users[user->result]) {
          if (product->kind == K::TileMma && b_at <= 1) products.push_back({product, b_at});
        }
      }
    }
    // Rows padded by 16 bytes for tensor cores' fragments (every product that reads it must
    // agree); otherwise as they are. A tile of rank 1 is one row.
    std::optional<uint32_t> pitch;
    for (auto [user, at] : products) {
      MmaPlan plan = plan_mma(*user);
      uint32_t cols = l.type.shape[1];
      uint32_t p = plan.fragments() ? cols + 8 : cols;
      if (pitch && *pitch != p) ok = false;
      pitch = p;
    }
    if (!pitch) pitch = l.type.rank == 2 ? l.type.shape[1] : 1;
    for (Value i : l.operands_from(ops::TileLoadAt::cell)) ok = ok && clonable(i, body, def);
    if (!ok) continue;
    Ring r;
    r.load = &l;
    r.pitch = *pitch;
    r.vec = c.vec;
    r.slot_elems = l.type.rank == 2 ? l.type.shape[0] * r.pitch : l.type.shape[0];
    r.array = own_shared(l.type.scalar, uint64_t(stages) * r.slot_elems);
    rings_[l.result] = r;
  }
}

// Starts the copies of `r`'s tile for the iteration whose induction value is `at` into the slot
// at element `slot_offset`; `valid` false (past the loop's end) copies nothing.
void Lowerer::issue_copies(const Ring& r, Value at, Value slot_offset, Value valid, const Region& body,
                           const std::unordered_map<Value, const Op*>& def) {
  const Op& l = *r.load;
  CellAccess c = cell_access(l.operand(ops::TileLoadAt::view));
  std::unordered_map<Value, Value> done;
  std::vector<Value> cell;
  for (Value i : l.operands_from(ops::TileLoadAt::cell)) cell.push_back(clone_at(i, at, body, def, done));
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
      if (c.vec == 1) {
        emit(K::Store, {r.array, dst, v});
        continue;
      }
      for (int lane = 0; lane < c.vec; ++lane) {
        Value x = emit(K::VectorExtract, {v}, {{AttrKey::Lane, AttrValue::of_int(lane)}});
        emit(K::Store, {r.array, add(dst, c32(uint32_t(lane))), x});
      }
    }
  }
}

// Whether a loop body can leave an iteration before its last op (a break, continue or terminate
// at any depth, or a last op that is not the yield).
bool Lowerer::exits_early(const Region& body) {
  if (body.ops.empty() || body.ops.back().kind != K::Yield) return true;
  auto walk = [](auto& self, const Region& r) -> bool {
    for (const Op& o : r.ops) {
      if (o.kind == K::Break || o.kind == K::Continue || o.kind == K::Terminate) return true;
      for (const Region& in : o.regions)
        if (self(self, in)) return true;
    }
    return false;
  };
  return walk(walk, body);
}

std::vector<Value> Lowerer::keep_resident(const Op& loop) {
  const Region& body = loop.regions[0];
  std::unordered_set<Value> inside(body.args.begin(), body.args.end());
  std::vector<const Op*> products;
  auto walk = [&](auto& self, const Region& r) -> void {
    for (const Op& o : r.ops) {
      for (Value v : o.results()) inside.insert(v);
      if (o.kind == K::TileMma) products.push_back(&o);
      for (const Region& in : o.regions) {
        inside.insert(in.args.begin(), in.args.end());
        self(self, in);
      }
    }
  };
  walk(walk, body);
  std::vector<Value> kept;
  for (const Op* p : products) {
    const Value a = p->operand(ops::TileMma::a), b = p->operand(ops::TileMma::b);
    const Type ta = k_.type_of(a), tb = k_.type_of(b);
    const uint32_t kk = ta.shape[1], n = tb.shape[1];
    const MmaPlan plan = plan_mma(*p);
    // Rows as the product stages them (padded by 16 bytes for tensor cores' fragments).
    const uint32_t lda = plan.fragments() ? kk + 8 : kk, ldb = plan.fragments() ? n + 8 : n;
    // An a that tensor cores read from registers (a_fragments) stays there.
    const bool a_in_registers = p->get<AttrKey::AFragments>() && plan.fragments() &&
                                tensor_core_instruction(ta.scalar, p->type.scalar, k_.facts.target);
    for (auto [v, pitch] : {std::pair{a, lda}, std::pair{b, ldb}}) {
      if (v == a && a_in_registers) continue;
      if (inside.count(v) || resident_.count(v) || !tiles_.count(v) || tiles_.at(v).staged) continue;
      const Tiled t = tiles_.at(v);
      Value array = own_shared(t.type.scalar, uint64_t(t.type.shape[0]) * pitch);
      write_rows(t, array, 0, pitch);
      resident_[v] = Tiled::Staged{array, c32(0), pitch};
      kept.push_back(v);
    }
  }
  // Every unit's rows are written before any product reads them (the loop's own barriers may not
  // come first: a product whose factors are all in place passes none).
  if (!kept.empty()) emit(K::SyncCube, {});
  return kept;
}

void Lowerer::lower_for(const Op& op) {
  const Region& body = op.regions[0];
  std::span<const Value> init_values = op.operands_from(ops::For::inits);
  const size_t ninit = init_values.size();
  std::unordered_map<Value, const Op*> def;
  for (const Op& o : body.ops) {
    for (Value v : o.results()) def[v] = &o;
  }
  plan_rings(op, def);
  const std::vector<Value> resident = keep_resident(op);
  // A loop in the kernel's own body runs once (trials lower only loops inside other loops).
  const bool top_level = !trial_ && &op >= k_.body.ops.data() && &op < k_.body.ops.data() + k_.body.ops.size();
  std::vector<const Ring*> rings;
  for (auto& entry : rings_) {
    Ring& r = entry.second;  // not a structured binding: clang 14 cannot capture one in a lambda
    if (r.load->operands.size() &&
        std::any_of(body.ops.begin(), body.ops.end(), [&](const Op& o) { return &o == r.load; })) {
      rings.push_back(&r);
    }
  }
  std::sort(rings.begin(), rings.end(), [](const Ring* a, const Ring* b) { return a->load < b->load; });
  int64_t stages = op.attr_int(AttrKey::PrefetchStages, -1);
  // The trials see the staged factors at offset 0.
  for (const Ring* r : rings) rings_[r->load->result].current = c32(0);
  std::vector<std::optional<Layout>> layout(ninit);
  std::vector<bool> guessed(ninit, false);
  for (size_t i = 0; i < ninit; ++i) {
    Value v = init_values[i];
    if (!is_tile_type(k_.type_of(v))) continue;
    const Tiled& t = tile(v);
    guessed[i] = !placed(t);
    layout[i] = placed(t) ? t.layout : blocked(k_.type_of(v), units_, 1);
  }
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<std::optional<Layout>> yielded = trial_yield_layouts(op, layout, guessed);
    if (yielded == layout) break;
    for (size_t i = 0; i < ninit; ++i) {
      if (layout[i] && yielded[i] && *yielded[i] != *layout[i]) {
        layout[i] = yielded[i];
        guessed[i] = false;
      }
    }
  }
  // The loop proper.
  Value lo = op.operand(ops::For::lower_bound), hi = op.operand(ops::For::upper_bound),
        step = op.operand(ops::For::step);
  std::vector<Value> inits = {lo, hi, step};
  std::vector<Type> carried;
  std::vector<size_t> first(ninit);
  for (size_t i = 0; i < ninit; ++i) {
    Value v = init_values[i];
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
    t.guessed = guessed[i];
    for (size_t j = 0; j < layout[i]->slots(); ++j) {
      t.slots.push_back(k_.new_value(carried[first[i] + j]));
      out.args.push_back(t.slots.back());
    }
    tiles_[arg] = t;
  }
  // The pipeline's prologue: the first S - 1 iterations' copies.
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
    // With three or more stages the next copies start after the products (the body's last op
    // is its yield): the tensor cores begin right after the barrier, and a copy still has
    // S - 2 iterations to land. With two that would leave none, so they start first.
    const bool late = stages >= 3 && !exits_early(body);
    for (const Ring* r : rings) {
      if (!late) issue_copies(*r, ahead, mul(next_slot, c32(r->slot_elems)), valid, body, def);
      rings_[r->load->result].current = mul(slot, c32(r->slot_elems));
    }
    if (async_copies() && !late) emit(K::CopyAsyncCommit, {});
    if (late) {
      for (size_t i = 0; i + 1 < body.ops.size(); ++i) one(body.ops[i]);
      for (const Ring* r : rings) issue_copies(*r, ahead, mul(next_slot, c32(r->slot_elems)), valid, body, def);
      if (async_copies()) emit(K::CopyAsyncCommit, {});
      one(body.ops.back());
    } else {
      region(body);
    }
  } else {
    region(body);
  }
  b_.leave();
  loop_layouts_.pop_back();
  b_.region().ops.push_back(std::move(loop));
  // No copy may still be in flight when the loop is done (the last ones copied nothing, but
  // zero-filled their slots): then the rings' bytes may serve a later scratch use.
  if (!rings.empty() && async_copies()) emit(K::CopyAsyncWait, {}, {{AttrKey::Pending, AttrValue::of_int(0)}});
  // A loop that may run again (inside another loop) writes its rings' first slots and its
  // resident factors again before its first barrier: every unit must be done reading them.
  if (!top_level && (!rings.empty() || !resident.empty())) emit(K::SyncCube, {});
  for (const Ring* r : rings) {
    for (Owned& o : own_) {
      if (o.array == r->array) o.top_level = top_level, o.ended = true;
    }
  }
  for (Value v : resident) resident_.erase(v);
}

// Lowers the body into a scratch region and reports the layouts of what its yield passes on.
std::vector<std::optional<Layout>> Lowerer::trial_yield_layouts(const Op& op,
                                                                const std::vector<std::optional<Layout>>& layout,
                                                                const std::vector<bool>& guessed) {
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
    t.guessed = guessed[i];
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
void Lowerer::pass_on(const Op& op) {
  if (loop_layouts_.empty()) {
    throw Error("compile.unsupported",
                "kernel '" + k_.name + "': '" + std::string(op_name(op.kind)) + "' carries a tile outside a For");
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

}  // namespace kiln::passes::tile_lowering
