// The verifier: structure (operand counts, regions, definitions before uses, loops around
// break/continue) and types (each kind's rule). It stops at the first broken rule.
#include "kiln/ir/verifier.h"

#include <span>
#include <vector>

#include "kiln/error.h"
#include "kiln/ir/mma.h"
#include "kiln/ir/text.h"
#include "kiln/ir/type_rules.h"

namespace kiln::ir {

namespace {

class Verifier {
 public:
  Verifier(const Kernel& k, std::string_view stage) : k_(k), stage_(stage) {}

  void run() {
    for (size_t i = 0; i < k_.layouts.size(); ++i) {
      if (std::string e = layout_error(k_.layouts[i]); !e.empty()) {
        fail_kernel("layout #" + std::to_string(i + 1) + " (" + to_string(k_.layouts[i]) + "): " + e);
      }
    }
    defined_.assign(k_.value_types.size(), false);
    for (const Param& p : k_.params) {
      if (p.value >= k_.value_types.size()) fail_kernel("parameter '" + p.name + "' has no value");
      if (!(p.type == k_.type_of(p.value))) fail_kernel("parameter '" + p.name + "' disagrees with its value's type");
      if (!p.type.is_global() && !p.type.is_value()) {
        fail_kernel("parameter '" + p.name + "' has type " + to_string(p.type) +
                    "; parameters are buffers, tensors or scalars");
      }
      if (is_barrier(p.type.scalar)) {
        fail_kernel("parameter '" + p.name + "' has type " + to_string(p.type) +
                    "; barriers live in shared arrays, never in a parameter");
      }
      define(p.value);
    }
    const KernelFacts& f = k_.facts;
    if (f.cube_dim.total() == 0) fail_kernel("cube_dim has a zero extent");
    if (!Target::valid_vector_width(f.vector_width)) {
      fail_kernel("vector width " + std::to_string(f.vector_width) + " is not one of " + Target::vector_widths_text());
    }
    if (f.cubes_per_processor < 0 || f.cubes_per_processor > Target::kMaxCubesPerProcessor) {
      fail_kernel("cubes_per_processor " + std::to_string(f.cubes_per_processor) +
                  " is not 0 (the backend's choice) to " + std::to_string(Target::kMaxCubesPerProcessor));
    }
    region(k_.body, Context{});
  }

