// Arithmetic, bitwise, compare and select: the family's plan, one file a family (arith.h).
#include "backends/cpu/arith.h"

namespace kiln::cpu {

bool plan_arith(Planner& p, const ir::Op& op) {
  return arith::plan_numeric(p, op) || arith::plan_divide(p, op) || arith::plan_bitwise(p, op) ||
         arith::plan_compare(p, op);
}

}  // namespace kiln::cpu
