// Structured control flow as masks and jumps: planning and executors. Every control op at nesting
// depth d owns three masks: saved (the active units on entry), m1 (an if's else-units, a loop's
// finished units) and m2 (a loop's units that ran `continue` this iteration). Break, continue and
// terminate remove the active units and jump to the end of their region, whose closing
// instruction recomputes the active mask from the frame; a merge that leaves no unit active jumps
// on to the enclosing end, so no instruction ever runs with no unit active.
//
// Conditions and loop bounds may be uniform (one row, plan.h): executors read them with a stride
// of 0. A for loop whose bounds are uniform has a uniform induction value, advanced once.
#include <atomic>
#include <cstring>
#include <span>
#include <string>

#include "backends/cpu/lanes.h"
#include "backends/cpu/planner.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;

// cur = saved & ~terminated & ~(loop's m1 | m2); returns whether any unit stays active.
// Mask loops take __restrict pointers and a local count: they are byte loops the compiler can
// only vectorise when it knows the masks do not overlap.
bool merge(Exec& e, const uint8_t* __restrict saved, int loop) {
  const uint32_t n = e.units;
  uint8_t* __restrict cur = e.cur;
  const uint8_t* __restrict t = e.terminated;
  if (loop >= 0) {
    const uint8_t* __restrict b = e.m1(loop);
    const uint8_t* __restrict c = e.m2(loop);
    for (uint32_t u = 0; u < n; ++u) cur[u] = saved[u] & uint8_t(!t[u]) & uint8_t(!(b[u] | c[u]));
  } else {
    for (uint32_t u = 0; u < n; ++u) cur[u] = saved[u] & uint8_t(!t[u]);
  }
  return e.refresh();
}

// A one-lane operand's unit stride: 0 for a uniform one.
uint32_t stride(Ref r) { return r.uniform ? 0 : 1; }

// The condition's units go to the then-region, the others to the else-region. A uniform
// condition sends every active unit one way.
template <bool Uniform>
uint32_t if_begin(Exec& e, const Instr& in, uint32_t pc) {
  const IfBegin& x = in.as<IfBegin>();
  const uint32_t n = e.units;
  const uint8_t* __restrict c = e.slot<uint8_t>(x.cond.slot);
  uint8_t* __restrict saved = e.saved(x.depth);
  uint8_t* __restrict other = e.m1(x.depth);
  uint8_t* __restrict cur = e.cur;
  const uint8_t all = uint8_t(c[0] != 0);
  for (uint32_t u = 0; u < n; ++u) {
    uint8_t was = cur[u], t = Uniform ? all : uint8_t(c[u] != 0);  // a bool byte loaded from memory may hold 2
    saved[u] = was;
    other[u] = was & uint8_t(!t);
    cur[u] = was & t;
  }
  return e.refresh() ? pc + 1 : x.else_pc;
}

uint32_t if_else(Exec& e, const Instr& in, uint32_t pc) {
  const IfElse& x = in.as<IfElse>();
  std::memcpy(e.cur, e.m1(x.depth), e.units);
  return e.refresh() ? pc + 1 : x.end_pc;
}

// The end of an if or a loop.
uint32_t merge_instr(Exec& e, const Instr& in, uint32_t pc) {
  const Merge& x = in.as<Merge>();
  return merge(e, e.saved(x.depth), x.loop) ? pc + 1 : x.empty_target;
}

uint32_t leave_instr(Exec& e, const Instr& in, uint32_t) {
  const Leave& x = in.as<Leave>();
  uint8_t* m = in.kind == OpKind::Break ? e.m1(x.loop) : in.kind == OpKind::Continue ? e.m2(x.loop) : e.terminated;
  for (uint32_t u = 0; u < e.units; ++u) {
    m[u] |= e.cur[u];
    e.cur[u] = 0;
  }
  e.all_active = e.units == 0;
  return x.target;
}

uint32_t sync_cube(Exec& e, const Instr& in, uint32_t pc) {
  for (uint32_t u = 0; u < e.units; ++u) {
    if (e.cur[u] != uint8_t(!e.terminated[u])) {
      fail(e, in, u, "sync.divergent",
           std::string("sync_cube() reached while unit ") + std::to_string(u) + " is " +
               (e.cur[u] ? "active" : "inactive") +
               " but not every live unit of the cube is; a barrier must be reached by all units that have not "
               "terminated (move it out of the divergent If/loop)");
    }
  }
  return pc + 1;
}

