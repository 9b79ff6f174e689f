// Atomics: planning and executors. Cubes run on several host threads, so atomics on global
// buffers use std::atomic_ref; a cube's units run on one thread in unit order, so shared-memory
// atomics are plain read-modify-writes, applied lane after lane.
#include <atomic>
#include <cstring>

#include "backends/cpu/lanes.h"
#include "backends/cpu/planner.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

template <class T>
T combine(OpKind k, T old, T v) {
  switch (k) {
    case OpKind::AtomicAdd: return static_cast<T>(old + v);
    case OpKind::AtomicSub: return static_cast<T>(old - v);
    case OpKind::AtomicMin: return v < old ? v : old;
    case OpKind::AtomicMax: return old < v ? v : old;
    case OpKind::AtomicExchange: return v;
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (k) {
      case OpKind::AtomicAnd: return static_cast<T>(old & v);
      case OpKind::AtomicOr: return static_cast<T>(old | v);
      case OpKind::AtomicXor: return static_cast<T>(old ^ v);
      default: break;
    }
  }
  return old;
}

// Integer add/sub wrap: do them on the unsigned type.
template <class T>
T combine_wrapping(OpKind k, T old, T v) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    if (k == OpKind::AtomicAdd) return static_cast<T>(static_cast<U>(old) + static_cast<U>(v));
    if (k == OpKind::AtomicSub) return static_cast<T>(static_cast<U>(old) - static_cast<U>(v));
  }
  return combine(k, old, v);
}

template <class T, OpKind K, ArraySpace S>
uint32_t atomic_instr(Exec& e, const Instr& in, uint32_t pc) {
  const Access& x = in.as<Access>();
  T* d = e.slot<T>(in.dst.slot);
  for_active(e, [&](uint32_t u) {
    if (x.masked && !unit_value<uint8_t>(e, x.mask, u)) {
      d[u] = T(0);
      return;
    }
    const uint64_t index = read_index(e, x.index, x.index_type, u);
    const T v = unit_value<T>(e, x.value, u);
    T* p;
    uint64_t len;
    if constexpr (S == ArraySpace::Global) {
      const backend::ArgBinding& arg = e.args[x.array];
      len = arg.len;
      p = reinterpret_cast<T*>(arg.address) + index;
    } else {
      len = x.length;
      p = reinterpret_cast<T*>(e.shared + x.array) + index;
    }
    if (index >= len) fail_bounds(e, in, u, index, len);
    if constexpr (S == ArraySpace::Global) {
      std::atomic_ref<T> ref(*p);
      if constexpr (K == OpKind::AtomicCas) {
        T expected = v;
        ref.compare_exchange_strong(expected, unit_value<T>(e, x.desired, u), std::memory_order_relaxed);
        d[u] = expected;
      } else if constexpr (K == OpKind::AtomicExchange) {
        d[u] = ref.exchange(v, std::memory_order_relaxed);
      } else {
        T old = ref.load(std::memory_order_relaxed);
        while (!ref.compare_exchange_weak(old, combine_wrapping(K, old, v), std::memory_order_relaxed)) {
        }
        d[u] = old;
      }
    } else {
      T old = *p;
      if constexpr (K == OpKind::AtomicCas) {
        if (old == v) *p = unit_value<T>(e, x.desired, u);
      } else {
        *p = combine_wrapping(K, old, v);
      }
      d[u] = old;
    }
  });
  return pc + 1;
}

template <class T, ArraySpace S>
InstrFn pick_kind(OpKind k) {
  constexpr bool is_int = std::is_integral_v<T>;
  switch (k) {
    case OpKind::AtomicAdd: return &atomic_instr<T, OpKind::AtomicAdd, S>;
    case OpKind::AtomicSub: return &atomic_instr<T, OpKind::AtomicSub, S>;
    case OpKind::AtomicExchange: return &atomic_instr<T, OpKind::AtomicExchange, S>;
    case OpKind::AtomicMin:
      if constexpr (is_int) return &atomic_instr<T, OpKind::AtomicMin, S>;
      break;
    case OpKind::AtomicMax:
      if constexpr (is_int) return &atomic_instr<T, OpKind::AtomicMax, S>;
      break;
    case OpKind::AtomicAnd:
      if constexpr (is_int) return &atomic_instr<T, OpKind::AtomicAnd, S>;
      break;
    case OpKind::AtomicOr:
      if constexpr (is_int) return &atomic_instr<T, OpKind::AtomicOr, S>;
      break;
    case OpKind::AtomicXor:
      if constexpr (is_int) return &atomic_instr<T, OpKind::AtomicXor, S>;
      break;
    case OpKind::AtomicCas:
      if constexpr (is_int) return &atomic_instr<T, OpKind::AtomicCas, S>;
      break;
    default: break;
  }
  return nullptr;
}

// Atomics take 32- and 64-bit integers and f32, f64 (docs/ir.md); nullptr for other scalars.
template <ArraySpace S>
InstrFn pick_space(OpKind k, ir::Scalar s) {
  return ir::visit_scalar(s, [&]<class T>() -> InstrFn {
    if constexpr ((ir::is_int_type<T> && sizeof(T) >= 4) || std::is_floating_point_v<T>) return pick_kind<T, S>(k);
    else return nullptr;
  });
}

}  // namespace

bool plan_atomic(Planner& p, const ir::Op& op) {
  switch (op.kind) {
    case OpKind::AtomicAdd:
    case OpKind::AtomicSub:
    case OpKind::AtomicMin:
    case OpKind::AtomicMax:
    case OpKind::AtomicAnd:
    case OpKind::AtomicOr:
    case OpKind::AtomicXor:
    case OpKind::AtomicExchange:
    case OpKind::AtomicCas: break;
    default: return false;
  }
  const bool cas = op.kind == OpKind::AtomicCas;
  Access x = plan_access(p, op);
  if (cas) x.desired = p.operand(op, ir::ops::AtomicCas::desired);
  InstrFn fn = x.space == ArraySpace::Shared   ? pick_space<ArraySpace::Shared>(op.kind, op.type.scalar)
               : x.space == ArraySpace::Global ? pick_space<ArraySpace::Global>(op.kind, op.type.scalar)
                                               : nullptr;
  p.emit(op, require(fn, op.kind, op.type.scalar), x);
  return true;
}

}  // namespace kiln::cpu
