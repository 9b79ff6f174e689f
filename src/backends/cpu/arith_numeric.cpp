// The CPU backend's add, sub, mul, min, max, neg and abs: planning (arith.h has the ops and executors).
#include "backends/cpu/arith.h"

namespace kiln::cpu::arith {

bool plan_numeric(Planner& p, const ir::Op& op) {
  switch (op.kind) {
    case OpKind::Add: return binary<AddOp>(p, op);
    case OpKind::Sub: return binary<SubOp>(p, op);
    case OpKind::Mul: return binary<MulOp>(p, op);
    case OpKind::Min: return binary<MinOp>(p, op);
    case OpKind::Max: return binary<MaxOp>(p, op);
    case OpKind::Neg: return unary_op<NegOp>(p, op);
    case OpKind::Abs: return unary_op<AbsOp>(p, op);
    default: return false;
  }
}

}  // namespace kiln::cpu::arith
