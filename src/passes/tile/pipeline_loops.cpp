// pipeline_loops: a loop with prefetch_stages = S >= 2 copies the tiles it loads into a ring of S
// slots in shared memory, S - 1 iterations ahead (seed 05's rule: every tile load of the loop, not
// only a product's factors), and a product's factor from before the loop is written into shared
// memory once instead of every iteration. Both are written as tile ops, so that the dump after
// this pass shows each ring, its copies and its waits, and lower_tiles lowers them op by op:
//
//   %ring = shared.alloc : shared<bf16, 2 * 64 * 136, #1>       // at the kernel's top
//   tile.copy_cell %ring, 0, %view, %valid, %cell... {async}    // the first S - 1 iterations
//   copy.async.commit
//   for %i ... {
//     copy.async.wait {pending = S - 2}                          // this iteration's copies
//     sync.cube                                                  // every unit past the last one
//     tile.copy_cell %ring, next slot, %view, %ahead valid, cells at i + S - 1 {async}
//     copy.async.commit
//     %t = tile.slot %ring, this slot : tile<[64, 128] x bf16, shared, #1>
//     ... products read %t; %t transposed is the same memory read as columns; any other user
//     ... reads it into registers (tile.read)
//   }
//   copy.async.wait {pending = 0}                                // nothing in flight after it
//
// How copies are issued and waited for is the target's ring kind (ring.h). A load is copied when
// its view pads with zero (a copy zero-fills past the extent), its vectors are 4, 8 or 16 bytes
// (cp.async's sizes), and its cell indices can be computed for another iteration (the induction
// value, values from before the loop, pure scalar ops of those). Its slot's rows are padded by 16
// bytes where a product on tensor cores reads it (ldmatrix's eight rows in different banks), and
// every product that reads it must agree (exact loops read rows padded to whole 16-byte chunks).
// A view made inside the loop is not copied (it does not exist before it). With three stages or
// more the next copies start after the body's other work, so that the tensor cores begin right
// after the barrier; that needs the body to end in its yield (a loop that carries values, with no
// break or continue), else they start first.
#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kiln/ir/mma.h"
#include "kiln/passes/passes.h"
#include "passes/tile/placement.h"
#include "passes/tile/ring.h"

namespace kiln::passes {

namespace tile {
namespace {

using namespace ir;
using K = OpKind;

struct Use {
  Op* op;
  size_t operand;
};

// Every use of every value in `r`, at any depth.
void collect_uses(Region& r, std::unordered_map<Value, std::vector<Use>>& uses) {
  for (Op& o : r.ops) {
    for (size_t i = 0; i < o.operands.size(); ++i) uses[o.operands[i]].push_back({&o, i});
    for (Region& in : o.regions) collect_uses(in, uses);
  }
}

// Every value a region defines, at any depth (its arguments included).
void collect_defs(const Region& r, std::unordered_set<Value>& defs) {
  defs.insert(r.args.begin(), r.args.end());
  for (const Op& o : r.ops) {
    for (Value v : o.results()) defs.insert(v);
    for (const Region& in : o.regions) collect_defs(in, defs);
  }
}

void collect_products(Region& r, std::vector<Op*>& products) {
  for (Op& o : r.ops) {
    if (o.kind == K::TileMma) products.push_back(&o);
    for (Region& in : o.regions) collect_products(in, products);
  }
}

// Whether a loop body can leave an iteration before its last op (a break, continue or terminate
// at any depth, or a last op that is not the yield).
bool exits_early(const std::vector<Op>& body) {
  if (body.empty() || body.back().kind != K::Yield) return true;
  auto walk = [](auto& self, const Region& r) -> bool {
    for (const Op& o : r.ops) {
      if (o.kind == K::Break || o.kind == K::Continue || o.kind == K::Terminate) return true;
      for (const Region& in : o.regions)
        if (self(self, in)) return true;
    }
    return false;
  };
  for (const Op& o : body) {
    if (o.kind == K::Break || o.kind == K::Continue || o.kind == K::Terminate) return true;
    for (const Region& in : o.regions)
      if (walk(walk, in)) return true;
  }
  return false;
}

bool is_factor(const Use& u) {
  return u.op->kind == K::TileMma && (u.operand == ops::TileMma::a || u.operand == ops::TileMma::b);
}

// A pitch whose rows are whole 16-byte chunks (the shared layout's rule).
uint32_t whole_chunks(uint32_t elements, int element_bytes) {
  const uint32_t per_chunk = uint32_t(std::max(1, 16 / element_bytes));
  return (elements + per_chunk - 1) / per_chunk * per_chunk;
}

struct Ring {
  Op* load = nullptr;
  Value array = kNoValue;
  uint16_t layout = 0;
  uint32_t slot_elems = 0;
  int vec = 1;
};

class Pipeliner {
 public:
  explicit Pipeliner(Kernel& k) : k_(k), b_(k), kind_(ring_kind_for(k.facts.target)), units_(k.facts.cube_dim.x) {
    index_views(k.body);
  }

