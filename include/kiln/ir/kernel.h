// The kernel IR: SSA values, ops with attributes and nested regions, and the kernel that owns them.
#pragma once

#include <array>
#include <cassert>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/ir/attr.h"
#include "kiln/ir/layout.h"
#include "kiln/ir/op_kinds.h"
#include "kiln/ir/target.h"
#include "kiln/ir/type.h"

namespace kiln::ir {

using Value = uint32_t;
inline constexpr Value kNoValue = 0xffffffffu;

struct Op;

// A block of ops; `args` are values the region defines on entry (a for loop's induction value and
// carried values, see Op).
struct Region {
  std::vector<Value> args;
  std::vector<Op> ops;
};

// An op's results are `result` (the first, kNoValue when there is none) followed by
// `more_results`. Nearly every op has at most one, so one result costs no allocation and reads as
// `op.result` / `op.type`. Several results come from control flow that carries values (below).
// Kernel::value_types is the home of every result's type; `type` repeats the first one's so that
// passes and backends read it off the op, and the verifier checks that the two agree.
//
// Values carried by control flow (docs/ir.md, "Loops and ifs that carry values"):
// - for: operands lo, hi, step, then the initial values; the body's args are the induction value
//   and the carried values; the body ends with `yield` of the next ones; the results are the last.
// - while: operands are the initial values of the condition region's args; the condition region
//   ends with `condition %c, forwarded...`, which become the body's args and, when %c is false, the
//   results; the body yields the condition region's next args.
// - if: the results are what each region yields.
// - break carries the loop's results, continue what its body yields.
struct Op {
  OpKind kind = OpKind::Const;
  Value result = kNoValue;          // the first result; kNoValue when the op has none
  Type type;                        // the first result's type (none without a result)
  std::vector<Value> more_results;  // results after the first
  std::vector<Value> operands;
  std::vector<Attr> attrs;  // kept sorted by key, so that equal ops compare equal
  std::vector<Region> regions;

  size_t result_count() const { return result == kNoValue ? 0 : 1 + more_results.size(); }
  Value result_at(size_t i) const { return i == 0 ? result : more_results.at(i - 1); }
  std::vector<Value> results() const;

  const OpInfo& info() const { return op_info(kind); }
  bool has(OpTrait t) const { return has_trait(kind, t); }

  // Operands by name (op_kinds.h, ops::): op.operand(ops::Store::value). In debug builds each
  // read checks that the op's signature names that position so.
  template <OperandSlot Slot>
  Value operand(Slot s) const {
    assert(slot_fits(kind, s) && s < operands.size());
    return operands[s];
  }
  template <OperandSlot Slot>
  Value& operand(Slot s) {
    assert(slot_fits(kind, s) && s < operands.size());
    return operands[s];
  }
  // An operand the op may leave out (the mask): kNoValue when it has none.
  template <OperandSlot Slot>
  Value operand_or_none(Slot s) const {
    assert(slot_fits(kind, s));
    return s < operands.size() ? operands[s] : kNoValue;
  }
  // The operands from `s` on: the values a signature ending in * or + repeats.
  template <OperandSlot Slot>
  std::span<const Value> operands_from(Slot s) const {
    assert(slot_fits(kind, s));
    return s < operands.size() ? std::span<const Value>(operands).subspan(s) : std::span<const Value>();
  }
  // The mask, where the op's signature has one and the op carries it; else kNoValue.
  Value mask() const;

  const AttrValue* attr(AttrKey k) const;
  bool has_attr(AttrKey k) const { return attr(k) != nullptr; }
  // An attribute read as its key's type (attr.h): get<AttrKey::Dim>(), get<AttrKey::Pad>(); the
  // fallback when the op does not carry it.
  template <AttrKey K>
  attr_t<K> get(attr_t<K> fallback = {}) const {
    const AttrValue* v = attr(K);
    return v ? attr_repr<attr_type_of<K>()>::read(*v) : fallback;
  }
  int64_t attr_int(AttrKey k, int64_t fallback = 0) const;
  bool flag(AttrKey k) const { return attr_int(k, 0) != 0; }
  void set_attr(AttrKey k, AttrValue v);
  void set_attr(Attr a) { set_attr(a.key, std::move(a.value)); }
  void erase_attr(AttrKey k);
};

enum class ExecMode : uint8_t { Checked, Unchecked };
enum class AddressType : uint8_t { U32, U64 };
std::string_view to_string(ExecMode m);
std::string_view to_string(AddressType a);

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t total() const { return uint64_t(x) * y * z; }
  friend bool operator==(const Dim3&, const Dim3&) = default;
};

