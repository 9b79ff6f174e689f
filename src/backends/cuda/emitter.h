// The C-like emitter's state, shared by its three files: emit.cpp (the kernel's frame: names,
// signature, shared memory, regions and control flow), emit_masks.cpp (the control flow of
// kernels with plane ops, which carries each region's active lanes as an explicit mask) and
// emit_ops.cpp (what each op becomes). Everything target-specific comes from a CStyleTarget.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backends/cuda/emit.h"
#include "backends/cuda/target.h"
#include "kiln/ir/kernel.h"

namespace kiln::cuda {

class Emitter {
 public:
  Emitter(const ir::Kernel& k, const CStyleTarget& t) : k_(k), t_(t) {}
  EmitResult run();

 private:
  // The C names of one IR parameter (its value, length, shape and strides).
  struct ParamNames {
    std::string value;
    std::string len;
    std::vector<std::string> shape, stride;
  };

  // What a control op holds, for kernels with plane ops (emit_masks.cpp).
  struct Flow {
    bool plane = false;       // a plane op: the regions on the way to it track their lanes' mask
    bool jumps = false;       // a break or continue of a loop outside the op
    bool terminates = false;  // a terminate
  };
  // The flags through which break and continue act in a loop that tracks masks (empty strings in a
  // loop that does not: there they are C's break and continue).
  struct LoopFlags {
    std::string broke;    // set by break: the unit leaves the loop at its next test
    std::string skip;     // set by break and continue: the rest of this iteration is skipped
    bool masked = false;  // the loop tracks masks
    // The C variables a break and a continue of the loop assign what they carry to (the loop's
    // results; the values its next iteration starts with).
    std::vector<std::string> break_to, continue_to;
  };

  // ---- emit.cpp ----
  void number_values();
  std::string unique_identifier(std::string base);
  void signature(EmitResult& out);
  void plan_shared();
  uint32_t min_cubes_hint() const;
  void shared_memory(EmitResult& out);
  void region(const ir::Region& r);
  void op(const ir::Op& op);
  void control(const ir::Op& op);
  std::string for_header(const ir::Op& op, const std::string& test);  // pragmas, then `for (...; test; ...) {`
  void loop_pragmas(const ir::Op& op);                                // a for's attributes, as lines before it
  std::string loop_step(const ir::Op& op) const;                      // `i += step`, in the IR's wrapping arithmetic
  void at_least_once(const ir::Op& op);  // a for promised a trip: a do-while, no first test
  void line(std::string_view text);
  // Values carried by control flow live in C variables declared before the op (see emit.cpp):
  // `declare_carried` declares them, `assign` sets them from an exit's operands, `snapshot`
  // copies them into a region's arguments where the region starts.
  void declare_carried(const ir::Op& op, std::span<const ir::Value> vars, std::span<const ir::Value> inits);
  // Assigns `values` to the variables `to` (what an exit carries: a yield's, break's or
  // continue's values, what a condition passes on).
  void assign(const std::vector<std::string>& to, std::span<const ir::Value> values);
  void snapshot(std::span<const ir::Value> args, std::span<const ir::Value> from);
  std::vector<std::string> names_of(std::span<const ir::Value> values) const;
  std::string linear_unit() const;                 // the C expression of builtin.unit_pos
  std::string name(ir::Value v) const;             // the C expression of a value
  std::string lane(ir::Value v, int i) const;      // lane i of a value (a scalar's own expression)
  std::string type_name(const ir::Type& t) const;  // the C type of a value or an array's element
  const ir::Type& type(ir::Value v) const { return k_.type_of(v); }
  [[noreturn]] void unsupported(const ir::Op& op, const std::string& why) const;

  // ---- emit_masks.cpp ----
  void analyse_flow();
  const Flow& flow(const ir::Op& op) const;
  Flow flow(const ir::Region& r) const;  // of its ops together
  bool guarded(const ir::Region& body) const;
  void entry_mask();
  bool masked_control(const ir::Op& op);  // emits op if it is control flow that tracks masks
  void masked_if(const ir::Op& op);
  void masked_for(const ir::Op& op);
  void masked_while(const ir::Op& op);
  void loop_body(const ir::Region& body, const LoopFlags& flags, const std::string& head, bool plane);
  void jump(const ir::Op& op);  // break or continue through the innermost loop's flags
  // After op (at index i of r) the units that left through it are out of the region's mask, and
  // out of the rest of the region; returns whether a guard `if (...) {` was opened.
  bool after_exit(const ir::Region& r, size_t i);
  std::string new_mask();