  bool run() {
    region(k_.body, /*top=*/true);
    if (!allocs_.empty()) {
      // The rings and resident arrays first, where lower_tiles puts every shared array.
      std::vector<Op> ops = std::move(allocs_);
      for (Op& op : k_.body.ops) ops.push_back(std::move(op));
      k_.body.ops = std::move(ops);
    }
    return changed_;
  }

 private:
  void region(Region& r, bool top) {
    std::vector<Op> in = std::move(r.ops);
    r.ops.clear();
    for (Op& op : in) {
      if (op.kind == K::For) {
        const size_t at = loop(r, std::move(op), top);
        // Loops inside its body next (they see the factors it keeps resident as shared tiles).
        for (Region& inner : r.ops[at].regions) region(inner, false);
      } else {
        for (Region& inner : op.regions) region(inner, false);
        r.ops.push_back(std::move(op));
      }
    }
  }

  Value u32(uint64_t v) { return b_.const_int(Scalar::U32, int64_t(v)); }

  Value emit(K kind, std::initializer_list<Value> operands, Type type = Type::none(), std::vector<Attr> attrs = {}) {
    return b_.emit(kind, operands, type, std::move(attrs));
  }

  Value shared_array(Scalar s, uint64_t length, uint32_t pitch, uint16_t& layout) {
    SharedLayout l;
    l.pitch = pitch;
    layout = k_.layout_number(TileLayout::of(l));
    Type t = Type::shared(Type::scalar_of(s), uint32_t(length)).with_layout(layout);
    Op alloc;
    alloc.kind = K::SharedAlloc;
    alloc.result = k_.new_value(t);
    alloc.type = t;
    allocs_.push_back(std::move(alloc));
    return allocs_.back().result;
  }

  // The row pitch products want a staged factor of `cols` columns in: padded by 16 bytes on
  // tensor cores' layout; nullopt when two products disagree.
  std::optional<uint32_t> product_pitch(const std::vector<Op*>& products, uint32_t cols, int element_bytes) {
    std::optional<uint32_t> pitch;
    for (Op* p : products) {
      // Exact loops read any pitch: rows of whole 16-byte chunks, as every shared layout has.
      const uint32_t want = plan_of(k_, *p, units_).fragments() ? cols + 8 : whole_chunks(cols, element_bytes);
      if (pitch && *pitch != want) return std::nullopt;
      pitch = want;
    }
    return pitch;
  }

  // Where v comes from, if it can be computed for another iteration.
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
    std::vector<Value> operands;
    for (Value x : o.operands) operands.push_back(clone_at(x, at, body, def, done));
    Value r = b_.emit(o.kind, operands, o.type, o.attrs);
    done[v] = r;
    return r;
  }

  // The copies of ring r's tile for the iteration whose induction value is `at`.
  void copy(const Ring& r, Value at, Value slot_offset, Value valid, const Region& body,
            const std::unordered_map<Value, const Op*>& def) {
    std::unordered_map<Value, Value> done;
    std::vector<Value> operands = {r.array, slot_offset, r.load->operand(ops::TileLoadAt::view), valid};
    for (Value i : r.load->operands_from(ops::TileLoadAt::cell)) operands.push_back(clone_at(i, at, body, def, done));
    std::vector<Attr> attrs;
    if (kind_.async()) attrs.push_back({AttrKey::Async, AttrValue::of_bool(true)});
    b_.emit(K::TileCopyCell, operands, Type::none(), std::move(attrs));
  }

