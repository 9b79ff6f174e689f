// The reducer: shrinks a program that disagrees to a small one that still does, by edits that
// keep it a valid kernel (the verifier is asked after each): dropping a store; giving an op's uses
// one of its operands of the same type (or a constant) in its place; deciding an if by a constant
// condition; cutting a loop to no trips; and then removing what nothing uses. Each edit stays
// only if the program still disagrees, and the edits go round until none does. Then the launch
// shrinks to one cube and to fewer units where that still disagrees.
#include <cstdio>
#include <functional>

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

bool writes(const ir::Op& op) {
  if (op.kind == OpKind::Store || op.has(ir::kWritesMemory) || op.has(ir::kSideEffect) || op.has(ir::kTerminator)) return true;
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

}  // namespace

bool disagrees(const Program& p, const std::string& device) {
  if (!valid(p.kernel)) return false;
  const Evaluation want = evaluate(p);
  const Outcome got = run_on_device(p, device);
  return !compare(p, want, got).agree;
}

namespace {

// What a disagreement is about: its output parameter, or the two error kinds. A candidate must
// keep it, so that the reduction does not drift to another difference (an index out of range
// that an edit made, say).
std::string what_differs(const Program& p, const std::string& device) {
  if (!valid(p.kernel)) return "";
  const Evaluation want = evaluate(p);
  const Outcome got = run_on_device(p, device);
  const Verdict v = compare(p, want, got);
  if (v.agree) return "";
  if (!want.outcome.error_kind.empty() || !got.error_kind.empty()) return want.outcome.error_kind + " / " + got.error_kind;
  return v.first_difference.substr(0, v.first_difference.find('['));
}

}  // namespace

Program reduce(Program p, const std::string& device, int* tries) {
  int n = 0;
  const std::string target = what_differs(p, device);
  auto keep_if = [&](Program& candidate) {
    ++n;
    sweep(candidate.kernel);
    if (target.empty() || what_differs(candidate, device) != target) return false;
    p = std::move(candidate);
    return true;
  };
  for (bool progress = true; progress;) {
    progress = false;
    const size_t count = places(p.kernel).size();
    for (size_t at = 0; at < count; ++at) {
      // Each edit on a copy, the op found again by its place in the order.
      for (int edit = 0; edit < 4; ++edit) {
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
                                                  : ir::is_float(s)    ? ir::AttrValue::of_float(0.0)
                                                                       : ir::AttrValue::of_int(0)}};
          op = std::move(k);
          made = true;
        } else if (edit == 3 && (op.kind == OpKind::If || op.kind == OpKind::For)) {
          // An if decided (its condition a constant), a loop of no trips (its upper bound its lower).
          ir::Region& r = *ps[at].region;
          const size_t i = ps[at].index;
          if (op.kind == OpKind::If) {
            ir::Op k;
            k.kind = OpKind::Const;
            k.type = ir::Type::scalar_of(ir::Scalar::Bool);
            k.result = c.kernel.new_value(k.type);
            k.attrs = {ir::Attr{ir::AttrKey::Value, ir::AttrValue::of_bool(at % 2 == 0)}};
            r.ops[i].operands[0] = k.result;
            r.ops.insert(r.ops.begin() + long(i), std::move(k));
          } else {
            op.operands[1] = op.operands[0];
          }
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
        if (c.is_output[i]) c.args[i].resize(c.args[i].size() / (p.cubes * p.units) * units);
      }
    } else {
      for (size_t i = 0; i < c.args.size(); ++i) {
        if (c.is_output[i]) c.args[i].resize(c.args[i].size() / p.cubes);
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
  if (at == std::string::npos) throw Error("fuzz.bad_reproducer", "no '// family ... seed ... cubes ... units ...' line");
  char family[16] = {0}, mode[16] = {0};
  unsigned long long seed = 0;
  unsigned cubes = 0, units = 0;
  if (std::sscanf(text.c_str() + at, "// family %15s seed %llu cubes %u units %u %15s", family, &seed, &cubes, &units, mode) != 5 ||
      std::string(family) != "simt" || cubes == 0 || units == 0) {
    throw Error("fuzz.bad_reproducer", "the '// family' line does not read as 'family simt seed N cubes C units U checked'");
  }
  Program p = generate_simt(seed);
  const uint32_t had = p.cubes * p.units;
  p.kernel = ir::parse(text);
  p.cubes = cubes;
  p.units = units;
  p.checked = std::string(mode) == "checked";
  for (size_t i = 0; i < p.args.size(); ++i) {
    if (p.is_output[i]) p.args[i].resize(p.args[i].size() / had * cubes * units, 0xa5);
  }
  return p;
}

}  // namespace kiln::fuzz