uint32_t sync_plane(Exec&, const Instr&, uint32_t pc) { return pc + 1; }

// Cubes run on several host threads: a sequentially consistent fence between a cube's plain
// accesses and its relaxed atomics (atomic.cpp) orders them as a GPU's device-scope fence does.
uint32_t fence_device(Exec&, const Instr&, uint32_t pc) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return pc + 1;
}

uint32_t loop_begin(Exec& e, const Instr& in, uint32_t pc) {
  const LoopBegin& x = in.as<LoopBegin>();
  std::memcpy(e.saved(x.depth), e.cur, e.units);
  std::memset(e.m1(x.depth), 0, e.units);
  std::memset(e.m2(x.depth), 0, e.units);
  if (const uint32_t b = x.index_bytes) {  // a for loop: i = lo
    const unsigned char* lo = e.slot<unsigned char>(x.lo.slot);
    unsigned char* i = e.slot<unsigned char>(x.index.slot);
    if (x.index.uniform) {
      std::memcpy(i, lo, size_t(b) * kRowLanes);
    } else if (!x.lo.uniform) {
      std::memcpy(i, lo, size_t(b) * e.units);
    } else {
      for (uint32_t u = 0; u < e.units; ++u) std::memcpy(i + size_t(u) * b, lo, b);
    }
  }
  return pc + 1;
}

// The loop test for every unit still in the loop: i < hi. IU/HU: i/hi are uniform (a uniform i
// has uniform bounds). Written as byte loops over __restrict masks, like merge, to vectorise.
template <class I, bool IU, bool HU>
uint32_t for_test(Exec& e, const Instr& in, uint32_t pc) {
  const ForTest& x = in.as<ForTest>();
  const uint32_t n = e.units;
  const I* __restrict i = e.slot<I>(x.index.slot);
  const I* __restrict hi = e.slot<I>(x.hi.slot);
  const uint8_t* __restrict saved = e.saved(x.depth);
  const uint8_t* __restrict term = e.terminated;
  uint8_t* __restrict done = e.m1(x.depth);
  uint8_t* __restrict cur = e.cur;
  std::memset(e.m2(x.depth), 0, n);  // nobody has continued in the new iteration
  if constexpr (IU) {
    const uint8_t go_all = uint8_t(i[0] < hi[0]);
    for (uint32_t u = 0; u < n; ++u) {
      const uint8_t live = saved[u] & uint8_t(!(done[u] | term[u]));
      done[u] |= live & uint8_t(!go_all);
      cur[u] = live & go_all;
    }
  } else {
    for (uint32_t u = 0; u < n; ++u) {
      const uint8_t live = saved[u] & uint8_t(!(done[u] | term[u]));
      const uint8_t go = live & uint8_t(i[u] < (HU ? hi[0] : hi[u]));
      done[u] |= live & uint8_t(!go);
      cur[u] = go;
    }
  }
  return e.refresh() ? pc + 1 : x.end_pc;
}

// i += step for every unit still in the loop (including those that ran `continue`).
template <class I, bool IU, bool SU>
uint32_t for_next(Exec& e, const Instr& in, uint32_t) {
  const ForNext& x = in.as<ForNext>();
  using U = std::make_unsigned_t<I>;
  I* __restrict i = e.slot<I>(x.index.slot);
  const I* __restrict step = e.slot<I>(x.step.slot);
  if constexpr (IU) {
    // Every unit still in the loop holds the same i (uniform.cpp): advance the row once.
    for (uint32_t j = 0; j < kRowLanes; ++j) i[j] = static_cast<I>(static_cast<U>(i[j]) + static_cast<U>(step[j]));
    return x.test_pc;
  } else {
    const uint32_t n = e.units;
    const uint8_t* __restrict saved = e.saved(x.depth);
    const uint8_t* __restrict done = e.m1(x.depth);
    const uint8_t* __restrict term = e.terminated;
    for (uint32_t u = 0; u < n; ++u) {
      const U live = U(saved[u] & uint8_t(!(done[u] | term[u])));
      const U s = static_cast<U>(SU ? step[0] : step[u]);
      i[u] = static_cast<I>(static_cast<U>(i[u]) + s * live);
    }
    return x.test_pc;
  }
}

