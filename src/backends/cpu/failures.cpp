// Which ops can stop a CPU launch midway, and so which buffers a launch copies first (decision
// 005). Every point where an executor throws, and when it cannot:
// - bounds.out_of_range (load, store, atomics): a global access cannot fail when its mask
//   implies `index < len(array)` (the mask passes/checked_io adds in checked mode); a shared or
//   local access cannot when its index provably lies in the array's fixed length (the ranges
//   below);
// - arith.division_by_zero (integer div and rem): cannot when the divisor provably is not zero;
// - sync.divergent (sync.cube): cannot when every live unit of the cube is active wherever the
//   barrier is reached (`converged` below);
// - debug.print formats into a growing string, which can throw std::bad_alloc: it can fail;
// - loop.zero_trips (check.trips): it can fail;
// - a wide access ({lanes = W}) has no mask: like an unmasked global access, it can fail;
// - copy.async checks both its arrays and queues its copy in a growing list: it can fail;
// - the wgmma ops check their warp groups, factors, fences and the memory in flight: they can fail.
// Every other executor runs to its end. (Cube state is allocated before any cube runs, so running
// out of memory for it fails before anything is written: cpu_backend.cpp.)
//
// Cubes run in parallel and in any order relative to each other, so once any op can fail, any
// write of the kernel may have happened before the failure, in another cube: a launch that can
// fail copies every parameter the kernel writes, and one that cannot copies nothing. Parameters
// the kernel never writes are never copied (writes stay inside their parameter's visible range, so
// an aliasing read-only parameter needs no copy of its own).
#include <unordered_map>

#include "backends/cpu/analysis.h"

namespace kiln::cpu {

namespace {

using ir::OpKind;
using ir::Scalar;

// An inclusive range of integer values (of every lane of a vector).
struct Range {
  __int128 lo = 0, hi = -1;  // empty (unknown) when lo > hi
  bool known() const { return lo <= hi; }
};

Range type_range(const ir::Type& t) {
  if (!t.is_value()) return {};
  Scalar s = t.scalar;
  if (s == Scalar::Bool) return {0, 1};
  if (!ir::is_int(s)) return {};
  int bits = ir::scalar_bytes(s) * 8;
  if (ir::is_signed_int(s)) return {-(__int128(1) << (bits - 1)), (__int128(1) << (bits - 1)) - 1};
  return {0, (__int128(1) << bits) - 1};
}

// A constant's value in its type (AttrValue::i holds the bits).
__int128 const_value(int64_t bits, Scalar s) {
  if (s == Scalar::Bool) return bits != 0;
  int width = ir::scalar_bytes(s) * 8;
  uint64_t u = width == 64 ? uint64_t(bits) : uint64_t(bits) & ((uint64_t(1) << width) - 1);
  if (ir::is_signed_int(s) && width < 64 && (u >> (width - 1))) return __int128(u) - (__int128(1) << width);
  if (ir::is_signed_int(s) && width == 64) return __int128(int64_t(u));
  return __int128(u);
}

class Analysis {
 public:
  Analysis(const ir::Kernel& k, const std::vector<uint8_t>& uniform) : k_(k), u_(uniform) {}

  FailureFacts run() {
    ranges_.assign(k_.value_types.size(), Range{});
    for (size_t v = 0; v < k_.value_types.size(); ++v) ranges_[v] = type_range(k_.value_types[v]);
    region(k_.body, true);
    FailureFacts f;
    f.failing_ops = std::move(failing_);
    if (!f.failing_ops.empty()) {
      std::vector<uint8_t> written = written_params(k_);
      for (size_t i = 0; i < written.size(); ++i) {
        if (written[i]) f.restore_params.push_back(uint32_t(i));
      }
    }
    return f;
  }

