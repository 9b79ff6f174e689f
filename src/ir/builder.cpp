// Builder: appends ops to the innermost open region.
#include "kiln/ir/builder.h"

#include <algorithm>

namespace kiln::ir {

Value Builder::emit(OpKind kind, std::span<const Value> operands, const Type& result, std::vector<Attr> attrs) {
  Op op;
  op.kind = kind;
  op.operands.assign(operands.begin(), operands.end());
  std::sort(attrs.begin(), attrs.end(), [](const Attr& a, const Attr& b) { return a.key < b.key; });
  op.attrs = std::move(attrs);
  op.regions.resize(static_cast<size_t>(op_info(kind).regions));
  if (!result.is_none()) {
    op.type = result;
    op.result = k_.new_value(result);
  }
  Value v = op.result;
  region().ops.push_back(std::move(op));
  return v;
}

std::vector<Value> Builder::emit_results(OpKind kind, std::span<const Value> operands, std::span<const Type> results,
                                         std::vector<Attr> attrs) {
  emit(kind, operands, Type::none(), std::move(attrs));
  Op& op = last();
  for (const Type& t : results) k_.add_result(op, t);
  return op.results();
}

Value Builder::constant(const Type& t, AttrValue v) {
  return emit(OpKind::Const, {}, t, {Attr{AttrKey::Value, std::move(v)}});
}

Region& Builder::enter(size_t index) {
  Region& r = region().ops.back().regions.at(index);
  stack_.push_back(&r);
  return r;
}

std::vector<Attr> make_attrs(std::initializer_list<Attr> attrs) {
  std::vector<Attr> v(attrs);
  std::sort(v.begin(), v.end(), [](const Attr& a, const Attr& b) { return a.key < b.key; });
  return v;
}

}  // namespace kiln::ir
