// checked_io: the pass that gives checked mode its meaning: in a checked launch, an index at or
// past a buffer's len() reads zero and writes nothing, on every backend (docs/ir.md). Seed 02
// shows a checked launch in cubecl compiling to the same code as an unchecked one, because its
// pass matched on the wrong type and never fired for global buffers. Here the rule is stated on
// the op: every load, store and atomic whose array operand is a global buffer or tensor and that
// carries `checked` gets `index < len(array)` folded into its mask. Tests check that every such
// access in a checked kernel ends up masked.
//
// at_least_once promises that a loop's bounds give it a trip, so that backends may drop its first
// test. In checked mode the promise is checked instead: a check.trips of the loop's bounds goes
// before it (the launch fails with loop.zero_trips where they give none), and the loop loses the
// mark, so that it keeps its test and a broken promise runs no iteration a scalar loop would not.
// The checks number the kernel's at_least_once loops in the order they are written.
#include "kiln/passes/passes.h"

namespace kiln::passes {

namespace {

using ir::OpKind;
using ir::Scalar;
using ir::Type;

// Loads, stores and atomics: the ops that take a mask.
bool is_access(OpKind k) { return ir::op_info(k).has_mask(); }

struct Rewriter {
  ir::Kernel& k;
  bool guard;  // checked mode: add the bound to the mask; unchecked: only drop the flag
  bool changed = false;
  int64_t at_least_once = 0;  // the at_least_once loops seen so far

  ir::Op make(OpKind kind, std::vector<ir::Value> operands, const Type& t) {
    ir::Op op;
    op.kind = kind;
    op.operands = std::move(operands);
    op.type = t;
    op.result = k.new_value(t);
    return op;
  }

  void region(ir::Region& r) {
    std::vector<ir::Op> out;
    out.reserve(r.ops.size());
    for (ir::Op& op : r.ops) {
      // Before its regions, so that a loop's number is its place in the text.
      if (guard && op.kind == OpKind::For && op.flag(ir::AttrKey::AtLeastOnce)) check_trips(op, out);
      for (ir::Region& sub : op.regions) region(sub);
      if (is_access(op.kind) && op.flag(ir::AttrKey::Checked)) {
        op.erase_attr(ir::AttrKey::Checked);
        changed = true;
        if (guard && k.type_of(op.operand(ir::ops::Store::array)).is_global()) add_bound(op, out);
      }
      out.push_back(std::move(op));
    }
    r.ops = std::move(out);
  }

  void check_trips(ir::Op& loop, std::vector<ir::Op>& out) {
    ir::Op c;
    c.kind = OpKind::CheckTrips;
    c.operands = {loop.operand(ir::ops::For::lower_bound), loop.operand(ir::ops::For::upper_bound)};
    c.attrs = {ir::attr<ir::AttrKey::Loop>(++at_least_once)};
    out.push_back(std::move(c));
    loop.erase_attr(ir::AttrKey::AtLeastOnce);
    changed = true;
  }

  // index < len, compared unsigned so that a negative signed index is out of range too; 64-bit
  // indices compare in u64, narrower ones in u32.
  // Every access (load, store, atomic) takes the array and the index first: ops::Store's names.
  void add_bound(ir::Op& op, std::vector<ir::Op>& out) {
    ir::Value array = op.operand(ir::ops::Store::array);
    ir::Value index = op.operand(ir::ops::Store::index);
    Scalar is = k.type_of(index).scalar;
    Scalar cmp = ir::scalar_bytes(is) == 8 ? Scalar::U64 : Scalar::U32;
    out.push_back(make(OpKind::Len, {array}, Type::scalar_of(Scalar::U32)));
    ir::Value len = out.back().result;
    if (cmp != Scalar::U32) {
      out.push_back(make(OpKind::Cast, {len}, Type::scalar_of(cmp)));
      len = out.back().result;
    }
    if (is != cmp) {
      out.push_back(make(OpKind::Cast, {index}, Type::scalar_of(cmp)));
      index = out.back().result;
    }
    out.push_back(make(OpKind::Lt, {index, len}, Type::scalar_of(Scalar::Bool)));
    ir::Value in_bounds = out.back().result;
    if (ir::Value mask = op.mask(); mask != ir::kNoValue) {
      out.push_back(make(OpKind::And, {mask, in_bounds}, Type::scalar_of(Scalar::Bool)));
      op.operands[size_t(op.info().mask_operand())] = out.back().result;
    } else {
      op.operands.push_back(in_bounds);  // the mask is the last operand
    }
  }
};

}  // namespace

bool checked_io(ir::Kernel& k) {
  Rewriter r{k, k.facts.mode == ir::ExecMode::Checked};
  r.region(k.body);
  return r.changed;
}

}  // namespace kiln::passes
