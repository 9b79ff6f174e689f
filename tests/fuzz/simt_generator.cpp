// The SIMT family: random kernels over 2 to 4 element types. Each unit loads values of each type
// from its input buffers (at indices it computes, in range, or past it for a checked access of
// a checked launch), combines them with arithmetic, bitwise ops, compares, selects, casts, math
// and vectors, inside ifs, for loops and while loops (with break and continue) that carry values
// (some with trip counts that differ from unit to unit), and stores `kSlots` results of each type
// at its own place in that type's output buffer. At the kernel's top level, where every unit of
// the cube is active, it adds the collectives: plane ops, and shared memory that each unit writes
// at its own slots, read by others after a barrier. Atomics combine into small buffers of their
// own. Constants lean on the edges: 0, ±1, the integer extremes, ±0, ±inf, NaN, denormals, the
// largest finite floats and the limits of float-to-int casts.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>

#include "kiln/ir/builder.h"
#include "program.h"

namespace kiln::fuzz {

namespace {

using ir::OpKind;
using ir::Scalar;
using ir::Type;
using ir::Value;

constexpr uint32_t kInputs = 61;  // elements of each input buffer (prime: indices spread)
constexpr uint32_t kSlots = 3;    // results a unit stores of each type
// Elements of an atomics buffer: two for each atomic op kind, so that one element sees one kind
// (kinds mixed on one element do not commute).
constexpr uint32_t kAtomicKinds = 9;
constexpr uint32_t kAtomicSlots = 2 * kAtomicKinds;

const OpKind kAtomicOps[kAtomicKinds] = {OpKind::AtomicAdd, OpKind::AtomicSub,      OpKind::AtomicMin,
                                         OpKind::AtomicMax, OpKind::AtomicAnd,      OpKind::AtomicOr,
                                         OpKind::AtomicXor, OpKind::AtomicExchange, OpKind::AtomicCas};

const Scalar kNumeric[] = {Scalar::I8,  Scalar::I16, Scalar::I32, Scalar::I64,  Scalar::U8,  Scalar::U16,
                           Scalar::U32, Scalar::U64, Scalar::F16, Scalar::BF16, Scalar::F32, Scalar::F64};

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed), b_(p_.kernel) { p_.seed = seed; }

  Program make() {
    ir::Kernel& k = p_.kernel;
    k.name = "fuzz_simt";
    const uint32_t unit_choices[] = {1, 31, 32, 33, 64, 127, 129};
    p_.units = unit_choices[pick(0, 6)];
    p_.cubes = uint32_t(pick(1, 3));
    p_.checked = pick(0, 1) == 0;
    k.facts.mode = p_.checked ? ir::ExecMode::Checked : ir::ExecMode::Unchecked;
    k.facts.cube_dim = ir::Dim3{p_.units, 1, 1};
    // The types: 2 to 4 of the numeric ones, u32 always (indices and trip counts).
    types_ = {Scalar::U32};
    const int n = pick(1, 3);
    while (int(types_.size()) < n + 1) {
      const Scalar s = kNumeric[pick(0, 11)];
      if (std::find(types_.begin(), types_.end(), s) == types_.end()) types_.push_back(s);
    }
    for (Scalar s : types_) {
      const Type in = Type::buffer(Type::scalar_of(s), ir::Access::ReadOnly);
      k.params.push_back(ir::Param{std::string("in_") + std::string(ir::scalar_name(s)), in, k.new_value(in)});
      p_.args.push_back(inputs(s, kInputs));
      p_.is_output.push_back(false);
      p_.per_unit.push_back(false);
    }
    for (Scalar s : types_) {
      const Type out = Type::buffer(Type::scalar_of(s), ir::Access::ReadWrite);
      k.params.push_back(ir::Param{std::string("out_") + std::string(ir::scalar_name(s)), out, k.new_value(out)});
      // Poison: 0xa5 in every byte, never a value a program stores by chance alone.
      p_.args.push_back(
          std::vector<unsigned char>(size_t(p_.cubes) * p_.units * kSlots * size_t(ir::scalar_bytes(s)), 0xa5));
      p_.is_output.push_back(true);
      p_.per_unit.push_back(true);
    }
    add_atomic_buffers();
    if (chance(45)) add_vector_output();
    scopes_.emplace_back();
    gid_ = b_.emit(OpKind::AbsolutePos, {}, u32());
    keep(gid_);
    unit_pos_ = b_.emit(OpKind::UnitPos, {}, u32());
    keep(unit_pos_);
    keep(b_.emit(OpKind::CubePos, {}, u32()));
    if (chance(30)) keep(b_.emit(OpKind::UnitPosPlane, {}, u32()));
    if (chance(10)) keep(b_.emit(OpKind::PlaneDim, {}, u32()));
    for (size_t t = 0; t < types_.size(); ++t) {
      for (int i = 0; i < 2; ++i) keep(load(t));
      keep(constant(types_[t]));
    }
    keep(b_.const_bool(pick(0, 1)));
    body(pick(8, 30), 0);
    if (vector_out_ != ir::kNoValue) wide_store();
    for (size_t t = 0; t < types_.size(); ++t) {
      for (uint32_t slot = 0; slot < kSlots; ++slot) {
        // The latest values first: they depend on the most.
        Value v = recent(types_[t]);
        Value at = add(mul(gid_, const_u32(kSlots)), const_u32(slot));
        b_.emit(OpKind::Store, {k.params[types_.size() + t].value, at, v}, Type::none(), maybe_checked());
      }
    }
    return std::move(p_);
  }

