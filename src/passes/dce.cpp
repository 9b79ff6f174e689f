// dce: dead code elimination. fold and cse leave ops whose results nobody reads (the constants
// an identity bypassed, the second copy of a merged op), tracing leaves vars that were written
// but never read, and an `if` whose branches fold away leaves an empty shell; backends should not
// see any of them. Removed, until nothing more can be:
// - an op whose result is unused and that has no effect but its result: pure ops, allocations,
//   plane ops, loads and var.loads (what each op may do is asked of its traits);
// - a var.decl that no var.load reads, with every var.store to it;
// - an `if` whose two regions are empty;
// - the ops after a break, continue, terminate or yield in the same region: no unit runs them;
// - what control flow carries and nobody reads: an if's result without a use (with what its
//   regions yield for it), and a loop's carried value whose result has no use and whose region
//   argument is read only to be carried on at the same place (by the loop's own yield, break or
//   continue; for a while, a value the condition passes on that way, then a condition-region
//   argument nothing reads). A Var the tracer assigned in a loop but never read after it is such a
//   value once promote_vars has made it one. Values computed only to be carried die after it. A
//   value whose argument feeds its own next value (a counter nobody reads) stays: that takes
//   following the cycle through the body, which this pass does not do.
// Loads are removable on every kind of array (global, shared, local), in either mode. In checked
// mode a load past len() reads zero: its value is its only effect. In unchecked mode an
// out-of-range load is undefined on a GPU and a bounds.out_of_range error on the CPU; but a load
// whose value nobody reads is dead code to the CUDA compiler too (it is not volatile), so the GPU
// never performs it, and the CPU backend, the oracle, should not report an error for it. This is
// also what makes `auto old = y[i];` free when `old` is never read (a copy of an element records
// its load where it is initialised, memory.h).
// Loops are never removed, even with an empty body: deciding that a loop ends, and that its
// condition has no effect, is more than this pass wants to know; a loop with nothing in it costs
// little and fold already deletes loops that run zero times.
#include <algorithm>
#include <utility>
#include <vector>

#include "kiln/passes/passes.h"

namespace kiln::passes {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Value;

// An op whose only effect is its result (or a storage that nothing reads).
bool removable_when_unused(const Op& op) {
  if (op.result == ir::kNoValue || op.has(ir::kControl)) return false;
  if (op.has(ir::kWritesMemory) || op.has(ir::kBarrier) || op.has(ir::kTerminator) || op.has(ir::kSideEffect)) {
    return false;
  }
  return op.has(ir::kPure) || op.has(ir::kAlloc) || op.has(ir::kPlane) || op.has(ir::kReadsMemory);
}

class Dce {
 public:
  explicit Dce(ir::Kernel& k) : k_(k) {}

  bool run() {
    bool changed = false;
    // One backward sweep removes whole chains of dead pure ops; removing a var's last load can
    // make its decl and stores dead only on the next sweep.
    while (true) {
      uses_.assign(k_.value_types.size(), 0);
      var_loads_.assign(k_.value_types.size(), 0);
      ir::walk(k_.body, [&](const Op& op) { count(op, +1); });
      swept_ = false;
      region(k_.body);
      if (!swept_) return changed;
      changed = true;
    }
  }

 private:
  // Adds `delta` to the use counts of the op's operands (not of the ops in its regions).
  void count(const Op& op, int delta) {
    for (Value v : op.operands) uses_[v] += delta;
    if (op.kind == OpKind::VarLoad) var_loads_[op.operand(ir::ops::VarLoad::var)] += delta;
  }

  // Removing an op releases the uses made by it and by every op inside it.
  void release(const Op& op) {
    count(op, -1);
    for (const ir::Region& r : op.regions) ir::walk(r, [&](const Op& inner) { count(inner, -1); });
  }

  // The yield, break and continue ops that leave a loop's body region `r` for this loop: those
  // in nested ifs too, not those of nested loops, and the yield that ends `r` itself (an if's
  // yields carry the if's values).
  static void own_exits(ir::Region& r, bool top, std::vector<Op*>& out) {
    for (Op& op : r.ops) {
      if (op.kind == OpKind::Break || op.kind == OpKind::Continue || (top && op.kind == OpKind::Yield)) {
        out.push_back(&op);
      } else if (op.kind == OpKind::If) {
        own_exits(op.regions[0], false, out);
        own_exits(op.regions[1], false, out);
      }
    }
  }

  // Drops operand `i` of `exit`, and the exit's use of it.
  void drop_operand(Op& exit, size_t i) {
    uses_[exit.operands[i]] -= 1;
    exit.operands.erase(exit.operands.begin() + static_cast<std::ptrdiff_t>(i));
  }

  // A yield that carries nothing any more goes: a region of an op that carries nothing ends
  // without one.
  static void drop_empty_yield(ir::Region& r) {
    if (!r.ops.empty() && r.ops.back().kind == OpKind::Yield && r.ops.back().operands.empty()) r.ops.pop_back();
  }

  void drop_result(Op& op, size_t i) {
    std::vector<Value> results = op.results();
    results.erase(results.begin() + static_cast<std::ptrdiff_t>(i));
    ir::set_results(op, results, k_);
  }

