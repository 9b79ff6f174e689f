// The verifier: structure (operand counts, regions, definitions before uses, loops around
// break/continue) and types (each kind's rule). It stops at the first broken rule.
#include "kiln/ir/verifier.h"

#include <span>
#include <vector>

#include "kiln/error.h"
#include "kiln/ir/text.h"

namespace kiln::ir {

namespace {

bool has_result(OpKind k) {
  switch (k) {
    case OpKind::Store:
    case OpKind::SyncCube:
    case OpKind::SyncPlane:
    case OpKind::VarStore:
    case OpKind::If:
    case OpKind::For:
    case OpKind::While:
    case OpKind::Condition:
    case OpKind::Yield:
    case OpKind::Break:
    case OpKind::Continue:
    case OpKind::Terminate:
    case OpKind::DebugPrint: return false;
    default: return true;
  }
}

// Control flow whose results are the values it carries (any number, checked by check_carried).
bool carries_values(OpKind k) { return k == OpKind::If || k == OpKind::For || k == OpKind::While; }

bool is_atomic_int(Scalar s) {
  return s == Scalar::I32 || s == Scalar::U32 || s == Scalar::I64 || s == Scalar::U64;
}

class Verifier {
 public:
  Verifier(const Kernel& k, std::string_view stage) : k_(k), stage_(stage) {}

  void run() {
    defined_.assign(k_.value_types.size(), false);
    for (const Param& p : k_.params) {
      if (p.value >= k_.value_types.size()) fail_kernel("parameter '" + p.name + "' has no value");
      if (!(p.type == k_.type_of(p.value))) fail_kernel("parameter '" + p.name + "' disagrees with its value's type");
      if (!p.type.is_global() && !p.type.is_value()) {
        fail_kernel("parameter '" + p.name + "' has type " + to_string(p.type) + "; parameters are buffers, tensors or scalars");
      }
      define(p.value);
    }
    const KernelFacts& f = k_.facts;
    if (f.cube_dim.total() == 0) fail_kernel("cube_dim has a zero extent");
    if (f.vector_width != 1 && f.vector_width != 2 && f.vector_width != 4 && f.vector_width != 8 && f.vector_width != 16) {
      fail_kernel("vector width " + std::to_string(f.vector_width) + " is not one of 1, 2, 4, 8, 16");
    }
    region(k_.body, Context{});
  }

 private:
  using Types = std::vector<Type>;
  struct Context {
    int loop_depth = 0;   // enclosing for/while bodies
    bool in_while_cond = false;  // inside a while's condition region, at any depth
    bool cond_top = false;       // directly in a while's condition region (not in a nested region)
    // The innermost loop's carried values: what its break carries (its results) and what its
    // continue carries (what its body yields).
    const Types* break_types = nullptr;
    const Types* continue_types = nullptr;
    // What a yield ending this region carries; nullptr where no yield may end the region.
    const Types* yield_types = nullptr;
  };

  [[noreturn]] void fail_kernel(const std::string& rule) {
    throw Error("ir.verify", "kernel '" + k_.name + "'" + stage_text() + ": " + rule);
  }
  [[noreturn]] void fail(const Op& op, const std::string& rule) {
    throw Error("ir.verify", "kernel '" + k_.name + "'" + stage_text() + ": op #" + std::to_string(number_) + " '" +
                                 std::string(op.info().name) + "': " + rule);
  }
  std::string stage_text() const { return stage_.empty() ? "" : " (" + std::string(stage_) + ")"; }

  void define(Value v) {
    if (v >= defined_.size()) throw Error("ir.verify", "kernel '" + k_.name + "': value " + std::to_string(v) + " has no type");
    defined_[v] = true;
    scope_.push_back(v);
  }

  const Type& operand(const Op& op, size_t i) { return k_.type_of(op.operands[i]); }
  std::string ts(const Type& t) { return to_string(t); }

