// The reducer: shrinks a program that disagrees to a small one that still does, by edits that
// keep it a valid kernel (the verifier is asked after each): dropping a store; giving an op's uses
// one of its operands of the same type (or a constant) in its place; deciding an if by a constant
// condition; cutting a loop to no trips; and then removing what nothing uses. Each edit stays
// only if the program still disagrees, and the edits go round until none does. Then the launch
// shrinks to one cube and to fewer units where that still disagrees. A candidate the evaluator
// cannot vouch for (a fuzz.* error of its own) is never kept.
#include <cstdio>
#include <functional>
#include <optional>
#include <utility>

#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "program.h"

namespace kiln::fuzz {

namespace {

using ir::OpKind;

// Every op of the kernel, outer ones before the ops of their regions, as (region, index) places.
struct Place {
  ir::Region* region;
  size_t index;
};
void places(ir::Region& r, std::vector<Place>& out) {
  for (size_t i = 0; i < r.ops.size(); ++i) {
    out.push_back({&r, i});
    for (ir::Region& sub : r.ops[i].regions) places(sub, out);
  }
}
std::vector<Place> places(ir::Kernel& k) {
  std::vector<Place> out;
  places(k.body, out);
  return out;
}

void replace_uses(ir::Region& r, ir::Value from, ir::Value to) {
  for (ir::Op& op : r.ops) {
    for (ir::Value& v : op.operands) {
      if (v == from) v = to;
    }
    for (ir::Region& sub : op.regions) replace_uses(sub, from, to);
  }
}

void count_uses(const ir::Region& r, std::vector<uint32_t>& uses) {
  for (const ir::Op& op : r.ops) {
    for (ir::Value v : op.operands) ++uses[v];
    for (const ir::Region& sub : op.regions) count_uses(sub, uses);
  }
}

// Whether the op does more than give its results: writes, prints, jumps, or meets other units
// (a barrier that shared memory behind it needs, though it gives nothing).
bool writes(const ir::Op& op) {
  if (op.kind == OpKind::Store || op.has(ir::kWritesMemory) || op.has(ir::kSideEffect) || op.has(ir::kTerminator) ||
      op.has(ir::kBarrier))
    return true;
  for (const ir::Region& r : op.regions) {
    for (const ir::Op& inner : r.ops) {
      if (inner.kind != OpKind::Yield && writes(inner)) return true;
    }
  }
  return false;
}

// Removes ops whose results nothing uses and that write nothing, until none is left.
void sweep(ir::Kernel& k) {
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<uint32_t> uses(k.value_types.size(), 0);
    count_uses(k.body, uses);
    std::function<void(ir::Region&)> walk = [&](ir::Region& r) {
      for (size_t i = r.ops.size(); i-- > 0;) {
        ir::Op& op = r.ops[i];
        for (ir::Region& sub : op.regions) walk(sub);
        if (op.kind == OpKind::Yield || writes(op)) continue;
        bool used = false;
        for (size_t j = 0; j < op.result_count(); ++j) used |= uses[op.result_at(j)] > 0;
        if (!used) {
          r.ops.erase(r.ops.begin() + long(i));
          changed = true;
        }
      }
    };
    walk(k.body);
  }
}

bool valid(const ir::Kernel& k) {
  try {
    ir::verify(k, "reduce");
    return true;
  } catch (const Error&) {
    return false;
  }
}

// Whether the evaluator cannot vouch for the candidate at all: its own limits (a race in shared
// memory, a runaway loop, an op it does not run: fuzz.*), or, on a device other than the CPU, an
// error there that the IR leaves unspecified. An edit that makes one is not a reduction.
bool evaluator_refuses(const Evaluation& e, const std::string& device) {
  const std::string& kind = e.outcome.error_kind;
  if (kind.rfind("fuzz.", 0) == 0) return true;
  return device != "cpu" && (kind == "bounds.out_of_range" || kind == "arith.division_by_zero");
}

// The verdict on a valid candidate the evaluator vouches for; nullopt for any other.
std::optional<Verdict> verdict(const Program& p, const RunOptions& o) {
  if (!valid(p.kernel)) return std::nullopt;
  Evaluation own = evaluate(p);
  if (evaluator_refuses(own, o.device)) return std::nullopt;
  Evaluation want = expected(p, o, std::move(own));
  const Outcome got = run_on_device(p, o.device);
  relax_for_device(want, got, o.device);
  Verdict v = compare(p, want, got);
  // The kinds of the errors on each side, where there are any, say what differs.
  if (!v.agree && (!want.outcome.error_kind.empty() || !got.error_kind.empty()))
    v.first_difference = "errors: " + want.outcome.error_kind + " / " + got.error_kind;
  return v;
}

// What a disagreement is about: its output parameter and element ("out_f32[7]"), or the two error
// kinds. A candidate must keep it, so that the reduction does not drift to another difference
// (an index out of range that an edit made, say).
std::string what_differs(const Program& p, const RunOptions& o) {
  const std::optional<Verdict> v = verdict(p, o);
  if (!v || v->agree) return "";
  const std::string& d = v->first_difference;
  if (d.rfind("errors: ", 0) == 0) return d;
  return d.substr(0, d.find(']') + 1);
}

}  // namespace