 private:
  // An output parameter of `elements` elements of `s`, poisoned: 0xa5 in every byte, never a value
  // a program stores by chance alone.
  Value add_output(const std::string& name, Scalar s, size_t elements, bool per_unit) {
    ir::Kernel& k = p_.kernel;
    const Type t = Type::buffer(Type::scalar_of(s), ir::Access::ReadWrite);
    k.params.push_back(ir::Param{name + std::string(ir::scalar_name(s)), t, k.new_value(t)});
    p_.args.push_back(std::vector<unsigned char>(elements * size_t(ir::scalar_bytes(s)), 0xa5));
    p_.is_output.push_back(true);
    p_.per_unit.push_back(per_unit);
    return k.params.back().value;
  }

  // The buffers atomics combine into: one for u32 (always a type here) and one for each other
  // type of the program that atomics take (32- and 64-bit integers, f32, f64).
  void add_atomic_buffers() {
    for (Scalar s : types_) {
      if (ir::scalar_bytes(s) < 4 || s == Scalar::F16 || s == Scalar::BF16) continue;
      atomic_buffers_[s] = add_output("acc_", s, kAtomicSlots, false);
    }
  }

  // A vector type of the program's, and the buffer the end of the kernel stores one of its values
  // into, W elements a unit, by a wide store.
  void add_vector_output() {
    vector_scalar_ = types_[size_t(pick(0, int(types_.size()) - 1))];
    vector_width_ = pick(0, 1) ? 4 : 2;
    vector_out_ = add_output("vout_", vector_scalar_, size_t(p_.cubes) * p_.units * vector_width_, true);
  }

  std::vector<ir::Attr> maybe_checked() {
    if (!chance(50)) return {};
    return {ir::Attr{ir::AttrKey::Checked, ir::AttrValue::of_bool(true)}};
  }

  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(int percent) { return pick(0, 99) < percent; }
  static Type ty(Scalar s) { return Type::scalar_of(s); }
  static Type u32() { return ty(Scalar::U32); }
  Value const_u32(uint32_t v) { return b_.const_int(Scalar::U32, v); }
  Value add(Value a, Value b) { return b_.emit(OpKind::Add, {a, b}, u32()); }
  Value mul(Value a, Value b) { return b_.emit(OpKind::Mul, {a, b}, u32()); }
  Scalar scalar(Value v) const { return p_.kernel.value_types[v].scalar; }

