// cast and bitcast: planning and executors. Casts exist for every (from, to) pair, with
// docs/ir.md's rules where C++ has none: float to int truncates and saturates (NaN gives 0); to
// bool is `!= 0`.
#include <cmath>
#include <cstring>
#include <limits>

#include "backends/cpu/lanes.h"
#include "backends/cpu/planner.h"

namespace kiln::cpu {

namespace {

template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    if constexpr (is_float_v<From>) return num<From>::get(v) != 0;
    else return v != From(0);
  } else if constexpr (is_short_float_v<To>) {
    // One rounding from the source's exact value: f64 and wide integers through float would round
    // twice and can land one unit off (seen against CUDA's cvt.rn).
    if constexpr (std::is_same_v<From, double>) return To(v);
    else if constexpr (is_float_v<From>) return To(static_cast<float>(num<From>::get(v)));
    else if constexpr (std::is_same_v<From, bool>) return To(v ? 1.0f : 0.0f);
    else return To::from_integer(v);
  } else if constexpr (std::is_floating_point_v<To>) {
    if constexpr (is_short_float_v<From>) return static_cast<To>(num<From>::get(v));
    else return static_cast<To>(v);
  } else if constexpr (is_float_v<From>) {
    // float -> integer: truncate toward zero, saturate, NaN -> 0.
    double x = static_cast<double>(num<From>::get(v));
    if (std::isnan(x)) return To(0);
    x = std::trunc(x);
    if (x <= static_cast<double>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (x >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  } else {
    // integer or bool -> integer: wraps (two's complement), extending by the source's signedness.
    return static_cast<To>(v);
  }
}

template <class From, class To>
uint32_t cast_instr(Exec& e, const Instr& in, uint32_t pc) {
  const Elementwise& x = in.as<Elementwise>();
  const From* a = e.slot<From>(x.a.slot);
  To* d = e.slot<To>(in.dst.slot);
  for_lanes(e, x.width, [&](uint32_t i) { d[i] = convert<To>(a[i]); });
  return pc + 1;
}

// bitcast: the operand's bytes, unit by unit.
uint32_t bitcast_instr(Exec& e, const Instr& in, uint32_t pc) {
  const unsigned char* a = e.slot<unsigned char>(in.as<Elementwise>().a.slot);
  unsigned char* d = e.slot<unsigned char>(in.dst.slot);
  const uint32_t b = in.dst_width * in.dst_lane_bytes;
  if (e.all_active) {
    std::memmove(d, a, size_t(b) * e.units);
  } else {
    for_active(e, [&](uint32_t u) { std::memmove(d + size_t(u) * b, a + size_t(u) * b, b); });
  }
  return pc + 1;
}

}  // namespace

bool plan_cast(Planner& p, const ir::Op& op) {
  if (op.kind == ir::OpKind::Bitcast) {
    p.emit(op, &bitcast_instr, Elementwise{p.operand(op, ir::ops::Unary::x), {}, {}, op.type.width});
    return true;
  }
  if (op.kind != ir::OpKind::Cast) return false;
  InstrFn fn = ir::visit_scalar(p.operand_type(op, ir::ops::Unary::x).scalar, [&]<class F>() {
    return ir::visit_scalar(op.type.scalar, []<class T>() -> InstrFn { return &cast_instr<F, T>; });
  });
  p.emit(op, fn, Elementwise{p.operand(op, ir::ops::Unary::x), {}, {}, op.type.width});
  return true;
}

}  // namespace kiln::cpu
