// The fuzzer's oracle: a tree-walking interpreter of kiln's IR, written from docs/ir.md alone. It
// shares no source with src/backends or src/passes (it includes only the IR's own headers) and
// works in another way than the CPU backend: a value as the 64 bits of its type's encoding (a
// lane each for vectors), the rounding of f16, bf16, f32 and f64 done by one function of its own
// from an exact long double. The ops of the kernel's top level run one at a time for every unit of
// a cube (each unit keeps its own values), so that a collective there (a plane op, sync.cube) sees
// every unit; below the top level each unit walks its ifs and loops alone.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>

#include "kiln/error.h"
#include "numbers.h"
#include "program.h"

namespace kiln::fuzz {

namespace {

using ir::OpKind;
using ir::Scalar;

// ---- numbers ---------------------------------------------------------------------------------

bool is_signed(Scalar s) { return ir::is_signed_int(s); }
using ir::is_float;
uint64_t mask(Scalar s) { return mask_of(s); }

// An integer's bits sign-extended from its type's width (the numbers of numbers.h do the rest:
// bits_of, float_value, round_to, roundoff, largest_finite, smallest_normal).
int64_t as_signed(Scalar s, uint64_t v) {
  const int b = bits_of(s);
  if (b >= 64) return int64_t(v);
  const uint64_t sign = 1ull << (b - 1);
  return int64_t((v & mask(s)) ^ sign) - int64_t(sign);
}

// ---- values ----------------------------------------------------------------------------------

constexpr int kMaxLanes = 4;  // the widest vector the evaluator holds (the generator makes 2 and 4)

// No default member initialisers: the per-unit environments are allocated uninitialised (every
// value is set before it is read, SSA), which keeps a launch of 129 units cheap.
struct Val {
  std::array<uint64_t, kMaxLanes> lanes;
  Trust trust;
  uint64_t bits() const { return lanes[0]; }
};
Val scalar_val(uint64_t bits, Trust t) {
  Val v{};
  v.lanes[0] = bits;
  v.trust = t;
  return v;
}

Trust worst(Trust a, Trust b) { return std::max(a, b); }
bool exact(Trust t) { return t == Trust::Exact; }
// Integers and bools are exact or not known at all: no tolerance compares them.
Trust as_integer_trust(Trust t) { return exact(t) ? t : Trust::Unknown; }

struct Failure {
  std::string kind, message;
};

[[noreturn]] void unsupported(const std::string& what) { throw Failure{"fuzz.unsupported", what}; }

// How a region was left: by falling off its end, or by the terminator that ended it.
enum class Exit { End, Yield, Break, Continue, Condition };
struct Flow {
  Exit exit = Exit::End;
  std::vector<Val> values;  // what the terminator carries
  Val condition{};          // a while's `condition %c`
};

bool is_collective(const ir::Op& op) {
  return op.has(ir::kPlane) || op.kind == OpKind::SyncCube || op.kind == OpKind::SyncPlane;
}

// Whether the region leaves its loop (a break or continue outside any inner loop).
bool jumps(const ir::Region& r) {
  for (const ir::Op& op : r.ops) {
    if (op.kind == OpKind::Break || op.kind == OpKind::Continue) return true;
    if (op.kind == OpKind::If) {
      for (const ir::Region& sub : op.regions) {
        if (jumps(sub)) return true;
      }
    }
  }
  return false;
}

// One element of a cube's shared array, with what the race checks need: who wrote or read it in
// which barrier epoch. Contents start unspecified (docs/ir.md): an element never written is Unknown.
struct SharedSlot {
  uint64_t bits = 0;
  Trust trust = Trust::Unknown;
  int64_t writer = -1, reader = -1;  // a unit, or -2: several
  uint64_t write_epoch = ~0ull, read_epoch = ~0ull;
};

// The atomics on one global element: their kinds (a mix of kinds does not commute), how many,
// and, for a float sum, the sum of the magnitudes that bounds its rounding in any order.
struct AtomicTrack {
  std::set<OpKind> kinds;
  uint64_t count = 0;
  long double magnitude = 0;
  bool saw_nan = false, saw_inf = false, inexact_operand = false;
};

class Interpreter {
 public:
  Interpreter(const Program& p, Evaluation& out) : p_(p), k_(p.kernel), out_(out) {
    param_of_value_.assign(k_.value_types.size(), kNotAParam);
    for (size_t i = 0; i < p.args.size(); ++i) {
      writer_.emplace_back(elements(i), -1);
      param_of_value_[k_.params[i].value] = i;
    }
    values_per_unit_ = k_.value_types.size();
    envs_ = std::make_unique_for_overwrite<Val[]>(values_per_unit_ * p.units);
  }

  // Runs cube `cube`: each top-level op for every unit, a collective across them.
  void run_cube(uint32_t cube) {
    cube_ = cube;
    shared_.clear();
    epoch_ = 0;
    for (const ir::Op& op : k_.body.ops) {
      if (is_collective(op)) {
        collective(op);
        continue;
      }
      for (uint32_t u = 0; u < p_.units; ++u) {
        enter_unit(u);
        top_level(op);
      }
    }
  }

  // What the launch as a whole decides: atomics combined, arrays written under doubt.
  void finish() {
    for (const auto& [at, track] : atomics_) out_.trust[at.first][at.second] = atomic_trust(at, track);
    for (size_t param : tainted_) std::fill(out_.trust[param].begin(), out_.trust[param].end(), Trust::Unknown);
  }

 private:
  Scalar scalar(ir::Value v) const { return k_.value_types[v].scalar; }
  int width(ir::Value v) const { return k_.value_types[v].width; }
  void enter_unit(uint32_t u) { unit_ = u; }
  // A value's copies lie side by side, a unit each: the top level runs an op for every unit in turn.
  Val& value_of(ir::Value v, uint32_t u) const { return envs_[size_t(v) * p_.units + u]; }
  const Val& get(ir::Value v) const { return value_of(v, unit_); }
  void set(ir::Value v, Val x) {
    const ir::Type& t = k_.value_types[v];
    if (t.width > kMaxLanes) unsupported("a vector of more than 4 lanes");
    for (int l = 0; l < t.width; ++l) x.lanes[size_t(l)] &= mask(t.scalar);
    value_of(v, unit_) = x;
  }
  int64_t unit_id() const { return int64_t(cube_) * p_.units + unit_; }

