// place_products: the plane split of every tile product, chosen for the whole program before
// lower_tiles lowers any op, and written on each tile.mma as planes = [pm, pn] (and a_fragments
// where its a comes from registers). The choice needs what a product's result becomes later, which
// lowering op by op cannot see:
// - a product whose result (after elementwise ops) is reduced along its rows, or is (after
//   elementwise ops) another product's a, takes whole rows a plane (rows_plan): a row's max and sum
//   are then lane shuffles, with no shared memory and no barrier, and its result is already the
//   fragments another product's a needs;
// - a product whose a is (after elementwise ops) such a product's result, with its k that
//   product's n, takes whole rows too and a_fragments: on tensor cores a is read from registers
//   (mma.sync.a_frag), FlashAttention-2's P, without a round trip through shared memory;
// - every other product on tensor cores' formats takes the square split (decision 020), as before.
// The units are the cube's (facts.cube_dim, from tile_units for the launch's target), so the split
// is chosen per target at compile time.
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "kiln/error.h"
#include "kiln/ir/type_rules.h"
#include "kiln/passes/passes.h"
#include "passes/tile/placement.h"

namespace kiln::passes {

namespace tile {

using namespace ir;

ProductPlan square_plan(Scalar ab, Scalar c, uint32_t m, uint32_t n, uint32_t k, uint32_t units) {
  ProductPlan p;
  p.instruction = mma_instruction(ab, c);
  if (!p.instruction) return {};
  const uint32_t bm = p.instruction->m, bn = p.instruction->n;
  if (m % bm || n % bn || k % p.instruction->k) return {};
  const uint32_t planes = units / Target::kPlaneWidth;
  while (uint32_t(p.wm * p.wn) < planes) {
    bool rows =
        m / uint32_t(p.wm) / bm >= 2 && (m / uint32_t(p.wm) >= n / uint32_t(p.wn) || n / uint32_t(p.wn) / bn < 2);
    bool cols = n / uint32_t(p.wn) / bn >= 2;
    if (rows) p.wm *= 2;
    else if (cols) p.wn *= 2;
    else return {};
  }
  return p;
}

ProductPlan rows_plan(Scalar ab, Scalar c, uint32_t m, uint32_t n, uint32_t k, uint32_t units) {
  ProductPlan p;
  p.instruction = mma_instruction(ab, c);
  const uint32_t planes = units / Target::kPlaneWidth;
  if (!p.instruction || planes == 0 || m % (p.instruction->m * planes) || n % p.instruction->n ||
      k % p.instruction->k) {
    return {};
  }
  p.wm = int(planes);
  return p;
}

ProductPlan plan_of(const Kernel& k, const Op& product, uint32_t units) {
  const Type &ta = k.type_of(product.operand(ops::TileMma::a)), &tb = k.type_of(product.operand(ops::TileMma::b));
  const uint32_t m = ta.shape[0], kk = ta.shape[1], n = tb.shape[1];
  if (!product.has_attr(AttrKey::Planes)) return square_plan(ta.scalar, product.type.scalar, m, n, kk, units);
  std::span<const int64_t> planes = product.get<AttrKey::Planes>();
  ProductPlan p;
  p.instruction = mma_instruction(ta.scalar, product.type.scalar);
  p.wm = int(planes[0]);
  p.wn = int(planes[1]);
  const bool fits = p.instruction && uint64_t(p.wm) * uint64_t(p.wn) * Target::kPlaneWidth == units &&
                    m % (p.instruction->m * uint32_t(p.wm)) == 0 && n % (p.instruction->n * uint32_t(p.wn)) == 0 &&
                    kk % p.instruction->k == 0;
  if (!fits) {
    throw Error("passes.lower_tiles", "kernel '" + k.name + "': a " + std::to_string(m) + " x " + std::to_string(n) +
                                          " x " + std::to_string(kk) + " product placed on planes [" +
                                          std::to_string(p.wm) + ", " + std::to_string(p.wn) +
                                          "] does not fit tensor cores' blocks on a cube of " + std::to_string(units) +
                                          " units (place_products writes planes for the cube it runs on)");
  }
  return p;
}

namespace {

bool elementwise(const Op& op) {
  return op.result != kNoValue && op.type.is_register_tile() && op.regions.empty() && ir::elementwise(op.kind);
}

// The products of a kernel in program order, with what their results become.
struct Product {
  Op* op;
  std::vector<size_t> a_from;  // the products a is (after elementwise ops) the result of
  bool rows_reduced = false;   // its result is reduced along rows
  bool feeds_a = false;        // its result is another product's a
};

struct Finder {
  const Kernel& k;
  std::vector<Product> products;
  std::unordered_map<Value, std::vector<size_t>> from;  // a tile value: the products it derives from

