// The state of one cube while the interpreter runs it, and the helpers instructions share.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backends/cpu/plan.h"

namespace kiln::cpu {

// Thrown at a while loop's head when an earlier cube of the launch has failed (Exec::failed_cube):
// the cube ends where it is, and the launch reports that failure.
struct Stopped {};

// How many while-loop iterations a cube runs, once a later cube has failed, before it too is
// stopped. It goes on so that its own failure, which comes first, is the launch's on every run; but
// it may be spinning on an atomic the failed cube will never set.
constexpr uint32_t kSpinsAfterALaterFailure = 1u << 16;

// A cube's copy.asyncs that have not landed (async_copy.cpp): what each read when it was issued,
// in issue order, with its group (0 while its unit has not committed it, else the unit's commit
// count then); `commits` counts each unit's commits.
struct PendingCopy {
  uint32_t unit = 0, group = 0, shared_offset = 0, bytes = 0;
  unsigned char data[16] = {};
};
struct AsyncCopies {
  std::vector<PendingCopy> pending;
  std::vector<uint32_t> commits;
};

// What the cube's mbarrier ops share (barrier.cpp): a count of every change to any barrier's
// state, and for each try_wait instruction the count when it last found a phase incomplete. A
// try_wait that finds it incomplete again with no change between can never succeed: nothing else
// runs while its units spin (the cube runs in lockstep), so the launch fails as a deadlock.
struct BarrierWatch {
  uint64_t changes = 0;
  std::vector<uint64_t> failed_at;  // by wait loop (Access::wait_loop - 1); ~0 while it has not failed
};

// The cube's warp-group products (wgmma.cpp). A product is computed when it is issued, into
// `result` (the accumulators it leaves: every unit's of its warp group, slot-major per unit),
// from the accumulators the group's previous product on the same array left, if one is in flight,
// else from the array; the array reads NaN while any product on it is in flight, and gets
// `result` when the wait that lands the group's last product on it runs. `read` keeps the factor
// bytes it read, in reading order, to find shared memory written before that wait.
struct InFlightProduct {
  const Instr* instr = nullptr;
  uint32_t warp_group = 0;
  uint32_t acc_slot = 0, acc_length = 0;
  uint64_t a_first = 0, b_first = 0;  // the factors' offsets (elements of their arrays)
  uint32_t group = 0;                 // the commit that closed it (its warp group's count then), 0 before
  std::vector<float> result;
  std::vector<unsigned char> read;
};
// An array a wgmma.fence named: its slot, and the warp group's bytes of it then (a write after
// the fence is one the fence does not order).
struct FencedArray {
  uint32_t slot = 0;
  std::vector<unsigned char> bytes;
};
struct WarpGroupProducts {
  std::vector<InFlightProduct> pending;  // in issue order
  std::vector<uint32_t> commits;         // by warp group
  // By warp group: the arrays a wgmma.fence has named since its last wait.
  std::vector<std::vector<FencedArray>> fenced;
};

struct Exec {
  const Plan* plan = nullptr;
  const backend::ArgBinding* args = nullptr;
  unsigned char* regs = nullptr;    // register file: plan->register_bytes
  unsigned char* shared = nullptr;  // shared memory: plan->shared_bytes
  uint8_t* cur = nullptr;           // active mask, one byte per unit
  uint8_t* terminated = nullptr;    // units that ran `terminate`
  uint8_t* frames = nullptr;        // 3 masks per control depth: saved, m1 (else/broken), m2 (continued)
  AsyncCopies* copies = nullptr;    // empty when the cube starts
  BarrierWatch* barriers = nullptr;
  WarpGroupProducts* products = nullptr;  // empty when the cube starts
  uint32_t units = 0;
  bool all_active = true;  // cur has every unit set (a fast path for lane loops)
  ir::Dim3 cube_pos, cube_count, cube_dim;
  // The lowest cube (in claim order) that has failed so far, ~0 while none has. A while loop's head
  // reads it: a cube may spin on an atomic for an earlier cube (docs/ir.md, fence.device), and one
  // that failed never sets what it waits for. Cubes before the failed one go on (a bounded while)
  // so that the launch reports the lowest failing cube, whichever thread ran it.
  const std::atomic<uint64_t>* failed_cube = nullptr;
  uint64_t cube_index = 0;           // this cube's place in claim order
  uint32_t spins_after_failure = 0;  // while heads run since a later cube was seen failed
  // While run_uniform runs an op for one unit: the cube's own active mask and unit count (errors
  // name the cube's first active unit), and the one-unit mask.
  const uint8_t* cube_cur = nullptr;
  uint32_t cube_units = 0;
  uint8_t one = 1;

  template <class T>
  T* slot(uint32_t offset) const {
    return reinterpret_cast<T*>(regs + offset);
  }
  uint8_t* saved(int depth) const { return frames + (size_t(depth) * 3 + 0) * units; }
  uint8_t* m1(int depth) const { return frames + (size_t(depth) * 3 + 1) * units; }
  uint8_t* m2(int depth) const { return frames + (size_t(depth) * 3 + 2) * units; }

  // Recomputes all_active; returns whether any unit is active.
  bool refresh() {
    const uint32_t count = units;
    const uint8_t* c = cur;
    uint32_t n = 0;
    for (uint32_t u = 0; u < count; ++u) n += c[u];
    all_active = n == count;
    return n != 0;
  }
};

// Calls f(u) for every active unit u.
// The loop bounds are copied out of `e` first: stores through the slot pointers could otherwise
// alias them, which stops the compiler from vectorising.
template <class F>
inline void for_active(const Exec& e, F&& f) {
  const uint32_t n = e.units;
  if (e.all_active) {
    for (uint32_t u = 0; u < n; ++u) f(u);
  } else {
    const uint8_t* cur = e.cur;
    for (uint32_t u = 0; u < n; ++u) {
      if (cur[u]) f(u);
    }
  }
}

// Unit u's element (`bytes` each) of an operand in either form: a uniform operand's first
// element is every unit's.
inline const unsigned char* unit_bytes(const Exec& e, Ref r, uint32_t u, uint32_t bytes) {
  return e.slot<unsigned char>(r.slot) + (r.uniform ? size_t(0) : size_t(u) * bytes);
}
// Unit u's value of a one-lane operand in either form.
template <class T>
inline T unit_value(const Exec& e, Ref r, uint32_t u) {
  return e.slot<T>(r.slot)[r.uniform ? 0 : u];
}

// The executor of every op whose result is uniform: runs in.inner for one unit (all of whose
// operands are uniform, so the first element of each row is that unit's) and copies the result's
// first element across its row.
uint32_t run_uniform(Exec& e, const Instr& in, uint32_t pc);

// "unit 6 of cube (0, 0, 0)"
std::string unit_text(const Exec& e, uint32_t unit);
// "kernel 'add' (unchecked): op #3 'load' in unit 6 of cube (0, 0, 0)"
std::string where(const Exec& e, const Instr& in, uint32_t unit);
// The name of the array an access reaches: "argument 0 'x'", "the shared array of op #2".
std::string array_text(const Exec& e, const Instr& in);

[[noreturn]] void fail_bounds(const Exec& e, const Instr& in, uint32_t unit, uint64_t index, uint64_t len);
[[noreturn]] void fail(const Exec& e, const Instr& in, uint32_t unit, const std::string& kind, const std::string& what);

// Reads unit u's value of a one-lane integer operand of scalar `s` as an unsigned 64-bit index
// (negative signed values become huge, hence out of range).
uint64_t read_index(const Exec& e, Ref r, ir::Scalar s, uint32_t u);

}  // namespace kiln::cpu
