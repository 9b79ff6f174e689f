// The CPU backend's and, or, xor, not, the shifts and the bit counts: planning (arith.h has the ops and executors).
#include "backends/cpu/arith.h"

namespace kiln::cpu::arith {

bool plan_bitwise(Planner& p, const ir::Op& op) {
  switch (op.kind) {
    case OpKind::And: return binary<AndOp>(p, op);
    case OpKind::Or: return binary<OrOp>(p, op);
    case OpKind::Xor: return binary<XorOp>(p, op);
    case OpKind::Not: return unary_op<NotOp>(p, op);
    case OpKind::Shl: return binary<ShlOp>(p, op);
    case OpKind::Shr: return binary<ShrOp>(p, op);
    case OpKind::Popcount: return unary_op<PopcountOp>(p, op);
    case OpKind::LeadingZeros: return unary_op<LeadingZerosOp>(p, op);
    case OpKind::TrailingZeros: return unary_op<TrailingZerosOp>(p, op);
    default: return false;
  }
}

}  // namespace kiln::cpu::arith