 private:
  // Ops in pre-order; `converged`: every live unit of the cube is active throughout the region.
  void region(const ir::Region& r, bool converged) {
    for (const ir::Op& op : r.ops) {
      ++number_;
      if (op.result != ir::kNoValue) def_[op.result] = &op;
      if (op.result != ir::kNoValue) range_of(op);
      if (can_fail(op, converged)) failing_.push_back(number_);
      switch (op.kind) {
        case OpKind::If: {
          bool inner = converged && u_[op.operand(ir::ops::If::condition)];
          region(op.regions[0], inner);
          region(op.regions[1], inner);
          break;
        }
        case OpKind::For: {
          // A for of uniform bounds runs the same iterations for all its units.
          const ir::Value i = op.regions[0].args[0];
          using F = ir::ops::For;
          Range hi = ranges_[op.operand(F::upper_bound)];
          if (hi.known()) ranges_[i] = Range{type_range(k_.type_of(i)).lo, hi.hi - 1};
          bool inner = converged && u_[op.operand(F::lower_bound)] && u_[op.operand(F::upper_bound)] &&
                       u_[op.operand(F::step)] && !divergent_exit(op.regions[0]);
          region(op.regions[0], inner);
          break;
        }
        case OpKind::While: {
          const ir::Region& cond = op.regions[0];
          bool uniform_cond = !cond.ops.empty() && cond.ops.back().kind == OpKind::Condition &&
                              u_[cond.ops.back().operand(ir::ops::Condition::condition)];
          bool inner = converged && uniform_cond && !divergent_exit(op.regions[1]);
          region(op.regions[0], inner);
          region(op.regions[1], inner);
          break;
        }
        default:
          for (const ir::Region& sub : op.regions) region(sub, false);
          break;
      }
    }
  }

  // Whether a break or continue of the loop whose body is `body` may be taken by some of its
  // units and not others: it sits under an if of a varying condition (or in a nested while's
  // condition region, whose breaks leave this loop; counted as divergent). Nested loops' bodies
  // hold their own breaks.
  bool divergent_exit(const ir::Region& body) { return exits_under(body, false); }
  bool exits_under(const ir::Region& r, bool varying) {
    for (const ir::Op& op : r.ops) {
      if ((op.kind == OpKind::Break || op.kind == OpKind::Continue) && varying) return true;
      if (op.kind == OpKind::If) {
        bool v = varying || !u_[op.operand(ir::ops::If::condition)];
        if (exits_under(op.regions[0], v) || exits_under(op.regions[1], v)) return true;
      } else if (op.kind == OpKind::While) {
        if (exits_under(op.regions[0], true)) return true;
      }
    }
    return false;
  }

  bool can_fail(const ir::Op& op, bool converged) {
    switch (op.kind) {
      case OpKind::Div:
      case OpKind::Rem: {
        if (!op.type.is_int()) return false;
        Range d = ranges_[op.operand(ir::ops::Binary::rhs)];
        return !d.known() || (d.lo <= 0 && d.hi >= 0);
      }
      case OpKind::SyncCube: return !converged;
      case OpKind::DebugPrint: return true;
      case OpKind::CheckTrips: return true;
      case OpKind::CopyAsync: return true;  // bounds, unmasked by checked mode, and a growing queue
      case OpKind::MbarrierInit:
      case OpKind::MbarrierArrive:
      case OpKind::MbarrierArriveExpectTx:
      case OpKind::MbarrierExpectTx:
      case OpKind::MbarrierCompleteTx:
      case OpKind::MbarrierTryWait: return true;  // bounds, set-up, counts, deadlock (barrier.cpp)
      case OpKind::WgmmaMmaAsync:
      case OpKind::WgmmaFence:
      case OpKind::WgmmaCommitGroup:
      case OpKind::WgmmaWaitGroup: return true;  // warp groups, bounds, fences, races (wgmma.cpp)
      default: break;
    }
    if (op.kind == OpKind::Load || op.kind == OpKind::Store || ir::is_atomic(op.kind)) return access_can_fail(op);
    return false;
  }

  bool access_can_fail(const ir::Op& op) {
    // Loads, stores and atomics all take the array, then the index (ops::Store's names).
    const ir::Value array = op.operand(ir::ops::Store::array), index = op.operand(ir::ops::Store::index);
    const ir::Type& at = k_.type_of(array);
    if (at.is_global()) {
      const ir::Value mask = op.mask();
      return mask == ir::kNoValue || !implies_in_bounds(mask, array, index);
    }
    Range r = ranges_[index];
    return !r.known() || r.lo < 0 || r.hi >= __int128(at.length);
  }

