// The mbarrier ops with the meaning docs/ir.md gives them. A barrier is its eight bytes of shared
// memory, which hold (little-endian, as a u64):
//   bits  0..19  arrivals the current phase still needs
//   bits 20..39  arrivals a phase needs (init's count)
//   bits 40..60  bytes the phase still waits for, as a 21-bit two's complement (complete_tx may
//                land bytes before the expect_tx that announces them)
//   bit  61      the current phase's parity
//   bits 62..63  0b10 once init has run: the 0xff poison of a new cube (decision 007) and zeros
//                both read as a barrier no init has set up
// A phase completes when its arrivals and bytes are both in: the parity flips and the arrivals
// start again from the count. The ops run for the active units in unit order, as a GPU may order
// them; every change is counted (BarrierWatch), so a try_wait in a while's condition (a loop that
// waits on it, as mbarrier_wait writes) that finds a phase incomplete twice with nothing changed
// between fails the launch: barrier.expect_tx when the arrivals are all in and bytes are missing,
// barrier.deadlock when every unit of the cube that has not ended is spinning there, and
// barrier.divergent when some are elsewhere (another branch of an if, past the loop): the cube
// runs in lockstep and cannot run them while these spin, where a GPU would. A try_wait elsewhere
// is a test and only tells.
#include <string>

#include "backends/cpu/exec.h"
#include "backends/cpu/planner.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

constexpr uint64_t kCountLimit = (1u << 20) - 1;  // the hardware's limit on arrivals and bytes
constexpr uint64_t kMarker = uint64_t(2) << 62;

struct State {
  uint32_t pending, expected, parity;
  int64_t tx;
};

bool initialised(uint64_t w) { return (w >> 62) == 2; }
State decode(uint64_t w) {
  State s;
  s.pending = uint32_t(w & kCountLimit);
  s.expected = uint32_t((w >> 20) & kCountLimit);
  const uint64_t tx = (w >> 40) & ((uint64_t(1) << 21) - 1);
  s.tx = (tx & (uint64_t(1) << 20)) ? int64_t(tx) - (int64_t(1) << 21) : int64_t(tx);
  s.parity = uint32_t((w >> 61) & 1);
  return s;
}
uint64_t encode(const State& s) {
  return kMarker | uint64_t(s.pending) | (uint64_t(s.expected) << 20) |
         ((uint64_t(s.tx) & ((uint64_t(1) << 21) - 1)) << 40) | (uint64_t(s.parity) << 61);
}

std::string state_text(const State& s) {
  return "phase parity " + std::to_string(s.parity) + ", " + std::to_string(s.pending) + " of " +
         std::to_string(s.expected) + " arrivals to come, " + std::to_string(s.tx) + " bytes awaited";
}

// Unit u's barrier: its bytes in shared memory, after the index's bounds check.
unsigned char* barrier_of(Exec& e, const Instr& in, uint32_t u, uint64_t* index_out = nullptr) {
  const Access& x = in.as<Access>();
  const uint64_t i = read_index(e, x.index, x.index_type, u);
  if (i >= x.length) fail_bounds(e, in, u, i, x.length);
  if (index_out) *index_out = i;
  return e.shared + x.array + i * 8;
}

std::string barrier_text(const Exec& e, const Instr& in, uint64_t index) {
  return "barrier " + std::to_string(index) + " of " + array_text(e, in);
}

// Unit u's barrier, decoded; fails for one no init has set up.
State read_state(Exec& e, const Instr& in, uint32_t u, unsigned char* at, uint64_t index) {
  uint64_t w;
  std::memcpy(&w, at, 8);
  if (!initialised(w)) {
    fail(e, in, u, "barrier.uninitialised", barrier_text(e, in, index) + " has not been set up by mbarrier.init");
  }
  return decode(w);
}

void write_state(Exec& e, unsigned char* at, State s) {
  if (s.pending == 0 && s.tx == 0) {  // the phase completes
    s.parity ^= 1;
    s.pending = s.expected;
  }
  const uint64_t w = encode(s);
  std::memcpy(at, &w, 8);
  ++e.barriers->changes;
}

uint32_t count_of(const Exec& e, const Instr& in, uint32_t u) {
  return unit_value<uint32_t>(e, in.as<Access>().value, u);
}

uint32_t init_instr(Exec& e, const Instr& in, uint32_t pc) {
  for_active(e, [&](uint32_t u) {
    uint64_t index;
    unsigned char* at = barrier_of(e, in, u, &index);
    const uint32_t count = count_of(e, in, u);
    if (count == 0 || count > kCountLimit) {
      fail(e, in, u, "barrier.count",
           barrier_text(e, in, index) + " is given a count of " + std::to_string(count) +
               " arrivals; a count is 1 to " + std::to_string(kCountLimit));
    }
    const uint64_t w = encode(State{count, count, 0, 0});
    std::memcpy(at, &w, 8);
    ++e.barriers->changes;
  });
  return pc + 1;
}