  void region(Region& r) {
    for (Op& op : r.ops) {
      if (op.kind == OpKind::TileMma) {
        Product p{&op, {}};
        if (auto it = from.find(op.operand(ops::TileMma::a)); it != from.end()) p.a_from = it->second;
        for (size_t q : p.a_from) products[q].feeds_a = true;
        from[op.result] = {products.size()};
        products.push_back(std::move(p));
      } else if (elementwise(op)) {
        std::vector<size_t> all;
        for (Value v : op.operands) {
          auto it = from.find(v);
          if (it == from.end() || k.type_of(v).shape != op.type.shape) continue;
          for (size_t q : it->second) {
            if (std::find(all.begin(), all.end(), q) == all.end()) all.push_back(q);
          }
        }
        if (!all.empty()) from[op.result] = std::move(all);
      } else if (op.kind == OpKind::TileReduceSum || op.kind == OpKind::TileReduceMax ||
                 op.kind == OpKind::TileReduceMin) {
        const Value t = op.operand(ops::TileUnary::tile);
        const Type& tt = k.type_of(t);
        if (auto it = from.find(t); it != from.end() && tt.rank == 2 && op.get<AttrKey::Dim>() == 1) {
          for (size_t q : it->second) products[q].rows_reduced = true;
        }
      }
      for (Region& inner : op.regions) region(inner);
    }
  }
};

}  // namespace
}  // namespace tile

bool place_products(ir::Kernel& k) {
  using namespace ir;
  const uint32_t units = k.facts.cube_dim.x;
  // A cube the tile layer cannot spread tiles over is lower_tiles' to refuse, with what it needs.
  if (units < Target::kPlaneWidth || (units & (units - 1)) != 0 || units > Target::kMaxCubeUnits ||
      k.facts.cube_dim.y != 1 || k.facts.cube_dim.z != 1) {
    return false;
  }
  tile::Finder f{k, {}, {}};
  f.region(k.body);
  bool changed = false;
  std::vector<tile::ProductPlan> plans(f.products.size());
  for (size_t i = 0; i < f.products.size(); ++i) {
    tile::Product& p = f.products[i];
    Op& op = *p.op;
    const Type &ta = k.type_of(op.operand(ops::TileMma::a)), &tb = k.type_of(op.operand(ops::TileMma::b));
    const uint32_t m = ta.shape[0], kk = ta.shape[1], n = tb.shape[1];
    // a in registers: from products that own whole rows and whose n is this product's k (their
    // fragments are then this product's a fragments).
    bool a_fragments = !p.a_from.empty();
    for (size_t q : p.a_from) {
      const tile::ProductPlan& from = plans[q];
      const uint32_t from_n = k.type_of(f.products[q].op->result).shape[1];
      a_fragments = a_fragments && from.fragments() && from.wn == 1 && from_n == kk;
    }
    // A placement written earlier (by hand, or by an earlier run) stands; later products read it.
    if (op.has_attr(AttrKey::Planes)) {
      plans[i] = tile::plan_of(k, op, units);
      continue;
    }
    tile::ProductPlan plan;
    if (a_fragments || p.rows_reduced || p.feeds_a) plan = tile::rows_plan(ta.scalar, op.type.scalar, m, n, kk, units);
    a_fragments = a_fragments && plan.fragments() && plan.wm == plans[p.a_from[0]].wm;
    if (!plan.fragments()) plan = tile::square_plan(ta.scalar, op.type.scalar, m, n, kk, units);
    plans[i] = plan;
    if (!plan.fragments()) continue;
    op.attrs.push_back(ir::attr<AttrKey::Planes>({plan.wm, plan.wn}));
    if (a_fragments) op.attrs.push_back(ir::attr<AttrKey::AFragments>(true));
    std::sort(op.attrs.begin(), op.attrs.end(), [](const Attr& a, const Attr& b) { return a.key < b.key; });
    changed = true;
  }
  return changed;
}

}  // namespace kiln::passes