  // The loads of the loop's body that its ring copies.
  std::vector<Ring> plan_rings(Region& body, int64_t stages, std::unordered_map<Value, std::vector<Use>>& uses,
                               const std::unordered_map<Value, const Op*>& def) {
    std::vector<Ring> rings;
    std::unordered_set<Value> inside;
    collect_defs(body, inside);
    for (Op& l : body.ops) {
      if (l.kind != K::TileLoadAt || l.type.rank < 1 || l.type.rank > 2) continue;
      // A view made inside the loop (a retile there) cannot be copied from before it exists.
      auto view = views_.find(l.operand(ops::TileLoadAt::view));
      if (view == views_.end() || inside.count(l.operand(ops::TileLoadAt::view))) continue;
      const int vec = view->second.vec;
      const int bytes = vec * scalar_bytes(l.type.scalar);
      if (view->second.pad != Pad::zero || (bytes != 4 && bytes != 8 && bytes != 16)) continue;
      const std::vector<Use>& users = uses[l.result];
      if (users.empty()) continue;
      bool ok = true;
      for (Value i : l.operands_from(ops::TileLoadAt::cell)) ok = ok && clonable(i, body, def);
      // The products that read it as a factor, straight or transposed (b stored as columns).
      std::vector<Op*> products;
      for (const Use& u : users) {
        if (is_factor(u)) products.push_back(u.op);
        if (u.op->kind != K::TileTranspose) continue;
        for (const Use& t : uses[u.op->result]) {
          if (is_factor(t)) products.push_back(t.op);
        }
      }
      const int eb = scalar_bytes(l.type.scalar);
      std::optional<uint32_t> pitch;
      if (l.type.rank == 1) {
        pitch = whole_chunks(l.type.shape[0], eb);  // one row
      } else {
        pitch = products.empty() ? whole_chunks(l.type.shape[1], eb) : product_pitch(products, l.type.shape[1], eb);
      }
      if (!ok || !pitch) continue;
      Ring r;
      r.load = &l;
      r.vec = vec;
      r.slot_elems = l.type.rank == 2 ? l.type.shape[0] * *pitch : *pitch;
      r.array = shared_array(l.type.scalar, uint64_t(stages) * r.slot_elems, *pitch, r.layout);
      rings.push_back(r);
    }
    return rings;
  }

  // What a copy needs of each view, found before any op moves.
  struct View {
    int vec;  // its parameter's vector width
    Pad pad;
  };
  void index_views(const Region& r) {
    for (const Op& o : r.ops) {
      if (o.kind == K::TileView)
        views_[o.result] = {k_.type_of(o.operand(ops::Array::array)).width, o.get<AttrKey::Pad>()};
      for (const Region& in : o.regions) index_views(in);
    }
  }

  // Replaces the ring load's uses: a product reads the slot, a transposed one the slot as columns,
  // anything else the slot read into registers.
  void replace_load(const Ring& r, Value slot, std::unordered_map<Value, std::vector<Use>>& uses,
                    std::unordered_set<Value>& dropped) {
    const Op& l = *r.load;
    Value read = kNoValue;
    auto read_it = [&] {
      if (read == kNoValue) {
        Type t = l.type;  // a register tile, no layout yet
        read = emit(K::TileRead, {slot}, t, {{AttrKey::Lanes, AttrValue::of_int(r.vec)}});
      }
      return read;
    };
    for (const Use& u : uses[l.result]) {
      if (is_factor(u)) {
        u.op->operands[u.operand] = slot;
        continue;
      }
      if (u.op->kind == K::TileTranspose) {
        Op& tr = *u.op;
        Value columns = kNoValue;
        bool other_users = false;
        for (const Use& t : uses[tr.result]) {
          if (!is_factor(t)) {
            other_users = true;
            continue;
          }
          if (columns == kNoValue) {
            SharedLayout sl = k_.layouts[r.layout - 1].shared;
            sl.columns = true;
            Type ct = tr.type;
            ct.space = MemorySpace::Shared;
            ct.layout = k_.layout_number(TileLayout::of(sl));
            columns = emit(K::TileTranspose, {slot}, ct);
          }
          t.op->operands[t.operand] = columns;
        }
        if (other_users) tr.operands[ops::TileUnary::tile] = read_it();
        else dropped.insert(tr.result);
        continue;
      }
      u.op->operands[u.operand] = read_it();
    }
  }

