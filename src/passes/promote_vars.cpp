// promote_vars: turns the tracer's Vars into SSA values. The front end records every mutable local
// as memory (var.decl, var.load, var.store), so that it needs no SSA construction; this pass does it
// once, on structured control flow. A Var assigned in a loop becomes a value the loop carries (an
// argument of its body, a result after it); one assigned in an if becomes a result of the if.
// Loops then say what they carry, which a software pipeliner (prefetch_stages, the tile layer's
// loops) must see; fold and cse see through every read; backends keep carried values in registers.
//
// Walking each region in order, the pass keeps every Var's current value (its last store on the
// way here). A load becomes that value. Around control flow:
// - if: a Var stored in either region and known before the if (or at the end of every region that
//   reaches its end) becomes a result, yielded by each region that reaches its end. A region
//   ending with break, continue or terminate yields nothing: the units that took it left.
// - for: a Var stored in the body and known before the loop is carried: the loop takes its value,
//   the body gets it as an argument and yields its value at the end, a continue carries the
//   current one to the next iteration, a break carries it out; the loop's result is the Var after
//   it.
// - while: as scf.while. The condition region takes the Vars known before the loop; `condition`
//   passes on every Var known at that point (also those the condition region assigns first): they
//   are the body's arguments and, when the loop ends there, its results. The body yields what the
//   condition region takes; continue carries the same, break what `condition` passes on.
// A Var stored in a loop but not known before it is not carried: each iteration assigns it before
// reading it (the tracer refuses a read that is not), and after the loop it is unknown again.
// A Var that is read somewhere it is not known (hand-written IR only: the tracer refuses such a
// read, Error{trace.unassigned_var}) stays in memory, untouched; so does every op on it.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kiln/passes/passes.h"

namespace kiln::passes {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Region;
using ir::Value;

// Var -> its current value, kNoValue where it is not known on every path here.
using Env = std::unordered_map<Value, Value>;

// Thrown when a Var is read where it is not known; the pass starts again keeping that Var.
struct Unknown {
  Value var;
};

class Promoter {
 public:
  Promoter(ir::Kernel& k, const std::unordered_set<Value>& keep) : k_(k), keep_(keep) {}

  // Rewrites the kernel; returns whether any Var was promoted.
  bool run() {
    replacement_.resize(k_.value_types.size());
    for (Value v = 0; v < replacement_.size(); ++v) replacement_[v] = v;
    Env env;
    region(k_.body, env);
    return promoted_;
  }

 private:
  // What a loop's break and continue carry of the Vars it promotes, in order.
  struct Loop {
    std::vector<Value> breaks;     // a for's carried Vars; a while's, as `condition` passes them on
    std::vector<Value> continues;  // a for's carried Vars; a while's condition-region args
  };

  bool promotable(Value var) const { return !keep_.count(var); }

  Value replaced(Value v) const { return v < replacement_.size() ? replacement_[v] : v; }

  ir::Type element(Value var) const { return k_.type_of(var).element(); }

  // The promotable Vars of `env` stored anywhere inside `op`, in the order they were declared.
  std::vector<Value> stored_inside(const Op& op, const Env& env) const {
    std::vector<Value> vars;
    for (const Region& r : op.regions) {
      ir::walk(r, [&](const Op& o) {
        if (o.kind != OpKind::VarStore) return;
        const Value var = o.operand(ir::ops::VarStore::var);
        if (env.count(var) && promotable(var)) vars.push_back(var);
      });
    }
    std::sort(vars.begin(), vars.end());
    vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
    return vars;
  }

  static bool ends_elsewhere(const Region& r) {
    if (r.ops.empty()) return false;
    OpKind k = r.ops.back().kind;
    return k == OpKind::Break || k == OpKind::Continue || k == OpKind::Terminate;
  }

  // Adds `values` to the yield that ends `r`, making one if the region reaches its end without.
  static void yield(Region& r, const std::vector<Value>& values) {
    if (values.empty()) return;
    if (r.ops.empty() || !r.ops.back().has(ir::kTerminator)) {
      Op y;
      y.kind = OpKind::Yield;
      r.ops.push_back(std::move(y));
    }
    Op& y = r.ops.back();
    if (y.kind != OpKind::Yield) return;  // break, continue, terminate carry their own values
    y.operands.insert(y.operands.end(), values.begin(), values.end());
  }

  static std::vector<Value> values_of(const std::vector<Value>& vars, const Env& env) {
    std::vector<Value> out;
    for (Value var : vars) out.push_back(env.at(var));
    return out;
  }

