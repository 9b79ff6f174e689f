// Op attribute access and kernel helpers.
#include "kiln/ir/kernel.h"

#include <algorithm>

namespace kiln::ir {

Value Op::mask() const {
  int m = info().mask_operand();
  return m >= 0 && size_t(m) < operands.size() ? operands[size_t(m)] : kNoValue;
}

const AttrValue* Op::attr(AttrKey k) const {
  for (const Attr& a : attrs) {
    if (a.key == k) return &a.value;
  }
  return nullptr;
}

int64_t Op::attr_int(AttrKey k, int64_t fallback) const {
  const AttrValue* v = attr(k);
  return v ? v->i : fallback;
}

void Op::set_attr(AttrKey k, AttrValue v) {
  auto it = std::lower_bound(attrs.begin(), attrs.end(), k, [](const Attr& a, AttrKey key) { return a.key < key; });
  if (it != attrs.end() && it->key == k) {
    it->value = std::move(v);
  } else {
    attrs.insert(it, Attr{k, std::move(v)});
  }
}

void Op::erase_attr(AttrKey k) {
  std::erase_if(attrs, [k](const Attr& a) { return a.key == k; });
}

std::string_view to_string(ExecMode m) { return m == ExecMode::Checked ? "checked" : "unchecked"; }
std::string_view to_string(AddressType a) { return a == AddressType::U32 ? "u32" : "u64"; }
std::string_view to_string(FastMath f) {
  return f.contract ? (f.approx ? "contract, approx" : "contract") : f.approx ? "approx" : "";
}

const Param* Kernel::param_of(Value v) const {
  for (const Param& p : params) {
    if (p.value == v) return &p;
  }
  return nullptr;
}

bool Kernel::param_aliased(size_t i) const {
  const auto& a = facts.alias;
  if (i < a.size() && a[i] != 0) return true;
  for (uint8_t v : a) {
    if (v == i + 1) return true;
  }
  return false;
}

std::vector<Value> Op::results() const {
  std::vector<Value> r;
  if (result == kNoValue) return r;
  r.reserve(1 + more_results.size());
  r.push_back(result);
  r.insert(r.end(), more_results.begin(), more_results.end());
  return r;
}

uint16_t Kernel::layout_number(const TileLayout& l) {
  for (size_t i = 0; i < layouts.size(); ++i) {
    if (layouts[i] == l) return uint16_t(i + 1);
  }
  layouts.push_back(l);
  return uint16_t(layouts.size());
}

Value Kernel::add_result(Op& op, const Type& t) {
  Value v = new_value(t);
  if (op.result == kNoValue) {
    op.result = v;
    op.type = t;
  } else {
    op.more_results.push_back(v);
  }
  return v;
}

void set_results(Op& op, std::span<const Value> results, const Kernel& k) {
  op.result = results.empty() ? kNoValue : results[0];
  op.type = results.empty() ? Type::none() : k.type_of(results[0]);
  op.more_results.assign(results.begin() + (results.empty() ? 0 : 1), results.end());
}

std::span<const Value> loop_inits(const Op& op) {
  if (op.kind == OpKind::For) return op.operands_from(ops::For::inits);
  if (op.kind == OpKind::While) return op.operands_from(ops::While::inits);
  return {};
}

std::span<const Value> loop_carried_args(const Op& op) {
  if (op.regions.empty()) return {};
  std::span<const Value> args = op.regions[0].args;
  if (op.kind == OpKind::For) return args.empty() ? args : args.subspan(1);
  if (op.kind == OpKind::While) return args;
  return {};
}

Value written_array(OpKind kind, std::span<const Value> operands) {
  auto at = [&](size_t slot) { return slot < operands.size() ? operands[slot] : kNoValue; };
  switch (kind) {
    case OpKind::Store: return at(ops::Store::array);
    case OpKind::CopyAsync: return at(ops::CopyAsync::shared);
    case OpKind::VarStore: return at(ops::VarStore::var);
    case OpKind::TileStore:
    case OpKind::TileAtomicAdd:
    case OpKind::TileAtomicMax:
    case OpKind::TileAtomicMin: return at(ops::TileStore::array);
    case OpKind::TileScatter:
    case OpKind::TileScatterAdd:
    case OpKind::TileScatterMax:
    case OpKind::TileScatterMin: return at(ops::TileScatter::array);
    case OpKind::TileStoreCell: return at(ops::TileStoreCell::view);
    case OpKind::TileStoreSub: return at(ops::TileStoreSub::view);
    case OpKind::MmaSync: return at(ops::MmaSync::acc);
    case OpKind::MmaSyncFragA: return at(ops::MmaSyncFragA::acc);
    case OpKind::TileCopyCell: return at(ops::TileCopyCell::array);
    case OpKind::TileStage: return at(ops::TileStage::array);
    default: return is_atomic(kind) ? at(ops::Atomic::array) : kNoValue;
  }
}

size_t op_count(const Kernel& k) {
  size_t n = 0;
  walk(k.body, [&](const Op&) { ++n; });
  return n;
}

}  // namespace kiln::ir
