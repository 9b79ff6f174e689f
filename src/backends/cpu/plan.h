// The CPU backend's compiled form of a kernel: a flat list of instructions over register slots.
// The interpreter runs a whole cube in lockstep, instruction by instruction, under an active mask;
// structured control flow becomes mask instructions and jumps (control.cpp).
//
// Two kinds of slot (docs/decisions/016-cpu-plan-uniform-values.md):
// - a varying value has one element per unit: units x width scalars, unit u's lane l at u*width+l;
// - a uniform value (the same for every unit of the cube, analysis.h) has one row of kRowLanes
//   scalars whose element j is lane j % width. A width divides kRowLanes, so element i of a
//   varying value and element i % kRowLanes of a uniform one are the same lane: a lane loop reads
//   either form with one index rule and no division.
//
// An instruction names its operands: its `args` is one struct per kind of instruction below, and
// its executor reads the one it was planned with (`in.as<Binary>()`).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "kiln/ir/kernel.h"

namespace kiln::cpu {

struct Exec;
struct Instr;

// Runs one instruction for the active units; returns the next pc.
using InstrFn = uint32_t (*)(Exec& e, const Instr& in, uint32_t pc);

// Scalars in a uniform value's row: the widest vector, so that every width divides it.
constexpr uint32_t kRowLanes = uint32_t(ir::Target::kVectorWidths.back());

// Where an array operand lives.
enum class ArraySpace : uint8_t { Global, Shared, Local };

// A value operand: its slot (a byte offset into the register file) and its form.
struct Ref {
  uint32_t slot = 0;
  bool uniform = false;
};

// ---- instruction fields: one struct per kind of instruction --------------------------------

// An elementwise op (arithmetic, bitwise, compare, math, cast, bitcast): its operands in IR order.
// `width` is the lanes of the operands (a compare's result has the same lanes).
struct Elementwise {
  Ref a, b, c;
  uint32_t width = 1;
};
struct Select {
  Ref cond, if_true, if_false;
  uint32_t width = 1;
  bool lane_cond = false;  // the condition has the values' lanes (else one lane per unit)
};
// vector.splat, vector.extract, vector.insert: `lane_bytes` is one lane's size, `width` the
// vector's lanes (the result's for splat, the source's for extract and insert).
struct Lanes {
  Ref vector, scalar;
  uint32_t lane = 0;
  uint32_t width = 1;
  uint32_t lane_bytes = 0;
};
// vector.construct: the lanes are the plan's operand list `list`.
struct Construct {
  uint32_t list = 0;
  uint32_t width = 1;
  uint32_t lane_bytes = 0;
};
// Builtins: an axis 0..2, or -1 for the linear index.
struct Builtin {
  int32_t axis = -1;
};
// A copy of `bytes` per unit between a value and a var (var.load, var.store).
struct VarCopy {
  Ref value;
  uint32_t var = 0;  // the var's slot (always varying)
  uint32_t bytes = 0;
};
// len, tensor.shape, tensor.stride of a global argument.
struct ArrayMeta {
  uint32_t param = 0;
  uint32_t dim = 0;
};
// Loads, stores and atomics. `array` is the parameter index (global), the byte offset in shared
// memory (shared) or the slot holding every unit's array (local).
struct Access {
  Ref index, value, mask, desired;  // value: stores and atomics; desired: atomic.cas
  bool masked = false;
  ArraySpace space = ArraySpace::Global;
  ir::Scalar index_type = ir::Scalar::U32;
  uint32_t array = 0;
  uint32_t length = 0;         // shared and local arrays
  uint32_t alloc_op = 0;       // shared and local arrays: the number of their alloc op
  uint32_t element_bytes = 0;  // one element of the array (scalar x width)
  uint32_t lanes = 1;          // a wide access ({lanes = W}): W elements from the index, one vector
  // mbarrier.try_wait in a while's condition, a loop waiting on it: its place among the kernel's
  // wait loops plus one (BarrierWatch::failed_at), else 0 (barrier.cpp)
  uint32_t wait_loop = 0;
};
// Plane ops: the value and, for shuffles, the lane operand.
struct PlaneArgs {
  Ref value, lane;
  uint32_t width = 1;
  uint32_t element_bytes = 0;
};
// Control: every control op at depth d owns three masks (control.cpp says which).
struct IfBegin {
  Ref cond;
  int32_t depth = 0;
  uint32_t else_pc = 0;
};
struct IfElse {
  int32_t depth = 0;
  uint32_t end_pc = 0;
};
// The end of an if or a loop: the active mask is rebuilt; none left jumps to `empty_target`.
struct Merge {
  int32_t depth = 0;
  int32_t loop = -1;  // depth of the innermost enclosing loop, or -1
  uint32_t empty_target = 0;
};
struct LoopBegin {
  int32_t depth = 0;
  Ref index, lo;             // a for loop's induction value and its start; while loops have neither
  uint32_t index_bytes = 0;  // 0 for a while loop
};
struct ForTest {
  int32_t depth = 0;
  Ref index, hi;
  uint32_t end_pc = 0;
};
struct ForNext {
  int32_t depth = 0;
  Ref index, step;
  uint32_t test_pc = 0;
};
struct WhileHead {
  int32_t depth = 0;
  uint32_t end_pc = 0;
};
struct Condition {
  Ref cond;
  int32_t depth = 0;  // the while's depth
  uint32_t end_pc = 0;
};
struct Jump {
  uint32_t target = 0;
};
// break, continue, terminate: the active units leave to the end of their region.
struct Leave {
  int32_t loop = -1;
  uint32_t target = 0;
};
struct Print {
  uint32_t index = 0;  // into Plan::prints
};
// check.trips: the bounds of an at_least_once loop, their scalar, and which loop it is.
struct CheckTrips {
  Ref lo, hi;
  ir::Scalar type = ir::Scalar::U32;
  uint32_t loop = 0;
};

// copy.async: the shared destination (offset, length in elements, alloc op, index), the global
// source (parameter, index) and the element's bytes (the global array's one element); copy.async.wait:
// the groups it leaves in flight.
struct AsyncCopy {
  Ref shared_index, global_index, mask;
  bool masked = false;
  ir::Scalar shared_index_type = ir::Scalar::U32, global_index_type = ir::Scalar::U32;
  uint32_t shared_at = 0, shared_length = 0, shared_alloc_op = 0, shared_element_bytes = 0;
  uint32_t param = 0, bytes = 0;
  uint32_t pending = 0;
};

// wgmma.mma_async: the factors' shared arrays (byte offset, length in elements, alloc op, bytes of
// an element, swizzle span), their offset operands, the accumulators' local array, the shape; and
// wgmma.wait_group's pending count and accumulator arrays.
struct Wgmma {
  struct Factor {
    Ref offset;
    ir::Scalar offset_type = ir::Scalar::U32;
    uint32_t at = 0, length = 0, alloc_op = 0, span = 0;
  };
  Factor a, b;
  // The register-A form: a is each unit's local array (a.at its slot, a.length its elements).
  bool a_in_registers = false;
  ir::Scalar factor = ir::Scalar::BF16;
  uint32_t element_bytes = 2;
  uint32_t acc_slot = 0, acc_length = 0, acc_alloc_op = 0;
  uint32_t n = 0, k = 0;
  uint32_t pending = 0;
  // wgmma.fence and wait_group: the arrays named (their slots, and bytes a unit holds of each).
  std::vector<uint32_t> waited, waited_bytes;
};

using Args = std::variant<std::monostate, Elementwise, Select, Lanes, Construct, Builtin, VarCopy, ArrayMeta, Access,
                          PlaneArgs, IfBegin, IfElse, Merge, LoopBegin, ForTest, ForNext, WhileHead, Condition, Jump,
                          Leave, Print, CheckTrips, AsyncCopy, Wgmma>;

struct Instr {
  InstrFn fn = nullptr;
  // For an op whose result is uniform, fn is run_uniform, which runs `inner` (the op's executor)
  // for one unit and copies the lanes it wrote across the row.
  InstrFn inner = nullptr;
  Ref dst;                      // the result, for ops that have one
  uint32_t dst_width = 1;       // the result's lanes
  uint32_t dst_lane_bytes = 0;  // bytes of one of its lanes
  uint32_t op_number = 0;       // the IR op's pre-order number, for error messages
  ir::OpKind kind = ir::OpKind::Const;
  Args args;