bool disagrees(const Program& p, const RunOptions& o) {
  const std::optional<Verdict> v = verdict(p, o);
  return v && !v->agree;
}

Program reduce(Program p, const RunOptions& o, int* tries) {
  int n = 0;
  const std::string target = what_differs(p, o);
  auto keep_if = [&](Program& candidate) {
    ++n;
    sweep(candidate.kernel);
    if (target.empty() || what_differs(candidate, o) != target) return false;
    p = std::move(candidate);
    return true;
  };
  for (bool progress = true; progress;) {
    progress = false;
    const size_t count = places(p.kernel).size();
    for (size_t at = 0; at < count; ++at) {
      // Each edit on a copy, the op found again by its place in the order.
      for (int edit = 0; edit < 5; ++edit) {
        Program c = p;
        std::vector<Place> ps = places(c.kernel);
        if (at >= ps.size()) break;
        ir::Op& op = ps[at].region->ops[ps[at].index];
        bool made = false;
        if (edit == 0 && op.kind == OpKind::Store) {
          ps[at].region->ops.erase(ps[at].region->ops.begin() + long(ps[at].index));
          made = true;
        } else if (edit == 1 && op.result_count() == 1 && op.kind != OpKind::Const && !op.has(ir::kControl)) {
          for (ir::Value v : op.operands) {
            if (c.kernel.value_types[v] == op.type) {
              replace_uses(c.kernel.body, op.result, v);
              made = true;
              break;
            }
          }
        } else if (edit == 2 && op.result_count() == 1 && op.type.is_scalar() && op.kind != OpKind::Const &&
                   !op.has(ir::kControl)) {
          // The result as a constant of its type: zero (false).
          ir::Op k;
          k.kind = OpKind::Const;
          k.type = op.type;
          k.result = op.result;
          const ir::Scalar s = op.type.scalar;
          k.attrs = {ir::Attr{ir::AttrKey::Value, s == ir::Scalar::Bool ? ir::AttrValue::of_bool(false)
                                                  : ir::is_float(s)     ? ir::AttrValue::of_float(0.0)
                                                                        : ir::AttrValue::of_int(0)}};
          op = std::move(k);
          made = true;
        } else if ((edit == 3 || edit == 4) && op.kind == OpKind::If) {
          // An if decided: its condition the constant true (edit 3), then false (edit 4).
          ir::Region& r = *ps[at].region;
          const size_t i = ps[at].index;
          ir::Op k;
          k.kind = OpKind::Const;
          k.type = ir::Type::scalar_of(ir::Scalar::Bool);
          k.result = c.kernel.new_value(k.type);
          k.attrs = {ir::Attr{ir::AttrKey::Value, ir::AttrValue::of_bool(edit == 3)}};
          r.ops[i].operands[0] = k.result;
          r.ops.insert(r.ops.begin() + long(i), std::move(k));
          made = true;
        } else if (edit == 3 && op.kind == OpKind::For) {
          op.operands[1] = op.operands[0];  // a loop of no trips: its upper bound its lower
          made = true;
        }
        if (made && keep_if(c)) progress = true;
      }
    }
  }
  // The launch: one cube, then fewer units.
  for (uint32_t units : {1u, 2u, 32u, 33u}) {
    Program c = p;
    if (c.cubes == 1 && units >= c.units) break;
    c.cubes = 1;
    if (units < c.units) {
      c.units = units;
      c.kernel.facts.cube_dim = ir::Dim3{units, 1, 1};
      for (size_t i = 0; i < c.args.size(); ++i) {
        if (c.per_unit[i]) c.args[i].resize(c.args[i].size() / (p.cubes * p.units) * units);
      }
    } else {
      for (size_t i = 0; i < c.args.size(); ++i) {
        if (c.per_unit[i]) c.args[i].resize(c.args[i].size() / p.cubes);
      }
    }
    if (keep_if(c)) break;
  }
  if (tries) *tries = n;
  return p;
}

}  // namespace kiln::fuzz

