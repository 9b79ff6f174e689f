// dce: dead code elimination. fold and cse leave ops whose results nobody reads (the constants
// an identity bypassed, the second copy of a merged op), tracing leaves vars that were written
// but never read, and an `if` whose branches fold away leaves an empty shell; backends should not
// see any of them. Removed, until nothing more can be:
// - an op whose result is unused and that has no effect but its result: pure ops, allocations,
//   plane ops, loads and var.loads (what each op may do is asked of its traits);
// - a var.decl that no var.load reads, with every var.store to it;
// - an `if` whose two regions are empty;
// - the ops after a break, continue or terminate in the same region: no unit runs them.
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
    if (op.kind == OpKind::VarLoad) var_loads_[op.operands[0]] += delta;
  }

  // Removing an op releases the uses made by it and by every op inside it.
  void release(const Op& op) {
    count(op, -1);
    for (const ir::Region& r : op.regions) ir::walk(r, [&](const Op& inner) { count(inner, -1); });
  }

  bool dead(const Op& op) const {
    if (op.kind == OpKind::VarDecl) return var_loads_[op.result] == 0;
    if (op.kind == OpKind::VarStore) return var_loads_[op.operands[0]] == 0;
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
