// lower_tiles' regions and loops: ops copied with their regions, For loops whose carried tiles
// become slots (the layouts settled by trial lowerings), and the shared tiles pipeline_loops
// writes (slots, reads, copies of cells, staged rows).
#include <algorithm>

#include "kiln/error.h"
#include "kiln/ir/type_rules.h"
#include "passes/tile/lower/lowerer.h"

namespace kiln::passes::tile_lowering {

void Lowerer::region(const Region& r) {
  for (const Op& op : r.ops) one(op);
}

void Lowerer::one(const Op& op) {
  switch (op.kind) {
    case K::TileView: views_[op.result] = &op; return;
    case K::TileLoadCell: load_cell(op); return;
    case K::TileLoadAt: load_cell(op); return;
    case K::TileSlot: slot(op); return;
    case K::TileRead: read(op); return;
    case K::TileCopyCell: copy_cell(op); return;
    case K::TileStage: stage_rows(op); return;
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
    if (ir::elementwise(op.kind)) {
      elementwise(op);
      return;
    }
    throw Error("compile.unsupported", "kernel '" + k_.name + "': '" + std::string(op_name(op.kind)) +
                                           "' makes a tile that lower_tiles cannot place (a tile var that "
                                           "promote_vars kept in memory?)");
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

// Shared tiles here are rows `pitch` apart; a swizzled layout (Hopper's warp-group products and bulk
// copies read them) is refused until a lowering reads and writes it.
void Lowerer::unswizzled(const TileLayout& l, const char* op) const {
  if (l.shared.swizzle == Swizzle::None) return;
  throw Error("compile.unsupported", "kernel '" + k_.name + "': " + op + " in " + to_string(l) +
                                         ": lower_tiles lays shared tiles out as plain rows and has no swizzle yet");
}

// A slot of a shared array (a ring's, or a factor kept resident): a tile staged there, rows as the
// array's layout lays them (a tile of rank 1 is one row), stored as its columns where the layout
// says so.
void Lowerer::slot(const Op& op) {
  const TileLayout* l = k_.layout_of(op.type);
  if (!l || l->kind != TileLayout::Kind::Shared) {
    throw Error("passes.lower_tiles",
                "kernel '" + k_.name + "': tile.slot of " + to_string(op.type) + " names no shared layout");
  }
  unswizzled(*l, "tile.slot");
  Tiled t;
  t.type = op.type;
  t.staged = Tiled::Staged{op.operand(ops::TileSlot::array), as_u32(op.operand(ops::TileSlot::offset)),
                           op.type.rank == 1 ? 1u : l->shared.pitch, l->shared.columns, 1};
  tiles_[op.result] = t;
}

// A shared tile into registers, in the layout a load of the vectors its copies moved would give
// (so that a pipeline leaves every layout, and every reduction's order, as a plain load had it).
void Lowerer::read(const Op& op) {
  Tiled src = tile(op.operand(ops::TileUnary::tile));
  if (!src.staged) {
    throw Error("passes.lower_tiles", "kernel '" + k_.name + "': tile.read of a tile that is not in shared memory");
  }
  src.staged->vec = int(op.attr_int(AttrKey::Lanes, 1));
  Tiled r;
  r.type = op.type;
  r.layout = named_layout(op.type).value_or(loaded_layout(src.type, *src.staged));
  r.slots = read_staged(*src.staged, r.layout);
  tiles_[op.result] = r;
}

// A cell of a view into a shared array from element `offset`, rows as the array's layout lays them,
// each unit copying the vectors a load of the cell would give it; past the extent, and where
// `valid` is false, zeros. async: cp.async (the pipeline's commit and wait order it); else loads
// and stores.
void Lowerer::copy_cell(const Op& op) {
  using C = ops::TileCopyCell;
  const Value array = op.operand(C::array);
  const Type view_type = k_.type_of(op.operand(C::view));
  const TileLayout* named = k_.layout_of(k_.type_of(array));
  if (!named || named->kind != TileLayout::Kind::Shared) {
    throw Error("passes.lower_tiles", "kernel '" + k_.name + "': tile.copy_cell into an array with no shared layout");
  }
  unswizzled(*named, "tile.copy_cell");
  CellAccess c = cell_access(op.operand(C::view));
  std::vector<Value> cell(op.operands_from(C::cell).begin(), op.operands_from(C::cell).end());
  Layout lay = blocked(view_type, units_, c.vec);
  Addressing a = address(c, lay, cell, {});
  std::array<uint32_t, 4> stride =
      view_type.rank == 1 ? std::array<uint32_t, 4>{1, 0, 0, 0} : std::array<uint32_t, 4>{named->shared.pitch, 1, 0, 0};
  Value dst0 = add(as_u32(op.operand(C::offset)), unit_linear(lay, stride));
  const Value valid = op.operand(C::valid);
  for (size_t ch = 0; ch < a.chunk_index.size(); ++ch) {
    Value dst = add(dst0, c32(slot_linear(lay, ch * size_t(c.vec), stride)));
    Value mask = both(a.chunk_mask[ch], valid);
    if (op.get<AttrKey::Async>()) {
      emit(K::CopyAsync, {array, dst, c.array, a.chunk_index[ch], mask});
      continue;
    }
    Value v = emit(K::Load, {c.array, a.chunk_index[ch], mask});
    if (c.vec == 1) {
      emit(K::Store, {array, dst, v});
      continue;
    }
    for (int lane = 0; lane < c.vec; ++lane) {
      Value x = emit(K::VectorExtract, {v}, {{AttrKey::Lane, AttrValue::of_int(lane)}});
      emit(K::Store, {array, add(dst, c32(uint32_t(lane))), x});
    }
  }
}

// A register tile's rows into a shared array from element `offset` (a factor kept resident).
void Lowerer::stage_rows(const Op& op) {
  using S = ops::TileStage;
  const TileLayout* named = k_.layout_of(k_.type_of(op.operand(S::array)));
  if (!named || named->kind != TileLayout::Kind::Shared) {
    throw Error("passes.lower_tiles", "kernel '" + k_.name + "': tile.stage into an array with no shared layout");
  }
  unswizzled(*named, "tile.stage");
  write_rows(tile(op.operand(S::tile)), op.operand(S::array), as_u32(op.operand(S::offset)), named->shared.pitch);
}

void Lowerer::lower_for(const Op& op) {
  const Region& body = op.regions[0];
  std::span<const Value> init_values = op.operands_from(ops::For::inits);
  const size_t ninit = init_values.size();
  // A loop in the kernel's own body runs once (trials lower only loops inside other loops).
  const bool top_level = !trial_ && &op >= k_.body.ops.data() && &op < k_.body.ops.data() + k_.body.ops.size();
  // A carried tile's layout: the one its type names (assign_layouts wrote it), else found by
  // trial lowerings from the init's layout (or a blocked guess for a constant).
  std::vector<std::optional<Layout>> layout(ninit);
  std::vector<bool> guessed(ninit, false), named(ninit, false);
  for (size_t i = 0; i < ninit; ++i) {
    Value v = init_values[i];
    if (!is_tile_type(k_.type_of(v))) continue;
    if (std::optional<Layout> l = named_layout(k_.type_of(body.args[1 + i]))) {
      layout[i] = *l;
      named[i] = true;
      continue;
    }
    const Tiled& t = tile(v);
    guessed[i] = !placed(t);
    layout[i] = placed(t) ? t.layout : blocked(k_.type_of(v), units_, 1);
  }
  bool all_named = true;
  for (size_t i = 0; i < ninit; ++i) all_named = all_named && (!layout[i] || named[i]);
  for (int attempt = 0; attempt < 3 && !all_named; ++attempt) {
    std::vector<std::optional<Layout>> yielded = trial_yield_layouts(op, layout, guessed);
    if (yielded == layout) break;
    for (size_t i = 0; i < ninit; ++i) {
      if (layout[i] && yielded[i] && *yielded[i] != *layout[i] && !named[i]) {
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
  loop_layouts_.push_back(layout);
  b_.enter(out);
  region(body);
  b_.leave();
  loop_layouts_.pop_back();
  b_.region().ops.push_back(std::move(loop));
  // The rings of a loop in the kernel's own body (pipeline_loops waits for their last copies right
  // after it) are never live again: a scratch array first used after this may share their bytes.
  if (!top_level) return;
  for (const Op& o : body.ops) {
    if (o.kind != K::TileCopyCell) continue;
    const Value array = o.operand(ops::TileCopyCell::array);
    if (std::any_of(own_.begin(), own_.end(), [&](const Owned& w) { return w.array == array; })) continue;
    const Type& t = k_.type_of(array);
    own_.push_back({t.scalar, array, t.length, /*top_level=*/true, /*ended=*/true, /*declared=*/true});
  }
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