  template <class A>
  const A& as() const {
    return std::get<A>(args);
  }
};

struct PrintArgs {
  std::string format;
  std::vector<Ref> values;
  std::vector<ir::Scalar> types;
};

struct Plan {
  std::string kernel_name;
  ir::KernelFacts facts;
  std::vector<ir::Param> params;
  std::vector<Instr> code;
  uint32_t units = 1;                           // units per cube
  uint32_t register_bytes = 0;                  // register file size per cube
  uint32_t shared_bytes = 0;                    // shared memory per cube
  uint32_t wait_loops = 0;                      // mbarrier.try_waits that are a while's condition
  uint32_t warp_groups = 0;                     // units / 128 when the kernel has wgmma ops, else 0
  uint32_t frame_depth = 0;                     // deepest control nesting (mask frames needed)
  uint32_t uniform_values = 0;                  // values stored once per cube (for tests and dumps)
  std::vector<std::vector<Ref>> operand_lists;  // vector.construct lanes, by Construct::list
  std::vector<PrintArgs> prints;
  // Per-cube poison fills (decision 007): shared arrays (offset, bytes), local arrays (slot, bytes).
  std::vector<std::pair<uint32_t, uint32_t>> shared_arrays;
  std::vector<std::pair<uint32_t, uint32_t>> local_arrays;
  // Scalar parameters, copied into their slot at the start of each cube.
  struct ScalarParam {
    uint32_t param;
    Ref slot;
  };
  std::vector<ScalarParam> scalar_params;
  // Constants: their slot's bytes, written once when a cube's register file is made (a slot is
  // written by its defining op only, so a constant's never changes).
  struct Constant {
    uint32_t slot;
    std::vector<unsigned char> bytes;
  };
  std::vector<Constant> constants;
  // Decision 005: the ops that can stop a launch midway (by op number), and the parameters a
  // launch copies first so that a failure can put them back (empty when no op can fail).
  std::vector<uint32_t> failing_ops;
  std::vector<uint32_t> restore_params;
};

struct PlanOptions {
  // Store uniform values once per cube. Off, every value is varying: the differential tests run
  // both plans and compare.
  bool uniform_values = true;
};

// Builds the plan; throws Error{compile.unsupported} for ops the CPU backend cannot run (tiles).
Plan build_plan(const ir::Kernel& k, const PlanOptions& options = {});

}  // namespace kiln::cpu
