// The typing of ops, stated once. The tracer asks it for the type of each op it records and the
// verifier asks it whether an op's stated type is the one its operands give; both report the
// same words. Each op's row in op_kinds.h names its rule; src/ir/type_rules.cpp holds them.
#pragma once

#include <cassert>
#include <span>
#include <string>

#include "kiln/ir/kernel.h"

namespace kiln::ir {

// An op as far as typing sees it.
struct TypeQuery {
  OpKind kind;
  std::span<const Type> operands;
  std::span<const Attr> attrs;
  // The result type the op states, for ops whose result is a choice and not a consequence of
  // their operands (const, cast, bitcast, vector.splat, allocations, var.decl); the rule checks it.
  // Other ops ignore it.
  Type stated;
  // For messages: the parameter name of the array the op writes, when it is a parameter ("writes
  // read-only buffer<f32, ro> 'x'").
  std::string_view array_name;

  // An operand's type by name, as Op::operand reads its value.
  template <OperandSlot Slot>
  const Type& operand(Slot s) const {
    assert(slot_fits(kind, s) && s < operands.size());
    return operands[s];
  }
  template <OperandSlot Slot>
  std::span<const Type> operands_from(Slot s) const {
    assert(slot_fits(kind, s));
    return s < operands.size() ? operands.subspan(s) : std::span<const Type>();
  }
  const AttrValue* attr(AttrKey k) const {
    for (const Attr& a : attrs) {
      if (a.key == k) return &a.value;
    }
    return nullptr;
  }
  template <AttrKey K>
  attr_t<K> get(attr_t<K> fallback = {}) const {
    const AttrValue* v = attr(K);
    return v ? attr_repr<attr_type_of<K>()>::read(*v) : fallback;
  }
};

// The result type, or why there is none: `error` is empty when the op is well typed. A message
// says what is wrong in the op's own terms ("takes integers, not f32"), without the op's name.
struct TypeResult {
  Type type;
  std::string error;
  bool ok() const { return error.empty(); }
};

// Whether an atomic op (atomic.*, tile.atomic_*, tile.scatter_add/max/min) combines elements of
// `s`: 32- and 64-bit integers, and f32 and f64 for add, sub and exchange (docs/ir.md). The tile
// layer's typed front asks it at compile time.
constexpr bool atomic_takes(OpKind k, Scalar s) {
  const bool word = is_int(s) && (scalar_bytes(s) == 4 || scalar_bytes(s) == 8);
  const bool floats = k == OpKind::AtomicAdd || k == OpKind::AtomicSub || k == OpKind::AtomicExchange ||
                      k == OpKind::TileAtomicAdd || k == OpKind::TileScatterAdd;
  return word || (floats && (s == Scalar::F32 || s == Scalar::F64));
}

// "takes 2 operands, has 1" when `count` operands do not fit the op's schema; empty when they do.
std::string operand_count_error(OpKind kind, size_t count);
// Ops that apply to each element of a register tile (arith, bitwise, compare, select, cast, math):
// their operands, tiles of one shape, share one layout, which the result takes (lift_to_tiles).
bool elementwise(OpKind k);

// Checks the operand count and kinds against the op's schema, then runs its rule.
TypeResult result_type(const TypeQuery& q);

}  // namespace kiln::ir