// Calls fn.template operator()<I>() with I the storage type of integer scalar s (a for's bounds,
// which the verifier holds to integers); Error{compile.unsupported} for any other.
template <class Fn>
InstrFn on_index_type(ir::Scalar s, Fn&& fn) {
  InstrFn f = ir::visit_scalar(s, [&]<class I>() -> InstrFn {
    if constexpr (ir::is_int_type<I>) return fn.template operator()<I>();
    else return nullptr;
  });
  return require(f, ir::OpKind::For, s);
}

uint32_t while_head(Exec& e, const Instr& in, uint32_t pc) {
  if (e.failed_cube) {
    const uint64_t failed = e.failed_cube->load(std::memory_order_relaxed);
    if (failed < e.cube_index) throw Stopped{};
    if (failed != ~uint64_t(0) && ++e.spins_after_failure > kSpinsAfterALaterFailure) throw Stopped{};
  }
  const WhileHead& x = in.as<WhileHead>();
  const uint8_t* saved = e.saved(x.depth);
  const uint8_t* done = e.m1(x.depth);
  uint8_t* cont = e.m2(x.depth);
  for (uint32_t u = 0; u < e.units; ++u) {
    cont[u] = 0;
    e.cur[u] = saved[u] & uint8_t(!done[u]) & uint8_t(!e.terminated[u]);
  }
  return e.refresh() ? pc + 1 : x.end_pc;
}

uint32_t condition_instr(Exec& e, const Instr& in, uint32_t pc) {
  const Condition& x = in.as<Condition>();
  const uint8_t* c = e.slot<uint8_t>(x.cond.slot);
  const uint32_t cs = stride(x.cond);
  uint8_t* done = e.m1(x.depth);
  for (uint32_t u = 0; u < e.units; ++u) {
    uint8_t t = uint8_t(c[u * cs] != 0);
    done[u] |= e.cur[u] & uint8_t(!t);
    e.cur[u] &= t;
  }
  return e.refresh() ? pc + 1 : x.end_pc;
}

uint32_t jump_instr(Exec&, const Instr& in, uint32_t) { return in.as<Jump>().target; }

using Pending = Planner::Pending;
using Ctx = Planner::Ctx;

// An instruction of control op `op` (number `number`: the planner's count has moved on to the
// ops of its regions).
Instr& piece(Planner& p, const ir::Op& op, uint32_t number, InstrFn fn, Args args) {
  Instr& in = p.emit_piece(op, fn, std::move(args));
  in.op_number = number;
  return in;
}

// ---- values carried by control flow (docs/ir.md) ----
// Each carried value has one varying slot, shared by the region arguments and results that hold
// it: a for's results with its body's arguments, a while's results with its body's arguments (its
// condition region's arguments have their own), an if's results. An exit copies what it carries
// into those slots for the active units right before it leaves: units that take a break or
// continue run nothing more of the iteration, so what they carried stays until the loop ends for
// them. Carried values are never uniform (uniform.cpp leaves control results and region arguments
// varying), so the slots are per unit.

std::vector<uint32_t> carried_slots(Planner& p, std::span<const ir::Value> values) {
  std::vector<uint32_t> out;
  for (ir::Value v : values) {
    if (!p.type_of(v).is_value()) {
      throw Error("compile.unsupported", "the CPU backend does not carry " + ir::to_string(p.type_of(v)) +
                                             " values yet (kernel '" + p.kernel().name + "')");
    }
    out.push_back(p.ref(v).slot);
  }
  return out;
}

// Copies operands [first, first + to.size()) of `op` into the slots `to` for the active units.
// When one of them is itself a slot written here at another place (a loop that yields its
// arguments swapped), all go through fresh slots first.
void carry_out(Planner& p, const ir::Op& op, const std::vector<uint32_t>& to, std::span<const ir::Value> values) {
  std::vector<Ref> from;
  std::vector<uint32_t> bytes;
  for (size_t i = 0; i < to.size(); ++i) {
    from.push_back(p.ref(values[i]));
    bytes.push_back(uint32_t(p.type_of(values[i]).element_bytes()));
  }
  bool clash = false;
  for (size_t i = 0; i < from.size(); ++i) {
    for (size_t j = 0; j < to.size(); ++j) clash = clash || (i != j && !from[i].uniform && from[i].slot == to[j]);
  }
  if (clash) {
    for (size_t i = 0; i < from.size(); ++i) {
      uint32_t staged = p.alloc(uint64_t(p.plan().units) * bytes[i]);
      p.emit_piece(op, &var_store_instr, VarCopy{from[i], staged, bytes[i]});
      from[i] = Ref{staged, false};
    }
  }
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i].uniform || from[i].slot != to[i]) p.emit_piece(op, &var_store_instr, VarCopy{from[i], to[i], bytes[i]});
  }
}