  // Whether mask `m` is false wherever `index` is at or past len(array), as the executors read
  // the index (read_index: a signed index sign-extends to 64 bits).
  bool implies_in_bounds(ir::Value m, ir::Value array, ir::Value index) {
    const ir::Op* d = def(m);
    if (!d) return false;
    using B = ir::ops::Binary;
    if (d->kind == OpKind::And) {
      return implies_in_bounds(d->operand(B::lhs), array, index) || implies_in_bounds(d->operand(B::rhs), array, index);
    }
    if (d->kind != OpKind::Lt) return false;
    const ir::Value lhs = d->operand(B::lhs);
    Scalar cmp = k_.type_of(lhs).scalar;
    if (cmp != Scalar::U32 && cmp != Scalar::U64) return false;
    // The right side: len(array), or len widened to u64.
    const ir::Op* len = def(d->operand(B::rhs));
    if (len && len->kind == OpKind::Cast) len = def(len->operand(ir::ops::Unary::x));
    if (!len || len->kind != OpKind::Len || len->operand(ir::ops::Array::array) != array) return false;
    // The left side: the index, or a cast of it that keeps every value the executor reads.
    if (lhs == index) return true;
    const ir::Op* c = def(lhs);
    if (!c || c->kind != OpKind::Cast || c->operand(ir::ops::Unary::x) != index) return false;
    Scalar from = k_.type_of(index).scalar;
    if (ir::is_unsigned_int(from)) return ir::scalar_bytes(cmp) >= ir::scalar_bytes(from);
    // A signed index reads sign-extended to 64 bits; only a compare in u64 sees the same number.
    // (In u32, an i32 index of -2^31 compares as 2^31 and passes for a buffer longer than that.)
    return ir::is_signed_int(from) && cmp == Scalar::U64;
  }

  const ir::Op* def(ir::Value v) const {
    auto it = def_.find(v);
    return it == def_.end() ? nullptr : it->second;
  }