// arrive, arrive_expect_tx, expect_tx and complete_tx: bytes first (announced or landed), then the
// arrival.
template <OpKind K>
uint32_t update_instr(Exec& e, const Instr& in, uint32_t pc) {
  for_active(e, [&](uint32_t u) {
    uint64_t index;
    unsigned char* at = barrier_of(e, in, u, &index);
    State s = read_state(e, in, u, at, index);
    if constexpr (K != OpKind::MbarrierArrive) {
      const int64_t bytes = count_of(e, in, u);
      const int64_t tx = K == OpKind::MbarrierCompleteTx ? s.tx - bytes : s.tx + bytes;
      if (tx > int64_t(kCountLimit) || tx < -int64_t(kCountLimit)) {
        fail(e, in, u, "barrier.expect_tx",
             barrier_text(e, in, index) + " would await " + std::to_string(tx) + " bytes (" + state_text(s) +
                 "); a phase awaits at most " + std::to_string(kCountLimit) + " either way");
      }
      s.tx = tx;
    }
    if constexpr (K == OpKind::MbarrierArrive || K == OpKind::MbarrierArriveExpectTx) {
      if (s.pending == 0) {
        fail(e, in, u, "barrier.arrivals",
             barrier_text(e, in, index) + " has all " + std::to_string(s.expected) +
                 " arrivals of its phase and is awaiting bytes (" + state_text(s) + "): one arrival too many");
      }
      --s.pending;
    }
    write_state(e, at, s);
  });
  return pc + 1;
}

// The error of a wait that cannot end, by why: bytes, units elsewhere, or arrivals none can give.
[[noreturn]] void fail_stuck(const Exec& e, const Instr& in, uint32_t unit, uint64_t index, const State& s) {
  const std::string head = barrier_text(e, in, index) + " never completes its phase: " + state_text(s);
  if (s.pending == 0 && s.tx != 0) {
    fail(e, in, unit, "barrier.expect_tx",
         head +
             ", and every arrival is in: the bytes expected (expect_tx) and landed (complete_tx, bulk copies) differ");
  }
  uint32_t elsewhere = 0, first = 0;
  for (uint32_t u = 0; u < e.units; ++u) {
    if (!e.cur[u] && !e.terminated[u] && elsewhere++ == 0) first = u;
  }
  if (elsewhere) {
    fail(e, in, unit, "barrier.divergent",
         head + "; " + std::to_string(elsewhere) + " of the cube's " + std::to_string(e.units) + " units (" +
             unit_text(e, first) +
             " the first) are elsewhere in the kernel (another branch of an if, or past this loop), and the CPU "
             "backend runs a cube's units in lockstep: it cannot run them while these wait. Units that wait on "
             "each other's arrivals need the role regions of issue 23, which are not yet in kiln");
  }
  fail(e, in, unit, "barrier.deadlock", head + ", and every unit of the cube that has not ended is waiting here");
}

uint32_t try_wait_instr(Exec& e, const Instr& in, uint32_t pc) {
  uint8_t* done = e.slot<uint8_t>(in.dst.slot);
  bool failed = false;
  uint32_t stuck_unit = 0;
  uint64_t stuck_index = 0;
  State stuck{};
  for_active(e, [&](uint32_t u) {
    uint64_t index;
    unsigned char* at = barrier_of(e, in, u, &index);
    const State s = read_state(e, in, u, at, index);
    // The phase of the given parity has completed once the current phase has the other parity.
    const bool complete = s.parity != (count_of(e, in, u) & 1);
    done[in.dst.uniform ? 0 : u] = complete;
    if (!complete && !failed) {
      failed = true;
      stuck_unit = u;
      stuck_index = index;
      stuck = s;
    }
  });
  if (const uint32_t loop = in.as<Access>().wait_loop; failed && loop) {
    uint64_t& last = e.barriers->failed_at[loop - 1];
    if (last == e.barriers->changes) fail_stuck(e, in, stuck_unit, stuck_index, stuck);
    last = e.barriers->changes;
  }
  return pc + 1;
}

uint32_t fence_proxy_async(Exec&, const Instr&, uint32_t pc) { return pc + 1; }  // one memory on the CPU

}  // namespace

bool plan_barrier(Planner& p, const ir::Op& op) {
  InstrFn fn = nullptr;
  switch (op.kind) {
    case OpKind::MbarrierInit: fn = &init_instr; break;
    case OpKind::MbarrierArrive: fn = &update_instr<OpKind::MbarrierArrive>; break;
    case OpKind::MbarrierArriveExpectTx: fn = &update_instr<OpKind::MbarrierArriveExpectTx>; break;
    case OpKind::MbarrierExpectTx: fn = &update_instr<OpKind::MbarrierExpectTx>; break;
    case OpKind::MbarrierCompleteTx: fn = &update_instr<OpKind::MbarrierCompleteTx>; break;
    case OpKind::MbarrierTryWait: fn = &try_wait_instr; break;
    case OpKind::FenceProxyAsync: p.emit(op, &fence_proxy_async); return true;
    default: return plan_wgmma(p, op);
  }
  // The array and index as a load's (plan_access); the count, byte count or parity as its value.
  using B = ir::ops::MbarrierCount;
  Access x = plan_access(p, op);
  if (op.kind == OpKind::MbarrierTryWait) x.value = p.operand(op, ir::ops::MbarrierWait::parity);
  else if (op.operands.size() > size_t(B::count)) x.value = p.operand(op, B::count);
  if (op.kind == OpKind::MbarrierTryWait && p.ctx().while_depth >= 0) x.wait_loop = ++p.plan().wait_loops;
  p.emit(op, fn, x);
  return true;
}

}  // namespace kiln::cpu
