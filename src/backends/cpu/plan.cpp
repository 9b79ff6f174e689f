// Builds the CPU plan: gives every value a register slot (a row when it is uniform, analysis.h)
// and offers each op to the family files, which emit its instructions (planner.h).
#include <cstring>

#include "backends/cpu/analysis.h"
#include "backends/cpu/exec.h"
#include "backends/cpu/planner.h"
#include "kiln/error.h"

namespace kiln::cpu {

namespace {

constexpr uint32_t kSlotAlign = 64;

using FamilyPlanner = bool (*)(Planner&, const ir::Op&);

// The family file that plans an op, by its family in the op table (op_kinds.h): a new op of an
// existing family needs one case in that file and nothing here.
FamilyPlanner planner_of(ir::OpFamily f) {
  switch (f) {
    case ir::OpFamily::Constant:
    case ir::OpFamily::Vector:
    case ir::OpFamily::Builtin:
    case ir::OpFamily::Var: return plan_values;
    case ir::OpFamily::Arith:
    case ir::OpFamily::Bitwise:
    case ir::OpFamily::Compare:
    case ir::OpFamily::Select: return plan_arith;
    case ir::OpFamily::Cast: return plan_cast;
    case ir::OpFamily::Math: return plan_math;
    case ir::OpFamily::Array:
    case ir::OpFamily::Memory: return plan_memory;
    case ir::OpFamily::Atomic: return plan_atomic;
    case ir::OpFamily::Sync:
    case ir::OpFamily::Control: return plan_control;
    case ir::OpFamily::Plane: return plan_plane;
    case ir::OpFamily::Debug: return plan_debug;
    case ir::OpFamily::Tile:
      return nullptr;  // lower_tiles (passes/tile) rewrites tile ops first
    // Tensor cores: lower_tiles emits mma.sync for CUDA targets only, the CPU's products being
    // exact loops of ordinary ops (docs/decisions/019-tile-layer.md); the warp-group product is a
    // user's op, which the CPU runs (wgmma.cpp).
    case ir::OpFamily::Matrix: return plan_wgmma;
  }
  return nullptr;
}

}  // namespace

Planner::Planner(const ir::Kernel& k, const PlanOptions& options) : k_(k) {
  if (options.uniform_values) uniform_ = uniform_values(k);
  else uniform_.assign(k.value_types.size(), 0);
}

Plan Planner::run() {
  p_.kernel_name = k_.name;
  p_.facts = k_.facts;
  p_.params = k_.params;
  p_.units = static_cast<uint32_t>(k_.facts.cube_dim.total());
  for (size_t i = 0; i < k_.params.size(); ++i) {
    const ir::Param& prm = k_.params[i];
    if (prm.type.is_global()) {
      define_array(prm.value, ArrayRef{ArraySpace::Global, uint32_t(i), 0, 0});
    } else if (!prm.type.is_value()) {
      throw Error("compile.unsupported", "kernel '" + k_.name + "': parameter '" + prm.name + "' has type " +
                                             ir::to_string(prm.type) +
                                             "; the CPU backend takes buffers, tensors and scalars");
    } else {
      p_.scalar_params.push_back({uint32_t(i), define(prm.value)});
    }
  }
  std::vector<Pending> ends;
  region(k_.body, Ctx{}, ends);
  patch(ends, uint32_t(pc()));
  p_.register_bytes = next_slot_;
  p_.frame_depth = uint32_t(max_depth_ + 1);
  FailureFacts f = failure_facts(k_, uniform_);
  p_.failing_ops = std::move(f.failing_ops);
  p_.restore_params = std::move(f.restore_params);
  return std::move(p_);
}

uint32_t Planner::alloc(uint64_t bytes) {
  uint64_t size = (bytes + kSlotAlign - 1) / kSlotAlign * kSlotAlign;
  if (next_slot_ + size > (uint64_t(1) << 31)) {
    throw Error("compile.unsupported", "kernel '" + k_.name + "' needs more than 2 GiB of CPU registers per cube");
  }
  uint32_t off = next_slot_;
  next_slot_ += uint32_t(size);
  return off;
}

Ref Planner::define(ir::Value v) {
  const ir::Type& t = k_.type_of(v);
  Ref r;
  r.uniform = uniform_[v] != 0;
  r.slot = alloc(r.uniform ? uint64_t(kRowLanes) * uint64_t(ir::scalar_bytes(t.scalar))
                           : uint64_t(p_.units) * uint64_t(t.element_bytes()));
  if (r.uniform) ++p_.uniform_values;
  slots_[v] = r;
  return r;
}

Ref Planner::ref(ir::Value v) {
  auto it = slots_.find(v);
  return it != slots_.end() ? it->second : define(v);
}

Instr& Planner::emit_piece(const ir::Op& op, InstrFn fn, Args args) {
  Instr in;
  in.fn = fn;
  in.kind = op.kind;
  in.op_number = number_;
  in.args = std::move(args);
  p_.code.push_back(std::move(in));
  return p_.code.back();
}

Instr& Planner::emit(const ir::Op& op, InstrFn fn, Args args) {
  Instr& in = emit_piece(op, fn, std::move(args));
  if (op.result != ir::kNoValue) {
    in.dst = ref(op.result);
    in.dst_width = op.type.width;
    in.dst_lane_bytes = uint32_t(ir::scalar_bytes(op.type.scalar));
    if (in.dst.uniform) {
      in.inner = fn;
      in.fn = &run_uniform;
    }
  }
  return in;
}

void Planner::constant(const ir::Op& op, const void* lane_bytes) {
  Ref r = ref(op.result);
  const size_t lane = size_t(ir::scalar_bytes(op.type.scalar));
  const size_t lanes = r.uniform ? kRowLanes : size_t(p_.units) * op.type.width;
  Plan::Constant c{r.slot, std::vector<unsigned char>(lane * lanes)};
  for (size_t i = 0; i < lanes; ++i) std::memcpy(c.bytes.data() + i * lane, lane_bytes, lane);
  p_.constants.push_back(std::move(c));
}

void Planner::region(const ir::Region& r, Ctx ctx, std::vector<Pending>& ends) {
  const Ctx outer_ctx = ctx_;
  std::vector<Pending>* outer_ends = ends_;
  ctx_ = ctx;
  ends_ = &ends;
  for (ir::Value a : r.args) ref(a);
  for (const ir::Op& op : r.ops) {
    ++number_;
    plan_op(op);
  }
  ctx_ = outer_ctx;
  ends_ = outer_ends;
}

void Planner::patch(const std::vector<Pending>& list, uint32_t target) {
  for (const Pending& j : list) {
    Args& a = p_.code[j.pc].args;
    if (auto* leave = std::get_if<Leave>(&a)) leave->target = target;
    else std::get<Merge>(a).empty_target = target;
  }
}

void Planner::plan_op(const ir::Op& op) {
  if (op.type.kind == ir::TypeKind::Tile || ir::op_family(op.kind) == ir::OpFamily::Tile) {
    std::string makes = op.type.is_tile() ? " makes a " + ir::to_string(op.type) : "";
    throw Error("compile.unsupported", "the CPU backend runs no tile ops (lower_tiles rewrites them): op #" +
                                           std::to_string(number_) + " '" + std::string(ir::op_name(op.kind)) + "'" +
                                           makes + " (kernel '" + k_.name + "')");
  }
  if (FamilyPlanner family = planner_of(ir::op_family(op.kind)); family && family(*this, op)) return;
  throw Error("compile.unsupported", "the CPU backend has no '" + std::string(ir::op_name(op.kind)) + "' (kernel '" +
                                         k_.name + "', op #" + std::to_string(number_) + ")");
}

Plan build_plan(const ir::Kernel& k, const PlanOptions& options) { return Planner(k, options).run(); }

}  // namespace kiln::cpu
