// vectorize: the loop attribute `vectorize = W` made real. A `for` so marked runs W consecutive
// iterations at a time, on vector<W x T> values, with wide loads and stores ({lanes = W}: the W
// elements from an index as one vector), over [lo, lo + (hi - lo) / W * W); then the iterations
// that remain run as they were. Loop attributes never change results, so the pass takes only the
// loops whose W lanes compute exactly what W scalar iterations would, in any order:
// - step the constant 1, an unsigned induction value, no carried values (a vectorised float
//   reduction would add in another order);
// - a straight-line body (no control flow) of scalars: pure ops, and loads and stores of global
//   buffers of scalar elements whose index is the induction value, or it plus a value defined
//   before the loop or a constant (loads may also read one element, at an index that does not
//   change);
// - no iteration reads or writes what another writes: a buffer the body stores into is accessed
//   at one index only, and shares no memory with another buffer of the loop (the launch's alias
//   facts).
// Other loops stay as they are, and KILN_LOG=compile says why (vectorize_refusal).
//
// Checked mode: the scalar loop's accesses are guarded one by one (checked_io). The vector loop
// runs only behind one test, made before it, that its whole range is in bounds of every buffer it
// accesses wide; then those accesses need no guard, and they have none. When the test fails, the
// loop runs as it was, guarded. So a checked kernel gives what its scalar loop gives, always.
// docs/decisions/027-vectorize-and-at-least-once.md.
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/log.h"
#include "kiln/ir/text.h"
#include "kiln/passes/passes.h"

namespace kiln::passes {

namespace {

using ir::AttrKey;
using ir::AttrValue;
using ir::Op;
using ir::OpKind;
using ir::Region;
using ir::Scalar;
using ir::Type;
using ir::Value;

std::string ts(const Type& t) { return ir::to_string(t); }

// How a value of the body varies over the W iterations one vector iteration runs.
enum class Shape : uint8_t {
  Invariant,  // the same in all W: defined before the loop, or computed from such values only
  Lanes,      // one per iteration: a vector<W x T> in the vector body
  Index,      // the induction value, or it plus an invariant offset: only wide accesses read it
};

// A global access of the body: its parameter, and for a wide one the offset from the induction
// value (kNoValue: the induction value itself).
struct Access {
  size_t param = 0;
  Value offset = ir::kNoValue;
  bool wide = false;
  bool store = false;
};

bool elementwise(OpKind k) {
  switch (ir::op_family(k)) {
    case ir::OpFamily::Arith:
    case ir::OpFamily::Bitwise:
    case ir::OpFamily::Compare:
    case ir::OpFamily::Select:
    case ir::OpFamily::Cast:
    case ir::OpFamily::Math: return true;
    default: return false;
  }
}

// What a loop's body is lane by lane, or why the pass leaves the loop alone.
class Analysis {
 public:
  Analysis(const ir::Kernel& k, const Op& loop, const std::unordered_map<Value, int64_t>& consts)
      : k_(k), loop_(loop), consts_(consts) {}

  // Empty when the loop vectorises.
  std::string run() {
    if (!check()) return why_;
    return {};
  }

  Shape of(Value v) const {
    auto it = shape_.find(v);
    return it == shape_.end() ? Shape::Invariant : it->second;
  }
  Value offset_of(Value index) const { return offset_.at(index); }
  // Whether the body defines v (an offset it defines is a constant: the bounds test copies it).
  bool inside(Value v) const { return inside_.count(v) != 0; }
  const std::vector<Access>& accesses() const { return accesses_; }

 private:
  bool fail(std::string why) {
    why_ = std::move(why);
    return false;
  }
  std::string name_of(Value array) const {
    const ir::Param* p = k_.param_of(array);
    return p ? "'" + p->name + "'" : "an array";
  }

  bool check() {
    if (loop_.result_count() != 0) {
      return fail(
          "it carries values from one iteration to the next: lanes would combine them in another order (a float "
          "sum would round differently), and loop attributes never change results");
    }
    auto step = consts_.find(loop_.operand(ir::ops::For::step));
    if (step == consts_.end() || step->second != 1) return fail("its step is not the constant 1");
    const Region& body = loop_.regions[0];
    const Type& it = k_.type_of(body.args[0]);
    if (!ir::is_unsigned_int(it.scalar)) {
      return fail("its induction value is " + ts(it) +
                  "; vectorize takes unsigned loops (a signed index would need its "
                  "first value tested too)");
    }
    shape_[body.args[0]] = Shape::Index;
    offset_[body.args[0]] = ir::kNoValue;
    for (const Op& op : body.ops) {
      if (!this->op(op)) return false;
    }
    return dependences();
  }

