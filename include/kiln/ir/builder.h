// Builder: appends ops to the innermost open region of a kernel. Used by the tracer, by passes
// that create ops, and by tests that assemble IR by hand.
#pragma once

#include <initializer_list>
#include <span>
#include <vector>

#include "kiln/ir/kernel.h"

namespace kiln::ir {

class Builder {
 public:
  explicit Builder(Kernel& k) : k_(k) { stack_.push_back(&k.body); }

  Kernel& kernel() { return k_; }
  Region& region() { return *stack_.back(); }
  size_t depth() const { return stack_.size(); }

  // Appends an op; when `result` is not none a new value of that type is made and returned.
  Value emit(OpKind kind, std::span<const Value> operands, const Type& result = Type::none(),
             std::vector<Attr> attrs = {});
  Value emit(OpKind kind, std::initializer_list<Value> operands, const Type& result = Type::none(),
             std::vector<Attr> attrs = {}) {
    return emit(kind, std::span<const Value>(operands.begin(), operands.size()), result, std::move(attrs));
  }
  // Appends an op with one result per type of `results` (control flow that carries values).
  std::vector<Value> emit_results(OpKind kind, std::span<const Value> operands, std::span<const Type> results,
                                  std::vector<Attr> attrs = {});
  Value constant(const Type& t, AttrValue v);
  Value const_int(Scalar s, int64_t v) { return constant(Type::scalar_of(s), AttrValue::of_int(v)); }
  Value const_float(Scalar s, double v) { return constant(Type::scalar_of(s), AttrValue::of_float(v)); }
  Value const_bool(bool v) { return constant(Type::scalar_of(Scalar::Bool), AttrValue::of_bool(v)); }

  // The op most recently appended to the current region.
  Op& last() { return region().ops.back(); }

  // Enter region `index` of the last op of the current region; leave() returns to the parent.
  Region& enter(size_t index);
  Region& enter(Region& r) {
    stack_.push_back(&r);
    return r;
  }
  void leave() { stack_.pop_back(); }

 private:
  Kernel& k_;
  // Regions live inside ops stored in vectors; only the innermost region is appended to, so the
  // pointers to its ancestors stay valid while it is open.
  std::vector<Region*> stack_;
};

// Sorted-by-key attribute list.
std::vector<Attr> make_attrs(std::initializer_list<Attr> attrs);

}  // namespace kiln::ir