  void region(const Region& r, Context ctx) {
    size_t mark = scope_.size();
    for (Value a : r.args) define(a);
    for (size_t i = 0; i < r.ops.size(); ++i) {
      const Op& o = r.ops[i];
      ++number_;
      check_op(o, ctx, i + 1 == r.ops.size());
    }
    // Values defined inside the region are not visible after it.
    while (scope_.size() > mark) {
      defined_[scope_.back()] = false;
      scope_.pop_back();
    }
  }

  void check_op(const Op& op, Context ctx, bool last_in_region) {
    const OpInfo& info = op.info();
    int n = static_cast<int>(op.operands.size());
    if (n < info.min_operands || (info.max_operands >= 0 && n > info.max_operands)) {
      std::string want = info.min_operands == info.max_operands
                             ? std::to_string(info.min_operands)
                             : std::to_string(info.min_operands) + " to " + std::to_string(info.max_operands);
      fail(op, "takes " + want + " operands, has " + std::to_string(n));
    }
    if (static_cast<int>(op.regions.size()) != info.regions) {
      fail(op, "has " + std::to_string(op.regions.size()) + " regions, needs " + std::to_string(info.regions));
    }
    for (size_t i = 0; i < op.operands.size(); ++i) {
      Value v = op.operands[i];
      if (v >= defined_.size() || !defined_[v]) {
        fail(op, "operand " + std::to_string(i) + " is not defined here (used outside the region that defines it, or before)");
      }
    }
    if (op.result != kNoValue || !op.more_results.empty()) {
      if (op.result == kNoValue) fail(op, "has more results but no first one");
      if (op.result >= k_.value_types.size()) fail(op, "result value " + std::to_string(op.result) + " has no type");
      if (!(k_.type_of(op.result) == op.type)) fail(op, "result type disagrees with its value");
      for (Value r : op.more_results) {
        if (r >= k_.value_types.size()) fail(op, "result value " + std::to_string(r) + " has no type");
      }
    }
    if (carries_values(op.kind)) {
      // checked with the regions below
    } else if (has_result(op.kind)) {
      if (op.result == kNoValue || op.type.is_none()) fail(op, "needs a result");
      if (!op.more_results.empty()) fail(op, "has " + std::to_string(op.result_count()) + " results, needs 1");
    } else if (op.result != kNoValue) {
      fail(op, "has no result, but defines one");
    }
    if (op.kind == OpKind::If) {
      for (const Region& r : op.regions) {
        if (!r.args.empty()) fail(op, "its regions take no arguments");
      }
    }
    check_types(op, ctx, last_in_region);
    check_passes_values(op, ctx, last_in_region);
    // Regions after the op's own checks; their ops are numbered after it. A nested region is
    // never directly a while's condition region. The op's results are defined after its regions:
    // a loop's body cannot see what the loop gives at its end.
    ctx.cond_top = false;
    ctx.yield_types = nullptr;
    if (carries_values(op.kind)) {
      carried(op, ctx);
    }
    for (size_t i = 0; i < op.result_count(); ++i) define(op.result_at(i));
  }

  // The types of a list of values.
  Types types_of(std::span<const Value> values) const {
    Types t;
    for (Value v : values) t.push_back(v < k_.value_types.size() ? k_.type_of(v) : Type::none());
    return t;
  }
  std::string list_text(const Types& types) {
    std::string s;
    for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + ts(types[i]);
    return s.empty() ? "nothing" : s;
  }
  // Values passed on through control flow match what the receiving side takes, by count and type.
  void expect_types(const Op& op, const Types& got, const Types& want, const std::string& what) {
    if (got.size() != want.size() || got != want) {
      fail(op, what + " " + list_text(want) + ", not " + list_text(got));
    }
  }