// Gives the op's results their slots, lets its region arguments share them, copies a loop's
// initial values in (under the mask the op starts with), and says where its exits copy to.
void begin_carried(Planner& p, const ir::Op& op) {
  std::vector<ir::Value> results = op.results();
  Planner::Carried c{op.kind, {}, {}, {}, {}};
  std::vector<uint32_t> result_slots = carried_slots(p, results);
  if (op.kind == OpKind::If) {
    c.yield_to = result_slots;
  } else if (op.kind == OpKind::For) {
    std::span<const ir::Value> args = ir::loop_carried_args(op);
    for (size_t i = 0; i < args.size(); ++i) p.bind(args[i], Ref{result_slots[i], false});
    carry_out(p, op, result_slots, ir::loop_inits(op));
    c.yield_to = c.break_to = c.continue_to = result_slots;
  } else {
    const ir::Region& body = op.regions[1];
    for (size_t i = 0; i < body.args.size(); ++i) p.bind(body.args[i], Ref{result_slots[i], false});
    std::vector<uint32_t> head = carried_slots(p, op.regions[0].args);
    carry_out(p, op, head, ir::loop_inits(op));
    c.yield_to = c.continue_to = head;
    c.break_to = c.condition_to = result_slots;
  }
  p.carried().push_back(std::move(c));
}
void end_carried(Planner& p) { p.carried().pop_back(); }

const Planner::Carried& loop_carried(Planner& p) {
  for (size_t i = p.carried().size(); i-- > 0;) {
    if (p.carried()[i].kind != OpKind::If) return p.carried()[i];
  }
  throw Error("compile.unsupported", "a break or continue outside a loop in kernel '" + p.kernel().name + "'");
}

void plan_if(Planner& p, const ir::Op& op) {
  begin_carried(p, op);
  const Ctx ctx = p.ctx();
  const uint32_t number = p.op_number();
  const size_t begin_pc = p.pc();
  const Ref cond = p.operand(op, ir::ops::If::condition);
  piece(p, op, number, cond.uniform ? &if_begin<true> : &if_begin<false>, IfBegin{cond, ctx.depth, 0});
  p.track_depth(ctx.depth);
  const Ctx inner{ctx.depth + 1, ctx.loop, -1};
  std::vector<Pending> then_ends;
  p.region(op.regions[0], inner, then_ends);
  const size_t else_pc = p.pc();
  piece(p, op, number, &if_else, IfElse{ctx.depth, 0});
  std::get<IfBegin>(p.at(begin_pc).args).else_pc = uint32_t(else_pc);
  p.patch(then_ends, uint32_t(else_pc));
  std::vector<Pending> else_ends;
  p.region(op.regions[1], inner, else_ends);
  end_carried(p);
  const size_t end_pc = p.pc();
  piece(p, op, number, &merge_instr, Merge{ctx.depth, ctx.loop, 0});
  std::get<IfElse>(p.at(else_pc).args).end_pc = uint32_t(end_pc);
  p.patch(else_ends, uint32_t(end_pc));
  p.ends().push_back(Pending{end_pc});
}