  void top_level(const ir::Op& op) {
    const Flow f = control_or_step(op);
    if (f.exit != Exit::End) unsupported(std::string(ir::op_name(op.kind)) + " at the kernel's top level");
  }

  // Runs a region to its end or its terminator.
  Flow region(const ir::Region& r) {
    for (const ir::Op& op : r.ops) {
      if (is_collective(op)) unsupported(std::string(ir::op_name(op.kind)) + " inside control flow");
      Flow f = control_or_step(op);
      if (f.exit != Exit::End) return f;
    }
    return {};
  }

  std::vector<Val> values_of(std::span<const ir::Value> vs) const {
    std::vector<Val> out;
    for (ir::Value v : vs) out.push_back(get(v));
    return out;
  }

  Flow control_or_step(const ir::Op& op) {
    switch (op.kind) {
      case OpKind::Yield: return {Exit::Yield, values_of(op.operands), {}};
      case OpKind::Break: return {Exit::Break, values_of(op.operands), {}};
      case OpKind::Continue: return {Exit::Continue, values_of(op.operands), {}};
      case OpKind::Condition: {
        const std::span<const ir::Value> fwd(op.operands.data() + 1, op.operands.size() - 1);
        return {Exit::Condition, values_of(fwd), get(op.operands[0])};
      }
      case OpKind::If: return run_if(op);
      case OpKind::For: run_for(op); return {};
      case OpKind::While: run_while(op); return {};
      case OpKind::Terminate: unsupported("terminate");
      default: step(op); return {};
    }
  }

  // Under a condition the evaluator does not know exactly, the device may take the other way:
  // what is stored is Unknown, what the other region stores may land anywhere, and a break or
  // continue may happen or not (the loop around notices `doubtful_jump_`).
  Flow run_if(const ir::Op& op) {
    const Val c = get(op.operands[0]);
    const bool doubtful = !exact(c.trust);
    const ir::Region* taken = c.bits() ? &op.regions[0] : op.regions.size() > 1 ? &op.regions[1] : nullptr;
    const ir::Region* other = c.bits() ? (op.regions.size() > 1 ? &op.regions[1] : nullptr) : &op.regions[0];
    const Trust saved = control_;
    if (doubtful) {
      control_ = Trust::Unknown;
      if (other) taint_writes(*other);
      for (const ir::Region& r : op.regions) doubtful_jump_ |= jumps(r);
    }
    Flow f = taken ? region(*taken) : Flow{};
    control_ = saved;
    if (f.exit == Exit::Break || f.exit == Exit::Continue) return f;
    if (op.result_count() > 0 && f.exit != Exit::Yield) unsupported("an if with results whose region yields none");
    for (size_t i = 0; i < op.result_count(); ++i) {
      Val y = f.values.at(i);
      if (doubtful) y.trust = Trust::Unknown;
      set(op.result_at(i), y);
    }
    return {};
  }

  // A loop whose trips the evaluator does not know exactly (bounds, a condition or a jump in
  // doubt) gives Unknown results, and what its body stores is Unknown from then on.
  struct LoopDoubt {
    Interpreter& in;
    Trust saved_control;
    bool saved_jump;
    bool doubtful = false;
    explicit LoopDoubt(Interpreter& i) : in(i), saved_control(i.control_), saved_jump(i.doubtful_jump_) {
      in.doubtful_jump_ = false;
    }
    ~LoopDoubt() {
      in.control_ = saved_control;
      in.doubtful_jump_ = saved_jump;
    }
    void doubt(const ir::Op& loop) {
      if (doubtful) return;
      doubtful = true;
      in.control_ = Trust::Unknown;
      for (const ir::Region& r : loop.regions) in.taint_writes(r);
    }
    void check_jumps(const ir::Op& loop) {
      if (in.doubtful_jump_) doubt(loop);
    }
  };

  void count_trip(int& trips) {
    if (++trips > 100000) throw Failure{"fuzz.runaway", "a loop ran 100000 trips"};
  }

  void set_results(const ir::Op& op, const std::vector<Val>& values, bool doubtful) {
    for (size_t i = 0; i < op.result_count(); ++i) {
      Val y = values.at(i);
      if (doubtful) y.trust = Trust::Unknown;
      set(op.result_at(i), y);
    }
  }

  // for: i = lo; i < hi (in the bounds' type); i += step, wrapping as integers do (docs/ir.md).
  void run_for(const ir::Op& op) {
    const auto& o = op.operands;
    const Val lo = get(o[0]), hi = get(o[1]), st = get(o[2]);
    const Scalar s = scalar(o[0]);
    const ir::Region& body = op.regions[0];
    std::vector<Val> carried;
    for (size_t i = 3; i < o.size(); ++i) carried.push_back(get(o[i]));
    LoopDoubt doubt(*this);
    if (!exact(lo.trust) || !exact(hi.trust) || !exact(st.trust)) doubt.doubt(op);
    auto less = [&](uint64_t a, uint64_t b) { return is_signed(s) ? as_signed(s, a) < as_signed(s, b) : a < b; };
    int trips = 0;
    for (uint64_t i = lo.bits(); less(i, hi.bits()); i = (i + st.bits()) & mask(s)) {
      count_trip(trips);
      set(body.args[0], scalar_val(i, Trust::Exact));
      for (size_t a = 0; a < carried.size(); ++a) set(body.args[1 + a], carried[a]);
      Flow f = region(body);
      carried = f.values;
      doubt.check_jumps(op);
      if (f.exit == Exit::Break) break;
    }
    set_results(op, carried, doubt.doubtful);
  }

  // while: the condition region decides, with the values it forwards, whether the body runs.
  void run_while(const ir::Op& op) {
    const ir::Region& head = op.regions[0];
    const ir::Region& body = op.regions[1];
    std::vector<Val> args = values_of(op.operands);
    LoopDoubt doubt(*this);
    int trips = 0;
    for (;;) {
      count_trip(trips);
      for (size_t a = 0; a < args.size(); ++a) set(head.args[a], args[a]);
      Flow c = region(head);
      if (c.exit != Exit::Condition) unsupported("a while's condition region that ends without 'condition'");
      if (!exact(c.condition.trust)) doubt.doubt(op);
      if (!c.condition.bits()) {
        args = c.values;
        break;
      }
      for (size_t a = 0; a < c.values.size(); ++a) set(body.args[a], c.values[a]);
      Flow b = region(body);
      args = b.values;
      doubt.check_jumps(op);
      if (b.exit == Exit::Break) break;
    }
    set_results(op, args, doubt.doubtful);
  }