  // How many of `v`'s uses are operand `i` of the given exits.
  static int carried_on(Value v, const std::vector<Op*>& exits, size_t i, bool (*which)(OpKind)) {
    int n = 0;
    for (const Op* e : exits) {
      if (which(e->kind) && i < e->operands.size() && e->operands[i] == v) ++n;
    }
    return n;
  }
  static bool is_break(OpKind k) { return k == OpKind::Break; }
  static bool carries_back(OpKind k) { return k == OpKind::Yield || k == OpKind::Continue; }
  static bool any_exit(OpKind) { return true; }

  // Removes the carried values of `op` (an if, for or while) that nobody reads; see the top.
  bool prune_carried(Op& op) {
    bool pruned = false;
    if (op.kind == OpKind::If) {
      for (size_t i = op.result_count(); i-- > 0;) {
        if (uses_[op.result_at(i)] != 0) continue;
        for (ir::Region& r : op.regions) {
          if (!r.ops.empty() && r.ops.back().kind == OpKind::Yield) drop_operand(r.ops.back(), i);
          drop_empty_yield(r);
        }
        drop_result(op, i);
        pruned = true;
      }
      return pruned;
    }
    if (op.kind == OpKind::For) {
      ir::Region& body = op.regions[0];
      std::vector<Op*> exits;
      own_exits(body, true, exits);
      for (size_t i = op.result_count(); i-- > 0;) {
        Value arg = body.args[1 + i];
        if (uses_[op.result_at(i)] != 0 || uses_[arg] != carried_on(arg, exits, i, any_exit)) continue;
        for (Op* e : exits) drop_operand(*e, i);
        drop_operand(op, size_t(ir::ops::For::inits) + i);
        body.args.erase(body.args.begin() + static_cast<std::ptrdiff_t>(1 + i));
        drop_result(op, i);
        pruned = true;
      }
      drop_empty_yield(body);
      return pruned;
    }
    // while: first what the condition passes on (the body's args and the results, with breaks),
    // then the condition region's args (with yields and continues).
    ir::Region& cond = op.regions[0];
    ir::Region& body = op.regions[1];
    Op& condition = cond.ops.back();
    std::vector<Op*> exits;
    own_exits(body, true, exits);
    for (size_t i = op.result_count(); i-- > 0;) {
      Value arg = body.args[i];
      if (uses_[op.result_at(i)] != 0 || uses_[arg] != carried_on(arg, exits, i, is_break)) continue;
      for (Op* e : exits) {
        if (e->kind == OpKind::Break) drop_operand(*e, i);
      }
      drop_operand(condition, size_t(ir::ops::Condition::forwarded) + i);
      body.args.erase(body.args.begin() + static_cast<std::ptrdiff_t>(i));
      drop_result(op, i);
      pruned = true;
    }
    for (size_t i = cond.args.size(); i-- > 0;) {
      if (uses_[cond.args[i]] != 0) continue;
      for (Op* e : exits) {
        if (carries_back(e->kind)) drop_operand(*e, i);
      }
      drop_operand(op, size_t(ir::ops::While::inits) + i);
      cond.args.erase(cond.args.begin() + static_cast<std::ptrdiff_t>(i));
      pruned = true;
    }
    drop_empty_yield(body);
    return pruned;
  }

  bool dead(const Op& op) const {
    if (op.kind == OpKind::VarDecl) return var_loads_[op.result] == 0;
    if (op.kind == OpKind::VarStore) return var_loads_[op.operand(ir::ops::VarStore::var)] == 0;
    if (op.kind == OpKind::If) return op.regions[0].ops.empty() && op.regions[1].ops.empty();
    return removable_when_unused(op) && uses_[op.result] == 0;
  }

  void region(ir::Region& r) {
    auto terminator = std::find_if(r.ops.begin(), r.ops.end(), [](const Op& op) { return op.has(ir::kTerminator); });
    if (terminator != r.ops.end() && terminator + 1 != r.ops.end()) {
      for (auto it = terminator + 1; it != r.ops.end(); ++it) release(*it);
      r.ops.erase(terminator + 1, r.ops.end());
      swept_ = true;
    }
    // Backwards, so that the uses an op's users held are gone when the op is looked at.
    std::vector<bool> remove(r.ops.size(), false);
    for (size_t i = r.ops.size(); i-- > 0;) {
      Op& op = r.ops[i];
      for (ir::Region& sub : op.regions) region(sub);
      if (op.has(ir::kControl) && prune_carried(op)) swept_ = true;
      if (dead(op)) {
        release(op);
        remove[i] = true;
        swept_ = true;
      }
    }
    size_t kept = 0;
    for (size_t j = 0; j < r.ops.size(); ++j) {
      if (remove[j]) continue;
      if (kept != j) r.ops[kept] = std::move(r.ops[j]);
      ++kept;
    }
    r.ops.resize(kept);
  }

  ir::Kernel& k_;
  std::vector<int> uses_;       // by value: operands of live ops that name it
  std::vector<int> var_loads_;  // by var value: live var.loads that read it
  bool swept_ = false;
};

}  // namespace

bool dce(ir::Kernel& k) { return Dce(k).run(); }

}  // namespace kiln::passes
