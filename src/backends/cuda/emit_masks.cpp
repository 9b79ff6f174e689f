// Control flow for kernels with plane ops. A plane op combines the units the IR has active, which
// under independent thread scheduling is not what __activemask() sees, so each region that leads
// to a plane op carries its active lanes in a C variable (kiln_mN), derived from the enclosing
// region's by a ballot: an `if` splits it, a loop narrows it at each test, and a break, continue
// or terminate takes the units that left out of it. Why every *_sync call is reached by exactly
// the lanes its mask names: docs/decisions/013-plane-masks-on-cuda.md. Kernels without plane ops
// never get here: emit.cpp writes their control flow as plain C.
#include <algorithm>

#include "backends/cuda/emitter.h"

namespace kiln::cuda {

namespace {

using ir::OpKind;

bool is_jump(OpKind k) { return k == OpKind::Break || k == OpKind::Continue; }

// Whether a break of the loop whose body is `r` is in it (not counting nested loops' own).
bool breaks(const ir::Region& r) {
  for (const ir::Op& op : r.ops) {
    if (op.kind == OpKind::Break) return true;
    if (op.kind == OpKind::If && (breaks(op.regions[0]) || breaks(op.regions[1]))) return true;
  }
  return false;
}

}  // namespace

std::string Emitter::new_mask() { return "kiln_m" + std::to_string(masks_++); }

const Emitter::Flow& Emitter::flow(const ir::Op& op) const {
  static const Flow kNone;
  auto it = flow_.find(&op);
  return it == flow_.end() ? kNone : it->second;
}

Emitter::Flow Emitter::flow(const ir::Region& r) const {
  Flow all;
  for (const ir::Op& op : r.ops) {
    const Flow& f = flow(op);
    all.plane |= f.plane;
    all.jumps |= f.jumps;
    all.terminates |= f.terminates;
  }
  return all;
}

void Emitter::analyse_flow() {
  auto walk = [&](auto& self, const ir::Region& r) -> Flow {
    Flow all;
    for (const ir::Op& op : r.ops) {
      Flow f;
      f.plane = op.has(ir::kPlane);
      f.jumps = is_jump(op.kind);
      f.terminates = op.kind == OpKind::Terminate;
      for (const ir::Region& sub : op.regions) {
        Flow in = self(self, sub);
        f.plane |= in.plane;
        f.terminates |= in.terminates;
        if (op.kind == OpKind::If) f.jumps |= in.jumps;  // a loop's breaks and continues stay in it
      }
      flow_[&op] = f;
      all.plane |= f.plane;
      all.jumps |= f.jumps;
      all.terminates |= f.terminates;
    }
    return all;
  };
  masked_ = walk(walk, k_.body).plane;
  if (!masked_) flow_.clear();
}

// The kernel starts with every unit active: the lanes of the plane that exist, from the cube's
// size and the unit's position (a partial last plane has fewer).
void Emitter::entry_mask() {
  mask_ = new_mask();
  uint32_t units = static_cast<uint32_t>(k_.facts.cube_dim.total());
  if (units % t_.plane_size == 0) {
    line("u32 " + mask_ + " = 0xffffffffu;  // the active lanes of this plane");
  } else {
    line("u32 " + mask_ + " = kiln_plane_lanes(" + linear_unit() + ", " + std::to_string(units) +
         "u);  // the active lanes of this plane");
  }
}

bool Emitter::masked_control(const ir::Op& op) {
  switch (op.kind) {
    case OpKind::If:
      if (!flow(op).plane) return false;
      masked_if(op);
      return true;
    case OpKind::For:
      if (!flow(op).plane) return false;
      masked_for(op);
      return true;
    case OpKind::While:
      if (!flow(op).plane) return false;
      masked_while(op);
      return true;
    case OpKind::Break:
    case OpKind::Continue:
      if (!loop_.masked) return false;
      jump(op);
      return true;
    case OpKind::Condition:
      if (mask_.empty()) return false;
      // The units whose condition fails leave; the others are the body's lanes. Both carry on what
      // `condition` passes on: the results, or the body's arguments.
      assign(condition_to_, op.operands_from(ir::ops::Condition::forwarded));
      line("if (!kiln_narrow(" + mask_ + ", " + name(op.operand(ir::ops::Condition::condition)) + ")) break;");
      return true;
    default: return false;  // terminate is C's return also here: a returned lane votes 0
  }
}

// All lanes of the region's mask are here: the ballot of the condition is the then-region's lanes.
void Emitter::masked_if(const ir::Op& op) {
  const ir::Region& then_r = op.regions[0];
  const ir::Region& else_r = op.regions[1];
  std::vector<ir::Value> results = op.results();
  declare_carried(op, results, {});
  yield_to_ = names_of(results);
  std::string outer = mask_, c = name(op.operand(ir::ops::If::condition)), then_mask = new_mask();
  line("u32 " + then_mask + " = __ballot_sync(" + outer + ", " + c + ");");
  line("if (" + c + ") {");
  ++depth_;
  mask_ = flow(then_r).plane ? then_mask : "";
  region(then_r);
  --depth_;
  if (!else_r.ops.empty()) {
    line("} else {");
    ++depth_;
    mask_.clear();
    if (flow(else_r).plane) {
      mask_ = new_mask();
      line("u32 " + mask_ + " = " + outer + " & ~" + then_mask + ";");
    }
    region(else_r);
    --depth_;
  }
  line("}");
  mask_ = outer;
}

// The loop's lanes live in a mask of their own (the units that run its next test): a unit that
// breaks stays in the loop, skipping the rest of the iteration, until the test, where it votes
// "done" with the units whose bound is reached, and all of them leave together knowing who stays.
void Emitter::masked_for(const ir::Op& op) {
  const ir::Region& body = op.regions[0];
  std::string outer = mask_, n = std::to_string(masks_), head = new_mask();
  LoopFlags outer_loop = loop_;
  LoopFlags flags{breaks(body) ? "kiln_broke" + n : "", guarded(body) ? "kiln_skip" + n : "", true, {}, {}};
  std::vector<ir::Value> results = op.results();
  declare_carried(op, results, ir::loop_inits(op));
  flags.break_to = flags.continue_to = yield_to_ = names_of(results);
  line("u32 " + head + " = " + outer + ";  // the units that run the loop's test");
  if (!flags.broke.empty()) line("bool " + flags.broke + " = false;");
  ir::Value i = body.args.at(0);
  std::string test = name(i) + " < " + name(op.operand(ir::ops::For::upper_bound));
  if (!flags.broke.empty()) test = "!" + flags.broke + " && " + test;
  line(for_header(op, "kiln_narrow(" + head + ", " + test + ")"));
  ++depth_;
  snapshot(ir::loop_carried_args(op), results);
  loop_body(body, flags, head, true);
  --depth_;
  line("}");
  mask_ = outer;
  loop_ = outer_loop;
}

// The body of a masked loop whose test narrows `head`: the iteration's skip flag and, when the
// body holds a plane op, the mask of the units that do not skip (narrowed by re-ballots).
void Emitter::loop_body(const ir::Region& body, const LoopFlags& flags, const std::string& head, bool plane) {
  mask_ = plane ? head : "";
  if (!flags.skip.empty()) {
    // The units that skip the rest of this iteration still run the next test.
    line("bool " + flags.skip + " = false;");
    if (plane) {
      mask_ = new_mask();
      line("u32 " + mask_ + " = " + head + ";");
    }
  }
  loop_ = flags;
  region(body);
}

// As a for loop, with the test at the end of the condition region; units that broke leave at the
// top, once every unit still in the loop has heard of it.
void Emitter::masked_while(const ir::Op& op) {
  const ir::Region& cond = op.regions[0];
  const ir::Region& body = op.regions[1];
  std::string outer = mask_, n = std::to_string(masks_), head = new_mask();
  LoopFlags outer_loop = loop_;
  LoopFlags flags{breaks(body) ? "kiln_broke" + n : "", guarded(body) ? "kiln_skip" + n : "", true, {}, {}};
  std::vector<ir::Value> results = op.results();
  declare_carried(op, cond.args, ir::loop_inits(op));
  declare_carried(op, results, {});
  flags.break_to = condition_to_ = names_of(results);
  flags.continue_to = names_of(cond.args);
  line("u32 " + head + " = " + outer + ";  // the units that run the condition region");
  if (!flags.broke.empty()) line("bool " + flags.broke + " = false;");
  line("while (true) {");
  ++depth_;
  if (!flags.broke.empty()) {
    line("if (!kiln_narrow(" + head + ", !" + flags.broke + ")) break;");
  } else if (flow(body).terminates && flow(cond).plane) {
    line(head + " = __ballot_sync(" + head + ", true);  // without the units that terminated");
  }
  mask_ = head;
  loop_ = LoopFlags{};  // no break or continue in a condition region
  yield_to_.clear();
  region(cond);  // ends with the condition: `if (!kiln_narrow(head, c)) break;`
  snapshot(body.args, results);
  yield_to_ = flags.continue_to;
  loop_body(body, flags, head, flow(body).plane);
  --depth_;
  line("}");
  mask_ = outer;
  loop_ = outer_loop;
}

void Emitter::jump(const ir::Op& op) {
  assign(op.kind == OpKind::Break ? loop_.break_to : loop_.continue_to, op.operands_from(ir::ops::Jump::values));
  if (op.kind == OpKind::Break) {
    line(loop_.broke + " = " + (loop_.skip.empty() ? "" : loop_.skip + " = ") + "true;  // break");
  } else if (!loop_.skip.empty()) {
    line(loop_.skip + " = true;  // continue");
  } else {
    line("// continue: nothing else runs in this iteration");
  }
}

// Whether a break or continue in the loop body `r` skips ops that follow: an `if` holding one is
// followed by more ops in its region. Then the loop keeps a skip flag, which after_exit reads.
bool Emitter::guarded(const ir::Region& r) const {
  for (size_t i = 0; i < r.ops.size(); ++i) {
    const ir::Op& op = r.ops[i];
    if (op.has(ir::kTerminator)) return false;  // nothing after it is emitted
    if (op.kind != OpKind::If) continue;
    if (flow(op).jumps && i + 1 < r.ops.size()) return true;
    if (guarded(op.regions[0]) || guarded(op.regions[1])) return true;
  }
  return false;
}

bool Emitter::after_exit(const ir::Region& r, size_t i) {
  const Flow& f = flow(r.ops[i]);
  // Units that took a break or continue of a masked loop are still here, flagged; units that
  // terminated have returned.
  bool jumped = f.jumps && loop_.masked;
  if (!(jumped || f.terminates) || i + 1 == r.ops.size()) return false;
  bool plane_later =
      std::any_of(r.ops.begin() + std::ptrdiff_t(i) + 1, r.ops.end(), [&](const ir::Op& o) { return flow(o).plane; });
  if (plane_later) {
    line(mask_ + " = __ballot_sync(" + mask_ + ", " + (jumped ? "!" + loop_.skip : "true") +
         ");  // without the units that left");
  }
  if (!jumped) return false;
  line("if (!" + loop_.skip + ") {");
  ++depth_;
  return true;
}

}  // namespace kiln::cuda