  // Every global parameter (or shared array) a store or atomic of `r` writes: its elements are
  // Unknown, because the device may run `r` where the evaluator did not.
  void taint_writes(const ir::Region& r) {
    ir::walk(r, [&](const ir::Op& op) {
      if (op.kind != OpKind::Store && !ir::is_atomic(op.kind)) return;
      taint_array(op.operands[0]);
    });
  }
  void taint_array(ir::Value array) {
    if (is_param(array)) tainted_.insert(param_of_value_[array]);
    else shared_tainted_.insert(array);
  }

  void step(const ir::Op& op) {
    switch (op.kind) {
      case OpKind::Const: set(op.result, constant(op)); return;
      case OpKind::UnitPos: set(op.result, builtin(op, unit_, 0)); return;
      case OpKind::CubePos: set(op.result, builtin(op, cube_, 0)); return;
      case OpKind::CubeDim: set(op.result, builtin(op, p_.units, 1)); return;
      case OpKind::CubeCount: set(op.result, builtin(op, p_.cubes, 1)); return;
      case OpKind::AbsolutePos: set(op.result, builtin(op, uint64_t(unit_id()), 0)); return;
      case OpKind::PlaneDim: set(op.result, scalar_val(32, Trust::Exact)); return;
      case OpKind::UnitPosPlane: set(op.result, builtin(op, unit_ % 32, 0)); return;
      case OpKind::Len: set(op.result, scalar_val(length(op.operands[0]), Trust::Exact)); return;
      case OpKind::SharedAlloc: shared_array(op.result); return;
      case OpKind::Load: set(op.result, load(op)); return;
      case OpKind::Store: store(op); return;
      case OpKind::VectorConstruct: {
        Val v = scalar_val(0, Trust::Exact);
        for (size_t l = 0; l < op.operands.size(); ++l) {
          v.lanes[l] = get(op.operands[l]).bits();
          v.trust = worst(v.trust, get(op.operands[l]).trust);
        }
        set(op.result, v);
        return;
      }
      case OpKind::VectorExtract: {
        const Val& v = get(op.operands[0]);
        set(op.result, scalar_val(v.lanes[size_t(op.get<ir::AttrKey::Lane>())], v.trust));
        return;
      }
      case OpKind::VectorInsert: {
        Val v = get(op.operands[0]);
        v.lanes[size_t(op.get<ir::AttrKey::Lane>())] = get(op.operands[1]).bits();
        v.trust = worst(v.trust, get(op.operands[1]).trust);
        set(op.result, v);
        return;
      }
      case OpKind::VectorSplat: {
        Val v = get(op.operands[0]);
        for (int l = 1; l < width(op.result); ++l) v.lanes[size_t(l)] = v.bits();
        set(op.result, v);
        return;
      }
      default: break;
    }
    if (ir::is_atomic(op.kind)) {
      set(op.result, atomic(op));
      return;
    }
    if (op.result == ir::kNoValue) unsupported(std::string(ir::op_name(op.kind)));
    set(op.result, elementwise(op));
  }

  Val constant(const ir::Op& op) {
    const ir::AttrValue& a = op.get<ir::AttrKey::Value>();
    const Scalar s = op.type.scalar;
    uint64_t bits;
    if (s == Scalar::Bool) bits = a.i ? 1 : 0;
    else if (is_float(s)) bits = round_to(s, (long double)a.f);
    else bits = uint64_t(a.i);
    Val v = scalar_val(bits, Trust::Exact);
    for (int l = 1; l < op.type.width; ++l) v.lanes[size_t(l)] = bits;  // a vector constant is a splat
    return v;
  }

  // A builtin read along the launch's one axis (x): y and z give `other` (0 for positions, 1 for sizes).
  Val builtin(const ir::Op& op, uint64_t along_x, uint64_t other) {
    return scalar_val(op.get<ir::AttrKey::Axis>(0) > 0 ? other : along_x, Trust::Exact);
  }

  // ---- memory ----

  size_t elements(size_t param) const { return p_.args[param].size() / size_t(k_.params[param].type.element_bytes()); }
  uint64_t length(ir::Value array) const {
    if (is_param(array)) return elements(param_of_value_[array]);
    return k_.value_types[array].length;
  }
  std::vector<SharedSlot>& shared_array(ir::Value array) {
    if (k_.value_types[array].kind != ir::TypeKind::Shared)
      unsupported("an array that is neither a parameter nor shared");
    if (k_.value_types[array].width != 1) unsupported("a shared array of vectors");
    auto [it, fresh] = shared_.try_emplace(array);
    if (fresh) it->second.resize(k_.value_types[array].length);
    return it->second;
  }
  bool is_param(ir::Value array) const { return param_of_value_[array] != kNotAParam; }

  // The mask where the op has one: false masks the access off. A mask in doubt leaves the access
  // in doubt: what it reads is Unknown, what it writes may land or not.
  struct Masked {
    bool on = true;
    Trust trust = Trust::Exact;
  };
  Masked mask_of(const ir::Op& op) const {
    const ir::Value m = op.mask();
    if (m == ir::kNoValue) return {};
    return {get(m).bits() != 0, get(m).trust};
  }

  // Whether an access at `i` (and `lanes` elements on) is in range; a checked access of a
  // checked launch out of range reads zero and writes nothing, any other fails the launch.
  bool in_range(const ir::Op& op, uint64_t i, uint64_t lanes, const char* what) const {
    const uint64_t n = length(op.operands[0]);
    if (i < n && lanes <= n - i) return true;
    if (p_.checked && op.flag(ir::AttrKey::Checked) && is_param(op.operands[0])) return false;
    throw Failure{"bounds.out_of_range", std::string(what) + " past the end"};
  }

  Val load(const ir::Op& op) {
    const ir::Value array = op.operands[0];
    const Val index = get(op.operands[1]);
    const Masked m = mask_of(op);
    const Trust doubt = worst(as_integer_trust(index.trust), as_integer_trust(m.trust));
    if (!m.on) return scalar_val(0, doubt);
    const uint64_t lanes = uint64_t(op.get<ir::AttrKey::Lanes>(1));
    if (!in_range(op, index.bits(), lanes, "load")) return scalar_val(0, doubt);
    if (!is_param(array)) return shared_load(array, index.bits(), doubt);
    const size_t param = param_of_value_[array];
    const int bytes = ir::scalar_bytes(op.type.scalar);
    Val v = scalar_val(0, doubt);
    for (uint64_t l = 0; l < lanes; ++l) {
      std::memcpy(&v.lanes[l], out_.outcome.after[param].data() + (index.bits() + l) * bytes, size_t(bytes));
    }
    return v;
  }