void plan_for(Planner& p, const ir::Op& op) {
  const Ctx ctx = p.ctx();
  const uint32_t number = p.op_number();
  using F = ir::ops::For;
  const ir::Scalar s = p.operand_type(op, F::lower_bound).scalar;
  const Ref i = p.ref(op.regions[0].args[0]);
  p.track_depth(ctx.depth);
  begin_carried(p, op);
  piece(p, op, number, &loop_begin,
        LoopBegin{ctx.depth, i, p.operand(op, F::lower_bound), uint32_t(ir::scalar_bytes(s))});
  const size_t test_pc = p.pc();
  const Ref hi = p.operand(op, F::upper_bound);
  piece(p, op, number,
        on_index_type(s,
                      [&]<class I>() -> InstrFn {
                        return i.uniform    ? &for_test<I, true, true>
                               : hi.uniform ? &for_test<I, false, true>
                                            : &for_test<I, false, false>;
                      }),
        ForTest{ctx.depth, i, hi, 0});
  const Ref step = p.operand(op, F::step);
  std::vector<Pending> body_ends;
  p.region(op.regions[0], Ctx{ctx.depth + 1, ctx.depth, -1}, body_ends);
  end_carried(p);
  const size_t next_pc = p.pc();
  piece(p, op, number,
        on_index_type(s,
                      [&]<class I>() -> InstrFn {
                        return i.uniform      ? &for_next<I, true, true>
                               : step.uniform ? &for_next<I, false, true>
                                              : &for_next<I, false, false>;
                      }),
        ForNext{ctx.depth, i, step, uint32_t(test_pc)});
  p.patch(body_ends, uint32_t(next_pc));
  const size_t end_pc = p.pc();
  piece(p, op, number, &merge_instr, Merge{ctx.depth, ctx.loop, 0});
  std::get<ForTest>(p.at(test_pc).args).end_pc = uint32_t(end_pc);
  p.ends().push_back(Pending{end_pc});
}

void plan_while(Planner& p, const ir::Op& op) {
  const Ctx ctx = p.ctx();
  const uint32_t number = p.op_number();
  p.track_depth(ctx.depth);
  begin_carried(p, op);
  piece(p, op, number, &loop_begin, LoopBegin{ctx.depth, {}, {}, 0});
  const size_t head_pc = p.pc();
  piece(p, op, number, &while_head, WhileHead{ctx.depth, 0});
  std::vector<Pending> cond_ends;
  p.region(op.regions[0], Ctx{ctx.depth + 1, ctx.loop, ctx.depth}, cond_ends);
  // The condition region ends with its `condition` op, the last instruction emitted.
  const size_t cond_pc = p.pc() - 1;
  p.patch(cond_ends, uint32_t(cond_pc));
  std::vector<Pending> body_ends;
  p.region(op.regions[1], Ctx{ctx.depth + 1, ctx.depth, -1}, body_ends);
  end_carried(p);
  const size_t next_pc = p.pc();
  piece(p, op, number, &jump_instr, Jump{uint32_t(head_pc)});
  p.patch(body_ends, uint32_t(next_pc));
  const size_t end_pc = p.pc();
  piece(p, op, number, &merge_instr, Merge{ctx.depth, ctx.loop, 0});
  std::get<WhileHead>(p.at(head_pc).args).end_pc = uint32_t(end_pc);
  std::get<Condition>(p.at(cond_pc).args).end_pc = uint32_t(end_pc);
  p.ends().push_back(Pending{end_pc});
}

}  // namespace

bool plan_control(Planner& p, const ir::Op& op) {
  switch (op.kind) {
    case OpKind::If: plan_if(p, op); return true;
    case OpKind::For: plan_for(p, op); return true;
    case OpKind::While: plan_while(p, op); return true;
    case OpKind::Condition:  // end_pc is patched by the while
      carry_out(p, op, p.carried().back().condition_to, op.operands_from(ir::ops::Condition::forwarded));
      p.emit(op, &condition_instr, Condition{p.operand(op, ir::ops::Condition::condition), p.ctx().while_depth, 0});
      return true;
    case OpKind::Yield:
      carry_out(p, op, p.carried().back().yield_to, op.operands_from(ir::ops::Yield::values));
      return true;
    case OpKind::Break:
    case OpKind::Continue:
    case OpKind::Terminate:
      if (op.kind == OpKind::Break) carry_out(p, op, loop_carried(p).break_to, op.operands_from(ir::ops::Jump::values));
      if (op.kind == OpKind::Continue)
        carry_out(p, op, loop_carried(p).continue_to, op.operands_from(ir::ops::Jump::values));
      p.emit(op, &leave_instr, Leave{p.ctx().loop, 0});
      p.ends().push_back(Pending{p.pc() - 1});
      return true;
    case OpKind::SyncCube: p.emit(op, &sync_cube); return true;
    case OpKind::SyncPlane: p.emit(op, &sync_plane); return true;
    case OpKind::FenceDevice: p.emit(op, &fence_device); return true;
    case OpKind::CopyAsyncCommit:
    case OpKind::CopyAsyncWait: return plan_async_copy(p, op);
    default: return plan_barrier(p, op);
  }
}

}  // namespace kiln::cpu