  // The range of op's result, from its operands' (only the ops that give indices and divisors
  // their ranges; everything else keeps its type's range).
  void range_of(const ir::Op& op) {
    const ir::Type& t = op.type;
    if (!t.is_value() || !(t.is_int() || t.is_bool())) return;
    const Range full = type_range(t);
    auto r = [&](ir::Value v) { return ranges_[v]; };
    // The ranges of a binary op's operands, and of a unary op's.
    auto lhs = [&] { return r(op.operand(ir::ops::Binary::lhs)); };
    auto rhs = [&] { return r(op.operand(ir::ops::Binary::rhs)); };
    auto x = [&] { return r(op.operand(ir::ops::Unary::x)); };
    auto fit = [&](Range x) { return x.known() && x.lo >= full.lo && x.hi <= full.hi ? x : full; };
    const ir::Dim3 dim = k_.facts.cube_dim;
    const __int128 units = __int128(dim.total());
    int axis = int(op.attr_int(ir::AttrKey::Axis, -1));
    auto dim_of = [&](int a) { return __int128(a == 0 ? dim.x : a == 1 ? dim.y : dim.z); };
    Range out = full;
    switch (op.kind) {
      case OpKind::Const: {
        const ir::AttrValue* v = op.attr(ir::AttrKey::Value);
        if (v && v->tag != ir::AttrValue::Tag::Float) {
          __int128 c = const_value(v->i, t.scalar);
          out = {c, c};
        }
        break;
      }
      case OpKind::UnitPos: out = {0, (axis < 0 ? units : dim_of(axis)) - 1}; break;
      case OpKind::UnitPosPlane: out = {0, std::min<__int128>(ir::Target::kPlaneWidth - 1, units - 1)}; break;
      case OpKind::PlaneDim: out = {ir::Target::kPlaneWidth, ir::Target::kPlaneWidth}; break;
      case OpKind::CubeDim: out = axis < 0 ? Range{units, units} : Range{dim_of(axis), dim_of(axis)}; break;
      // A launch of no cubes runs nothing, so a running cube sees at least one on each axis.
      case OpKind::CubeCount:
        if (axis >= 0) out = {1, full.hi};
        break;
      case OpKind::Add: {
        Range a = lhs(), b = rhs();
        if (a.known() && b.known()) out = fit({a.lo + b.lo, a.hi + b.hi});
        break;
      }
      case OpKind::Sub: {
        Range a = lhs(), b = rhs();
        if (a.known() && b.known()) out = fit({a.lo - b.hi, a.hi - b.lo});
        break;
      }
      case OpKind::Mul: {
        Range a = lhs(), b = rhs();
        const __int128 limit = __int128(1) << 63;  // keeps the products inside __int128
        auto small = [&](Range x) { return x.known() && x.lo >= -limit && x.hi <= limit; };
        if (small(a) && small(b)) {
          __int128 p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
          out = fit({std::min(std::min(p[0], p[1]), std::min(p[2], p[3])),
                     std::max(std::max(p[0], p[1]), std::max(p[2], p[3]))});
        }
        break;
      }
      case OpKind::Div: {
        Range a = lhs(), b = rhs();
        if (a.known() && b.known() && a.lo >= 0 && b.lo > 0) out = {a.lo / b.hi, a.hi / b.lo};
        break;
      }
      case OpKind::Rem: {
        Range a = lhs(), b = rhs();
        if (a.known() && b.known() && a.lo >= 0 && b.lo > 0) out = {0, std::min(a.hi, b.hi - 1)};
        break;
      }
      case OpKind::And: {
        Range a = lhs(), b = rhs();
        if (a.known() && a.lo >= 0 && b.known() && b.lo >= 0) out = {0, std::min(a.hi, b.hi)};
        else if (a.known() && a.lo >= 0) out = {0, a.hi};
        else if (b.known() && b.lo >= 0) out = {0, b.hi};
        break;
      }
      case OpKind::Shr: {
        Range a = lhs(), b = rhs();
        int bits = ir::scalar_bytes(t.scalar) * 8;
        if (a.known() && b.known() && a.lo >= 0 && b.lo >= 0 && b.hi < bits) {
          out = {a.lo >> int(b.hi), a.hi >> int(b.lo)};
        }
        break;
      }
      case OpKind::Min:
      case OpKind::Max: {
        Range a = lhs(), b = rhs();
        if (a.known() && b.known()) {
          out = op.kind == OpKind::Min ? Range{std::min(a.lo, b.lo), std::min(a.hi, b.hi)}
                                       : Range{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
        }
        break;
      }
      case OpKind::Cast: {
        const ir::Type& from = k_.type_of(op.operand(ir::ops::Unary::x));
        if (from.is_int() || from.is_bool()) out = fit(x());
        break;
      }
      case OpKind::Select:
        out = fit(join(r(op.operand(ir::ops::Select::if_true)), r(op.operand(ir::ops::Select::if_false))));
        break;
      case OpKind::VectorSplat:
      case OpKind::VectorExtract: out = fit(x()); break;
      case OpKind::VectorInsert:
        out = fit(join(r(op.operand(ir::ops::VectorInsert::vector)), r(op.operand(ir::ops::VectorInsert::value))));
        break;
      case OpKind::VectorConstruct: {
        std::span<const ir::Value> lanes = op.operands_from(ir::ops::VectorConstruct::lanes);
        Range acc = r(lanes.front());
        for (ir::Value v : lanes) acc = join(acc, r(v));
        out = fit(acc);
        break;
      }
      default: break;
    }
    ranges_[op.result] = out;
  }

  static Range join(Range a, Range b) {
    if (!a.known() || !b.known()) return {};
    return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
  }

  const ir::Kernel& k_;
  const std::vector<uint8_t>& u_;
  std::vector<Range> ranges_;
  std::unordered_map<ir::Value, const ir::Op*> def_;
  std::vector<uint32_t> failing_;
  uint32_t number_ = 0;
};

}  // namespace

FailureFacts failure_facts(const ir::Kernel& k, const std::vector<uint8_t>& uniform) {
  return Analysis(k, uniform).run();
}

}  // namespace kiln::cpu