  void store(const ir::Op& op) {
    const ir::Value array = op.operands[0];
    const Val index = get(op.operands[1]);
    const Val& value = get(op.operands[2]);
    const Masked m = mask_of(op);
    // An index or mask in doubt may put the value anywhere: the whole array is in doubt.
    if (!exact(index.trust) || !exact(m.trust)) taint_array(array);
    if (!m.on) return;
    const uint64_t lanes = uint64_t(op.get<ir::AttrKey::Lanes>(1));
    if (!in_range(op, index.bits(), lanes, "store")) return;
    const Trust t = worst(value.trust, control_);
    if (!is_param(array)) {
      shared_store(array, index.bits(), value.bits(), t);
      return;
    }
    const size_t param = param_of_value_[array];
    const int bytes = ir::scalar_bytes(scalar(op.operands[2]));
    for (uint64_t l = 0; l < lanes; ++l) {
      const uint64_t e = index.bits() + l;
      std::memcpy(out_.outcome.after[param].data() + e * bytes, &value.lanes[l], size_t(bytes));
      out_.trust[param][e] = claim(param, e) ? t : Trust::Unknown;
    }
  }

  // Records that this unit wrote element e of `param`; false when another unit did too (the
  // stores race: which lands is not the evaluator's to say).
  bool claim(size_t param, uint64_t e) {
    int64_t& last = writer_[param][e];  // -1: none yet, -2: two units did
    if (last == -2 || (last >= 0 && last != unit_id())) {
      last = -2;
      return false;
    }
    last = unit_id();
    return !atomics_.count({param, e});
  }

  // Shared memory: units of a cube see each other's writes after a barrier. An access that
  // another unit's access of the same element in the same epoch (between barriers) races with is
  // no program the generator makes, nor one the reducer may keep: the evaluation fails.
  [[noreturn]] void race(const char* what) { throw Failure{"fuzz.shared_race", what}; }
  Val shared_load(ir::Value array, uint64_t i, Trust doubt) {
    SharedSlot& s = shared_array(array)[i];
    if (s.write_epoch == epoch_ && s.writer != unit_) race("a shared element read where another unit writes it");
    if (s.read_epoch != epoch_) s.reader = unit_;
    else if (s.reader != unit_) s.reader = -2;
    s.read_epoch = epoch_;
    const Trust t = shared_tainted_.count(array) ? Trust::Unknown : s.trust;
    return scalar_val(s.bits, worst(t, doubt));
  }
  void shared_store(ir::Value array, uint64_t i, uint64_t bits, Trust t) {
    SharedSlot& s = shared_array(array)[i];
    if (s.write_epoch == epoch_ && s.writer != unit_) race("two units write one shared element");
    if (s.read_epoch == epoch_ && s.reader != unit_) race("a shared element written where another unit reads it");
    s.bits = bits;
    s.trust = t;
    s.writer = unit_;
    s.write_epoch = epoch_;
  }

  // ---- atomics ----

  // Integer add, sub, min, max, and, or, xor combine to one value in any order; exchange and cas
  // keep whichever came last, and a float sum rounds by its order. The old value each returns
  // depends on the order: Unknown.
  Val atomic(const ir::Op& op) {
    const ir::Value array = op.operands[0];
    if (!is_param(array)) unsupported("an atomic on a shared array");
    const Val index = get(op.operands[1]);
    const Masked m = mask_of(op);
    if (!exact(index.trust) || !exact(m.trust)) taint_array(array);
    if (!m.on) return scalar_val(0, as_integer_trust(m.trust));
    if (!in_range(op, index.bits(), 1, "atomic")) return scalar_val(0, Trust::Unknown);
    const size_t param = param_of_value_[array];
    const uint64_t e = index.bits();
    const Scalar s = op.type.scalar;
    const int bytes = ir::scalar_bytes(s);
    unsigned char* at = out_.outcome.after[param].data() + e * bytes;
    uint64_t old = 0;
    std::memcpy(&old, at, size_t(bytes));
    const Val& v = get(op.operands[2]);
    uint64_t now;
    if (op.kind == OpKind::AtomicCas) {
      now = old == get(op.operands[2]).bits() ? get(op.operands[3]).bits() : old;
    } else {
      now = combine(op.kind, s, old, v.bits());
    }
    std::memcpy(at, &now, size_t(bytes));
    AtomicTrack& track = atomics_[{param, e}];
    if (track.count == 0 && is_float(s)) note_term(track, float_value(s, old));
    track.kinds.insert(op.kind == OpKind::AtomicSub && !is_float(s) ? OpKind::AtomicAdd : op.kind);
    ++track.count;
    track.inexact_operand |= !exact(worst(v.trust, control_));
    if (is_float(s)) note_term(track, float_value(s, v.bits()));
    if (writer_[param][e] != -1) writer_[param][e] = -2;  // a plain store raced with it
    return scalar_val(0, Trust::Unknown);
  }

  static void note_term(AtomicTrack& t, long double x) {
    if (std::isnan(x)) t.saw_nan = true;
    else if (std::isinf(x)) t.saw_inf = true;
    else t.magnitude += std::fabs(x);
  }

  uint64_t combine(OpKind k, Scalar s, uint64_t old, uint64_t v) {
    if (is_float(s)) {
      const long double a = float_value(s, old), b = float_value(s, v);
      switch (k) {
        case OpKind::AtomicAdd: return round_to(s, a + b);
        case OpKind::AtomicSub: return round_to(s, a - b);
        case OpKind::AtomicExchange: return v;
        default: unsupported("a float atomic " + std::string(ir::op_name(k)));
      }
    }
    const bool sig = is_signed(s);
    const bool less = sig ? as_signed(s, old) < as_signed(s, v) : old < v;
    switch (k) {
      case OpKind::AtomicAdd: return (old + v) & mask(s);
      case OpKind::AtomicSub: return (old - v) & mask(s);
      case OpKind::AtomicMin: return less ? old : v;
      case OpKind::AtomicMax: return less ? v : old;
      case OpKind::AtomicAnd: return old & v;
      case OpKind::AtomicOr: return old | v;
      case OpKind::AtomicXor: return old ^ v;
      case OpKind::AtomicExchange: return v;
      default: unsupported(std::string(ir::op_name(k)));
    }
  }