  // If, for and while with what they carry: the kinds of values carried, region arguments against
  // the initial values, results, and the regions that pass values on (each ends with a yield, or
  // with break, continue or terminate, which pass them on their own way).
  void carried(const Op& op, Context ctx) {
    // Rules checked after a region name the op by its own number, not the region's last op's.
    size_t self = number_;
    auto fail = [&](const Op& o, const std::string& rule) {
      number_ = self;
      this->fail(o, rule);
    };
    auto expect_types = [&](const Op& o, const Types& got, const Types& want, const std::string& what) {
      if (got == want) return;
      number_ = self;
      this->expect_types(o, got, want, what);
    };
    Types results = types_of(op.results());
    for (const Type& t : results) {
      if (!(t.is_value() || (t.is_tile() && t.space == MemorySpace::Registers))) {
        fail(op, "carries " + ts(t) + "; control flow carries scalars, vectors and register tiles");
      }
    }
    if (op.kind == OpKind::If) {
      Context inner = ctx;
      inner.yield_types = results.empty() ? nullptr : &results;
      for (size_t i = 0; i < 2; ++i) {
        region(op.regions[i], inner);
        if (!results.empty() && !ends_passing_on(op.regions[i])) {
          fail(op, std::string(i == 0 ? "the then" : "the else") + " region must end with 'yield' of " +
                       list_text(results) + ", or with break, continue or terminate");
        }
      }
      return;
    }
    Types inits = types_of(loop_inits(op));
    Types args = types_of(loop_carried_args(op));
    if (op.kind == OpKind::For) {
      expect_types(op, args, inits, "the body's arguments after the induction value must be the carried values:");
      expect_types(op, results, inits, "the results must be the carried values:");
      Context body = ctx;
      ++body.loop_depth;
      body.in_while_cond = false;
      body.break_types = &results;
      body.continue_types = &inits;
      body.yield_types = inits.empty() ? nullptr : &inits;
      region(op.regions[0], body);
      if (!inits.empty() && !ends_passing_on(op.regions[0])) {
        fail(op, "the body must end with 'yield' of " + list_text(inits) + ", or with break, continue or terminate");
      }
      return;
    }
    // while
    expect_types(op, args, inits, "the condition region's arguments must be the initial values:");
    Context cond = ctx;
    cond.in_while_cond = true;
    cond.cond_top = true;
    const Region& c = op.regions[0];
    if (c.ops.empty() || c.ops.back().kind != OpKind::Condition) {
      fail(op, "the condition region must end with 'condition'");
    }
    region(c, cond);
    const Op& condition = c.ops.back();
    Types forwarded = types_of(std::span<const Value>(condition.operands).subspan(1));
    expect_types(op, types_of(op.regions[1].args), forwarded, "the body's arguments must be what 'condition' passes on:");
    expect_types(op, results, forwarded, "the results must be what 'condition' passes on:");
    Context body = ctx;
    ++body.loop_depth;
    body.in_while_cond = false;
    body.break_types = &results;
    body.continue_types = &inits;
    body.yield_types = inits.empty() ? nullptr : &inits;
    region(op.regions[1], body);
    if (!inits.empty() && !ends_passing_on(op.regions[1])) {
      fail(op, "the body must end with 'yield' of " + list_text(inits) + ", or with break, continue or terminate");
    }
  }

  static bool ends_passing_on(const Region& r) { return !r.ops.empty() && r.ops.back().has(kTerminator); }

  // Yield, break and continue carry what the region's op or the innermost loop takes.
  void check_passes_values(const Op& op, const Context& ctx, bool last_in_region) {
    Types got = types_of(op.operands);
    switch (op.kind) {
      case OpKind::Yield:
        if (!ctx.yield_types) {
          fail(op, "ends a region of an if, for or while body that carries values, and appears nowhere else");
        }
        if (!last_in_region) fail(op, "must be the last op of its region");
        expect_types(op, got, *ctx.yield_types, "must carry");
        return;
      case OpKind::Break:
        if (ctx.break_types) expect_types(op, got, *ctx.break_types, "must carry the loop's results:");
        return;
      case OpKind::Continue:
        if (ctx.continue_types) expect_types(op, got, *ctx.continue_types, "must carry what the loop's body yields:");
        return;
      default: return;
    }
  }

