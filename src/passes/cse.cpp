// cse: common subexpression elimination. Tracing repeats work the C++ source wrote once per use
// (x[absolute_pos()] read twice computes its index twice; checked_io adds one `len` and one bound
// per access), and equal pure ops compute equal values, so the later one is dropped and its uses
// take the earlier one's value. Two ops are equal when kind, result type, operands (after the
// replacements made so far; for commutative ops in either order) and attributes (floats by their
// bits, so 0.0 and -0.0 stay apart) are equal.
//
// Scoping follows dominance in structured control flow: an op may take the value of an equal op
// in its own region before it, or in an enclosing region before the op that holds it (a value
// defined before a loop is visible in its body). Never the reverse, and never across sibling
// regions (then and else; a while's condition and body).
//
// Plane ops read other units' values, and which units take part depends on where the op is, so
// they are merged conservatively: only with an equal plane op of the same region, with nothing
// between them but pure ops and plane ops. Any other op in between (a store, a barrier, an `if`
// that may `break` some units out) ends the run. Allocations, loads, vars and every op with
// memory or side effects are never merged.
#include <bit>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/passes/passes.h"

namespace kiln::passes {

namespace {

using ir::Op;
using ir::Value;

void append(std::string& key, const void* p, size_t n) { key.append(static_cast<const char*>(p), n); }
template <class T>
void append(std::string& key, T v) {
  append(key, &v, sizeof v);
}

// The bytes that identify an op for merging: equal keys mean equal values.
std::string key_of(const Op& op) {
  std::string key;
  append(key, op.kind);
  std::string type = ir::to_string(op.type);
  append(key, type.size());
  key += type;
  std::vector<Value> operands = op.operands;
  if (op.has(ir::kCommutative)) {  // a binary op: its operands in one order
    Value &lhs = operands[ir::ops::Binary::lhs], &rhs = operands[ir::ops::Binary::rhs];
    if (rhs < lhs) std::swap(lhs, rhs);
  }
  append(key, operands.size());
  for (Value v : operands) append(key, v);
  for (const ir::Attr& a : op.attrs) {
    append(key, a.key);
    append(key, a.value.tag);
    append(key, a.value.i);
    append(key, std::bit_cast<uint64_t>(a.value.f));
    append(key, a.value.s.size());
    key += a.value.s;
    append(key, a.value.ints.size());
    for (int64_t i : a.value.ints) append(key, i);
  }
  return key;
}

class Cse {
 public:
  explicit Cse(ir::Kernel& k) : replacement_(k.value_types.size()) {
    for (Value v = 0; v < replacement_.size(); ++v) replacement_[v] = v;
  }

  bool run(ir::Region& body) {
    region(body);
    return changed_;
  }

 private:
  using Table = std::unordered_map<std::string, Value>;

  void region(ir::Region& r) {
    scopes_.emplace_back();
    Table plane;  // plane ops since the last op that is neither pure nor a plane op
    std::vector<Op> out;
    out.reserve(r.ops.size());
    for (Op& op : r.ops) {
      for (Value& v : op.operands) v = replacement_[v];
      bool pure = op.has(ir::kPure) && op.result != ir::kNoValue;
      bool plane_op = op.has(ir::kPlane) && op.result != ir::kNoValue;
      if (pure || plane_op) {
        std::string key = key_of(op);
        Value earlier = pure ? find(key) : find_in(plane, key);
        if (earlier != ir::kNoValue) {
          replacement_[op.result] = earlier;
          changed_ = true;
          continue;
        }
        (pure ? scopes_.back() : plane).emplace(std::move(key), op.result);
      } else {
        plane.clear();
        for (ir::Region& sub : op.regions) region(sub);
      }
      out.push_back(std::move(op));
    }
    r.ops = std::move(out);
    scopes_.pop_back();
  }

  static Value find_in(const Table& t, const std::string& key) {
    auto it = t.find(key);
    return it == t.end() ? ir::kNoValue : it->second;
  }

  // The innermost scope first; every open scope dominates the op being looked at.
  Value find(const std::string& key) const {
    for (size_t i = scopes_.size(); i-- > 0;) {
      Value v = find_in(scopes_[i], key);
      if (v != ir::kNoValue) return v;
    }
    return ir::kNoValue;
  }

  std::vector<Value> replacement_;  // by value: the value that now stands for it
  std::vector<Table> scopes_;       // pure ops of each open region, outermost first
  bool changed_ = false;
};

}  // namespace

bool cse(ir::Kernel& k) { return Cse(k).run(k.body); }

}  // namespace kiln::passes