  Trust atomic_trust(const std::pair<size_t, uint64_t>& at, const AtomicTrack& t) const {
    if (t.inexact_operand || t.kinds.size() > 1 || writer_[at.first][at.second] == -2) return Trust::Unknown;
    const OpKind k = *t.kinds.begin();
    if (k == OpKind::AtomicExchange || k == OpKind::AtomicCas) return t.count == 1 ? Trust::Exact : Trust::Unknown;
    const Scalar s = k_.params[at.first].type.scalar;
    if (!is_float(s)) return Trust::Exact;
    if (t.saw_nan) return Trust::Exact;  // NaN in any order; any NaN matches any NaN
    if (t.saw_inf) return Trust::Unknown;
    uint64_t bits = 0;
    std::memcpy(&bits, out_.outcome.after[at.first].data() + at.second * ir::scalar_bytes(s),
                size_t(ir::scalar_bytes(s)));
    return sum_trust(s, t.count + 1, t.magnitude, float_value(s, bits));
  }

  // A float sum of `terms` terms rounded in an order the evaluator does not know: each order is
  // within (terms - 1) roundings of the sum of the magnitudes; Approximate when that bound fits
  // the tolerance (half of it, for the evaluator's own rounding), Unknown when it does not.
  static Trust sum_trust(Scalar s, uint64_t terms, long double magnitude, long double result) {
    if (std::isnan(result) || std::isinf(result) || magnitude > largest_finite(s) / 2) return Trust::Unknown;
    const long double bound = (long double)(terms - 1) * roundoff(s) * magnitude;
    return bound <= approximate_tolerance(s) * std::max(std::fabs(result), 1.0L) / 2 ? Trust::Approximate
                                                                                     : Trust::Unknown;
  }

  // ---- collectives ----

  void collective(const ir::Op& op) {
    if (op.kind == OpKind::SyncCube) {
      ++epoch_;  // writes before it are seen after it; the race checks start again
      return;
    }
    if (op.kind == OpKind::SyncPlane) return;  // every unit runs it here; the generator fences no shared memory with it
    if (ir::op_family(op.kind) != ir::OpFamily::Plane) unsupported(std::string(ir::op_name(op.kind)));
    for (uint32_t p0 = 0; p0 < p_.units; p0 += 32) plane(op, p0, std::min(p0 + 32, p_.units));
  }

  // A plane op over units p0..p1 of the cube, all active (the top level is uniform): a partial
  // last plane has fewer.
  void plane(const ir::Op& op, uint32_t p0, uint32_t p1) {
    std::vector<Val> in;
    const bool lane_op = op.info().signature == ir::Signature::PlaneLane;
    if (op.kind != OpKind::PlaneElect) {
      for (uint32_t u = p0; u < p1; ++u) in.push_back(value_of(op.operands[0], u));
    }
    std::vector<Val> out(p1 - p0);
    switch (op.kind) {
      case OpKind::PlaneElect:
        for (uint32_t u = p0; u < p1; ++u) out[u - p0] = scalar_val(u == p0, Trust::Exact);
        break;
      case OpKind::PlaneAll:
      case OpKind::PlaneAny:
      case OpKind::PlaneBallot: vote(op.kind, in, out); break;
      case OpKind::PlaneInclusiveSum:
      case OpKind::PlaneExclusiveSum: scan(op, in, out); break;
      default:
        if (lane_op) {
          for (uint32_t u = p0; u < p1; ++u)
            out[u - p0] = shuffle(op, in, u - p0, p1 - p0, value_of(op.operands[1], u));
        } else {
          const Val r = reduction(op, in);
          std::fill(out.begin(), out.end(), r);
        }
    }
    for (uint32_t u = p0; u < p1; ++u) {
      enter_unit(u);
      set(op.result, out[u - p0]);
    }
  }

  static void vote(OpKind k, const std::vector<Val>& in, std::vector<Val>& out) {
    uint32_t ballot = 0;
    Trust t = Trust::Exact;
    for (size_t l = 0; l < in.size(); ++l) {
      if (in[l].bits()) ballot |= 1u << l;
      t = worst(t, as_integer_trust(in[l].trust));
    }
    const uint32_t all = in.size() >= 32 ? ~0u : (1u << in.size()) - 1;
    const uint64_t r = k == OpKind::PlaneBallot ? ballot : k == OpKind::PlaneAll ? ballot == all : ballot != 0;
    std::fill(out.begin(), out.end(), scalar_val(r, t));
  }

  // shuffle reads lane l % 32, shuffle_xor lane ^ m, shuffle_up lane - d, shuffle_down lane + d
  // (broadcast as shuffle); a lane outside the plane keeps its own value (docs/ir.md).
  Val shuffle(const ir::Op& op, const std::vector<Val>& in, uint32_t me, uint32_t units, const Val& lane) {
    const uint64_t x = lane.bits();
    int64_t src;
    switch (op.kind) {
      case OpKind::PlaneShuffleXor: src = int64_t(me ^ x); break;
      case OpKind::PlaneShuffleUp: src = int64_t(me) - int64_t(x); break;
      case OpKind::PlaneShuffleDown: src = int64_t(me) + int64_t(x); break;
      default: src = int64_t(x % 32); break;
    }
    if (x > 0xffffffffull || src < 0 || src >= int64_t(units)) src = me;
    Val v = in[size_t(src)];
    if (!exact(lane.trust)) v.trust = Trust::Unknown;
    return v;
  }

  // plane.sum, prod, max, min: integers wrap and combine in any order; float max and min skip
  // NaNs; a float sum or product rounds by an order the IR leaves open.
  Val reduction(const ir::Op& op, const std::vector<Val>& in) {
    const Scalar s = scalar(op.operands[0]);
    Trust t = Trust::Exact;
    for (const Val& v : in) t = worst(t, v.trust);
    if (!is_float(s)) {
      uint64_t acc = in[0].bits();
      for (size_t l = 1; l < in.size(); ++l) acc = int_reduce(op.kind, s, acc, in[l].bits());
      return scalar_val(acc & mask(s), as_integer_trust(t));
    }
    if (op.kind == OpKind::PlaneMax || op.kind == OpKind::PlaneMin) return float_extreme(op.kind, s, in, t);
    if (!exact(t)) return scalar_val(0, Trust::Unknown);
    if (op.kind == OpKind::PlaneSum) {
      long double sum = 0, magnitude = 0;
      bool nan = false;
      for (const Val& v : in) {
        const long double x = float_value(s, v.bits());
        nan |= std::isnan(x);
        sum += x;
        magnitude += std::fabs(x);
      }
      if (nan) return scalar_val(round_to(s, NAN), Trust::Exact);
      return scalar_val(round_to(s, sum), sum_trust(s, in.size(), magnitude, sum));
    }
    return float_product(s, in);
  }