  // Rewrites the loop into `parent` with what goes before and after it; answers its index there.
  size_t loop(Region& parent, Op op, bool top) {
    Region& body = op.regions[0];
    const int64_t stages = op.attr_int(AttrKey::PrefetchStages, -1);
    std::unordered_map<Value, const Op*> def;
    for (const Op& o : body.ops) {
      for (Value v : o.results()) def[v] = &o;
    }
    std::unordered_map<Value, std::vector<Use>> uses;
    collect_uses(body, uses);
    b_.enter(parent);
    std::vector<Ring> rings;
    if (stages >= 2) rings = plan_rings(body, stages, uses, def);
    const bool resident = keep_resident(body);
    if (rings.empty() && !resident) {
      b_.leave();
      parent.ops.push_back(std::move(op));
      return parent.ops.size() - 1;
    }
    changed_ = true;
    const Value lo = op.operand(ops::For::lower_bound), hi = op.operand(ops::For::upper_bound),
                step = op.operand(ops::For::step);
    const Type it = k_.type_of(lo);
    auto index_const = [&](int64_t v) { return b_.constant(it, AttrValue::of_int(v)); };
    // The prologue: the first S - 1 iterations' copies.
    if (!rings.empty()) {
      for (int64_t s = 0; s + 1 < stages; ++s) {
        Value at = emit(K::Add, {lo, emit(K::Mul, {step, index_const(s)}, it)}, it);
        Value valid = emit(K::Lt, {at, hi}, Type::scalar_of(Scalar::Bool));
        for (const Ring& r : rings) copy(r, at, u32(uint64_t(s) * r.slot_elems), valid, body, def);
        kind_.commit(b_);
      }
    }
    b_.leave();
    if (rings.empty()) {
      parent.ops.push_back(std::move(op));
      const size_t at = parent.ops.size() - 1;
      after_loop(parent, top, false);
      return at;
    }
    // The body: wait, barrier, the next copies, this iteration's slots, then the body's own ops.
    std::vector<Op> own = std::move(body.ops);
    body.ops.clear();
    b_.enter(body);
    kind_.wait(b_, stages - 2);
    emit(K::SyncCube, {});
    const Type u = Type::scalar_of(Scalar::U32);
    const Value iv = body.args[0];
    Value n = emit(K::Div, {emit(K::Sub, {iv, lo}, it), step}, it);  // iterations so far
    if (!(it == u)) n = emit(K::Cast, {n}, u);
    Value slot = emit(K::Rem, {n, u32(uint64_t(stages))}, u);
    Value next_slot = emit(K::Rem, {emit(K::Add, {n, u32(uint64_t(stages) - 1)}, u), u32(uint64_t(stages))}, u);
    Value ahead = emit(K::Add, {iv, emit(K::Mul, {step, index_const(stages - 1)}, it)}, it);
    Value valid = emit(K::Lt, {ahead, hi}, Type::scalar_of(Scalar::Bool));
    const bool late = stages >= 3 && !exits_early(own);
    auto next_copies = [&] {
      for (const Ring& r : rings) copy(r, ahead, emit(K::Mul, {next_slot, u32(r.slot_elems)}, u), valid, body, def);
      kind_.commit(b_);
    };
    if (!late) next_copies();
    std::unordered_set<Value> dropped;  // the results of the ops the ring replaces, at any depth
    for (const Ring& r : rings) {
      Type t = r.load->type;
      t.space = MemorySpace::Shared;
      t.layout = r.layout;
      Value at = emit(K::Mul, {slot, u32(r.slot_elems)}, u);
      Value s = emit(K::TileSlot, {r.array, at}, t);
      replace_load(r, s, uses, dropped);
      dropped.insert(r.load->result);
    }
    // Copied, not moved: the late copies below clone index ops that `own` still holds.
    for (size_t i = 0; i < own.size(); ++i) {
      if (late && i + 1 == own.size()) next_copies();
      if (own[i].result != kNoValue && dropped.count(own[i].result)) continue;
      body.ops.push_back(own[i]);
      for (Region& in : body.ops.back().regions) drop(in, dropped);
    }
    b_.leave();
    parent.ops.push_back(std::move(op));
    const size_t at = parent.ops.size() - 1;
    after_loop(parent, top, true);
    return at;
  }