  // The reason an op of the body refuses, by what it is.
  static std::string holds(const Op& op) {
    std::string n = "its body holds '" + std::string(op.info().name) + "'";
    switch (op.info().family) {
      case ir::OpFamily::Control: return n + " (control flow); vectorize takes straight-line bodies";
      case ir::OpFamily::Plane: return n + " (a plane op: the lanes of one unit are not units of a plane)";
      case ir::OpFamily::Atomic: return n + " (an atomic)";
      case ir::OpFamily::Sync: return n + " (a barrier)";
      case ir::OpFamily::Var: return n + " (a var that promote_vars kept in memory)";
      case ir::OpFamily::Debug: return n + " (its output would come in another order)";
      default: return n;
    }
  }

  bool op(const Op& op) {
    if (op.result != ir::kNoValue) inside_.insert(op.result);
    for (Value v : op.operands) {
      const Type& t = k_.type_of(v);
      if (t.is_value() && t.width != 1)
        return fail("its body computes on " + ts(t) + "; vectorize takes bodies of scalars");
    }
    if (op.result != ir::kNoValue && op.type.is_value() && op.type.width != 1) {
      return fail("its body computes on " + ts(op.type) + "; vectorize takes bodies of scalars");
    }
    if (!op.regions.empty() || op.has(ir::kTerminator)) return fail(holds(op));
    if (op.kind == OpKind::Load || op.kind == OpKind::Store) return access(op);
    // Besides accesses, only pure ops: lanewise ones, and constants, builtins, len and the like,
    // which are the same in every iteration of a unit.
    const bool pure = elementwise(op.kind) || (op.has(ir::kPure) && op.result != ir::kNoValue && !op.type.is_tile());
    if (!pure) return fail(holds(op));
    // The index of a wide access: the induction value plus an invariant offset.
    if (op.kind == OpKind::Add) {
      Value a = op.operand(ir::ops::Binary::lhs), b = op.operand(ir::ops::Binary::rhs);
      if (of(b) == Shape::Index) std::swap(a, b);
      if (of(a) == Shape::Index) {
        if (offset_.at(a) != ir::kNoValue || of(b) != Shape::Invariant) {
          return fail("it indexes with the induction value plus a value that changes with the iteration");
        }
        if (inside(b) && !consts_.count(b)) {
          return fail(
              "it indexes with the induction value plus a value its body computes; compute the offset before "
              "the loop");
        }
        shape_[op.result] = Shape::Index;
        offset_[op.result] = b;
        return true;
      }
    }
    for (Value v : op.operands) {
      if (of(v) == Shape::Index) {
        return fail("it uses the induction value as a value ('" + std::string(op.info().name) +
                    "'); vectorize takes loops whose induction value only indexes loads and stores");
      }
    }
    bool lanes = false;
    for (Value v : op.operands) lanes = lanes || of(v) == Shape::Lanes;
    if (lanes && !elementwise(op.kind)) {
      return fail("'" + std::string(op.info().name) + "' of a value that changes with the iteration");
    }
    if (op.result != ir::kNoValue) shape_[op.result] = lanes ? Shape::Lanes : Shape::Invariant;
    return true;
  }

