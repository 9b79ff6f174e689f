// What a family file sees while the plan is built: slots for values, arrays, and emitting
// instructions. Each family file (arith.cpp, math.cpp, memory.cpp, ...) holds, for every op it
// runs, both the planning (a case of its plan_* function) and the executor: adding an op to the
// CPU backend is one case in one family file. plan.cpp walks the kernel and hands each op to the
// file of its family in the op table (planner_of there).
#pragma once

#include <unordered_map>
#include <vector>

#include "backends/cpu/plan.h"

namespace kiln::cpu {

// Where an array value lives.
struct ArrayRef {
  ArraySpace space = ArraySpace::Global;
  uint32_t where = 0;   // parameter index, shared offset, or local slot
  uint32_t length = 0;  // shared and local arrays
  uint32_t op = 0;      // alloc op number
};

class Planner {
 public:
  // A jump to be patched once its target is known: Leave::target or Merge::empty_target of code[pc].
  struct Pending {
    size_t pc;
  };
  // Where an op sits: its control depth, the depth of its innermost loop, and (in a while's
  // condition region) the while's depth.
  struct Ctx {
    int depth = 0;
    int loop = -1;
    int while_depth = -1;
  };

  Planner(const ir::Kernel& k, const PlanOptions& options);
  Plan run();

  const ir::Kernel& kernel() const { return k_; }
  Plan& plan() { return p_; }
  const ir::Type& type_of(ir::Value v) const { return k_.type_of(v); }
  // The type and the slot of an operand, by its name (ir::ops::Binary::lhs).
  template <ir::OperandSlot Slot>
  const ir::Type& operand_type(const ir::Op& op, Slot s) const {
    return k_.type_of(op.operand(s));
  }
  bool uniform(ir::Value v) const { return uniform_[v] != 0; }

  // The slot of a value defined earlier (operands, region arguments).
  Ref ref(ir::Value v);
  template <ir::OperandSlot Slot>
  Ref operand(const ir::Op& op, Slot s) {
    return ref(op.operand(s));
  }
  // Emits the instruction that runs `op` with executor `fn` (its form for varying results) and
  // fields `args`. When op's result is uniform the instruction runs fn for one unit instead
  // (run_uniform); fn never needs a form of its own for that.
  Instr& emit(const ir::Op& op, InstrFn fn, Args args = {});
  // Emits an instruction that belongs to `op` but is not its result (control pieces).
  Instr& emit_piece(const ir::Op& op, InstrFn fn, Args args);
  // Records the value of a constant op (its slot's bytes never change): no instruction.
  void constant(const ir::Op& op, const void* lane_bytes);

  // Arrays: parameters, shared and local allocations.
  const ArrayRef& array(ir::Value v) const { return arrays_.at(v); }
  void define_array(ir::Value v, const ArrayRef& a) { arrays_[v] = a; }
  uint32_t alloc(uint64_t bytes);  // register bytes (local arrays, vars)
  uint32_t var_slot(ir::Value v) const { return var_slots_.at(v); }
  void define_var(ir::Value v, uint32_t slot) { var_slots_[v] = slot; }

  // Gives `v` the slot `r` (a region argument that shares its op's result slot).
  void bind(ir::Value v, Ref r) { slots_[v] = r; }

  // Control flow (control.cpp).
  // Where the exits of a control op that carries values copy them (docs/ir.md, "Loops and ifs
  // that carry values"): varying slots, one per carried value.
  struct Carried {
    ir::OpKind kind;
    std::vector<uint32_t> yield_to;      // a yield ending one of the op's regions
    std::vector<uint32_t> break_to;      // a loop's break: its results
    std::vector<uint32_t> continue_to;   // a loop's continue: what its body yields
    std::vector<uint32_t> condition_to;  // a while's condition: its body's arguments and results
  };
  std::vector<Carried>& carried() { return carried_; }
  const Ctx& ctx() const { return ctx_; }
  size_t pc() const { return p_.code.size(); }
  Instr& at(size_t pc) { return p_.code[pc]; }
  // Plans a region at ctx; jumps to its end are added to `ends`.
  void region(const ir::Region& r, Ctx ctx, std::vector<Pending>& ends);
  // The jumps to the end of the region being planned.
  std::vector<Pending>& ends() { return *ends_; }
  void patch(const std::vector<Pending>& list, uint32_t pc);
  void track_depth(int d) { max_depth_ = std::max(max_depth_, d); }
  uint32_t op_number() const { return number_; }

 private:
  void plan_op(const ir::Op& op);
  Ref define(ir::Value v);

  const ir::Kernel& k_;
  Plan p_;
  std::vector<uint8_t> uniform_;
  std::unordered_map<ir::Value, Ref> slots_;
  std::unordered_map<ir::Value, uint32_t> var_slots_;
  std::unordered_map<ir::Value, ArrayRef> arrays_;
  Ctx ctx_;
  std::vector<Pending>* ends_ = nullptr;
  std::vector<Carried> carried_;  // the control ops being planned, innermost last
  uint32_t next_slot_ = 0;
  uint32_t number_ = 0;
  int max_depth_ = 0;
};

// The fields of a load, store or atomic (memory.cpp): array operand 0, index 1, value 2 (stores,
// atomics), and the mask where the op table puts it, when present.
Access plan_access(Planner& p, const ir::Op& op);

// Copies VarCopy::value into the per-unit slot VarCopy::var for the active units (values.cpp):
// var.store, and the exits of control flow that carries values (control.cpp).
uint32_t var_store_instr(Exec& e, const Instr& in, uint32_t pc);

// The family files: each plans the ops it knows (returns true); an op it does not know is
// Error{compile.unsupported} (returns false).
bool plan_values(Planner& p, const ir::Op& op);   // values.cpp: constants, vectors, builtins, vars
bool plan_arith(Planner& p, const ir::Op& op);    // arith.cpp: arithmetic, bitwise, compare, select
bool plan_math(Planner& p, const ir::Op& op);     // math.cpp: float math
bool plan_cast(Planner& p, const ir::Op& op);     // cast.cpp: cast, bitcast
bool plan_memory(Planner& p, const ir::Op& op);   // memory.cpp: arrays, len, loads, stores
bool plan_atomic(Planner& p, const ir::Op& op);   // atomic.cpp
bool plan_plane(Planner& p, const ir::Op& op);    // plane.cpp
bool plan_control(Planner& p, const ir::Op& op);  // control.cpp: if, for, while, break, sync, ...
bool plan_debug(Planner& p, const ir::Op& op);    // debug.cpp: debug.print, check.trips
// async_copy.cpp: copy.async (a memory op, from plan_memory) and its commit and wait (sync ops,
// from plan_control), which share a cube's copies in flight.
bool plan_async_copy(Planner& p, const ir::Op& op);
// barrier.cpp: the mbarrier ops and fence.proxy.async (sync ops, from plan_control).
bool plan_barrier(Planner& p, const ir::Op& op);
// wgmma.cpp: the warp-group product (a matrix op) and its fence, commit and wait (sync ops, from
// plan_barrier's default).
bool plan_wgmma(Planner& p, const ir::Op& op);

}  // namespace kiln::cpu