  static uint64_t int_reduce(OpKind k, Scalar s, uint64_t a, uint64_t b) {
    const bool less = is_signed(s) ? as_signed(s, a) < as_signed(s, b) : (a & mask(s)) < (b & mask(s));
    switch (k) {
      case OpKind::PlaneSum: return a + b;
      case OpKind::PlaneProd: return a * b;
      case OpKind::PlaneMax: return less ? b : a;
      default: return less ? a : b;
    }
  }

  Val float_extreme(OpKind k, Scalar s, const std::vector<Val>& in, Trust t) {
    long double best = NAN;
    bool plus_zero = false, minus_zero = false;
    for (const Val& v : in) {
      const long double x = float_value(s, v.bits());
      if (x == 0) (std::signbit(x) ? minus_zero : plus_zero) = true;
      if (std::isnan(x)) continue;
      if (std::isnan(best) || (k == OpKind::PlaneMax ? x > best : x < best)) best = x;
    }
    // Of +0 and -0 either may come back (docs/ir.md).
    if (best == 0 && plus_zero && minus_zero) t = Trust::Unknown;
    return scalar_val(round_to(s, best), t);
  }

  // No order of a product overflows when the product of the magnitudes above 1 stays far below
  // the largest finite, nor underflows when that of those below 1 stays far above the smallest
  // normal. A NaN decides it in any order; a zero where none overflows (else inf * 0 is NaN), an
  // infinity where none underflows; otherwise it is Approximate when it stays in range and its
  // roundings fit the tolerance.
  Val float_product(Scalar s, const std::vector<Val>& in) {
    long double product = 1, big = 1, small = 1;
    bool zero = false, inf = false, nan = false;
    for (const Val& v : in) {
      const long double x = float_value(s, v.bits());
      nan |= std::isnan(x);
      inf |= std::isinf(x);
      zero |= x == 0;
      product *= x;
      if (std::isfinite(x) && x != 0) (std::fabs(x) > 1 ? big : small) *= std::fabs(x);
    }
    const bool no_overflow = big <= largest_finite(s) / 4, no_underflow = small >= smallest_normal(s) * 4;
    if (nan || (zero && inf)) return scalar_val(round_to(s, NAN), Trust::Exact);
    if (zero) return scalar_val(round_to(s, product), no_overflow ? Trust::Exact : Trust::Unknown);
    if (inf) return scalar_val(round_to(s, product), no_underflow ? Trust::Exact : Trust::Unknown);
    const long double bound = (long double)(in.size() - 1) * roundoff(s);
    const bool fits = bound <= approximate_tolerance(s) / 2;
    return scalar_val(round_to(s, product), no_overflow && no_underflow && fits ? Trust::Approximate : Trust::Unknown);
  }

  // Prefix sums over the units in lane order (docs/ir.md). Integers wrap, exactly; a float prefix
  // rounds by an order of additions the IR leaves open (the CPU adds lane by lane, CUDA by a
  // log-step scan), so it is vouched for as plane.sum's is: within the bound of its terms.
  void scan(const ir::Op& op, const std::vector<Val>& in, std::vector<Val>& out) {
    const Scalar s = scalar(op.operands[0]);
    const bool inclusive = op.kind == OpKind::PlaneInclusiveSum;
    Trust t = Trust::Exact;
    uint64_t running = 0;
    long double sum = 0, magnitude = 0;
    bool nan = false;
    for (size_t l = 0; l < in.size(); ++l) {
      t = worst(t, in[l].trust);
      const uint64_t before = running;
      const long double before_sum = sum, before_magnitude = magnitude;
      const bool before_nan = nan;
      running = l == 0 ? in[l].bits() : add_bits(s, running, in[l].bits());
      if (is_float(s)) {
        const long double x = float_value(s, in[l].bits());
        nan |= std::isnan(x);
        sum += x;
        magnitude += std::fabs(x);
      }
      const uint64_t bits = inclusive ? running : l == 0 ? 0 : before;
      if (!is_float(s)) {
        out[l] = scalar_val(bits, as_integer_trust(t));
        continue;
      }
      // The empty sum before lane 0 is zero; the IR does not say which zero for floats.
      const size_t terms = inclusive ? l + 1 : l;
      Trust lt = !exact(t) || terms == 0 ? Trust::Unknown
                 : terms == 1            ? Trust::Exact
                 : (inclusive ? nan : before_nan)
                     ? Trust::Exact
                     : sum_trust(s, terms, inclusive ? magnitude : before_magnitude, inclusive ? sum : before_sum);
      out[l] = scalar_val(bits, lt);
    }
  }

  static uint64_t add_bits(Scalar s, uint64_t a, uint64_t b) {
    if (!is_float(s)) return (a + b) & mask(s);
    if (s == Scalar::F64) return round_to(s, double(float_value(s, a)) + double(float_value(s, b)));
    return round_to(s, float(float_value(s, a)) + float(float_value(s, b)));
  }

  // ---- arithmetic, lane by lane ----

  // Lane l of each elementwise op's operands (at most three: fma, select).
  struct Lanes {
    std::array<Val, 3> at;
    size_t size = 0;
    const Val& operator[](size_t i) const { return at[i]; }
  };

  Val elementwise(const ir::Op& op) {
    const int w = width(op.result);
    if (w == 1) return compute(op, operand_lanes(op, 0));
    Val out = scalar_val(0, Trust::Exact);
    for (int l = 0; l < w; ++l) {
      const Val r = compute(op, operand_lanes(op, l));
      out.lanes[size_t(l)] = r.bits();
      out.trust = worst(out.trust, r.trust);
    }
    return out;
  }
  // Lane l of each operand (a one-lane operand, a select's condition, serves every lane).
  Lanes operand_lanes(const ir::Op& op, int l) const {
    if (op.operands.size() > 3) unsupported(std::string(ir::op_name(op.kind)) + " of more than 3 operands");
    Lanes a;
    for (ir::Value v : op.operands) {
      const Val& x = get(v);
      Val& lane = a.at[a.size++];
      lane.lanes[0] = x.lanes[width(v) > 1 ? size_t(l) : 0];  // only lane 0 is read: no copy of the others
      lane.trust = x.trust;
    }
    return a;
  }