  bool access(const Op& op) {
    using S = ir::ops::Store;  // a load's array and index stand where a store's do
    const bool store = op.kind == OpKind::Store;
    Value array = op.operand(S::array);
    const Type& at = k_.type_of(array);
    const ir::Param* p = k_.param_of(array);
    if (!at.is_global() || !p) {
      return fail("its body accesses " + std::string(at.kind == ir::TypeKind::Shared ? "a shared" : "a local") +
                  " array; vectorize takes global buffers");
    }
    if (at.width != 1) {
      return fail("it accesses " + name_of(array) + ", a buffer of " + ts(at.element()) +
                  "; vectorize takes buffers of scalars");
    }
    if (op.mask() != ir::kNoValue) {
      return fail("its " + std::string(op.info().name) + " of " + name_of(array) + " has a mask");
    }
    if (op.has_attr(AttrKey::Lanes))
      return fail("its " + std::string(op.info().name) + " of " + name_of(array) + " is wide already");
    if (store && of(op.operand(S::value)) == Shape::Index) {
      return fail(
          "it uses the induction value as a value (stored); vectorize takes loops whose induction value only "
          "indexes loads and stores");
    }
    Access a;
    a.param = size_t(p - k_.params.data());
    a.store = store;
    Value index = op.operand(S::index);
    switch (of(index)) {
      case Shape::Index:
        a.wide = true;
        a.offset = offset_.at(index);
        if (!store) shape_[op.result] = Shape::Lanes;
        break;
      case Shape::Invariant:
        if (store) {
          return fail("it stores into " + name_of(array) +
                      " at an index that does not change with the iteration (the "
                      "last iteration's store must win)");
        }
        shape_[op.result] = Shape::Invariant;
        break;
      case Shape::Lanes:
        return fail("it " + std::string(store ? "stores into " : "loads from ") + name_of(array) +
                    " at an index that is neither the induction value nor the induction value plus a loop-invariant "
                    "value");
    }
    accesses_.push_back(a);
    return true;
  }

  // No iteration may read or write what another writes.
  bool dependences() {
    for (const Access& w : accesses_) {
      if (!w.store) continue;
      const std::string& name = k_.params[w.param].name;
      for (const Access& o : accesses_) {
        if (o.param == w.param && (!o.wide || o.offset != w.offset)) {
          return fail("it stores into '" + name + "' and " + (o.store ? "stores into" : "loads from") +
                      " it at another index too: one iteration could see what another wrote");
        }
        if (o.param != w.param && k_.param_aliased(w.param) && k_.param_aliased(o.param)) {
          return fail("it stores into '" + name + "', which may share memory with '" + k_.params[o.param].name +
                      "' (the launch aliases them)");
        }
      }
    }
    return true;
  }

  const ir::Kernel& k_;
  const Op& loop_;
  const std::unordered_map<Value, int64_t>& consts_;
  std::unordered_map<Value, Shape> shape_;
  std::unordered_map<Value, Value> offset_;  // of Index values
  std::unordered_set<Value> inside_;         // values the body defines
  std::vector<Access> accesses_;
  std::string why_;
};

// The integer constants of a kernel, by value: a loop's step is one of them or not.
std::unordered_map<Value, int64_t> int_constants(const ir::Kernel& k) {
  std::unordered_map<Value, int64_t> c;
  ir::walk(k.body, [&](const Op& op) {
    const AttrValue* v = op.attr(AttrKey::Value);
    if (op.kind == OpKind::Const && op.type.is_scalar() && ir::is_int(op.type.scalar) && v) c[op.result] = v->i;
  });
  return c;
}

class Rewriter {
 public:
  explicit Rewriter(ir::Kernel& k) : k_(k), consts_(int_constants(k)) {}

  bool changed = false;

  void region(Region& r) {
    std::vector<Op> out;
    out.reserve(r.ops.size());
    for (Op& op : r.ops) {
      for (Region& sub : op.regions) region(sub);
      if (op.kind != OpKind::For || !op.has_attr(AttrKey::Vectorize)) {
        out.push_back(std::move(op));
        continue;
      }
      Analysis a(k_, op, consts_);
      std::string why = a.run();
      const int64_t w = op.attr_int(AttrKey::Vectorize);
      if (!why.empty()) {
        if (common::log_enabled(common::LogChannel::Compile)) {
          common::log(common::LogChannel::Compile, "vectorize: kernel '" + k_.name + "': a for {vectorize = " +
                                                       std::to_string(w) + "} stays scalar: " + why);
        }
        out.push_back(std::move(op));
        continue;
      }
      rewrite(std::move(op), a, int(w), out);
      changed = true;
      if (common::log_enabled(common::LogChannel::Compile)) {
        common::log(common::LogChannel::Compile,
                    "vectorize: kernel '" + k_.name + "': a for runs " + std::to_string(w) + " iterations a step");
      }
    }
    r.ops = std::move(out);
  }

 private:
  Value emit(std::vector<Op>& out, OpKind kind, std::vector<Value> operands, const Type& t,
             std::vector<ir::Attr> attrs = {}) {
    Op op;
    op.kind = kind;
    op.operands = std::move(operands);
    op.attrs = std::move(attrs);
    if (!t.is_none()) {
      op.type = t;
      op.result = k_.new_value(t);
    }
    out.push_back(std::move(op));
    return out.back().result;
  }
  Value constant(std::vector<Op>& out, const Type& t, int64_t bits) {
    Value v = emit(out, OpKind::Const, {}, t, {ir::Attr{AttrKey::Value, AttrValue::of_int(bits)}});
    consts_[v] = bits;
    return v;
  }

