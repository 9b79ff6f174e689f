// assign_layouts: every register tile's fragment layout written into its type (#N, the kernel's
// layout table), and every change of layout an op needs written as a tile.convert_layout, so that
// the dump after this pass shows where each tile sits and where one moves (decision 031).
//
// The layouts are the lowering's own choices (tile/lower/lowerer.h: loads blocked over the units
// in vectors, reductions keeping their operand's bits, transposes renaming them, products on
// tensor cores' fragments in the planes place_products chose, a loop's carried tiles in the layout
// its body yields), found by lowering a copy of the kernel: the rules stay in one place, and
// lower_tiles then places each tile where its type says. A layout written by hand, or by another
// pass, stands: the lowering honours it, so it is what this pass finds again.
//
// What must agree, and is made to: an elementwise op's operands and result share a layout; a
// product's accumulator is in the product's layout; a loop's initial values, the values its body
// yields and its results are in the layout it carries. A constant (tile.full) or a widening
// (tile.broadcast) has no layout of its own until used: it takes its user's, and is written again
// for a user that wants another. Any other operand in another layout goes through a
// tile.convert_layout right before its user.
#include <unordered_map>
#include <vector>

#include "kiln/ir/type_rules.h"
#include "kiln/passes/passes.h"
#include "passes/tile/lower/lowerer.h"

namespace kiln::passes {

namespace tile {
namespace {

using namespace ir;
using K = OpKind;

bool has_register_tiles(const Kernel& k) {
  for (const Type& t : k.value_types) {
    if (t.is_register_tile()) return true;
  }
  return false;
}

class Assigner {
 public:
  Assigner(Kernel& k, const std::unordered_map<Value, tile_lowering::Layout>& placed) : k_(k), placed_(placed) {}

  bool run() {
    name_values(k_.body);
    agree(k_.body);
    return changed_;
  }

 private:
  // Phase 1: each value the lowering placed takes its layout.
  void name_values(Region& r) {
    for (Value a : r.args) name(a, nullptr);
    for (Op& op : r.ops) {
      for (size_t i = 0; i < op.result_count(); ++i) name(op.result_at(i), i == 0 ? &op : nullptr);
      for (Value v : op.results()) def_[v] = &op;
      for (Region& in : op.regions) name_values(in);
    }
  }

  void name(Value v, Op* op) {
    Type t = k_.type_of(v);
    if (!t.is_register_tile() || t.layout != 0) return;
    auto it = placed_.find(v);
    if (it == placed_.end()) return;
    set_layout(v, op, k_.layout_number(TileLayout::of(it->second)));
  }

  void set_layout(Value v, Op* op, uint16_t layout) {
    Type t = k_.type_of(v).with_layout(layout);
    k_.value_types[v] = t;
    if (op && op->result == v) op->type = t;
    changed_ = true;
  }

  // Phase 2: what must agree, in program order; ops that convert go right before their user. A
  // region's ops stay where they are until it is done (want() may rewrite an earlier op's type
  // through def_), then the new ones are put in.
  void agree(Region& r) {
    std::vector<std::vector<Op>> pre(r.ops.size());
    for (size_t i = 0; i < r.ops.size(); ++i) {
      Op& op = r.ops[i];
      before_.clear();
      uint16_t result = op.result != kNoValue ? k_.type_of(op.result).layout : 0;
      if (elementwise(op.kind) && op.type.is_register_tile() && result == 0) {
        // Placed nowhere by the lowering (an op of constants): it computes where its first placed
        // operand is, if any is, as lift_to_tiles requires of every elementwise op.
        for (Value v : op.operands) {
          if (const uint16_t l = k_.type_of(v).layout; l != 0 && result == 0) result = l;
        }
        if (result != 0) set_layout(op.result, &op, result);
      }
      if (elementwise(op.kind) && op.type.is_register_tile() && result != 0) {
        for (Value& v : op.operands) v = want(v, result);
      } else if (op.kind == K::TileMma && result != 0) {
        Value& c = op.operand(ops::TileMma::c);
        c = want(c, result);
      } else if (op.kind == K::For) {
        const Region& body = op.regions[0];
        for (size_t j = 0; j + ops::For::inits < op.operands.size(); ++j) {
          const uint16_t carried = k_.type_of(body.args[1 + j]).layout;
          Value& init = op.operands[ops::For::inits + j];
          if (carried != 0) init = want(init, carried);
        }
      } else if (!loops_.empty() && loops_.back()->kind == K::For &&
                 ((op.kind == K::Yield && &loops_.back()->regions[0] == &r) || op.kind == K::Continue ||
                  op.kind == K::Break)) {
        // A loop carrying tiles passes them on in its layouts (a break: its results, the same).
        const Region& body = loops_.back()->regions[0];
        for (size_t j = 0; j < op.operands.size(); ++j) {
          const uint16_t carried = k_.type_of(body.args[1 + j]).layout;
          if (carried != 0) op.operands[j] = want(op.operands[j], carried);
        }
      }
      pre[i] = std::move(before_);
      before_.clear();
      // The innermost loop (a while's carries no tiles: its break and continue are not a For's).
      const bool loop = op.kind == K::For || op.kind == K::While;
      if (loop) loops_.push_back(&op);
      for (Region& inner : op.regions) agree(inner);
      if (loop) loops_.pop_back();
    }
    std::vector<Op> out;
    for (size_t i = 0; i < r.ops.size(); ++i) {
      for (Op& b : pre[i]) out.push_back(std::move(b));
      out.push_back(std::move(r.ops[i]));
    }
    r.ops = std::move(out);
  }

