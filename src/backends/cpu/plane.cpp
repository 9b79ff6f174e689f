// Plane ops: planning and executors of collectives over the active units of each group of
// 32 consecutive units. A partial last plane (a cube size that is not a multiple of 32) has fewer
// units. Results are always varying; an operand may be uniform.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/cpu/lanes.h"
#include "backends/cpu/planner.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

template <class F>
void for_planes(const Exec& e, F&& f) {
  constexpr uint32_t w = ir::Target::kPlaneWidth;
  for (uint32_t p0 = 0; p0 < e.units; p0 += w) f(p0, std::min(p0 + w, e.units));
}

// Integer sums and products wrap (computed on the unsigned type); floats compute in `calc`.
template <class C>
C add_w(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <class C>
C mul_w(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    using P = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<C>(static_cast<U>(static_cast<P>(static_cast<U>(a)) * static_cast<P>(static_cast<U>(b))));
  } else {
    return a * b;
  }
}

template <class T, OpKind K>
uint32_t reduce_instr(Exec& e, const Instr& in, uint32_t pc) {
  using C = typename num<T>::calc;
  const PlaneArgs& x = in.as<PlaneArgs>();
  const T* a = e.slot<T>(x.value.slot);
  T* d = e.slot<T>(in.dst.slot);
  const uint32_t w = x.width, a_unit = x.value.uniform ? 0 : w;
  for_planes(e, [&](uint32_t p0, uint32_t p1) {
    for (uint32_t l = 0; l < w; ++l) {
      bool first = true;
      C acc{};
      C running{};
      for (uint32_t u = p0; u < p1; ++u) {
        if (!e.cur[u]) continue;
        C v = num<T>::get(a[u * a_unit + l]);
        if constexpr (K == OpKind::PlaneInclusiveSum || K == OpKind::PlaneExclusiveSum) {
          C before = running;
          running = first ? v : add_w(running, v);
          if constexpr (is_short_float_v<T>) running = num<T>::get(num<T>::put(running));
          d[u * w + l] = num<T>::put(K == OpKind::PlaneInclusiveSum ? running : (first ? C(0) : before));
          first = false;
          continue;
        }
        if (first) {
          acc = v;
          first = false;
        } else if constexpr (K == OpKind::PlaneSum) {
          acc = add_w(acc, v);
        } else if constexpr (K == OpKind::PlaneProd) {
          acc = mul_w(acc, v);
        } else if constexpr (K == OpKind::PlaneMax) {
          if constexpr (is_float_v<T>) acc = float_max(acc, v);
          else acc = acc < v ? v : acc;
        } else {
          if constexpr (is_float_v<T>) acc = float_min(acc, v);
          else acc = v < acc ? v : acc;
        }
        if constexpr (is_short_float_v<T>) acc = num<T>::get(num<T>::put(acc));
      }
      if constexpr (K != OpKind::PlaneInclusiveSum && K != OpKind::PlaneExclusiveSum) {
        for (uint32_t u = p0; u < p1; ++u) {
          if (e.cur[u]) d[u * w + l] = num<T>::put(acc);
        }
      }
    }
  });
  return pc + 1;
}

template <OpKind K>
uint32_t vote_instr(Exec& e, const Instr& in, uint32_t pc) {
  const PlaneArgs& x = in.as<PlaneArgs>();
  for_planes(e, [&](uint32_t p0, uint32_t p1) {
    uint32_t ballot = 0, active = 0;
    for (uint32_t u = p0; u < p1; ++u) {
      if (!e.cur[u]) continue;
      active |= 1u << (u - p0);
      if (K != OpKind::PlaneElect && unit_value<uint8_t>(e, x.value, u)) ballot |= 1u << (u - p0);
    }
    for (uint32_t u = p0; u < p1; ++u) {
      if (!e.cur[u]) continue;
      if constexpr (K == OpKind::PlaneBallot) {
        e.slot<uint32_t>(in.dst.slot)[u] = ballot;
      } else if constexpr (K == OpKind::PlaneAll) {
        e.slot<uint8_t>(in.dst.slot)[u] = ballot == active;
      } else if constexpr (K == OpKind::PlaneAny) {
        e.slot<uint8_t>(in.dst.slot)[u] = ballot != 0;
      } else {
        e.slot<uint8_t>(in.dst.slot)[u] = (active & ((1u << (u - p0)) - 1)) == 0;  // lowest active lane
      }
    }
  });
  return pc + 1;
}