 private:
  using Types = std::vector<Type>;
  struct Context {
    int loop_depth = 0;          // enclosing for/while bodies
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
    if (v >= defined_.size())
      throw Error("ir.verify", "kernel '" + k_.name + "': value " + std::to_string(v) + " has no type");
    defined_[v] = true;
    scope_.push_back(v);
    const Type& t = k_.type_of(v);
    if (t.layout == 0) return;
    const TileLayout* l = k_.layout_of(t);
    if (!l) {
      fail_kernel("a value of type " + to_string(t) + " names layout #" + std::to_string(t.layout) +
                  "; the kernel has " + std::to_string(k_.layouts.size()));
    }
    // A var of a tile holds the tile's layout: the tile must fit it.
    if (std::string e = layout_fit_error(*l, t.kind == TypeKind::Var && t.holds_tile ? t.element() : t); !e.empty()) {
      fail_kernel("a value of type " + to_string(t) + " cannot take layout #" + std::to_string(t.layout) + " (" +
                  to_string(*l) + "): " + e);
    }
  }

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
    if (auto e = operand_count_error(op.kind, op.operands.size()); !e.empty()) fail(op, e);
    if (static_cast<int>(op.regions.size()) != info.regions) {
      fail(op, "has " + std::to_string(op.regions.size()) + " regions, needs " + std::to_string(info.regions));
    }
    for (size_t i = 0; i < op.operands.size(); ++i) {
      Value v = op.operands[i];
      if (v >= defined_.size() || !defined_[v]) {
        fail(op, "operand " + std::to_string(i) +
                     " is not defined here (used outside the region that defines it, or before)");
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
    if (info.carries_values()) {
      // checked with the regions below
    } else if (info.has_result()) {
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
    if (info.carries_values()) carried(op, ctx);
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
    Types forwarded = types_of(condition.operands_from(ops::Condition::forwarded));
    expect_types(op, types_of(op.regions[1].args), forwarded,
                 "the body's arguments must be what 'condition' passes on:");
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

  // Typing is the op's rule (type_rules.h), shared with the tracer; what depends on where the op
  // stands (loops around break, the while's condition, a for's induction value) is checked here.
  void check_types(const Op& op, Context ctx, bool last_in_region) {
    types_.clear();
    for (Value v : op.operands) types_.push_back(k_.type_of(v));
    const Param* array = op.has(kWritesMemory) ? k_.param_of(written_array(op)) : nullptr;
    TypeResult r =
        result_type(TypeQuery{op.kind, types_, op.attrs, op.type, array ? std::string_view(array->name) : ""});
    if (!r.ok()) fail(op, r.error);
    if (op.info().has_result() && !(op.type == r.type))
      fail(op, "result type is " + ts(op.type) + ", expected " + ts(r.type));
    switch (op.kind) {
      case OpKind::For: {
        const Region& body = op.regions[0];
        const Type& bound = k_.type_of(op.operand(ops::For::lower_bound));
        if (body.args.empty() || body.args[0] >= k_.value_types.size() || !(k_.type_of(body.args[0]) == bound)) {
          fail(op, "the body takes one induction value of type " + ts(bound));
        }
        return;
      }
      case OpKind::TileTranspose: {
        // A shared tile transposed is the same memory read the other way round.
        const Type& from = k_.type_of(op.operand(ops::TileUnary::tile));
        if (from.space != MemorySpace::Shared) return;
        const TileLayout *a = k_.layout_of(from), *b = k_.layout_of(op.type);
        if (!a || !b || a->kind != TileLayout::Kind::Shared || b->kind != TileLayout::Kind::Shared) {
          fail(op, "transposes a shared tile with a shared layout into one with a shared layout");
        }
        SharedLayout want = a->shared;
        want.columns = !want.columns;
        if (!(b->shared == want)) {
          fail(op, "a transposed shared tile's layout is its operand's with columns toggled (" +
                       to_string(TileLayout::of(want)) + "), not " + to_string(*b));
        }
        return;
      }
      case OpKind::TileCopyCell:
      case OpKind::TileStage: {
        // The rows written must fit the array's pitch (a tile of rank 1 is one row).
        const Value array =
            op.kind == OpKind::TileStage ? op.operand(ops::TileStage::array) : op.operand(ops::TileCopyCell::array);
        const Type& t = k_.type_of(op.kind == OpKind::TileStage ? op.operand(ops::TileStage::tile)
                                                                : op.operand(ops::TileCopyCell::view));
        const TileLayout* l = k_.layout_of(k_.type_of(array));
        if (!l || l->kind != TileLayout::Kind::Shared) fail(op, "writes into a shared array with a shared layout");
        if (t.rank == 2 && l->shared.pitch < t.shape[1]) {
          fail(op, "writes rows of " + std::to_string(t.shape[1]) + " elements into an array whose layout's pitch is " +
                       std::to_string(l->shared.pitch));
        }
        return;
      }
      case OpKind::WgmmaMmaAsync:
      case OpKind::WgmmaMmaAsyncFragA: {
        // Warp groups of 128 units, and factors as the hardware's descriptors read them: rows of
        // one swizzle span (32, 64 or 128 bytes, XORed as the layout says), so that a step of k is
        // 32 bytes further along the row and a group of 8 rows 8 spans further down.
        const KernelFacts& f = k_.facts;
        const uint64_t units = uint64_t(f.cube_dim.x) * f.cube_dim.y * f.cube_dim.z;
        if (units % kWgmmaUnits != 0) {
          fail(op, "runs on warp groups of 128 units; the cube has " + std::to_string(units));
        }
        const int64_t k = op.get<AttrKey::Shape>()[2];
        const bool frag = op.kind == OpKind::WgmmaMmaAsyncFragA;
        std::vector<Value> factors{frag ? op.operand(ops::MmaSyncFragA::b) : op.operand(ops::MmaSync::b)};
        if (!frag) factors.insert(factors.begin(), op.operand(ops::MmaSync::a));
        for (size_t i = 0; i < factors.size(); ++i) {
          const Type& t = k_.type_of(factors[i]);
          const TileLayout* l = k_.layout_of(t);
          const std::string which = i + 1 == factors.size() ? "b" : "a";
          if (!l || l->kind != TileLayout::Kind::Shared || l->shared.swizzle == Swizzle::None || l->shared.columns) {
            fail(op, "reads " + which + " from a shared array laid out as swizzled rows (a shared layout with a " +
                         "swizzle of 32, 64 or 128 bytes), not " + (l ? to_string(*l) : std::string("one with none")));
          }
          const uint64_t row = uint64_t(l->shared.pitch) * uint64_t(t.element_bytes()),
                         span = uint64_t(l->shared.swizzle);
          if (row != span || uint64_t(k) * uint64_t(t.element_bytes()) > span) {
            fail(op, "reads " + which + " as rows of one swizzle span (" + std::to_string(span) + " bytes: pitch " +
                         std::to_string(span / uint64_t(t.element_bytes())) + ") holding k = " + std::to_string(k) +
                         "; " + to_string(*l) + " has rows of " + std::to_string(row) + " bytes");
          }
        }
        return;
      }
      case OpKind::Condition:
        if (!ctx.cond_top || !last_in_region)
          fail(op, "'condition' ends a while's condition region and appears nowhere else");
        return;
      case OpKind::Break:
      case OpKind::Continue:
        if (ctx.loop_depth == 0 || ctx.in_while_cond)
          fail(op, "is only allowed inside the body of a for or while loop");
        return;
      default: return;
    }
  }

  const Kernel& k_;
  std::string_view stage_;
  std::vector<bool> defined_;
  std::vector<Value> scope_;
  size_t number_ = 0;
  std::vector<Type> types_;
};

}  // namespace

void verify(const Kernel& k, std::string_view stage) { Verifier(k, stage).run(); }

}  // namespace kiln::ir
