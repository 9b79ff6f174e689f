// The CPU backend's the six compares: planning (arith.h has the ops and executors).
#include "backends/cpu/arith.h"

namespace kiln::cpu::arith {

bool plan_compare(Planner& p, const ir::Op& op) {
  switch (op.kind) {
    case OpKind::Eq: return binary<EqOp>(p, op);
    case OpKind::Ne: return binary<NeOp>(p, op);
    case OpKind::Lt: return binary<LtOp>(p, op);
    case OpKind::Le: return binary<LeOp>(p, op);
    case OpKind::Gt: return binary<GtOp>(p, op);
    case OpKind::Ge: return binary<GeOp>(p, op);
    default: return false;
  }
}

}  // namespace kiln::cpu::arith