  void keep(Value v) { scopes_.back()[scalar(v)].push_back(v); }
  // The values of type s visible here (this scope and the ones around it).
  std::vector<Value> visible(Scalar s) const {
    std::vector<Value> all;
    for (const auto& scope : scopes_) {
      auto it = scope.find(s);
      if (it != scope.end()) all.insert(all.end(), it->second.begin(), it->second.end());
    }
    return all;
  }
  // A visible value of type s, made from another type's by a cast where there is none.
  Value any(Scalar s) {
    std::vector<Value> v = visible(s);
    if (v.empty()) {
      Value from = any(Scalar::U32);
      Value c = b_.emit(OpKind::Cast, {from}, ty(s));
      keep(c);
      return c;
    }
    return v[size_t(pick(0, int(v.size()) - 1))];
  }
  Value recent(Scalar s) {
    std::vector<Value> v = visible(s);
    if (v.empty()) return any(s);
    const int n = int(v.size());
    return v[size_t(pick(std::max(0, n - 4), n - 1))];
  }
  Scalar any_type() { return chance(15) ? Scalar::Bool : types_[size_t(pick(0, int(types_.size()) - 1))]; }

  // (x * a + b) % n for a visible u32 x: an index below n by construction.
  Value index_below(uint32_t n) {
    Value i = add(mul(any(Scalar::U32), const_u32(uint32_t(pick(1, 97)))), const_u32(uint32_t(pick(0, 60))));
    return b_.emit(OpKind::Rem, {i, const_u32(n)}, u32());
  }

  Value load(size_t t) {
    // In range; or, checked in a checked launch, up to 8 past the end (such a load reads zero).
    const bool past_the_end = p_.checked && chance(15);
    Value at = index_below(past_the_end ? kInputs + 8 : kInputs);
    std::vector<ir::Attr> attrs =
        past_the_end ? std::vector<ir::Attr>{ir::Attr{ir::AttrKey::Checked, ir::AttrValue::of_bool(true)}}
                     : maybe_checked();
    return b_.emit(OpKind::Load, {p_.kernel.params[t].value, at}, ty(types_[t]), std::move(attrs));
  }