  const Op* def_of(Value v) const {
    auto d = def_.find(v);
    return d == def_.end() ? nullptr : d->second;
  }

  // A tile made of constants: a tile.full, a widening (of anything: it only picks the elements
  // its user's layout needs), or an elementwise op of such tiles. It can be written again in any
  // layout at no cost but its ops.
  bool constant_made(Value v) const {
    const Op* def = def_of(v);
    if (!def) return false;
    if (def->kind == K::TileFull || def->kind == K::TileBroadcast) return true;
    if (!elementwise(def->kind) || !def->type.is_register_tile()) return false;
    for (Value o : def->operands) {
      if (!constant_made(o)) return false;
    }
    return true;
  }

  // Whether v, placed nowhere yet, and what it is made of can all take `layout`.
  bool can_claim(Value v, uint16_t layout) const {
    const Type& t = k_.type_of(v);
    if (t.layout == layout) return true;
    if (t.layout != 0 || !constant_made(v)) return false;
    const Op* def = def_of(v);
    if (def->kind == K::TileFull || def->kind == K::TileBroadcast) return true;
    for (Value o : def->operands) {
      if (!can_claim(o, layout)) return false;
    }
    return true;
  }

  void claim(Value v, uint16_t layout) {
    if (k_.type_of(v).layout == layout) return;
    Op* def = def_.at(v);
    set_layout(v, def, layout);
    if (def->kind == K::TileFull || def->kind == K::TileBroadcast) return;
    for (Value o : def->operands) claim(o, layout);
  }

  // A copy of v's ops in `layout`, emitted before the current op (each operand first).
  Value rematerialize(Value v, uint16_t layout) {
    Op c = *def_of(v);
    if (c.kind != K::TileFull && c.kind != K::TileBroadcast) {
      for (Value& o : c.operands) o = want(o, layout);
    }
    c.type = k_.type_of(v).with_layout(layout);
    c.result = k_.new_value(c.type);
    before_.push_back(std::move(c));
    changed_ = true;
    return before_.back().result;
  }

  // v in layout `want`: v itself where it is (or, placed nowhere yet, can be put) there; a tile
  // made of constants written again in it; else a conversion. What is emitted goes before the
  // current op, whose operands dominate it.
  Value want(Value v, uint16_t layout) {
    const Type t = k_.type_of(v);
    if (!t.is_register_tile() || t.layout == layout) return v;
    if (constant_made(v)) {
      if (t.layout == 0 && can_claim(v, layout)) {
        claim(v, layout);
        return v;
      }
      return rematerialize(v, layout);
    }
    Op c;
    c.kind = K::TileConvertLayout;
    c.operands = {v};
    c.type = t.with_layout(layout);
    c.result = k_.new_value(c.type);
    before_.push_back(std::move(c));
    changed_ = true;
    return before_.back().result;
  }

  Kernel& k_;
  const std::unordered_map<Value, tile_lowering::Layout>& placed_;
  std::unordered_map<Value, Op*> def_;
  std::vector<Op> before_;
  std::vector<const Op*> loops_;
  bool changed_ = false;
};

}  // namespace
}  // namespace tile

bool assign_layouts(ir::Kernel& k) {
  if (!tile::has_register_tiles(k)) return false;
  return tile::Assigner(k, tile_lowering::lowered_layouts(k)).run();
}

}  // namespace kiln::passes