  Val compute(const ir::Op& op, const Lanes& args) {
    const Scalar s = scalar(op.operands[0]);  // the operands' type (a cast's source)
    Val r = compute_scalar(op, s, args);
    // An integer or bool computed from a value the evaluator does not know bit for bit is not known.
    if (!is_float(op.type.scalar)) r.trust = as_integer_trust(r.trust);
    return r;
  }

  Val compute_scalar(const ir::Op& op, Scalar s, const Lanes& args) {
    Trust t = Trust::Exact;
    for (size_t i = 0; i < args.size; ++i) t = worst(t, args[i].trust);
    const uint64_t a = args[0].bits(), b = args.size > 1 ? args[1].bits() : 0;
    switch (op.kind) {
      case OpKind::Select: {
        // The chosen operand's trust; a condition in doubt may choose the other.
        const Val& chosen = a ? args[1] : args[2];
        return scalar_val(chosen.bits(), exact(args[0].trust) ? chosen.trust : Trust::Unknown);
      }
      case OpKind::Cast: return cast(s, op.type.scalar, a, t);
      // A NaN's bits mean nothing in kiln (docs/ir.md): backends may give any NaN, and a bitcast shows which.
      case OpKind::Bitcast: return scalar_val(a, is_float(s) && std::isnan(float_value(s, a)) ? Trust::Unknown : t);
      default: break;
    }
    if (ir::op_info(op.kind).family == ir::OpFamily::Compare) return scalar_val(compare(op.kind, s, a, b), t);
    if (is_float(s)) return float_op(op, s, args, t);
    return int_op(op, s, a, b, t);
  }

  static bool compare(OpKind k, Scalar s, uint64_t a, uint64_t b) {
    auto cmp = [&](auto x, auto y) {
      return k == OpKind::Eq   ? x == y
             : k == OpKind::Ne ? x != y
             : k == OpKind::Lt ? x < y
             : k == OpKind::Le ? x <= y
             : k == OpKind::Gt ? x > y
                               : x >= y;
    };
    if (is_float(s)) return cmp(float_value(s, a), float_value(s, b));
    return is_signed(s) ? cmp(as_signed(s, a), as_signed(s, b)) : cmp(a & mask(s), b & mask(s));
  }

  Val cast(Scalar from, Scalar to, uint64_t a, Trust t) {
    if (to == Scalar::Bool) {
      const bool nz =
          is_float(from) ? float_value(from, a) != 0 || std::isnan(float_value(from, a)) : (a & mask(from)) != 0;
      return scalar_val(nz ? 1u : 0u, t);
    }
    long double x;
    if (is_float(from)) x = float_value(from, a);
    else if (is_signed(from)) x = (long double)as_signed(from, a);
    else x = (long double)(a & mask(from));
    if (is_float(to)) return scalar_val(round_to(to, x), t);
    if (!is_float(from)) {  // integer to integer: wrap, extended by the source's signedness
      const uint64_t v = is_signed(from) ? uint64_t(as_signed(from, a)) : (a & mask(from));
      return scalar_val(v & mask(to), t);
    }
    if (std::isnan(x)) return scalar_val(0, t);
    x = std::trunc(x);
    if (is_signed(to)) {
      const long double lo = -std::ldexp(1.0L, bits_of(to) - 1), hi = std::ldexp(1.0L, bits_of(to) - 1) - 1;
      const int64_t v = x < lo ? int64_t(lo) : x > hi ? int64_t(hi) : int64_t(x);
      return scalar_val(uint64_t(v) & mask(to), t);
    }
    const long double hi = std::ldexp(1.0L, bits_of(to)) - 1;
    const uint64_t v = x < 0 ? 0 : x > hi ? mask(to) : uint64_t(x);
    return scalar_val(v, t);
  }

  // f16 and bf16 compute in f32; f32 in float; f64 in double. Each op rounds once into its type.
  template <class C>
  long double calc(const ir::Op& op, C x, C y, C z) {
    switch (op.kind) {
      case OpKind::Add: return C(x + y);
      case OpKind::Sub: return C(x - y);
      case OpKind::Mul: return C(x * y);
      case OpKind::Div: return C(x / y);
      case OpKind::Rem: return C(std::fmod(x, y));
      // The other operand where one is NaN (docs/ir.md): said outright, whatever C's fmin does.
      case OpKind::Min: return std::isnan(x) ? y : std::isnan(y) ? x : C(std::fmin(x, y));
      case OpKind::Max: return std::isnan(x) ? y : std::isnan(y) ? x : C(std::fmax(x, y));
      case OpKind::Neg: return C(-x);
      case OpKind::Abs: return C(std::fabs(x));
      case OpKind::Fma: return C(std::fma(x, y, z));
      case OpKind::Sqrt: return C(std::sqrt(x));
      case OpKind::Floor: return C(std::floor(x));
      case OpKind::Ceil: return C(std::ceil(x));
      case OpKind::Trunc: return C(std::trunc(x));
      case OpKind::Round: return C(std::round(x));
      case OpKind::CopySign: return C(std::copysign(x, y));
      case OpKind::Exp: return C(std::exp(x));
      case OpKind::Log: return C(std::log(x));
      case OpKind::Sin: return C(std::sin(x));
      case OpKind::Cos: return C(std::cos(x));
      case OpKind::Tanh: return C(std::tanh(x));
      default: unsupported(std::string(ir::op_name(op.kind)));
    }
  }

  static bool transcendental(OpKind k) {
    return k == OpKind::Exp || k == OpKind::Log || k == OpKind::Sin || k == OpKind::Cos || k == OpKind::Tanh;
  }

