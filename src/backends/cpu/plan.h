// The CPU backend's compiled form of a kernel: a flat list of instructions over register slots.
// Every value has a slot holding one lane per unit of the cube (units x width elements); the
// interpreter runs the whole cube in lockstep, instruction by instruction, under an active mask.
// Structured control flow becomes mask operations and jumps (see control.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/kernel.h"

namespace kiln::cpu {

struct Exec;
struct Instr;

// Where an array operand lives.
enum class ArraySpace : uint8_t { Global, Shared, Local };

// Runs one instruction for the active units; returns the next pc.
using InstrFn = uint32_t (*)(Exec& e, const Instr& in, uint32_t pc);

struct Instr {
  InstrFn fn = nullptr;
  uint32_t dst = 0;             // slot offset of the result (bytes into the register file)
  uint32_t a = 0, b = 0, c = 0, d = 0;  // operand slot offsets, parameter indices, mask depths
  uint32_t extra = 0;           // a fifth operand (atomic.cas's desired value)
  uint32_t array_op = 0;        // shared and local arrays: the number of their alloc op
  uint32_t width = 1;           // lanes per unit of the values involved
  uint32_t bytes = 0;           // bytes of one element (scalar x width) where that matters
  uint32_t target = 0;          // jump target
  uint32_t target2 = 0;         // second jump target (an empty mask after a merge)
  int32_t depth = 0;            // control frame depth of this op
  int32_t loop = -1;            // frame depth of the innermost enclosing loop, or -1
  ir::Scalar scalar = ir::Scalar::Bool;   // the element scalar the op computes on
  ir::Scalar scalar2 = ir::Scalar::Bool;  // a second scalar (cast source, index type)
  bool flag = false;            // has a mask operand (memory ops); axis given (builtins)
  ArraySpace space = ArraySpace::Global;  // memory ops: where the array lives
  int64_t imm = 0;              // integer immediate: constant bits, axis, lane, dim, array length
  double fimm = 0;              // float immediate
  uint32_t op_number = 0;       // the IR op's pre-order number, for error messages
  ir::OpKind kind = ir::OpKind::Const;
};

struct Plan {
  std::string kernel_name;
  ir::KernelFacts facts;
  std::vector<ir::Param> params;
  std::vector<Instr> code;
  uint32_t units = 1;            // units per cube
  uint32_t register_bytes = 0;   // register file size per cube
  uint32_t shared_bytes = 0;     // shared memory per cube
  uint32_t frame_depth = 0;      // deepest control nesting (mask frames needed)
  bool may_fail = false;         // a launch can stop with an error midway (buffers must be restorable)
  // Variadic operands (vector.construct, debug.print): slots and scalars, by Instr::imm.
  std::vector<std::vector<uint32_t>> operand_lists;
  std::vector<std::vector<ir::Scalar>> operand_types;
  std::vector<std::string> formats;  // debug.print formats, by Instr::imm
  // Per-cube poison fills: shared arrays (offset, bytes) and local arrays (slot, bytes).
  std::vector<std::pair<uint32_t, uint32_t>> shared_arrays;
  std::vector<std::pair<uint32_t, uint32_t>> local_arrays;
  // Scalar parameters: (parameter index, slot), broadcast into their slot at the start of a cube.
  std::vector<std::pair<uint32_t, uint32_t>> scalar_params;
};

// Builds the plan; throws Error{compile.unsupported} for ops the CPU backend cannot run (tiles).
Plan build_plan(const ir::Kernel& k);

}  // namespace kiln::cpu