  // ---- emit_ops.cpp ----
  // A pure op computed lane by lane: declares its result.
  void lanewise(const ir::Op& op);
  std::string lane_expr(const ir::Op& op, int i) const;
  std::string constant(const ir::Op& op) const;
  std::string arith(const ir::Op& op, ir::Scalar s, const std::vector<std::string>& a) const;
  std::string bitwise(const ir::Op& op, ir::Scalar s, const std::vector<std::string>& a) const;
  std::string compare(const ir::Op& op, ir::Scalar s, const std::vector<std::string>& a) const;
  std::string math(const ir::Op& op, ir::Scalar s, const std::vector<std::string>& a) const;
  std::string cast(ir::Scalar from, ir::Scalar to, const std::string& e) const;
  std::string builtin(const ir::Op& op) const;
  void memory(const ir::Op& op);  // len, tensor meta, load, store, atomics, local arrays, vars
  void plane(const ir::Op& op);
  // mma.sync: the device library's kiln_mma_sync over the cube's units (tensor cores).
  void matrix(const ir::Op& op);
  void debug_print(const ir::Op& op);
  // check.trips: a failed check writes the device error word (device/errors.cuh).
  void check_trips(const ir::Op& op);
  void declare(const ir::Op& op, const std::string& expr);  // `T vN = expr;`
  void wgmma(const ir::Op& op);                             // the warp-group product, its fence, commit and wait
  // The function of one instruction of n columns (a in registers or not): its name, added to helpers_.
  std::string wgmma_instruction(uint32_t n, ir::Scalar factor, bool a_in_registers);
  void mbarrier(const ir::Op& op);  // the mbarrier ops and fence.proxy.async

  const ir::Kernel& k_;
  const CStyleTarget& t_;
  std::string body_;
  int depth_ = 1;
  std::unordered_map<ir::Value, std::string> names_;
  std::unordered_map<ir::Value, ParamNames> params_;
  std::unordered_set<std::string> taken_;  // identifiers in use: reserved words and parameters
  std::vector<const ir::Op*> shared_;      // shared.alloc ops, hoisted to the entry's top
  std::vector<uint32_t> shared_offsets_;   // byte offsets (an overlay group's share one)
  uint64_t shared_total_ = 0;
  bool shared_dynamic_ = false;
  uint64_t shared_align_ = 16;  // the largest alignment of a shared array
  // A shared array's alignment: 16 bytes, or its shared layout's.
  uint64_t align_of_array(const ir::Op& alloc) const;
  // Functions the kernel's ops call that are made for it (the warp-group product of its shape): by
  // name, emitted between the prelude and the entry.
  std::map<std::string, std::string> helpers_;
  // Local arrays a register-A product multiplies: each also has a u32 array of its elements packed
  // two to a register (`<name>_a`), filled at the wgmma.fence that names it, so that no register of
  // a product's a is computed between the fence and the product (ptxas would inject a fence of its
  // own before each product, C7519).
  std::unordered_set<ir::Value> register_factors_;
  bool hopper_ = false;      // the kernel uses a Hopper op: its source takes hopper.cuh
  bool error_word_ = false;  // the kernel has a check.trips: the entry takes the hidden error parameters

  // Kernels with plane ops (emit_masks.cpp); others are emitted without any of this.
  bool masked_ = false;                           // the kernel has plane ops
  std::unordered_map<const ir::Op*, Flow> flow_;  // what each control op holds
  std::string mask_;                              // the C variable holding the current region's active lanes
  LoopFlags loop_;                                // the innermost loop's flags
  std::vector<std::string> yield_to_;             // what a yield ending the current region assigns
  std::vector<std::string> condition_to_;         // what the current while's `condition` assigns
  int masks_ = 0;                                 // mask variables so far
};

}  // namespace kiln::cuda