  // The trust of a float result whose operands are Exact or Approximate (one at least
  // Approximate): relative errors survive a product, a quotient by an exact value, a magnitude,
  // a choice and a sum that cancels little (|a| + |b| <= 2|r|, so that the error stays within
  // twice the operands'); a cancelling sum, a quotient by an approximate value, a rounding to an
  // integer, a remainder, a sign taken from an approximate value and a transcendental op of one
  // may turn them into anything.
  static Trust approximate_result(OpKind k, const std::array<long double, 3>& x, const Lanes& args, long double r) {
    auto little_cancellation = [&](long double p, long double q) {
      return std::isfinite(r) && std::fabs(p) + std::fabs(q) <= 2 * std::fabs(r) ? Trust::Approximate : Trust::Unknown;
    };
    switch (k) {
      case OpKind::Neg:
      case OpKind::Abs:
      case OpKind::Mul:
      case OpKind::Sqrt:
      case OpKind::Min:
      case OpKind::Max: return Trust::Approximate;
      case OpKind::Add: return little_cancellation(x[0], x[1]);
      case OpKind::Sub: return little_cancellation(x[0], -x[1]);
      case OpKind::Fma: return little_cancellation(x[0] * x[1], x[2]);
      case OpKind::Div: return exact(args[1].trust) ? Trust::Approximate : Trust::Unknown;
      case OpKind::CopySign: return exact(args[1].trust) ? Trust::Approximate : Trust::Unknown;
      default: return Trust::Unknown;  // floor ceil trunc round rem, the transcendental ops
    }
  }

  Val float_op(const ir::Op& op, Scalar s, const Lanes& args, Trust t) {
    std::array<long double, 3> x{};
    for (size_t i = 0; i < args.size; ++i) x[i] = float_value(s, args[i].bits());
    if (op.kind == OpKind::IsNan || op.kind == OpKind::IsInf) {
      const bool r = op.kind == OpKind::IsNan ? std::isnan(x[0]) : std::isinf(x[0]);
      return scalar_val(r ? 1u : 0u, t);
    }
    long double r;
    if (s == Scalar::F64) r = calc<double>(op, double(x[0]), double(x[1]), double(x[2]));
    else r = calc<float>(op, float(x[0]), float(x[1]), float(x[2]));
    if (t == Trust::Approximate) t = approximate_result(op.kind, x, args, r);
    else if (exact(t) && transcendental(op.kind)) t = Trust::Approximate;
    // copysign from a NaN takes a sign bit kiln does not define (a NaN's bits mean nothing, docs/ir.md).
    if (op.kind == OpKind::CopySign && std::isnan(x[1])) t = Trust::Unknown;
    // min and max of +0 and -0 may give either (docs/ir.md): what follows is not the evaluator's to say.
    if ((op.kind == OpKind::Min || op.kind == OpKind::Max) && x[0] == 0 && x[1] == 0 &&
        std::signbit(x[0]) != std::signbit(x[1])) {
      t = Trust::Unknown;
    }
    return scalar_val(round_to(s, r), t);
  }

  Val int_op(const ir::Op& op, Scalar s, uint64_t a, uint64_t b, Trust t) {
    const uint64_t m = mask(s);
    const int w = bits_of(s);
    const int64_t sa = as_signed(s, a), sb = as_signed(s, b);
    const bool sig = is_signed(s);
    a &= m;
    b &= m;
    auto val = [&](uint64_t v) { return scalar_val(v, t); };
    switch (op.kind) {
      case OpKind::Add: return val((a + b) & m);
      case OpKind::Sub: return val((a - b) & m);
      case OpKind::Mul: return val((a * b) & m);
      case OpKind::Div:
      case OpKind::Rem: {
        if (b == 0) throw Failure{"arith.division_by_zero", "an integer divided by zero"};
        const bool rem = op.kind == OpKind::Rem;
        if (sig) {
          if (sa == as_signed(s, 1ull << (w - 1)) && sb == -1) return val(rem ? 0 : a);
          return val(uint64_t(rem ? sa % sb : sa / sb) & m);
        }
        return val(rem ? a % b : a / b);
      }
      case OpKind::Min: return val((sig ? sa < sb : a < b) ? a : b);
      case OpKind::Max: return val((sig ? sa < sb : a < b) ? b : a);
      case OpKind::Neg: return val((0 - a) & m);
      case OpKind::Abs: return val(sig && sa < 0 ? (0 - a) & m : a);
      case OpKind::And: return val(a & b);
      case OpKind::Or: return val(a | b);
      case OpKind::Xor: return val(a ^ b);
      case OpKind::Not: return val(s == Scalar::Bool ? a ^ 1 : ~a & m);
      case OpKind::Shl: return val(b >= uint64_t(w) ? 0 : (a << b) & m);
      case OpKind::Shr:
        if (b >= uint64_t(w)) return val(sig && sa < 0 ? m : 0);
        return val(sig ? uint64_t(sa >> b) & m : a >> b);
      case OpKind::Popcount: return val(uint64_t(std::popcount(a)));
      case OpKind::LeadingZeros: return val(uint64_t(std::countl_zero(a) - (64 - w)));
      case OpKind::TrailingZeros: return val(a == 0 ? uint64_t(w) : uint64_t(std::countr_zero(a)));
      default: unsupported(std::string(ir::op_name(op.kind)));
    }
  }

  const Program& p_;
  const ir::Kernel& k_;
  Evaluation& out_;
  size_t values_per_unit_ = 0;
  std::unique_ptr<Val[]> envs_;  // per value, per unit of the cube
  static constexpr size_t kNotAParam = ~size_t(0);
  std::vector<size_t> param_of_value_;        // per value: the parameter it is, or kNotAParam
  std::vector<std::vector<int64_t>> writer_;  // per parameter, per element: which unit stored it
  std::map<std::pair<size_t, uint64_t>, AtomicTrack> atomics_;
  std::set<size_t> tainted_;                             // parameters written where the device may differ
  std::map<ir::Value, std::vector<SharedSlot>> shared_;  // the running cube's shared arrays
  std::set<ir::Value> shared_tainted_;                   // shared arrays written under doubt
  uint64_t epoch_ = 0;                                   // barriers passed in the running cube
  Trust control_ = Trust::Exact;                         // Unknown under control flow in doubt
  bool doubtful_jump_ = false;                           // a break or continue in doubt, for the loop around
  uint32_t cube_ = 0, unit_ = 0;
};

}  // namespace

Evaluation evaluate(const Program& p) {
  Evaluation e;
  e.outcome.after = p.args;
  e.trust.resize(p.args.size());
  for (size_t i = 0; i < p.args.size(); ++i) {
    e.trust[i].assign(p.args[i].size() / size_t(p.kernel.params[i].type.element_bytes()), Trust::Exact);
  }
  try {
    Interpreter run(p, e);
    for (uint32_t c = 0; c < p.cubes; ++c) run.run_cube(c);
    run.finish();
  } catch (const Failure& f) {
    e.outcome.after = p.args;  // a failed launch changes nothing
    e.outcome.error_kind = f.kind;
    e.outcome.error_message = f.message;
  }
  return e;
}

}  // namespace kiln::fuzz