  void same_operands(const Op& op, size_t count) {
    for (size_t i = 1; i < count; ++i) {
      if (!(operand(op, i) == operand(op, 0))) {
        fail(op, "operands have different types: " + ts(operand(op, 0)) + " and " + ts(operand(op, i)));
      }
    }
  }
  void result_is(const Op& op, const Type& t) {
    if (!(op.type == t)) fail(op, "result type is " + ts(op.type) + ", expected " + ts(t));
  }
  void value_operand(const Op& op, size_t i) {
    if (!operand(op, i).is_value()) fail(op, "operand " + std::to_string(i) + " is " + ts(operand(op, i)) + ", not a value");
  }
  void scalar_int_operand(const Op& op, size_t i, const char* what) {
    const Type& t = operand(op, i);
    if (!t.is_scalar() || !is_int(t.scalar)) fail(op, std::string(what) + " must be a scalar integer, is " + ts(t));
  }
  void bool_scalar_operand(const Op& op, size_t i, const char* what) {
    const Type& t = operand(op, i);
    if (!(t == Type::scalar_of(Scalar::Bool))) fail(op, std::string(what) + " must be bool, is " + ts(t));
  }

  void check_array_access(const Op& op, bool writes, size_t value_operands) {
    const Type& a = operand(op, 0);
    if (!a.is_array()) fail(op, "operand 0 must be a buffer, tensor, shared or local array, is " + ts(a));
    scalar_int_operand(op, 1, "the index");
    if (writes && a.is_global() && a.access == Access::ReadOnly) {
      const Param* p = k_.param_of(op.operands[0]);
      fail(op, "writes read-only " + ts(a) + (p ? " '" + p->name + "'" : ""));
    }
    for (size_t i = 0; i < value_operands; ++i) {
      if (!(operand(op, 2 + i) == a.element())) {
        fail(op, "value has type " + ts(operand(op, 2 + i)) + ", the array holds " + ts(a.element()));
      }
    }
    size_t mask_at = 2 + value_operands;
    if (op.operands.size() > mask_at) bool_scalar_operand(op, mask_at, "the mask");
    if (op.flag(AttrKey::Checked) && !a.is_global()) fail(op, "only global buffer accesses carry 'checked'");
  }