namespace kiln::fuzz {

std::string reproducer(const Program& p, const std::string& note) {
  std::string s = "// kiln_fuzz reproducer: " + note + "\n";
  s += "// family " + std::string(family_name(p.family)) + " seed " + std::to_string(p.seed) + " cubes " +
       std::to_string(p.cubes) + " units " + std::to_string(p.units) + (p.checked ? " checked" : " unchecked") + "\n";
  return s + ir::print(p.kernel);
}

Program replay(const std::string& text) {
  const size_t at = text.find("// family ");
  if (at == std::string::npos)
    throw Error("fuzz.bad_reproducer", "no '// family ... seed ... cubes ... units ...' line");
  char family[16] = {0}, mode[16] = {0};
  unsigned long long seed = 0;
  unsigned cubes = 0, units = 0;
  if (std::sscanf(text.c_str() + at, "// family %15s seed %llu cubes %u units %u %15s", family, &seed, &cubes, &units,
                  mode) != 5 ||
      std::string(family) != "simt" || cubes == 0 || units == 0) {
    throw Error("fuzz.bad_reproducer",
                "the '// family' line does not read as 'family simt seed N cubes C units U checked'");
  }
  // The inputs come back from the seed's program, parameter by parameter by name: the text may
  // hold fewer (a reproducer kept from an older generator, which made fewer buffers).
  const Program generated = generate_simt(seed);
  const uint32_t had = generated.cubes * generated.units;
  Program p = generated;
  p.kernel = ir::parse(text);
  p.cubes = cubes;
  p.units = units;
  p.checked = std::string(mode) == "checked";
  p.args.clear();
  p.is_output.clear();
  p.per_unit.clear();
  for (const ir::Param& param : p.kernel.params) {
    size_t j = 0;
    while (j < generated.kernel.params.size() && generated.kernel.params[j].name != param.name) ++j;
    if (j == generated.kernel.params.size() || !(generated.kernel.params[j].type == param.type))
      throw Error("fuzz.bad_reproducer",
                  "seed " + std::to_string(seed) + " makes no parameter '" + param.name + "' of the reproducer's type");
    p.args.push_back(generated.args[j]);
    p.is_output.push_back(generated.is_output[j]);
    p.per_unit.push_back(generated.per_unit[j]);
    if (p.per_unit.back()) p.args.back().resize(p.args.back().size() / had * cubes * units, 0xa5);
  }
  return p;
}

}  // namespace kiln::fuzz
