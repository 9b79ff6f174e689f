// Uniformity: which values are the same for every unit of a cube, so that the plan stores them
// once per cube (a row) instead of once per unit (plan.h). The rules are conservative: a value
// not shown uniform here is varying, which is always correct, only slower.
//
// A value is uniform when:
// - it is a kernel parameter (a scalar argument is one value per launch; an array names the same
//   memory for every unit), or an array allocated by the kernel (only `len` reads it as a value);
// - it is the result of a builtin that does not depend on the unit: cube_pos, cube_dim,
//   cube_count, plane_dim (every other builtin, and any builtin added later, is varying);
// - it is the result of a pure op (ir::kPure: the result depends only on the operands) whose
//   operands are all uniform: constants, arithmetic, compare, select, casts, math, vector ops, len;
// - it is a load from a global parameter that nothing in the launch writes (no store or atomic to
//   it, nor to a parameter it may alias), with a uniform index and a uniform or no mask: the same
//   element of memory that does not change while the launch runs;
// - it is a for loop's induction value and the loop's lo, hi and step are uniform.
//
// Why this holds inside divergent control flow. The interpreter runs an instruction for the
// active units together, and an SSA value is used only where its definition dominates, so every
// unit that reads a value read the instance its own execution of the definition produced, in the
// same pass over the cube. A pure op of uniform operands computes the same result for every unit
// that runs it, under any mask; which units run it does not matter. A for loop with uniform
// bounds: its units start at the same lo and step together (for_next advances every unit still
// in the loop, including those that ran `continue`); a unit that leaves (`break`, `terminate`)
// reads the induction value no more. So every unit that reads it reads the same value. Values that
// merge across control flow (a loop's carried arguments and results, an if's results: ir.md,
// "Loops and ifs that carry values"; var.load too) are varying: each unit's may have come by
// another path. One would be uniform only when all its incoming values are uniform and the choice
// among them is too (a uniform condition, no break under a varying one); that refinement would go
// here. The control.cpp planner relies on it: a carried value's slot is per unit.
//
// Varying: builtins of the unit (absolute_pos, unit_pos, unit_pos_plane), plane ops (they combine
// units), var.load, atomics, loads from memory the launch writes or of a varying index or mask,
// and region arguments other than the ones above.
#include <algorithm>

#include "backends/cpu/analysis.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

bool uniform_builtin(OpKind k) {
  switch (k) {
    case OpKind::CubePos:
    case OpKind::CubeDim:
    case OpKind::CubeCount:
    case OpKind::PlaneDim: return true;
    default: return false;
  }
}

}  // namespace

std::vector<uint8_t> written_params(const ir::Kernel& k) {
  std::vector<uint8_t> written(k.params.size(), 0);
  ir::walk(k.body, [&](const ir::Op& op) {
    if (!op.has(ir::kWritesMemory)) return;
    if (const ir::Param* p = k.param_of(ir::written_array(op))) written[size_t(p - k.params.data())] = 1;
  });
  return written;
}

std::vector<uint8_t> uniform_values(const ir::Kernel& k) {
  std::vector<uint8_t> u(k.value_types.size(), 0);
  for (const ir::Param& p : k.params) u[p.value] = 1;

  // A parameter is invariant when nothing in the launch writes its memory. Alias facts name one
  // overlapping parameter each, not all, so an aliased parameter counts as overlapping every
  // other aliased one.
  const std::vector<uint8_t> written = written_params(k);
  bool aliased_written = false;
  for (size_t i = 0; i < k.params.size(); ++i) aliased_written |= written[i] && k.param_aliased(i);
  auto invariant = [&](ir::Value array) {
    const ir::Param* p = k.param_of(array);
    if (!p || !p->type.is_global()) return false;
    size_t i = size_t(p - k.params.data());
    return !written[i] && !(aliased_written && k.param_aliased(i));
  };
  auto operands_uniform = [&](const ir::Op& op) {
    for (ir::Value v : op.operands) {
      if (!u[v]) return false;
    }
    return true;
  };
  auto rule = [&](const ir::Op& op) -> bool {
    switch (op.kind) {
      case OpKind::SharedAlloc:
      case OpKind::LocalAlloc: return true;
      case OpKind::Load:
        return invariant(op.operand(ir::ops::Load::array)) && u[op.operand(ir::ops::Load::index)] &&
               (op.mask() == ir::kNoValue || u[op.mask()]);
      default: break;
    }
    if (op.has(ir::kBuiltin)) return uniform_builtin(op.kind);
    return op.has(ir::kPure) && operands_uniform(op);
  };

  // Pre-order visits a definition before its uses, and a for op before its body.
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.result != ir::kNoValue) u[op.result] = rule(op) ? 1 : 0;
    // The induction value follows lo, hi and step (operands 0..2), not the values the loop carries
    // (they, and every other region argument and control result, stay varying).
    if (op.kind == OpKind::For) {
      using F = ir::ops::For;
      u[op.regions[0].args[0]] =
          u[op.operand(F::lower_bound)] && u[op.operand(F::upper_bound)] && u[op.operand(F::step)];
    }
  });
  return u;
}

}  // namespace kiln::cpu