  // A copy of a straight-line body with values of its own.
  Region clone(const Region& body) {
    std::unordered_map<Value, Value> map;
    auto m = [&](Value v) {
      auto it = map.find(v);
      return it == map.end() ? v : it->second;
    };
    Region r;
    for (Value a : body.args) r.args.push_back(map[a] = k_.new_value(k_.type_of(a)));
    for (const Op& op : body.ops) {
      Op c = op;
      for (Value& v : c.operands) v = m(v);
      if (op.result != ir::kNoValue) c.result = map[op.result] = k_.new_value(op.type);
      r.ops.push_back(std::move(c));
    }
    return r;
  }

  // The body on vectors: wide accesses at the (scalar) index, lanewise ops on vector<W x T>,
  // invariant ops as they were, an invariant operand of a lanewise op splatted once: into `before`
  // (ops that go before the loop) when it is defined before the loop, else where it is first used.
  Region vector_body(const Region& body, const Analysis& a, int w, std::vector<Op>& before) {
    std::unordered_map<Value, Value> map, splats;
    Region r;
    auto m = [&](Value v) {
      auto it = map.find(v);
      return it == map.end() ? v : it->second;
    };
    auto lanes = [&](Value v) {  // v's vector in the new body
      if (a.of(v) == Shape::Lanes) return m(v);
      Value s = m(v);
      auto it = splats.find(s);
      if (it != splats.end()) return it->second;
      const bool outside = map.find(v) == map.end();
      Value splat = emit(outside ? before : r.ops, OpKind::VectorSplat, {s}, Type::vector_of(k_.type_of(s).scalar, w));
      return splats[s] = splat;
    };
    r.args.push_back(map[body.args[0]] = k_.new_value(k_.type_of(body.args[0])));
    const std::vector<ir::Attr> wide{ir::attr<AttrKey::Lanes>(w)};
    using S = ir::ops::Store;  // a load's array and index stand where a store's do
    for (const Op& op : body.ops) {
      const bool access = op.kind == OpKind::Load || op.kind == OpKind::Store;
      const bool wide_access = access && a.of(op.operand(S::index)) == Shape::Index;
      if (wide_access && op.kind == OpKind::Load) {
        const Type& at = k_.type_of(op.operand(S::array));
        map[op.result] = emit(r.ops, OpKind::Load, {op.operand(S::array), m(op.operand(S::index))},
                              Type::vector_of(at.scalar, w), wide);
      } else if (wide_access) {
        emit(r.ops, OpKind::Store, {op.operand(S::array), m(op.operand(S::index)), lanes(op.operand(S::value))},
             Type::none(), wide);
      } else if (op.result != ir::kNoValue && a.of(op.result) == Shape::Lanes) {
        std::vector<Value> operands;
        for (size_t i = 0; i < op.operands.size(); ++i) {
          Value v = op.operands[i];
          // A select's condition may stay one lane for all.
          bool keep = op.kind == OpKind::Select && i == ir::ops::Select::condition && a.of(v) != Shape::Lanes;
          operands.push_back(keep ? m(v) : lanes(v));
        }
        map[op.result] = emit(r.ops, op.kind, std::move(operands), Type::vector_of(op.type.scalar, w), op.attrs);
      } else {
        Op c = op;
        for (Value& v : c.operands) v = m(v);
        if (op.result != ir::kNoValue) c.result = map[op.result] = k_.new_value(op.type);
        r.ops.push_back(std::move(c));
      }
    }
    return r;
  }