  void region(Region& r, Env& env) {
    std::vector<Value> declared;
    std::vector<Op> out;
    out.reserve(r.ops.size());
    for (Op& op : r.ops) {
      for (Value& v : op.operands) v = replaced(v);
      switch (op.kind) {
        case OpKind::VarDecl:
          if (promotable(op.result)) {
            env[op.result] = ir::kNoValue;
            declared.push_back(op.result);
            promoted_ = true;
            continue;
          }
          break;
        case OpKind::VarStore:
          if (promotable(op.operand(ir::ops::VarStore::var))) {
            env[op.operand(ir::ops::VarStore::var)] = op.operand(ir::ops::VarStore::value);
            continue;
          }
          break;
        case OpKind::VarLoad:
          if (const Value var = op.operand(ir::ops::VarLoad::var); promotable(var)) {
            auto it = env.find(var);
            if (it == env.end() || it->second == ir::kNoValue) throw Unknown{var};
            replacement_[op.result] = it->second;
            continue;
          }
          break;
        case OpKind::If: if_op(op, env); break;
        case OpKind::For: for_op(op, env); break;
        case OpKind::While: while_op(op, env); break;
        case OpKind::Break:
        case OpKind::Continue:
          if (!loops_.empty()) {
            const Loop& l = *loops_.back();
            std::vector<Value> carried = values_of(op.kind == OpKind::Break ? l.breaks : l.continues, env);
            op.operands.insert(op.operands.end(), carried.begin(), carried.end());
          }
          break;
        default: break;
      }
      out.push_back(std::move(op));
    }
    r.ops = std::move(out);
    for (Value var : declared) env.erase(var);
  }

  void if_op(Op& op, Env& env) {
    std::vector<Value> vars = stored_inside(op, env);
    Env then_env = env, else_env = env;
    region(op.regions[0], then_env);
    region(op.regions[1], else_env);
    bool then_reaches = !ends_elsewhere(op.regions[0]), else_reaches = !ends_elsewhere(op.regions[1]);
    if (!then_reaches && !else_reaches) return;  // nothing after the if runs; the Vars stay as they were
    std::vector<Value> then_yield, else_yield;
    for (Value var : vars) {
      Value before = env.at(var), t = then_env.at(var), e = else_env.at(var);
      if ((then_reaches && t == ir::kNoValue) || (else_reaches && e == ir::kNoValue)) {
        env[var] = ir::kNoValue;
      } else if ((!then_reaches || t == before) && (!else_reaches || e == before)) {
        // unchanged on every path that gets past the if
      } else {
        // A result even when one region reaches the end: what it stored is not visible after it.
        env[var] = k_.add_result(op, element(var));
        if (then_reaches) then_yield.push_back(t);
        if (else_reaches) else_yield.push_back(e);
      }
    }
    if (then_reaches) yield(op.regions[0], then_yield);
    if (else_reaches) yield(op.regions[1], else_yield);
  }

  void for_op(Op& op, Env& env) {
    std::vector<Value> stored = stored_inside(op, env), carried;
    Region& body = op.regions[0];
    Env body_env = env;
    for (Value var : stored) {
      if (env.at(var) == ir::kNoValue) continue;
      carried.push_back(var);
      op.operands.push_back(env.at(var));
      Value arg = k_.new_value(element(var));
      body.args.push_back(arg);
      body_env[var] = arg;
    }
    Loop loop{carried, carried};
    loops_.push_back(&loop);
    region(body, body_env);
    loops_.pop_back();
    yield(body, values_of(carried, body_env));
    for (Value var : stored) env[var] = ir::kNoValue;
    for (Value var : carried) env[var] = k_.add_result(op, element(var));
  }

  void while_op(Op& op, Env& env) {
    std::vector<Value> stored = stored_inside(op, env), taken, passed;
    Region& cond = op.regions[0];
    Region& body = op.regions[1];
    Env cond_env = env;
    for (Value var : stored) {
      cond_env[var] = ir::kNoValue;
      if (env.at(var) == ir::kNoValue) continue;
      taken.push_back(var);
      op.operands.push_back(env.at(var));
      Value arg = k_.new_value(element(var));
      cond.args.push_back(arg);
      cond_env[var] = arg;
    }
    region(cond, cond_env);
    Op& condition = cond.ops.back();
    Env body_env = env;
    for (Value var : stored) {
      body_env[var] = ir::kNoValue;
      if (cond_env.at(var) == ir::kNoValue) continue;
      passed.push_back(var);
      condition.operands.push_back(cond_env.at(var));
      Value arg = k_.new_value(element(var));
      body.args.push_back(arg);
      body_env[var] = arg;
    }
    Loop loop{passed, taken};
    loops_.push_back(&loop);
    region(body, body_env);
    loops_.pop_back();
    yield(body, values_of(taken, body_env));
    for (Value var : stored) env[var] = ir::kNoValue;
    for (Value var : passed) env[var] = k_.add_result(op, element(var));
  }

  ir::Kernel& k_;
  const std::unordered_set<Value>& keep_;
  std::vector<Value> replacement_;  // by value: a promoted load's value
  std::vector<Loop*> loops_;        // the loops around the op being rewritten, innermost last
  bool promoted_ = false;
};

}  // namespace

bool promote_vars(ir::Kernel& k) {
  // A Var read where it is not known is kept in memory, and the rewrite starts over from the
  // kernel as it was: each start keeps one more Var, so this ends.
  bool any = false;
  ir::walk(k.body, [&](const Op& op) { any = any || op.kind == OpKind::VarDecl; });
  if (!any) return false;
  std::unordered_set<Value> keep;
  while (true) {
    ir::Kernel attempt = k;
    try {
      bool changed = Promoter(attempt, keep).run();
      k = std::move(attempt);
      return changed;
    } catch (const Unknown& u) {
      keep.insert(u.var);
    }
  }
}

}  // namespace kiln::passes
