// Plane (warp) instructions: collectives over the active units of each group of 32 consecutive
// units. A partial last plane (a cube size that is not a multiple of 32) has fewer units.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/cpu/lanes.h"
#include "kiln/error.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

template <class F>
void for_planes(const Exec& e, F&& f) {
  for (uint32_t p0 = 0; p0 < e.units; p0 += 32) f(p0, std::min(p0 + 32, e.units));
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
  const T* a = e.slot<T>(in.a);
  T* d = e.slot<T>(in.dst);
  uint32_t w = in.width;
  for_planes(e, [&](uint32_t p0, uint32_t p1) {
    for (uint32_t l = 0; l < w; ++l) {
      bool first = true;
      C acc{};
      C running{};
      for (uint32_t u = p0; u < p1; ++u) {
        if (!e.cur[u]) continue;
        C x = num<T>::get(a[u * w + l]);
        if constexpr (K == OpKind::PlaneInclusiveSum || K == OpKind::PlaneExclusiveSum) {
          C before = running;
          running = first ? x : add_w(running, x);
          if constexpr (is_half_v<T>) running = num<T>::get(num<T>::put(running));
          d[u * w + l] = num<T>::put(K == OpKind::PlaneInclusiveSum ? running : (first ? C(0) : before));
          first = false;
          continue;
        }
        if (first) {
          acc = x;
          first = false;
        } else if constexpr (K == OpKind::PlaneSum) {
          acc = add_w(acc, x);
        } else if constexpr (K == OpKind::PlaneProd) {
          acc = mul_w(acc, x);
        } else if constexpr (K == OpKind::PlaneMax) {
          if constexpr (is_float_v<T>) acc = std::fmax(acc, x);
          else acc = acc < x ? x : acc;
        } else {
          if constexpr (is_float_v<T>) acc = std::fmin(acc, x);
          else acc = x < acc ? x : acc;
        }
        if constexpr (is_half_v<T>) acc = num<T>::get(num<T>::put(acc));
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
  const uint8_t* a = e.slot<uint8_t>(in.a);
  for_planes(e, [&](uint32_t p0, uint32_t p1) {
    uint32_t ballot = 0, active = 0;
    for (uint32_t u = p0; u < p1; ++u) {
      if (!e.cur[u]) continue;
      active |= 1u << (u - p0);
      if (K != OpKind::PlaneElect && a[u]) ballot |= 1u << (u - p0);
    }
    for (uint32_t u = p0; u < p1; ++u) {
      if (!e.cur[u]) continue;
      if constexpr (K == OpKind::PlaneBallot) {
        e.slot<uint32_t>(in.dst)[u] = ballot;
      } else if constexpr (K == OpKind::PlaneAll) {
        e.slot<uint8_t>(in.dst)[u] = ballot == active;
      } else if constexpr (K == OpKind::PlaneAny) {
        e.slot<uint8_t>(in.dst)[u] = ballot != 0;
      } else {
        e.slot<uint8_t>(in.dst)[u] = (active & ((1u << (u - p0)) - 1)) == 0;  // lowest active lane
      }
    }
  });
  return pc + 1;
}

// Shuffles move bytes: in.bytes per unit, in.b the u32 lane operand.
template <OpKind K>
uint32_t shuffle_instr(Exec& e, const Instr& in, uint32_t pc) {
  const unsigned char* a = e.slot<unsigned char>(in.a);
  const uint32_t* lane = e.slot<uint32_t>(in.b);
  unsigned char* d = e.slot<unsigned char>(in.dst);
  uint32_t b = in.bytes;
  for_active(e, [&](uint32_t u) {
    uint32_t p0 = u - u % 32, me = u % 32, x = lane[u];
    int64_t src;
    switch (K) {
      case OpKind::PlaneBroadcast:
      case OpKind::PlaneShuffle: src = x % 32; break;
      case OpKind::PlaneShuffleXor: src = me ^ x; break;
      case OpKind::PlaneShuffleUp: src = int64_t(me) - int64_t(x); break;
      default: src = int64_t(me) + int64_t(x); break;
    }
    if (src < 0 || src >= 32 || p0 + uint32_t(src) >= e.units) src = me;
    std::memcpy(d + size_t(u) * b, a + size_t(p0 + uint32_t(src)) * b, b);
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

InstrFn pick_plane(OpKind kind, ir::Scalar s) {
  switch (kind) {
    case OpKind::PlaneAll: return &vote_instr<OpKind::PlaneAll>;
    case OpKind::PlaneAny: return &vote_instr<OpKind::PlaneAny>;
    case OpKind::PlaneBallot: return &vote_instr<OpKind::PlaneBallot>;
    case OpKind::PlaneElect: return &vote_instr<OpKind::PlaneElect>;
    case OpKind::PlaneBroadcast: return &shuffle_instr<OpKind::PlaneBroadcast>;
    case OpKind::PlaneShuffle: return &shuffle_instr<OpKind::PlaneShuffle>;
    case OpKind::PlaneShuffleXor: return &shuffle_instr<OpKind::PlaneShuffleXor>;
    case OpKind::PlaneShuffleUp: return &shuffle_instr<OpKind::PlaneShuffleUp>;
    case OpKind::PlaneShuffleDown: return &shuffle_instr<OpKind::PlaneShuffleDown>;
    default: break;
  }
  InstrFn fn = dispatch_scalar(s, [&]<class T>() { return pick_reduce<T>(kind); });
  if (!fn) {
    throw Error("compile.unsupported", "the CPU backend has no '" + std::string(ir::op_name(kind)) + "' on " +
                                           std::string(ir::scalar_name(s)));
  }
  return fn;
}

}  // namespace kiln::cpu