  // Whether the wide accesses of [lo, end) are all in bounds: end > lo, and for each buffer and
  // offset o, lo + o <= end - 1 + o (the lanes' indices do not wrap) and end - 1 + o < len,
  // compared as checked_io compares (u64 for 64-bit indices, else u32).
  Value in_bounds(std::vector<Op>& out, const Analysis& a, Value lo, Value end) {
    const Type t = k_.type_of(lo);
    const Type b = Type::scalar_of(Scalar::Bool);
    Value ok = emit(out, OpKind::Lt, {lo, end}, b);
    Value last = emit(out, OpKind::Sub, {end, constant(out, t, 1)}, t);
    std::vector<std::pair<size_t, Value>> seen;
    for (const Access& x : a.accesses()) {
      if (!x.wide) continue;
      bool again = false;
      for (const auto& s : seen) again = again || (s.first == x.param && s.second == x.offset);
      if (again) continue;
      seen.emplace_back(x.param, x.offset);
      Value top = last;
      if (x.offset != ir::kNoValue) {
        // An offset the body defines is one of its constants: the test, before the loop, has its own.
        const Value off = a.inside(x.offset) ? constant(out, t, consts_.at(x.offset)) : x.offset;
        top = emit(out, OpKind::Add, {last, off}, t);
        Value first = emit(out, OpKind::Add, {lo, off}, t);
        ok = emit(out, OpKind::And, {ok, emit(out, OpKind::Le, {first, top}, b)}, b);
      }
      const Scalar cmp = ir::scalar_bytes(t.scalar) == 8 ? Scalar::U64 : Scalar::U32;
      Value len = emit(out, OpKind::Len, {k_.params[x.param].value}, Type::scalar_of(Scalar::U32));
      if (cmp != Scalar::U32) len = emit(out, OpKind::Cast, {len}, Type::scalar_of(cmp));
      if (t.scalar != cmp) top = emit(out, OpKind::Cast, {top}, Type::scalar_of(cmp));
      ok = emit(out, OpKind::And, {ok, emit(out, OpKind::Lt, {top, len}, b)}, b);
    }
    return ok;
  }

  void rewrite(Op loop, const Analysis& a, int w, std::vector<Op>& out) {
    using F = ir::ops::For;
    const Value lo = loop.operand(F::lower_bound), hi = loop.operand(F::upper_bound), step = loop.operand(F::step);
    const Type t = k_.type_of(lo);
    // end = lo + (max(hi, lo) - lo) rounded down to a multiple of W: never past hi, and lo when
    // the range is empty (hi <= lo).
    const int bits = 8 * ir::scalar_bytes(t.scalar);
    const uint64_t keep = ~uint64_t(w - 1) & (bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1);
    Value top = emit(out, OpKind::Max, {hi, lo}, t);
    Value span = emit(out, OpKind::Sub, {top, lo}, t);
    Value main = emit(out, OpKind::And, {span, constant(out, t, int64_t(keep))}, t);
    Value end = emit(out, OpKind::Add, {lo, main}, t);
    Value width = constant(out, t, w);

    std::vector<ir::Attr> attrs = loop.attrs;
    std::erase_if(attrs,
                  [](const ir::Attr& x) { return x.key == AttrKey::Vectorize || x.key == AttrKey::AtLeastOnce; });
    Op vec;
    vec.kind = OpKind::For;
    vec.operands = {lo, end, width};
    vec.attrs = attrs;
    vec.regions.push_back(vector_body(loop.regions[0], a, w, out));
    Op rest;
    rest.kind = OpKind::For;
    rest.operands = {end, hi, step};
    rest.attrs = attrs;

    if (k_.facts.mode != ir::ExecMode::Checked) {
      rest.regions.push_back(std::move(loop.regions[0]));
      out.push_back(std::move(vec));
      out.push_back(std::move(rest));
      return;
    }
    Value ok = in_bounds(out, a, lo, end);
    rest.regions.push_back(clone(loop.regions[0]));
    loop.erase_attr(AttrKey::Vectorize);  // the loop as it was, guarded; it keeps at_least_once for checked_io
    Op branch;
    branch.kind = OpKind::If;
    branch.operands = {ok};
    branch.regions.resize(2);
    branch.regions[0].ops.push_back(std::move(vec));
    branch.regions[0].ops.push_back(std::move(rest));
    branch.regions[1].ops.push_back(std::move(loop));
    out.push_back(std::move(branch));
  }

  ir::Kernel& k_;
  std::unordered_map<Value, int64_t> consts_;
};

}  // namespace

std::string vectorize_refusal(const ir::Kernel& k, const ir::Op& loop) {
  if (loop.kind != OpKind::For || !loop.has_attr(AttrKey::Vectorize)) return {};
  return Analysis(k, loop, int_constants(k)).run();
}

bool vectorize(ir::Kernel& k) {
  Rewriter r(k);
  r.region(k.body);
  return r.changed;
}

}  // namespace kiln::passes
