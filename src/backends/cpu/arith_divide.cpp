// The CPU backend's div and rem (integer division by zero is an error), fma and select: planning
// (arith.h has the ops and executors).
#include "backends/cpu/arith.h"

namespace kiln::cpu::arith {

bool plan_divide(Planner& p, const ir::Op& op) {
  switch (op.kind) {
    case OpKind::Div: return divide<false>(p, op);
    case OpKind::Rem: return divide<true>(p, op);
    case OpKind::Fma: return fma(p, op);
    case OpKind::Select: return select(p, op);
    default: return false;
  }
}

}  // namespace kiln::cpu::arith
