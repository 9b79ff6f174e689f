// Builds the CPU plan: gives every value a register slot and turns each op into instructions,
// structured control flow into mask instructions with patched jump targets.
#include <span>
#include <unordered_map>

#include "backends/cpu/exec.h"
#include "kiln/error.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;
using ir::TypeKind;

constexpr uint32_t kSlotAlign = 64;

struct ArrayRef {
  ArraySpace space;
  uint32_t where;   // parameter index, shared offset, or local slot
  uint32_t length;  // shared and local arrays
  uint32_t op;      // alloc op number
};

class Builder {
 public:
  explicit Builder(const ir::Kernel& k) : k_(k) {}

  Plan run() {
    p_.kernel_name = k_.name;
    p_.facts = k_.facts;
    p_.params = k_.params;
    p_.units = static_cast<uint32_t>(k_.facts.cube_dim.total());
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const ir::Param& prm = k_.params[i];
      if (prm.type.is_global()) {
        arrays_[prm.value] = ArrayRef{ArraySpace::Global, uint32_t(i), 0, 0};
      } else if (!prm.type.is_value()) {
        throw Error("compile.unsupported", "kernel '" + k_.name + "': parameter '" + prm.name + "' has type " +
                                               ir::to_string(prm.type) +
                                               "; the CPU backend takes buffers, tensors and scalars");
      } else {
        // Scalars are broadcast into a slot at the start of each cube (see cpu_backend.cpp).
        slot_of(prm.value);
        scalar_params_.push_back({uint32_t(i), slot_[prm.value]});
      }
    }
    std::vector<Pending> ends;
    region(k_.body, Ctx{0, -1}, ends);
    uint32_t end = uint32_t(p_.code.size());
    patch(ends, end);
    p_.register_bytes = next_slot_;
    p_.frame_depth = max_depth_ + 1;
    p_.scalar_params = scalar_params_;
    return std::move(p_);
  }

 private:
  struct Ctx {
    int depth;  // control ops enclosing the region
    int loop;   // depth of the innermost enclosing loop (whose body holds the region), or -1
  };
  // A jump to the end of a region, patched once the end is known.
  struct Pending {
    size_t pc;
    bool second;  // patch target2 instead of target
  };

  uint32_t alloc(uint64_t bytes_per_unit_total) {
    uint64_t size = (bytes_per_unit_total + kSlotAlign - 1) / kSlotAlign * kSlotAlign;
    if (next_slot_ + size > (uint64_t(1) << 31)) {
      throw Error("compile.unsupported", "kernel '" + k_.name + "' needs more than 2 GiB of CPU registers per cube");
    }
    uint32_t off = next_slot_;
    next_slot_ += uint32_t(size);
    return off;
  }

  uint32_t slot_of(ir::Value v) {
    auto it = slot_.find(v);
    if (it != slot_.end()) return it->second;
    const ir::Type& t = k_.type_of(v);
    uint32_t off = alloc(uint64_t(p_.units) * uint64_t(t.element_bytes()));
    slot_[v] = off;
    return off;
  }

  static void patch(const std::vector<Pending>& list, uint32_t pc, std::vector<Instr>& code) {
    for (const Pending& j : list) (j.second ? code[j.pc].target2 : code[j.pc].target) = pc;
  }
  void patch(const std::vector<Pending>& list, uint32_t pc) { patch(list, pc, p_.code); }

  Instr& push(InstrFn fn, const ir::Op& op) {
    Instr in;
    in.fn = fn;
    in.kind = op.kind;
    in.op_number = number_;
    p_.code.push_back(in);
    return p_.code.back();
  }

  void region(const ir::Region& r, Ctx ctx, std::vector<Pending>& ends, int while_depth = -1) {
    for (ir::Value a : r.args) slot_of(a);
    for (const ir::Op& op : r.ops) {
      ++number_;
      this->op(op, ctx, ends, while_depth);
    }
  }

  void op(const ir::Op& op, Ctx ctx, std::vector<Pending>& ends, int while_depth) {
    auto operand_type = [&](size_t i) -> const ir::Type& { return k_.type_of(op.operands[i]); };
    auto s = [&](size_t i) { return slot_of(op.operands[i]); };
    switch (op.kind) {
      case OpKind::Const: {
        Instr& in = push(pick_const(op.type.scalar), op);
        in.dst = slot_of(op.result);
        in.width = op.type.width;
        const ir::AttrValue* v = op.attr(ir::AttrKey::Value);
        in.imm = v->i;
        in.fimm = v->tag == ir::AttrValue::Tag::Float ? v->f : double(v->i);
        return;
      }
      case OpKind::Select: {
        Instr& in = push(pick_select(op.type.scalar), op);
        in.dst = slot_of(op.result);
        in.a = s(0), in.b = s(1), in.c = s(2);
        in.width = op.type.width;
        in.d = operand_type(0).width == 1 && op.type.width > 1 ? 1 : 0;
        return;
      }
      case OpKind::Cast: {
        Instr& in = push(pick_cast(operand_type(0).scalar, op.type.scalar), op);
        in.dst = slot_of(op.result);
        in.a = s(0);
        in.width = op.type.width;
        return;
      }
      case OpKind::Bitcast:
      case OpKind::VarLoad: {
        Instr& in = push(pick_vector(OpKind::Bitcast), op);
        in.dst = slot_of(op.result);
        in.a = op.kind == OpKind::VarLoad ? var_slot(op.operands[0]) : s(0);
        in.bytes = uint32_t(op.type.element_bytes());
        return;
      }
      case OpKind::VarDecl: {
        var_slots_[op.result] = alloc(uint64_t(p_.units) * uint64_t(op.type.element_bytes()));
        return;
      }
      case OpKind::VarStore: {
        Instr& in = push(pick_vector(OpKind::Bitcast), op);
        in.dst = var_slot(op.operands[0]);
        in.a = s(1);
        in.bytes = uint32_t(operand_type(1).element_bytes());
        return;
      }
      case OpKind::VectorSplat:
      case OpKind::VectorExtract:
      case OpKind::VectorInsert: {
        Instr& in = push(op.kind == OpKind::VectorSplat ? pick_splat(uint32_t(ir::scalar_bytes(op.type.scalar)), op.type.width)
                                                        : pick_vector(op.kind),
                         op);
        in.dst = slot_of(op.result);
        in.a = s(0);
        if (op.kind == OpKind::VectorInsert) in.b = s(1);
        in.bytes = uint32_t(ir::scalar_bytes(op.type.scalar));
        in.width = op.kind == OpKind::VectorSplat ? op.type.width : operand_type(0).width;
        in.imm = op.attr_int(ir::AttrKey::Lane);
        return;
      }
      case OpKind::VectorConstruct: {
        Instr& in = push(pick_vector(op.kind), op);
        in.dst = slot_of(op.result);
        in.bytes = uint32_t(ir::scalar_bytes(op.type.scalar));
        in.width = op.type.width;
        in.imm = int64_t(p_.operand_lists.size());
        std::vector<uint32_t> lanes;
        for (size_t i = 0; i < op.operands.size(); ++i) lanes.push_back(s(i));
        p_.operand_lists.push_back(std::move(lanes));
        p_.operand_types.emplace_back();
        p_.formats.emplace_back();
        return;
      }
      case OpKind::AbsolutePos: case OpKind::UnitPos: case OpKind::CubePos: case OpKind::CubeDim:
      case OpKind::CubeCount: case OpKind::PlaneDim: case OpKind::UnitPosPlane: {
        Instr& in = push(pick_builtin(op.kind), op);
        in.dst = slot_of(op.result);
        in.flag = op.has_attr(ir::AttrKey::Axis);
        in.imm = op.attr_int(ir::AttrKey::Axis);
        return;
      }
      case OpKind::Len: {
        const ArrayRef& a = arrays_.at(op.operands[0]);
        if (a.space == ArraySpace::Global) {
          Instr& in = push(pick_memory(op.kind, a.space), op);
          in.dst = slot_of(op.result);
          in.a = a.where;
        } else {
          Instr& in = push(pick_const(ir::Scalar::U32), op);
          in.dst = slot_of(op.result);
          in.imm = a.length;
        }
        return;
      }
      case OpKind::TensorShape:
      case OpKind::TensorStride: {
        Instr& in = push(pick_memory(op.kind, ArraySpace::Global), op);
        in.dst = slot_of(op.result);
        in.a = arrays_.at(op.operands[0]).where;
        in.imm = op.attr_int(ir::AttrKey::Dim);
        return;
      }
      case OpKind::Load:
      case OpKind::Store: {
        const ArrayRef& a = arrays_.at(op.operands[0]);
        Instr& in = push(pick_memory(op.kind, a.space, uint32_t(operand_type(0).element_bytes()),
                                     operand_type(1).scalar),
                         op);
        fill_access(in, op, a);
        if (op.kind == OpKind::Load) in.dst = slot_of(op.result);
        else in.c = s(2);
        size_t mask_at = op.kind == OpKind::Load ? 2 : 3;
        in.flag = op.operands.size() > mask_at;
        if (in.flag) in.d = s(mask_at);
        if (!in.flag || a.space != ArraySpace::Global) p_.may_fail = true;
        return;
      }
      case OpKind::SharedAlloc: {
        uint64_t bytes = uint64_t(op.type.length) * uint64_t(op.type.element_bytes());
        uint64_t off = (uint64_t(p_.shared_bytes) + 15) / 16 * 16;
        if (off + bytes > (uint64_t(1) << 31)) throw Error("compile.unsupported", "shared memory over 2 GiB");
        arrays_[op.result] = ArrayRef{ArraySpace::Shared, uint32_t(off), op.type.length, number_};
        p_.shared_arrays.emplace_back(uint32_t(off), uint32_t(bytes));
        p_.shared_bytes = uint32_t(off + bytes);
        return;
      }
      case OpKind::LocalAlloc: {
        uint64_t per_unit = uint64_t(op.type.length) * uint64_t(op.type.element_bytes());
        uint32_t slot = alloc(per_unit * p_.units);
        arrays_[op.result] = ArrayRef{ArraySpace::Local, slot, op.type.length, number_};
        p_.local_arrays.emplace_back(slot, uint32_t(per_unit * p_.units));
        return;
      }
      case OpKind::SyncCube:
      case OpKind::SyncPlane: {
        push(pick_control(op.kind, ir::Scalar::Bool), op);
        if (op.kind == OpKind::SyncCube) p_.may_fail = true;
        return;
      }
      case OpKind::If: {
        begin_carried(op);
        Instr& begin = push(pick_control(OpKind::If, ir::Scalar::Bool), op);
        begin.a = s(0);
        begin.depth = ctx.depth;
        size_t begin_pc = p_.code.size() - 1;
        track_depth(ctx.depth);
        Ctx inner{ctx.depth + 1, ctx.loop};
        std::vector<Pending> then_ends;
        region(op.regions[0], inner, then_ends);
        size_t else_pc = p_.code.size();
        Instr el;
        el.fn = &exec_if_else;
        el.kind = OpKind::If;
        el.depth = ctx.depth;
        el.op_number = p_.code[begin_pc].op_number;
        p_.code.push_back(el);
        p_.code[begin_pc].target = uint32_t(else_pc);
        patch(then_ends, uint32_t(else_pc));
        std::vector<Pending> else_ends;
        region(op.regions[1], inner, else_ends);
        end_carried();
        size_t end_pc = p_.code.size();
        Instr end;
        end.fn = &exec_if_end;
        end.kind = OpKind::If;
        end.depth = ctx.depth;
        end.loop = ctx.loop;
        end.op_number = p_.code[begin_pc].op_number;
        p_.code.push_back(end);
        p_.code[else_pc].target = uint32_t(end_pc);
        patch(else_ends, uint32_t(end_pc));
        ends.push_back(Pending{end_pc, true});
        return;
      }
      case OpKind::For: {
        const ir::Type& it = operand_type(0);
        begin_carried(op);
        uint32_t i = slot_of(op.regions[0].args[0]);
        track_depth(ctx.depth);
        Instr& begin = push(&exec_loop_begin, op);
        begin.depth = ctx.depth;
        begin.a = s(0);
        begin.dst = i;
        begin.bytes = uint32_t(ir::scalar_bytes(it.scalar));
        size_t test_pc = p_.code.size();
        Instr& test = push(pick_for_test(it.scalar), op);
        test.depth = ctx.depth;
        test.dst = i;
        test.b = s(1);
        uint32_t step = s(2);
        std::vector<Pending> body_ends;
        region(op.regions[0], Ctx{ctx.depth + 1, ctx.depth}, body_ends);
        end_carried();
        size_t next_pc = p_.code.size();
        Instr& next = push(pick_for_next(it.scalar), op);
        next.depth = ctx.depth;
        next.dst = i;
        next.c = step;
        next.target = uint32_t(test_pc);
        patch(body_ends, uint32_t(next_pc));
        size_t end_pc = p_.code.size();
        Instr& end = push(&exec_loop_end, op);
        end.depth = ctx.depth;
        end.loop = ctx.loop;
        p_.code[test_pc].target = uint32_t(end_pc);
        ends.push_back(Pending{end_pc, true});
        return;
      }
      case OpKind::While: {
        track_depth(ctx.depth);
        begin_carried(op);
        Instr& begin = push(&exec_loop_begin, op);
        begin.depth = ctx.depth;
        size_t head_pc = p_.code.size();
        Instr& head = push(&exec_while_head, op);
        head.depth = ctx.depth;
        std::vector<Pending> cond_ends;
        region(op.regions[0], Ctx{ctx.depth + 1, ctx.loop}, cond_ends, ctx.depth);
        // The condition region ends with its `condition` op, the last instruction emitted.
        size_t cond_pc = p_.code.size() - 1;
        patch(cond_ends, uint32_t(cond_pc));
        std::vector<Pending> body_ends;
        region(op.regions[1], Ctx{ctx.depth + 1, ctx.depth}, body_ends);
        end_carried();
        size_t next_pc = p_.code.size();
        Instr& next = push(&exec_loop_next, op);
        next.target = uint32_t(head_pc);
        patch(body_ends, uint32_t(next_pc));
        size_t end_pc = p_.code.size();
        Instr& end = push(&exec_loop_end, op);
        end.depth = ctx.depth;
        end.loop = ctx.loop;
        p_.code[head_pc].target = uint32_t(end_pc);
        p_.code[cond_pc].target = uint32_t(end_pc);
        ends.push_back(Pending{end_pc, true});
        return;
      }
      case OpKind::Condition: {
        carry_out(op, carried_.back().condition_to, 1);
        Instr& in = push(pick_control(op.kind, ir::Scalar::Bool), op);
        in.a = s(0);
        in.depth = while_depth;
        return;  // target patched by the while
      }
      case OpKind::Yield: carry_out(op, carried_.back().yield_to); return;
      case OpKind::Break:
      case OpKind::Continue:
      case OpKind::Terminate: {
        if (op.kind == OpKind::Break) carry_out(op, loop_carried().break_to);
        if (op.kind == OpKind::Continue) carry_out(op, loop_carried().continue_to);
        Instr& in = push(pick_control(op.kind, ir::Scalar::Bool), op);
        in.loop = ctx.loop;
        ends.push_back(Pending{p_.code.size() - 1, false});
        return;
      }
      case OpKind::DebugPrint: {
        Instr& in = push(&exec_debug_print, op);
        in.imm = int64_t(p_.operand_lists.size());
        std::vector<uint32_t> slots;
        std::vector<ir::Scalar> types;
        for (size_t i = 0; i < op.operands.size(); ++i) {
          slots.push_back(s(i));
          types.push_back(operand_type(i).scalar);
        }
        p_.operand_lists.push_back(std::move(slots));
        p_.operand_types.push_back(std::move(types));
        p_.formats.push_back(op.attr(ir::AttrKey::Format)->s);
        return;
      }
      default: break;
    }
    if (ir::is_atomic(op.kind)) {
      const ArrayRef& a = arrays_.at(op.operands[0]);
      Instr& in = push(pick_atomic(op.kind, op.type.scalar, a.space), op);
      fill_access(in, op, a);
      in.dst = slot_of(op.result);
      in.c = s(2);
      size_t mask_at = 3;
      if (op.kind == OpKind::AtomicCas) {
        in.extra = s(3);
        mask_at = 4;
      }
      in.flag = op.operands.size() > mask_at;
      if (in.flag) in.d = s(mask_at);
      if (!in.flag || a.space != ArraySpace::Global) p_.may_fail = true;
      return;
    }
    if (op.has(ir::kPlane)) {
      Instr& in = push(pick_plane(op.kind, op.operands.empty() ? ir::Scalar::Bool : operand_type(0).scalar), op);
      in.dst = slot_of(op.result);
      if (!op.operands.empty()) in.a = s(0);
      if (op.operands.size() > 1) in.b = s(1);
      in.width = op.type.width;
      in.bytes = uint32_t(op.type.element_bytes());
      return;
    }
    if (ir::is_float_math(op.kind)) {
      Instr& in = push(pick_math(op.kind, operand_type(0).scalar), op);
      in.dst = slot_of(op.result);
      in.a = s(0);
      if (op.operands.size() > 1) in.b = s(1);
      in.width = operand_type(0).width;
      return;
    }
    if (op.type.kind == TypeKind::Tile) {
      throw Error("compile.unsupported", "the CPU backend does not run tile ops yet (kernel '" + k_.name + "')");
    }
    // Arithmetic, bitwise, compare, fma.
    Instr& in = push(pick_arith(op.kind, operand_type(0).scalar), op);
    in.dst = slot_of(op.result);
    in.a = s(0);
    if (op.operands.size() > 1) in.b = s(1);
    if (op.operands.size() > 2) in.c = s(2);
    in.width = operand_type(0).width;
    if (op.kind == OpKind::Div || op.kind == OpKind::Rem) p_.may_fail = true;
  }

  void fill_access(Instr& in, const ir::Op& op, const ArrayRef& a) {
    in.space = a.space;
    in.a = a.where;
    in.imm = a.length;
    in.array_op = a.op;
    in.b = slot_of(op.operands[1]);
    in.scalar2 = k_.type_of(op.operands[1]).scalar;
    in.bytes = uint32_t(k_.type_of(op.operands[0]).element_bytes());
  }

  // ---- values carried by control flow (docs/ir.md) ----
  // Each carried value has one slot, which the region arguments and results that hold it share: a
  // for's results with its body's arguments, a while's results with its body's arguments (its
  // condition region's arguments have their own). The op's exits copy what they carry into those
  // slots under the active mask, right before they leave: the units that take a break or continue
  // run nothing more of the iteration, so what they carried stays until the loop ends for them.
  struct Carried {
    ir::OpKind kind;
    std::vector<uint32_t> yield_to;      // a yield ending one of the op's regions
    std::vector<uint32_t> break_to;      // a loop's break: its results
    std::vector<uint32_t> continue_to;   // a loop's continue: what its body yields
    std::vector<uint32_t> condition_to;  // a while's condition: its results
  };

  std::vector<uint32_t> slots_of(std::span<const ir::Value> values) {
    std::vector<uint32_t> out;
    for (ir::Value v : values) {
      if (!k_.type_of(v).is_value()) {
        throw Error("compile.unsupported", "the CPU backend does not carry " + ir::to_string(k_.type_of(v)) +
                                               " values yet (kernel '" + k_.name + "')");
      }
      out.push_back(slot_of(v));
    }
    return out;
  }

  // Gives the op's results their slots, lets its region arguments share them and copies a loop's
  // initial values in (under the mask the op starts with).
  void begin_carried(const ir::Op& op) {
    std::vector<ir::Value> results = op.results();
    Carried c{op.kind, {}, {}, {}, {}};
    std::vector<uint32_t> result_slots = slots_of(results);
    if (op.kind == OpKind::If) {
      c.yield_to = result_slots;
    } else if (op.kind == OpKind::For) {
      std::span<const ir::Value> args = ir::loop_carried_args(op);
      for (size_t i = 0; i < args.size(); ++i) slot_[args[i]] = result_slots[i];
      carry_out(op, result_slots, 3);
      c.yield_to = c.break_to = c.continue_to = result_slots;
    } else {
      const ir::Region& body = op.regions[1];
      for (size_t i = 0; i < body.args.size(); ++i) slot_[body.args[i]] = result_slots[i];
      std::vector<uint32_t> head = slots_of(op.regions[0].args);
      carry_out(op, head, 0);
      c.yield_to = c.continue_to = head;
      c.break_to = c.condition_to = result_slots;
    }
    carried_.push_back(std::move(c));
  }
  void end_carried() { carried_.pop_back(); }

  const Carried& loop_carried() const {
    for (size_t i = carried_.size(); i-- > 0;) {
      if (carried_[i].kind != OpKind::If) return carried_[i];
    }
    throw Error("compile.unsupported", "a break or continue outside a loop in kernel '" + k_.name + "'");
  }

  // Copies operands [first, first + to.size()) of `op` into the slots `to` for the active units.
  // When one of them is itself a slot written here at another place (a for that yields its
  // arguments swapped), all go through fresh slots first.
  void carry_out(const ir::Op& op, const std::vector<uint32_t>& to, size_t first) {
    std::vector<uint32_t> from;
    std::vector<uint32_t> bytes;
    for (size_t i = 0; i < to.size(); ++i) {
      ir::Value v = op.operands[first + i];
      from.push_back(slot_of(v));
      bytes.push_back(uint32_t(k_.type_of(v).element_bytes()));
    }
    bool clash = false;
    for (size_t i = 0; i < from.size(); ++i) {
      for (size_t j = 0; j < to.size(); ++j) clash = clash || (i != j && from[i] == to[j]);
    }
    if (clash) {
      for (size_t i = 0; i < from.size(); ++i) {
        uint32_t staged = alloc(uint64_t(p_.units) * bytes[i]);
        copy(op, from[i], staged, bytes[i]);
        from[i] = staged;
      }
    }
    for (size_t i = 0; i < from.size(); ++i) {
      if (from[i] != to[i]) copy(op, from[i], to[i], bytes[i]);
    }
  }
  void carry_out(const ir::Op& op, const std::vector<uint32_t>& to) { carry_out(op, to, 0); }

  void copy(const ir::Op& op, uint32_t from, uint32_t to, uint32_t bytes) {
    Instr& in = push(pick_vector(OpKind::Bitcast), op);
    in.dst = to;
    in.a = from;
    in.bytes = bytes;
  }

  uint32_t var_slot(ir::Value v) { return var_slots_.at(v); }
  void track_depth(int d) { max_depth_ = std::max(max_depth_, d); }

  const ir::Kernel& k_;
  Plan p_;
  std::unordered_map<ir::Value, uint32_t> slot_;
  std::unordered_map<ir::Value, uint32_t> var_slots_;
  std::unordered_map<ir::Value, ArrayRef> arrays_;
  std::vector<Carried> carried_;  // the control ops being built that carry values, innermost last
  std::vector<std::pair<uint32_t, uint32_t>> scalar_params_;
  uint32_t next_slot_ = 0;
  uint32_t number_ = 0;
  int max_depth_ = 0;
};

}  // namespace

Plan build_plan(const ir::Kernel& k) { return Builder(k).run(); }

}  // namespace kiln::cpu