  void check_types(const Op& op, Context ctx, bool last_in_region) {
    using K = OpKind;
    const Type& t = op.type;
    switch (op.kind) {
      case K::Const: {
        const AttrValue* v = op.attr(AttrKey::Value);
        if (!v) fail(op, "needs a value");
        if (!t.is_value()) fail(op, "a constant is a scalar or vector value, not " + ts(t));
        if (t.scalar == Scalar::Bool ? v->tag != AttrValue::Tag::Bool
                                     : is_float(t.scalar) ? v->tag != AttrValue::Tag::Float : v->tag != AttrValue::Tag::Int) {
          fail(op, "value does not match type " + ts(t));
        }
        return;
      }
      case K::Add: case K::Sub: case K::Mul: case K::Div: case K::Rem: case K::Min: case K::Max: {
        value_operand(op, 0);
        same_operands(op, 2);
        if (operand(op, 0).scalar == Scalar::Bool) fail(op, "arithmetic on bool");
        result_is(op, operand(op, 0));
        return;
      }
      case K::Neg: case K::Abs: {
        value_operand(op, 0);
        Scalar s = operand(op, 0).scalar;
        if (s == Scalar::Bool || (op.kind == K::Neg && is_unsigned_int(s))) fail(op, "not defined on " + ts(operand(op, 0)));
        result_is(op, operand(op, 0));
        return;
      }
      case K::Fma: {
        same_operands(op, 3);
        if (!operand(op, 0).is_float()) fail(op, "fma takes floats, not " + ts(operand(op, 0)));
        result_is(op, operand(op, 0));
        return;
      }
      case K::And: case K::Or: case K::Xor: case K::Shl: case K::Shr: {
        value_operand(op, 0);
        same_operands(op, 2);
        const Type& a = operand(op, 0);
        bool shift = op.kind == K::Shl || op.kind == K::Shr;
        if (!(a.is_int() || (!shift && a.is_bool()))) fail(op, "takes integers" + std::string(shift ? "" : " or bools") + ", not " + ts(a));
        result_is(op, a);
        return;
      }
      case K::Not: {
        const Type& a = operand(op, 0);
        if (!(a.is_int() || a.is_bool())) fail(op, "takes integers or bools, not " + ts(a));
        result_is(op, a);
        return;
      }
      case K::Popcount: case K::LeadingZeros: {
        const Type& a = operand(op, 0);
        if (!a.is_int()) fail(op, "takes integers, not " + ts(a));
        result_is(op, a.with_scalar(Scalar::U32));
        return;
      }
      case K::Eq: case K::Ne: case K::Lt: case K::Le: case K::Gt: case K::Ge: {
        value_operand(op, 0);
        same_operands(op, 2);
        result_is(op, operand(op, 0).with_scalar(Scalar::Bool));
        return;
      }
      case K::Select: {
        const Type& c = operand(op, 0);
        value_operand(op, 1);
        if (!(operand(op, 1) == operand(op, 2))) {
          fail(op, "operands have different types: " + ts(operand(op, 1)) + " and " + ts(operand(op, 2)));
        }
        if (!c.is_bool() || (c.width != 1 && c.width != operand(op, 1).width)) {
          fail(op, "the condition must be bool with 1 or " + std::to_string(operand(op, 1).width) + " lanes, is " + ts(c));
        }
        result_is(op, operand(op, 1));
        return;
      }
      case K::Cast: {
        value_operand(op, 0);
        if (!t.is_value() || t.width != operand(op, 0).width) {
          fail(op, "casts " + ts(operand(op, 0)) + " to " + ts(t) + ": lanes must agree");
        }
        return;
      }
      case K::Bitcast: {
        value_operand(op, 0);
        if (!t.is_value() || t.element_bytes() != operand(op, 0).element_bytes()) {
          fail(op, "bitcasts " + ts(operand(op, 0)) + " to " + ts(t) + ": sizes must agree");
        }
        return;
      }
      case K::VectorConstruct: {
        same_operands(op, op.operands.size());
        if (!operand(op, 0).is_scalar()) fail(op, "takes scalars");
        if (size_t n = op.operands.size(); n != 2 && n != 4 && n != 8 && n != 16) {
          fail(op, "takes 2, 4, 8 or 16 lanes, has " + std::to_string(n));
        }
        result_is(op, Type::vector_of(operand(op, 0).scalar, static_cast<int>(op.operands.size())));
        return;
      }
      case K::VectorExtract: {
        const Type& v = operand(op, 0);
        if (!v.is_vector()) fail(op, "takes a vector, not " + ts(v));
        int64_t lane = op.attr_int(AttrKey::Lane, -1);
        if (lane < 0 || lane >= v.width) fail(op, "lane " + std::to_string(lane) + " is outside " + ts(v));
        result_is(op, Type::scalar_of(v.scalar));
        return;
      }
      case K::VectorInsert: {
        const Type& v = operand(op, 0);
        if (!v.is_vector()) fail(op, "takes a vector, not " + ts(v));
        if (!(operand(op, 1) == Type::scalar_of(v.scalar))) fail(op, "inserts " + ts(operand(op, 1)) + " into " + ts(v));
        int64_t lane = op.attr_int(AttrKey::Lane, -1);
        if (lane < 0 || lane >= v.width) fail(op, "lane " + std::to_string(lane) + " is outside " + ts(v));
        result_is(op, v);
        return;
      }
      case K::VectorSplat: {
        if (!operand(op, 0).is_scalar()) fail(op, "splats a scalar, not " + ts(operand(op, 0)));
        if (!t.is_vector() || t.scalar != operand(op, 0).scalar) fail(op, "result must be a vector of " + ts(operand(op, 0)));
        return;
      }
      case K::AbsolutePos: case K::UnitPos: case K::CubePos: case K::CubeDim: case K::CubeCount:
      case K::PlaneDim: case K::UnitPosPlane: {
        if (const AttrValue* a = op.attr(AttrKey::Axis); a && (a->i < 0 || a->i > 2)) {
          fail(op, "axis must be 0, 1 or 2");
        }
        result_is(op, Type::scalar_of(Scalar::U32));
        return;
      }
      case K::Len: {
        if (!operand(op, 0).is_array()) fail(op, "takes an array, not " + ts(operand(op, 0)));
        result_is(op, Type::scalar_of(Scalar::U32));
        return;
      }
      case K::TensorShape: case K::TensorStride: {
        const Type& a = operand(op, 0);
        if (a.kind != TypeKind::Tensor) fail(op, "takes a tensor, not " + ts(a));
        int64_t dim = op.attr_int(AttrKey::Dim, -1);
        if (dim < 0 || dim >= a.rank) fail(op, "dim " + std::to_string(dim) + " is outside a tensor of rank " + std::to_string(a.rank));
        result_is(op, Type::scalar_of(Scalar::U32));
        return;
      }
      case K::Load: {
        check_array_access(op, false, 0);
        result_is(op, operand(op, 0).element());
        return;
      }
      case K::Store: {
        check_array_access(op, true, 1);
        return;
      }
      case K::SharedAlloc: case K::LocalAlloc: {
        TypeKind want = op.kind == K::SharedAlloc ? TypeKind::Shared : TypeKind::Local;
        if (t.kind != want || t.length == 0) fail(op, "result must be a " + std::string(want == TypeKind::Shared ? "shared" : "local") + " array of length > 0");
        return;
      }
      case K::AtomicAdd: case K::AtomicSub: case K::AtomicMin: case K::AtomicMax: case K::AtomicAnd:
      case K::AtomicOr: case K::AtomicXor: case K::AtomicExchange: case K::AtomicCas: {
        const Type& a = operand(op, 0);
        if (!(a.is_global() || a.kind == TypeKind::Shared)) fail(op, "atomics work on global buffers and shared arrays, not " + ts(a));
        if (a.width != 1) fail(op, "atomics work on scalar elements, not " + ts(a.element()));
        bool ints_only = op.kind == K::AtomicAnd || op.kind == K::AtomicOr || op.kind == K::AtomicXor ||
                         op.kind == K::AtomicMin || op.kind == K::AtomicMax || op.kind == K::AtomicCas;
        bool ok = is_atomic_int(a.scalar) || (!ints_only && (a.scalar == Scalar::F32 || a.scalar == Scalar::F64));
        if (!ok) fail(op, "no atomic " + std::string(op.info().name.substr(7)) + " on " + ts(a.element()));
        check_array_access(op, true, op.kind == K::AtomicCas ? 2 : 1);
        result_is(op, a.element());
        return;
      }
      case K::SyncCube: case K::SyncPlane: return;
      case K::PlaneSum: case K::PlaneProd: case K::PlaneMax: case K::PlaneMin:
      case K::PlaneInclusiveSum: case K::PlaneExclusiveSum: {
        value_operand(op, 0);
        if (operand(op, 0).scalar == Scalar::Bool) fail(op, "takes numbers, not bool");
        result_is(op, operand(op, 0));
        return;
      }
      case K::PlaneAll: case K::PlaneAny: {
        bool_scalar_operand(op, 0, "the operand");
        result_is(op, Type::scalar_of(Scalar::Bool));
        return;
      }
      case K::PlaneBallot: {
        bool_scalar_operand(op, 0, "the operand");
        result_is(op, Type::scalar_of(Scalar::U32));
        return;
      }
      case K::PlaneElect: result_is(op, Type::scalar_of(Scalar::Bool)); return;
      case K::PlaneBroadcast: case K::PlaneShuffle: case K::PlaneShuffleXor: case K::PlaneShuffleUp:
      case K::PlaneShuffleDown: {
        value_operand(op, 0);
        if (!(operand(op, 1) == Type::scalar_of(Scalar::U32))) fail(op, "the lane must be u32, is " + ts(operand(op, 1)));
        result_is(op, operand(op, 0));
        return;
      }
      case K::VarDecl: {
        if (t.kind != TypeKind::Var) fail(op, "result must be a var");
        return;
      }
      case K::VarLoad: {
        if (operand(op, 0).kind != TypeKind::Var) fail(op, "loads a var, not " + ts(operand(op, 0)));
        result_is(op, operand(op, 0).element());
        return;
      }
      case K::VarStore: {
        if (operand(op, 0).kind != TypeKind::Var) fail(op, "stores a var, not " + ts(operand(op, 0)));
        if (!(operand(op, 1) == operand(op, 0).element())) {
          fail(op, "stores " + ts(operand(op, 1)) + " into " + ts(operand(op, 0)));
        }
        return;
      }
      case K::If: bool_scalar_operand(op, 0, "the condition"); return;
      case K::For: {
        scalar_int_operand(op, 0, "the lower bound");
        same_operands(op, 3);
        const Region& body = op.regions[0];
        if (body.args.empty() || body.args[0] >= k_.value_types.size() ||
            !(k_.type_of(body.args[0]) == operand(op, 0))) {
          fail(op, "the body takes one induction value of type " + ts(operand(op, 0)));
        }
        if (const AttrValue* u = op.attr(AttrKey::Unroll); u && u->i < 1) fail(op, "Loop attribute unroll must be 1 or greater");
        if (const AttrValue* p = op.attr(AttrKey::PrefetchStages); p && p->i < 0) {
          fail(op, "Loop attribute prefetch_stages must be 0 or greater");
        }
        return;
      }
      case K::While: case K::Yield: return;
      case K::Condition: {
        bool_scalar_operand(op, 0, "the condition");
        if (!ctx.cond_top || !last_in_region) fail(op, "'condition' ends a while's condition region and appears nowhere else");
        return;
      }
      case K::Break: case K::Continue: {
        if (ctx.loop_depth == 0 || ctx.in_while_cond) fail(op, "is only allowed inside the body of a for or while loop");
        return;
      }
      case K::Terminate: return;
      case K::DebugPrint: {
        const AttrValue* f = op.attr(AttrKey::Format);
        if (!f || f->tag != AttrValue::Tag::String) fail(op, "needs a format string");
        for (size_t i = 0; i < op.operands.size(); ++i) {
          if (!operand(op, i).is_scalar()) fail(op, "prints scalars; operand " + std::to_string(i) + " is " + ts(operand(op, i)));
        }
        return;
      }
      default:
        if (is_float_math(op.kind)) {
          size_t arity = op.operands.size();
          value_operand(op, 0);
          same_operands(op, arity);
          if (!operand(op, 0).is_float()) fail(op, "takes floats, not " + ts(operand(op, 0)));
          bool predicate = op.kind == K::IsNan || op.kind == K::IsInf;
          result_is(op, predicate ? operand(op, 0).with_scalar(Scalar::Bool) : operand(op, 0));
          return;
        }
        fail(op, "has no verifier rule");
    }
  }

  const Kernel& k_;
  std::string_view stage_;
  std::vector<bool> defined_;
  std::vector<Value> scope_;
  size_t number_ = 0;
};

}  // namespace

void verify(const Kernel& k, std::string_view stage) { Verifier(k, stage).run(); }

}  // namespace kiln::ir