// The math a kernel lets a backend compute faster than docs/ir.md's rounding of each op
// (docs/decisions/015-fast-math.md). Exact unless the kernel asks; the CPU backend is exact always.
struct FastMath {
  bool contract = false;  // a float mul whose result feeds an add or sub may fuse with it into one fma
  bool approx = false;    // f32 division and math functions (f16 and bf16 ones too, through f32) may
                          // use the hardware's approximations
  bool any() const { return contract || approx; }
  friend bool operator==(const FastMath&, const FastMath&) = default;
};
// "contract, approx", "contract", "approx" or "" (exact): the list the text form prints.
std::string_view to_string(FastMath f);

// What the kernel was specialised for: the compile-time facts of its launch.
struct KernelFacts {
  Dim3 cube_dim;
  ExecMode mode = ExecMode::Checked;
  AddressType address = AddressType::U32;
  int vector_width = 1;
  FastMath fast_math;  // the kernel's choice (K::fast_math), not the launch's
  // The kernel's choice too (K::cubes_per_processor): at least this many of its cubes are meant
  // to share a processor, so a backend holds each unit's registers to fit them (CUDA: the second
  // argument of __launch_bounds__; ptxas spills what does not fit); 0 leaves it to the backend.
  int cubes_per_processor = 0;
  // Per parameter: 0, or 1 + the lowest index of another parameter whose memory this one overlaps
  // (an in-place launch); every overlapping parameter has an entry. Empty when no parameters
  // alias. Backends may assume that a buffer with entry 0 overlaps no other.
  std::vector<uint8_t> alias;
  // Comptime arguments, by parameter name, as text: for reading dumps, not for identity.
  std::vector<std::pair<std::string, std::string>> comptime;
  // What the kernel is compiled for; the pass pipeline sets it (Target::Kind::Any before).
  Target target;
};

struct Param {
  std::string name;
  Type type;
  Value value = kNoValue;
};

struct Kernel {
  std::string name;
  std::vector<Param> params;
  Region body;
  KernelFacts facts;
  std::vector<Type> value_types;  // indexed by Value
  // The layouts its tiles and shared arrays name: Type::layout n is layouts[n - 1].
  std::vector<TileLayout> layouts;

  Value new_value(const Type& t) {
    value_types.push_back(t);
    return static_cast<Value>(value_types.size() - 1);
  }
  // Makes a new value of type `t` and appends it to the op's results.
  Value add_result(Op& op, const Type& t);
  const Type& type_of(Value v) const { return value_types.at(v); }
  // The number that names `l` in the layout table (added if it is not there yet).
  uint16_t layout_number(const TileLayout& l);
  // The layout a type names, or nullptr for none (0) or a number past the table.
  const TileLayout* layout_of(const Type& t) const {
    return t.layout == 0 || t.layout > layouts.size() ? nullptr : &layouts[t.layout - 1];
  }
  // The parameter whose value is `v`, or nullptr.
  const Param* param_of(Value v) const;
  // Whether parameter i shares memory with another parameter of this launch.
  bool param_aliased(size_t i) const;
};

// Walks every op in pre-order (an op before the ops of its regions); `fn(op)`.
template <class Fn>
void walk(const Region& r, Fn&& fn) {
  for (const Op& op : r.ops) {
    fn(op);
    for (const Region& sub : op.regions) walk(sub, fn);
  }
}
template <class Fn>
void walk_mut(Region& r, Fn&& fn) {
  for (Op& op : r.ops) {
    fn(op);
    for (Region& sub : op.regions) walk_mut(sub, fn);
  }
}

// The array (or var) an op that writes memory writes: a store's or atomic's array, a copy's shared
// array, a tile store's array or view, mma.sync's accumulators, var.store's var; kNoValue for ops
// that write none (or write no named array: copy.async.commit and wait).
// The span form serves code that holds an op's operands before the op exists (the tracer).
Value written_array(OpKind kind, std::span<const Value> operands);
inline Value written_array(const Op& op) { return written_array(op.kind, op.operands); }

// Number of ops in the kernel, counting nested ones.
size_t op_count(const Kernel& k);

// Replaces the op's results by `results` (their types are the kernel's): for passes that drop
// what control flow carries.
void set_results(Op& op, std::span<const Value> results, const Kernel& k);

// The operands that give the initial values of what a loop carries: a for's after lo, hi and step,
// all of a while's; empty for other ops.
std::span<const Value> loop_inits(const Op& op);
// The args of a loop's head region that the carried values arrive in (a for's after its
// induction value).
std::span<const Value> loop_carried_args(const Op& op);

}  // namespace kiln::ir
