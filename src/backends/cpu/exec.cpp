// Error messages of the CPU backend: each names the kernel, the op, the unit and the array.
#include <string>

#include "backends/cpu/exec.h"
#include "kiln/error.h"

namespace kiln::cpu {

std::string unit_text(const Exec& e, uint32_t unit) {
  return "unit " + std::to_string(unit) + " of cube (" + std::to_string(e.cube_pos.x) + ", " +
         std::to_string(e.cube_pos.y) + ", " + std::to_string(e.cube_pos.z) + ")";
}

std::string where(const Exec& e, const Instr& in, uint32_t unit) {
  return "kernel '" + e.plan->kernel_name + "' (" + std::string(ir::to_string(e.plan->facts.mode)) + "): op #" +
         std::to_string(in.op_number) + " '" + std::string(ir::op_name(in.kind)) + "' in " + unit_text(e, unit);
}

std::string array_text(const Exec& e, const Instr& in) {
  switch (in.space) {
    case ArraySpace::Global: {
      const ir::Param& p = e.plan->params[in.a];
      return "argument " + std::to_string(in.a) + " '" + p.name + "'";
    }
    case ArraySpace::Shared: return "the shared array of op #" + std::to_string(in.array_op);
    case ArraySpace::Local: return "the local array of op #" + std::to_string(in.array_op);
  }
  return "an array";
}

void fail_bounds(const Exec& e, const Instr& in, uint32_t unit, uint64_t index, uint64_t len) {
  std::string shown = ir::is_signed_int(in.scalar2) ? std::to_string(int64_t(index)) : std::to_string(index);
  throw Error("bounds.out_of_range", where(e, in, unit) + ": index " + shown + " is out of range of " +
                                         array_text(e, in) + " (length " + std::to_string(len) + ")");
}

void fail(const Exec& e, const Instr& in, uint32_t unit, const std::string& kind, const std::string& what) {
  throw Error(kind, where(e, in, unit) + ": " + what);
}

}  // namespace kiln::cpu