  // Removes the ops whose results are in `dropped` (a transpose of a ring's load, now read as
  // columns, inside an inner loop or an if), at any depth.
  static void drop(Region& r, const std::unordered_set<Value>& dropped) {
    std::erase_if(r.ops, [&](const Op& o) { return o.result != kNoValue && dropped.count(o.result); });
    for (Op& o : r.ops) {
      for (Region& in : o.regions) drop(in, dropped);
    }
  }

  // After the loop: no copy may still be in flight (the last ones copied nothing, but zero-filled
  // their slots), and a loop that may run again (inside another) writes its rings' first slots and
  // its resident factors again before its first barrier: every unit must be done reading them.
  void after_loop(Region& parent, bool top, bool rings) {
    // The loop was appended to parent: ops emitted now follow it.
    b_.enter(parent);
    if (rings) kind_.wait(b_, 0);
    if (!top) emit(K::SyncCube, {});
    b_.leave();
  }

  // A product's register factor from before the loop is written into an array of its own once,
  // here, and the loop's products read it there (an a that tensor cores read from registers
  // stays). Answers whether any was.
  bool keep_resident(Region& body) {
    std::unordered_set<Value> inside;
    collect_defs(body, inside);
    std::vector<Op*> products;
    collect_products(body, products);
    std::unordered_map<Value, Value> staged;  // a factor: its slot
    for (Op* p : products) {
      const Type ta = k_.type_of(p->operand(ops::TileMma::a)), tb = k_.type_of(p->operand(ops::TileMma::b));
      const uint32_t kk = ta.shape[1], n = tb.shape[1];
      const ProductPlan plan = plan_of(k_, *p, units_);
      const uint32_t lda = plan.fragments() ? kk + 8 : kk, ldb = plan.fragments() ? n + 8 : n;
      const bool a_in_registers = p->get<AttrKey::AFragments>() && plan.fragments() &&
                                  tensor_core_instruction(ta.scalar, p->type.scalar, k_.facts.target);
      for (size_t at : {size_t(ops::TileMma::a), size_t(ops::TileMma::b)}) {
        Value v = p->operands[at];
        if (at == ops::TileMma::a && a_in_registers) continue;
        if (auto s = staged.find(v); s != staged.end()) {
          p->operands[at] = s->second;
          continue;
        }
        const Type t = k_.type_of(v);
        if (inside.count(v) || !t.is_register_tile()) continue;
        const uint32_t pitch = at == ops::TileMma::a ? lda : ldb;
        uint16_t layout = 0;
        Value array = shared_array(t.scalar, uint64_t(t.shape[0]) * pitch, pitch, layout);
        emit(K::TileStage, {array, u32(0), v});
        Type st = t;
        st.space = MemorySpace::Shared;
        st.layout = layout;
        staged[v] = p->operands[at] = emit(K::TileSlot, {array, u32(0)}, st);
      }
    }
    // Every unit's rows are written before any product reads them.
    if (!staged.empty()) emit(K::SyncCube, {});
    return !staged.empty();
  }

  Kernel& k_;
  Builder b_;
  const RingKind& kind_;
  uint32_t units_;
  std::vector<Op> allocs_;
  std::unordered_map<Value, View> views_;
  bool changed_ = false;
};

}  // namespace
}  // namespace tile

bool pipeline_loops(ir::Kernel& k) {
  bool any = false;
  auto walk = [&](auto& self, const ir::Region& r) -> void {
    for (const ir::Op& op : r.ops) {
      any = any || op_family(op.kind) == ir::OpFamily::Tile;
      for (const ir::Region& in : op.regions) self(self, in);
    }
  };
  walk(walk, k.body);
  if (!any) return false;
  return tile::Pipeliner(k).run();
}

}  // namespace kiln::passes