// Shuffles move whole elements (element_bytes per unit); the lane operand is u32.
template <OpKind K>
uint32_t shuffle_instr(Exec& e, const Instr& in, uint32_t pc) {
  const PlaneArgs& args = in.as<PlaneArgs>();
  unsigned char* d = e.slot<unsigned char>(in.dst.slot);
  const uint32_t b = args.element_bytes;
  for_active(e, [&](uint32_t u) {
    constexpr uint32_t w = ir::Target::kPlaneWidth;
    uint32_t p0 = u - u % w, me = u % w, x = unit_value<uint32_t>(e, args.lane, u);
    int64_t src;
    switch (K) {
      case OpKind::PlaneBroadcast:
      case OpKind::PlaneShuffle: src = x % w; break;
      case OpKind::PlaneShuffleXor: src = me ^ x; break;
      case OpKind::PlaneShuffleUp: src = int64_t(me) - int64_t(x); break;
      default: src = int64_t(me) + int64_t(x); break;
    }
    if (src < 0 || src >= int64_t(w) || p0 + uint32_t(src) >= e.units) src = me;
    std::memcpy(d + size_t(u) * b, unit_bytes(e, args.value, p0 + uint32_t(src), b), b);
  });
  return pc + 1;
}

template <class T>
InstrFn pick_reduce(OpKind k) {
  if constexpr (std::is_same_v<T, bool>) {
    return nullptr;
  } else {
    switch (k) {
      case OpKind::PlaneSum: return &reduce_instr<T, OpKind::PlaneSum>;
      case OpKind::PlaneProd: return &reduce_instr<T, OpKind::PlaneProd>;
      case OpKind::PlaneMax: return &reduce_instr<T, OpKind::PlaneMax>;
      case OpKind::PlaneMin: return &reduce_instr<T, OpKind::PlaneMin>;
      case OpKind::PlaneInclusiveSum: return &reduce_instr<T, OpKind::PlaneInclusiveSum>;
      case OpKind::PlaneExclusiveSum: return &reduce_instr<T, OpKind::PlaneExclusiveSum>;
      default: return nullptr;
    }
  }
}

}  // namespace

bool plan_plane(Planner& p, const ir::Op& op) {
  if (!op.has(ir::kPlane)) return false;
  // The value a plane op reads: x (reductions, scans), the predicate (votes), the value a lane
  // op moves; elect reads none.
  ir::Value value = ir::kNoValue, lane = ir::kNoValue;
  switch (op.info().signature) {
    case ir::Signature::Unary: value = op.operand(ir::ops::Unary::x); break;
    case ir::Signature::PlaneVote: value = op.operand(ir::ops::PlaneVote::predicate); break;
    case ir::Signature::PlaneLane:
      value = op.operand(ir::ops::PlaneLane::value);
      lane = op.operand(ir::ops::PlaneLane::lane);
      break;
    default: break;
  }
  const ir::Scalar s = value == ir::kNoValue ? ir::Scalar::Bool : p.type_of(value).scalar;
  InstrFn fn = nullptr;
  switch (op.kind) {
    case OpKind::PlaneAll: fn = &vote_instr<OpKind::PlaneAll>; break;
    case OpKind::PlaneAny: fn = &vote_instr<OpKind::PlaneAny>; break;
    case OpKind::PlaneBallot: fn = &vote_instr<OpKind::PlaneBallot>; break;
    case OpKind::PlaneElect: fn = &vote_instr<OpKind::PlaneElect>; break;
    case OpKind::PlaneBroadcast: fn = &shuffle_instr<OpKind::PlaneBroadcast>; break;
    case OpKind::PlaneShuffle: fn = &shuffle_instr<OpKind::PlaneShuffle>; break;
    case OpKind::PlaneShuffleXor: fn = &shuffle_instr<OpKind::PlaneShuffleXor>; break;
    case OpKind::PlaneShuffleUp: fn = &shuffle_instr<OpKind::PlaneShuffleUp>; break;
    case OpKind::PlaneShuffleDown: fn = &shuffle_instr<OpKind::PlaneShuffleDown>; break;
    default: fn = ir::visit_scalar(s, [&]<class T>() { return pick_reduce<T>(op.kind); }); break;
  }
  PlaneArgs x;
  if (value != ir::kNoValue) x.value = p.ref(value);
  if (lane != ir::kNoValue) x.lane = p.ref(lane);
  x.width = op.type.width;
  x.element_bytes = uint32_t(op.type.element_bytes());
  p.emit(op, require(fn, op.kind, s), x);
  return true;
}

}  // namespace kiln::cpu
