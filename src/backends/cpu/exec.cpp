// What every executor shares: uniform results (run_uniform), index reads, and error messages,
// each naming the kernel, the op, the unit and the array.
#include "backends/cpu/exec.h"

#include <string>

#include "kiln/error.h"

namespace kiln::cpu {

namespace {

// Fills a row from its first element: copies of `bytes` until there are `count`.
void replicate(unsigned char* row, size_t bytes, size_t count) {
  for (size_t have = 1; have < count;) {
    size_t n = std::min(have, count - have);
    std::memcpy(row + have * bytes, row, n * bytes);
    have += n;
  }
}

}  // namespace

uint32_t run_uniform(Exec& e, const Instr& in, uint32_t pc) {
  uint8_t* const cur = e.cur;
  const uint32_t units = e.units;
  const bool all_active = e.all_active;
  e.cube_cur = cur;
  e.cube_units = units;
  e.cur = &e.one;
  e.units = 1;
  e.all_active = true;
  const uint32_t next = in.inner(e, in, pc);
  e.cur = cur;
  e.units = units;
  e.all_active = all_active;
  e.cube_cur = nullptr;
  replicate(e.regs + in.dst.slot, size_t(in.dst_width) * in.dst_lane_bytes, kRowLanes / in.dst_width);
  return next;
}

uint64_t read_index(const Exec& e, Ref r, ir::Scalar s, uint32_t u) {
  const uint32_t i = r.uniform ? 0 : u;
  // A signed index sign-extends to 64 bits (a negative one reads as a huge one, out of range).
  return ir::visit_scalar(s, [&]<class T>() -> uint64_t {
    if constexpr (ir::is_int_type<T> && std::is_signed_v<T>) return uint64_t(int64_t(e.slot<T>(r.slot)[i]));
    else if constexpr (ir::is_int_type<T>) return uint64_t(e.slot<T>(r.slot)[i]);
    else return ~uint64_t(0);
  });
}

std::string unit_text(const Exec& e, uint32_t unit) {
  return "unit " + std::to_string(unit) + " of cube (" + std::to_string(e.cube_pos.x) + ", " +
         std::to_string(e.cube_pos.y) + ", " + std::to_string(e.cube_pos.z) + ")";
}

std::string where(const Exec& e, const Instr& in, uint32_t unit) {
  if (e.cube_cur) {
    // A uniform op fails for every active unit alike; the unit loop of a varying op would have
    // stopped at the first.
    unit = 0;
    while (unit + 1 < e.cube_units && !e.cube_cur[unit]) ++unit;
  }
  return "kernel '" + e.plan->kernel_name + "' (" + std::string(ir::to_string(e.plan->facts.mode)) + "): op #" +
         std::to_string(in.op_number) + " '" + std::string(ir::op_name(in.kind)) + "' in " + unit_text(e, unit);
}

std::string array_text(const Exec& e, const Instr& in) {
  const Access& a = in.as<Access>();
  switch (a.space) {
    case ArraySpace::Global: {
      const ir::Param& p = e.plan->params[a.array];
      return "argument " + std::to_string(a.array) + " '" + p.name + "'";
    }
    case ArraySpace::Shared: return "the shared array of op #" + std::to_string(a.alloc_op);
    case ArraySpace::Local: return "the local array of op #" + std::to_string(a.alloc_op);
  }
  return "an array";
}

void fail_bounds(const Exec& e, const Instr& in, uint32_t unit, uint64_t index, uint64_t len) {
  const Access& a = in.as<Access>();
  std::string shown = ir::is_signed_int(a.index_type) ? std::to_string(int64_t(index)) : std::to_string(index);
  throw Error("bounds.out_of_range", where(e, in, unit) + ": index " + shown + " is out of range of " +
                                         array_text(e, in) + " (length " + std::to_string(len) + ")");
}

void fail(const Exec& e, const Instr& in, uint32_t unit, const std::string& kind, const std::string& what) {
  throw Error(kind, where(e, in, unit) + ": " + what);
}

}  // namespace kiln::cpu