  Value constant(Scalar s) {
    if (s == Scalar::Bool) return b_.const_bool(pick(0, 1));
    if (ir::is_float(s)) {
      const double edges[] = {0.0,
                              -0.0,
                              1.0,
                              -1.0,
                              0.5,
                              2.0,
                              INFINITY,
                              -INFINITY,
                              NAN,
                              65504.0,
                              1e-7,
                              5.9604644775390625e-08,
                              1.401298464324817e-45,
                              3.4028234663852886e38,
                              1e300,
                              1e-310,
                              3.0,
                              -7.25,
                              3.3895313892515355e38,    // bf16's largest finite
                              9.183549615799121e-41,    // a bf16 denormal
                              1.7976931348623157e308};  // f64's largest finite
      double v = chance(60) ? edges[pick(0, 20)] : std::uniform_real_distribution<double>(-100, 100)(rng_);
      return b_.const_float(s, v);
    }
    const int bits = ir::scalar_bytes(s) * 8;
    const bool sig = ir::is_signed_int(s);
    int64_t lo = sig ? (bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1))) : 0;
    int64_t hi = sig ? (bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (bits - 1)) - 1)
                     : (bits == 64 ? -1 : (int64_t(1) << bits) - 1);
    const int64_t edges[] = {0, 1, 2, 3, 7, 8, 31, 32, 33, 63, 64, lo, hi, sig ? -1 : hi - 1, sig ? lo + 1 : 255};
    int64_t v = chance(60) ? edges[pick(0, 14)] : int64_t(rng_());
    if (bits < 64) {  // in the type's range, as the IR's constants are
      const uint64_t m = (uint64_t(1) << bits) - 1;
      uint64_t u = uint64_t(v) & m;
      v = sig && (u >> (bits - 1)) ? int64_t(u | ~m) : int64_t(u);
    }
    return b_.const_int(s, v);
  }

  std::vector<unsigned char> inputs(Scalar s, uint32_t n) {
    const int bytes = ir::scalar_bytes(s);
    std::vector<unsigned char> out(size_t(n) * bytes);
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t bits;
      if (ir::is_float(s) && chance(70)) {
        // A value near the ordinary range, as bits of the type (special values come through constants).
        const double v = std::uniform_real_distribution<double>(-50, 50)(rng_);
        if (s == Scalar::F64) std::memcpy(&bits, &v, 8);
        else {
          const float f = float(v);
          uint32_t u;
          std::memcpy(&u, &f, 4);
          bits = s == Scalar::F32 ? u : s == Scalar::BF16 ? (u >> 16) : 0;
          if (s == Scalar::F16) {
            // f16 by its fields: a normal of exponent -8..5.
            bits = (uint64_t(pick(0, 1)) << 15) | (uint64_t(pick(7, 20)) << 10) | uint64_t(pick(0, 1023));
          }
        }
      } else {
        bits = rng_();  // any bits: NaNs, infinities and denormals included for floats
      }
      std::memcpy(out.data() + size_t(i) * bytes, &bits, size_t(bytes));
    }
    return out;
  }

  // `n` steps at nesting depth `depth`. Collectives only at the top level (depth 0), where the
  // control flow is uniform: every unit of the cube gets there.
  void body(int n, int depth) {
    for (int i = 0; i < n; ++i) {
      const int r = pick(0, 99);
      if (depth < 2 && r < 7) if_with_results(depth);
      else if (depth < 2 && r < 11) for_loop(depth);
      else if (depth < 2 && r < 15) while_loop(depth);
      else if (depth == 0 && r < 24) collective();
      else if (r < 27) atomic();
      else if (vector_out_ != ir::kNoValue && r < 31) vector_block();
      else if (!loops_.empty() && r < 37) jump();
      else keep(step());
    }
  }

  Value step() {
    const Scalar s = any_type();
    const int r = pick(0, 99);
    if (s == Scalar::Bool) {
      if (r < 55) return compare();
      if (r < 85)
        return b_.emit(pick(0, 2) == 0 ? OpKind::And : pick(0, 1) ? OpKind::Or : OpKind::Xor, {any(s), any(s)}, ty(s));
      if (r < 92) return b_.emit(OpKind::Not, {any(s)}, ty(s));
      return cast_to(s);
    }
    if (r < 5) return constant(s);
    if (r < 10) {
      for (size_t t = 0; t < types_.size(); ++t) {
        if (types_[t] == s) return load(t);
      }
    }
    if (r < 20) return cast_to(s);
    if (r < 26) return b_.emit(OpKind::Select, {any(Scalar::Bool), any(s), any(s)}, ty(s));
    if (ir::is_float(s)) return float_step(s);
    return int_step(s);
  }

  Value compare() {
    const Scalar s = types_[size_t(pick(0, int(types_.size()) - 1))];
    const OpKind kinds[] = {OpKind::Eq, OpKind::Ne, OpKind::Lt, OpKind::Le, OpKind::Gt, OpKind::Ge};
    return b_.emit(kinds[pick(0, 5)], {any(s), any(s)}, ty(Scalar::Bool));
  }

  Value cast_to(Scalar s) {
    Scalar from = any_type();
    if (from == s) from = Scalar::U32;
    if (s != Scalar::Bool && ir::scalar_bytes(s) == ir::scalar_bytes(from) && chance(25) && from != Scalar::Bool) {
      return b_.emit(OpKind::Bitcast, {any(from)}, ty(s));
    }
    if (ir::is_float(from) && ir::is_int(s) && s != Scalar::Bool && chance(30)) {
      return b_.emit(OpKind::Cast, {saturation_edge(from, s)}, ty(s));
    }
    return b_.emit(OpKind::Cast, {any(from)}, ty(s));
  }

  // A constant of float type `from` at the edge of integer type `to`'s range: just inside, on,
  // or just outside either end, where a float-to-int cast starts to saturate.
  Value saturation_edge(Scalar from, Scalar to) {
    const int bits = ir::scalar_bytes(to) * 8;
    const bool sig = ir::is_signed_int(to);
    const double above = std::ldexp(1.0, sig ? bits - 1 : bits);  // the first value past the top
    const double below = sig ? -above : 0.0;                      // the bottom
    const int precision = from == Scalar::F64 ? 53 : from == Scalar::F32 ? 24 : from == Scalar::F16 ? 11 : 8;
    const double ulp = std::ldexp(1.0, -precision);
    const double edges[] = {above,
                            above * (1 - ulp),  // the largest float below it
                            above - 1,
                            above - 0.5,
                            above + 1,
                            above * (1 + 2 * ulp),
                            below,
                            below - 1,
                            below - 0.5,
                            below + 0.5,
                            sig ? below * (1 + 2 * ulp) : -1.0,
                            sig ? below * (1 - ulp) : 0.99};
    return b_.const_float(from, edges[pick(0, 11)]);
  }

  Value float_step(Scalar s) {
    const OpKind binary[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div,
                             OpKind::Rem, OpKind::Min, OpKind::Max, OpKind::CopySign};
    const OpKind unary[] = {OpKind::Neg,   OpKind::Abs, OpKind::Sqrt, OpKind::Floor, OpKind::Ceil, OpKind::Trunc,
                            OpKind::Round, OpKind::Exp, OpKind::Log,  OpKind::Sin,   OpKind::Cos,  OpKind::Tanh};
    const int r = pick(0, 99);
    if (r < 55) return b_.emit(binary[pick(0, 7)], {any(s), any(s)}, ty(s));
    if (r < 62) return b_.emit(OpKind::Fma, {any(s), any(s), any(s)}, ty(s));
    if (r < 70) {
      Value p = b_.emit(pick(0, 1) ? OpKind::IsNan : OpKind::IsInf, {any(s)}, ty(Scalar::Bool));
      keep(p);
      return b_.emit(OpKind::Select, {p, any(s), any(s)}, ty(s));
    }
    return b_.emit(unary[pick(0, 11)], {any(s)}, ty(s));
  }

  Value int_step(Scalar s) {
    const OpKind binary[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Min, OpKind::Max,
                             OpKind::And, OpKind::Or,  OpKind::Xor, OpKind::Shl, OpKind::Shr};
    const int r = pick(0, 99);
    if (r < 55) return b_.emit(binary[pick(0, 9)], {any(s), any(s)}, ty(s));
    if (r < 70) {
      // div and rem by select(d == 0, 1, d): never zero, any other divisor (MIN / -1 stays
      // possible: docs/ir.md defines it, it wraps).
      Value d = any(s);
      Value zero = b_.emit(OpKind::Eq, {d, b_.const_int(s, 0)}, ty(Scalar::Bool));
      Value divisor = b_.emit(OpKind::Select, {zero, b_.const_int(s, 1), d}, ty(s));
      return b_.emit(pick(0, 1) ? OpKind::Div : OpKind::Rem, {any(s), divisor}, ty(s));
    }
    if (r < 80) {
      const OpKind counts[] = {OpKind::Popcount, OpKind::LeadingZeros, OpKind::TrailingZeros};
      Value c = b_.emit(counts[pick(0, 2)], {any(s)}, u32());
      keep(c);
      return s == Scalar::U32 ? c : b_.emit(OpKind::Cast, {c}, ty(s));
    }
    // neg of a signed type (the verifier refuses neg on unsigned ones: "not defined on u32").
    if (r < 88 && ir::is_signed_int(s)) return b_.emit(OpKind::Neg, {any(s)}, ty(s));
    if (r < 94) return b_.emit(OpKind::Abs, {any(s)}, ty(s));
    return b_.emit(OpKind::Not, {any(s)}, ty(s));
  }

  // %r... = if %c : T... { ...; yield } else { ...; yield }
  void if_with_results(int depth) {
    Value c = any(Scalar::Bool);
    std::vector<Type> results;
    for (int i = pick(0, 2); i >= 0; --i) results.push_back(ty(any_type()));
    std::vector<Value> outs = b_.emit_results(OpKind::If, std::vector<Value>{c}, results);
    for (size_t region = 0; region < 2; ++region) {
      b_.enter(region);
      scopes_.emplace_back();
      body(pick(1, 6), depth + 1);
      std::vector<Value> ys;
      for (const Type& t : results) ys.push_back(recent(t.scalar));
      b_.emit(OpKind::Yield, ys);
      scopes_.pop_back();
      b_.leave();
    }
    for (Value v : outs) keep(v);
  }

  // What a break and a continue of the innermost loop carry: the loop's results, and what its
  // body yields. A while's continue carries its counter's next value first, so that it ends.
  struct Loop {
    std::vector<Type> results, next;
    Value next_counter = ir::kNoValue;
  };

  std::vector<Value> values_of(const std::vector<Type>& types) {
    std::vector<Value> out;
    for (const Type& t : types) out.push_back(recent(t.scalar));
    return out;
  }

  // The types of 1 to 3 values a loop carries, and their first values.
  std::vector<Value> inits(std::vector<Type>& types) {
    std::vector<Value> out;
    for (int i = pick(0, 2); i >= 0; --i) {
      Value init = any(any_type());
      out.push_back(init);
      types.push_back(p_.kernel.value_types[init]);
    }
    return out;
  }

  // Region arguments of the given types, visible in the region's scope.
  void region_args(ir::Region& r, const std::vector<Type>& types) {
    for (const Type& t : types) {
      Value a = p_.kernel.new_value(t);
      r.args.push_back(a);
      keep(a);
    }
  }

  // for %i = lo to hi step s, carrying 1 to 3 values. The bounds are u32 or a signed type (starts
  // below zero, counts of zero or less); hi is often a unit's own value, so that units of one
  // plane take different trip counts.
  void for_loop(int depth) {
    Scalar bound = Scalar::U32;
    for (Scalar s : types_) {
      if (ir::is_signed_int(s) && chance(60)) bound = s;
    }
    const bool sig = ir::is_signed_int(bound);
    Value lo = b_.const_int(bound, sig ? pick(-3, 2) : pick(0, 2));
    Value hi;
    if (chance(50)) {
      Value own = b_.emit(OpKind::Rem, {any(Scalar::U32), const_u32(6)}, u32());  // 0 to 5
      hi = bound == Scalar::U32
               ? own
               : b_.emit(OpKind::Sub, {b_.emit(OpKind::Cast, {own}, ty(bound)), b_.const_int(bound, 2)}, ty(bound));
    } else {
      hi = b_.const_int(bound, sig ? pick(-4, 4) : pick(0, 6));
    }
    Value st = b_.const_int(bound, pick(1, 2));
    std::vector<Type> carried;
    std::vector<Value> operands = {lo, hi, st};
    for (Value v : inits(carried)) operands.push_back(v);
    std::vector<Value> outs = b_.emit_results(OpKind::For, operands, carried);
    ir::Region& r = b_.enter(0);
    scopes_.emplace_back();
    region_args(r, {ty(bound)});
    region_args(r, carried);
    loops_.push_back(Loop{carried, carried});
    body(pick(1, 6), depth + 1);
    loops_.pop_back();
    b_.emit(OpKind::Yield, values_of(carried));
    scopes_.pop_back();
    b_.leave();
    for (Value v : outs) keep(v);
  }

  // while (%n, carried...) { %c = n < limit; condition %c, %n, carried... } do { %n' = n + 1; ...;
  // yield %n', ... }: at most 5 trips, the limit often a unit's own; breaks and continues in the
  // body leave early.
  void while_loop(int depth) {
    std::vector<Type> carried = {u32()};
    std::vector<Value> operands = {const_u32(uint32_t(pick(0, 1)))};
    for (Value v : inits(carried)) operands.push_back(v);
    std::vector<Value> outs = b_.emit_results(OpKind::While, operands, carried);
    ir::Region& head = b_.enter(0);
    scopes_.emplace_back();
    region_args(head, carried);
    const Value counter = head.args[0];
    for (int i = pick(0, 2); i > 0; --i) keep(step());
    Value limit =
        chance(50) ? b_.emit(OpKind::Rem, {any(Scalar::U32), const_u32(6)}, u32()) : const_u32(uint32_t(pick(0, 5)));
    Value go = b_.emit(OpKind::Lt, {counter, limit}, ty(Scalar::Bool));
    std::vector<Value> forwarded = {go, counter};
    for (size_t i = 1; i < carried.size(); ++i) forwarded.push_back(recent(carried[i].scalar));
    b_.emit(OpKind::Condition, forwarded);
    scopes_.pop_back();
    b_.leave();
    ir::Region& r = b_.enter(1);
    scopes_.emplace_back();
    region_args(r, carried);
    Value next = add(r.args[0], const_u32(1));
    loops_.push_back(Loop{carried, carried, next});
    body(pick(1, 6), depth + 1);
    loops_.pop_back();
    std::vector<Value> ys = {next};
    for (size_t i = 1; i < carried.size(); ++i) ys.push_back(recent(carried[i].scalar));
    b_.emit(OpKind::Yield, ys);
    scopes_.pop_back();
    b_.leave();
    for (Value v : outs) keep(v);
  }

  // if %c { break %v... } or if %c { continue %v... }, for the innermost loop.
  void jump() {
    const Loop& loop = loops_.back();
    b_.emit(OpKind::If, {any(Scalar::Bool)});
    b_.enter(0);
    scopes_.emplace_back();
    if (chance(50)) {
      b_.emit(OpKind::Break, values_of(loop.results));
    } else {
      std::vector<Value> next = values_of(loop.next);
      if (loop.next_counter != ir::kNoValue) next[0] = loop.next_counter;
      b_.emit(OpKind::Continue, next);
    }
    scopes_.pop_back();
    b_.leave();
  }

  // ---- collectives, at the top level ----

  void collective() {
    const int r = pick(0, 99);
    if (r < 55) plane_op();
    else if (r < 92) shared_exchange();
    else b_.emit(OpKind::SyncPlane, {});
  }

  Scalar numeric_type() { return types_[size_t(pick(0, int(types_.size()) - 1))]; }

  void plane_op() {
    const OpKind reductions[] = {OpKind::PlaneSum, OpKind::PlaneProd,         OpKind::PlaneMax,
                                 OpKind::PlaneMin, OpKind::PlaneInclusiveSum, OpKind::PlaneExclusiveSum};
    const OpKind votes[] = {OpKind::PlaneAll, OpKind::PlaneAny, OpKind::PlaneBallot};
    const OpKind lanes[] = {OpKind::PlaneBroadcast, OpKind::PlaneShuffle, OpKind::PlaneShuffleXor,
                            OpKind::PlaneShuffleUp, OpKind::PlaneShuffleDown};
    const int r = pick(0, 99);
    if (r < 40) {
      const Scalar s = numeric_type();
      keep(b_.emit(reductions[pick(0, 5)], {any(s)}, ty(s)));
    } else if (r < 60) {
      const OpKind k = votes[pick(0, 2)];
      keep(b_.emit(k, {any(Scalar::Bool)}, k == OpKind::PlaneBallot ? u32() : ty(Scalar::Bool)));
    } else if (r < 65) {
      keep(b_.emit(OpKind::PlaneElect, {}, ty(Scalar::Bool)));
    } else {
      // A lane a constant (past the plane or the cube's last unit at times) or a unit's own value.
      const OpKind k = lanes[pick(0, 4)];
      const Scalar s = any_type();
      Value lane = chance(60) ? const_u32(uint32_t(pick(0, 40))) : any(Scalar::U32);
      keep(b_.emit(k, {any(s), lane}, ty(s)));
    }
  }

  // Each unit writes its own two slots of a shared array; after a barrier, units read any slot.
  void shared_exchange() {
    const Scalar s = numeric_type();
    const uint32_t length = 2 * p_.units;
    Value sh = b_.emit(OpKind::SharedAlloc, {}, Type::shared(ty(s), length));
    Value mine = mul(unit_pos_, const_u32(2));
    b_.emit(OpKind::Store, {sh, mine, any(s)});
    b_.emit(OpKind::Store, {sh, add(mine, const_u32(1)), any(s)});
    b_.emit(OpKind::SyncCube, {});
    for (int i = pick(1, 3); i > 0; --i) keep(b_.emit(OpKind::Load, {sh, index_below(length)}, ty(s)));
  }

  // ---- atomics ----

  // An atomic into one of the atomics buffers: each kind at its own two elements, its old value
  // unused (it depends on the order of the units), masked or checked at times.
  void atomic() {
    auto it = atomic_buffers_.begin();
    std::advance(it, pick(0, int(atomic_buffers_.size()) - 1));
    const Scalar s = it->first;
    const bool floats = ir::is_float(s);
    const int kind = floats ? std::vector<int>{0, 1, 7}[size_t(pick(0, 2))] : pick(0, int(kAtomicKinds) - 1);
    const OpKind k = kAtomicOps[kind];
    Value at = b_.emit(OpKind::Add,
                       {const_u32(uint32_t(kind)),
                        mul(b_.emit(OpKind::Rem, {any(Scalar::U32), const_u32(2)}, u32()), const_u32(kAtomicKinds))},
                       u32());
    std::vector<Value> operands = {it->second, at, any(s)};
    if (k == OpKind::AtomicCas) operands.push_back(any(s));
    if (chance(25)) operands.push_back(any(Scalar::Bool));
    b_.emit(k, operands, ty(s), maybe_checked());
  }

  // ---- vectors ----

  Type vector_type() const { return Type::vector_of(vector_scalar_, vector_width_); }

  Value make_vector() {
    const Scalar s = vector_scalar_;
    const int r = pick(0, 99);
    if (r < 35) {
      std::vector<Value> lanes;
      for (int l = 0; l < vector_width_; ++l) lanes.push_back(any(s));
      return b_.emit(OpKind::VectorConstruct, lanes, vector_type());
    }
    if (r < 60) return b_.emit(OpKind::VectorSplat, {any(s)}, vector_type());
    // A wide load of the input: W elements from an index at most len - W.
    size_t input = 0;
    while (types_[input] != s) ++input;
    Value at = index_below(kInputs - uint32_t(vector_width_) + 1);
    return b_.emit(OpKind::Load, {p_.kernel.params[input].value, at}, vector_type(),
                   {ir::Attr{ir::AttrKey::Lanes, ir::AttrValue::of_int(vector_width_)}});
  }

  // Lane-wise arithmetic on vectors, an insert and a select; some lanes come back as scalars.
  Value vector_ops() {
    const Scalar s = vector_scalar_;
    Value v = make_vector();
    for (int i = pick(1, 3); i > 0; --i) {
      const int r = pick(0, 99);
      if (r < 60) {
        const OpKind floats[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Min, OpKind::Max};
        const OpKind ints[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Min,
                               OpKind::Max, OpKind::And, OpKind::Or,  OpKind::Xor};
        const OpKind k = ir::is_float(s) ? floats[pick(0, 5)] : ints[pick(0, 7)];
        v = b_.emit(k, {v, make_vector()}, vector_type());
      } else if (r < 80) {
        v = b_.emit(OpKind::VectorInsert, {v, any(s)}, vector_type(), {lane_attr()});
      } else {
        v = b_.emit(OpKind::Select, {any(Scalar::Bool), v, make_vector()}, vector_type());
      }
    }
    return v;
  }
  ir::Attr lane_attr() { return ir::Attr{ir::AttrKey::Lane, ir::AttrValue::of_int(pick(0, vector_width_ - 1))}; }

  void vector_block() {
    Value v = vector_ops();
    for (int i = pick(1, 2); i > 0; --i) keep(b_.emit(OpKind::VectorExtract, {v}, ty(vector_scalar_), {lane_attr()}));
  }

  // The unit's vector at its own W elements of the vector output, by one wide store.
  void wide_store() {
    Value at = mul(gid_, const_u32(uint32_t(vector_width_)));
    b_.emit(OpKind::Store, {vector_out_, at, vector_ops()}, Type::none(),
            {ir::Attr{ir::AttrKey::Lanes, ir::AttrValue::of_int(vector_width_)}});
  }

  std::mt19937_64 rng_;
  Program p_;
  ir::Builder b_;
  std::vector<Scalar> types_;
  std::vector<std::map<Scalar, std::vector<Value>>> scopes_;
  std::vector<Loop> loops_;  // the loops around the op being made, innermost last
  Value gid_ = ir::kNoValue, unit_pos_ = ir::kNoValue;
  std::map<Scalar, Value> atomic_buffers_;  // per type, the buffer atomics of that type combine into
  Scalar vector_scalar_ = Scalar::U32;
  int vector_width_ = 1;
  Value vector_out_ = ir::kNoValue;  // the vector output, where the program has one
};

}  // namespace

const char* family_name(Family f) {
  switch (f) {
    case Family::Simt: return "simt";
    case Family::Tile: return "tile";
    case Family::Tensor: return "tensor";
  }
  return "?";
}

Program generate_simt(uint64_t seed) { return Generator(seed).make(); }

}  // namespace kiln::fuzz
