// The SIMT family: random kernels over 2 to 4 element types. Each unit loads values of each type
// from its input buffers (at indices it computes, always in range), combines them with
// arithmetic, bitwise ops, compares, selects, casts and math, inside ifs and for loops that carry
// values (some with trip counts that differ from unit to unit), and stores `kSlots` results of
// each type at its own place in that type's output buffer. Constants lean on the edges: 0, ±1,
// the integer extremes, ±0, ±inf, NaN, denormals and the largest finite floats.
#include <algorithm>
#include <cmath>
#include <cstring>
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

const Scalar kNumeric[] = {Scalar::I8,  Scalar::I16, Scalar::I32, Scalar::I64, Scalar::U8,  Scalar::U16,
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
    }
    for (Scalar s : types_) {
      const Type out = Type::buffer(Type::scalar_of(s), ir::Access::ReadWrite);
      k.params.push_back(ir::Param{std::string("out_") + std::string(ir::scalar_name(s)), out, k.new_value(out)});
      // Poison: 0xa5 in every byte, never a value a program stores by chance alone.
      p_.args.push_back(std::vector<unsigned char>(size_t(p_.cubes) * p_.units * kSlots * size_t(ir::scalar_bytes(s)), 0xa5));
      p_.is_output.push_back(true);
    }
    scopes_.emplace_back();
    gid_ = b_.emit(OpKind::AbsolutePos, {}, u32());
    keep(gid_);
    keep(b_.emit(OpKind::UnitPos, {}, u32()));
    keep(b_.emit(OpKind::CubePos, {}, u32()));
    for (size_t t = 0; t < types_.size(); ++t) {
      for (int i = 0; i < 2; ++i) keep(load(t));
      keep(constant(types_[t]));
    }
    keep(b_.const_bool(pick(0, 1)));
    body(pick(8, 30), 0);
    for (size_t t = 0; t < types_.size(); ++t) {
      for (uint32_t slot = 0; slot < kSlots; ++slot) {
        // The latest values first: they depend on the most.
        Value v = recent(types_[t]);
        Value at = add(mul(gid_, const_u32(kSlots)), const_u32(slot));
        b_.emit(OpKind::Store, {k.params[types_.size() + t].value, at, v});
      }
    }
    return std::move(p_);
  }

 private:
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

  Value load(size_t t) {
    // (gid * a + b) % kInputs: in range by construction.
    Value i = add(mul(any(Scalar::U32), const_u32(uint32_t(pick(1, 97)))), const_u32(uint32_t(pick(0, 60))));
    Value at = b_.emit(OpKind::Rem, {i, const_u32(kInputs)}, u32());
    std::vector<ir::Attr> attrs;
    if (chance(50)) attrs.push_back(ir::Attr{ir::AttrKey::Checked, ir::AttrValue::of_bool(true)});
    return b_.emit(OpKind::Load, {p_.kernel.params[t].value, at}, ty(types_[t]), std::move(attrs));
  }

  Value constant(Scalar s) {
    if (s == Scalar::Bool) return b_.const_bool(pick(0, 1));
    if (ir::is_float(s)) {
      const double edges[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, INFINITY, -INFINITY, NAN, 65504.0, 1e-7, 5.9604644775390625e-08,
                              1.401298464324817e-45, 3.4028234663852886e38, 1e300, 1e-310, 3.0, -7.25};
      double v = chance(60) ? edges[pick(0, 17)] : std::uniform_real_distribution<double>(-100, 100)(rng_);
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

  // `n` steps at nesting depth `depth`.
  void body(int n, int depth) {
    for (int i = 0; i < n; ++i) {
      const int r = pick(0, 99);
      if (depth < 2 && r < 8) if_with_results(depth);
      else if (depth < 2 && r < 14) for_loop(depth);
      else keep(step());
    }
  }

  Value step() {
    const Scalar s = any_type();
    const int r = pick(0, 99);
    if (s == Scalar::Bool) {
      if (r < 55) return compare();
      if (r < 85) return b_.emit(pick(0, 2) == 0 ? OpKind::And : pick(0, 1) ? OpKind::Or : OpKind::Xor, {any(s), any(s)}, ty(s));
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
    Value c = b_.emit(OpKind::Cast, {any(from)}, ty(s));
    if (s != Scalar::Bool && ir::scalar_bytes(s) == ir::scalar_bytes(from) && chance(25) && from != Scalar::Bool) {
      return b_.emit(OpKind::Bitcast, {any(from)}, ty(s));
    }
    return c;
  }

  Value float_step(Scalar s) {
    const OpKind binary[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem, OpKind::Min, OpKind::Max, OpKind::CopySign};
    const OpKind unary[] = {OpKind::Neg, OpKind::Abs, OpKind::Sqrt, OpKind::Floor, OpKind::Ceil, OpKind::Trunc, OpKind::Round,
                            OpKind::Exp, OpKind::Log, OpKind::Sin, OpKind::Cos, OpKind::Tanh};
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
    const OpKind binary[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Min, OpKind::Max, OpKind::And,
                             OpKind::Or,  OpKind::Xor, OpKind::Shl, OpKind::Shr};
    const int r = pick(0, 99);
    if (r < 55) return b_.emit(binary[pick(0, 9)], {any(s), any(s)}, ty(s));
    if (r < 70) {
      // div and rem by a divisor made odd, so never zero (MIN / -1 stays possible: it wraps).
      Value d = b_.emit(OpKind::Or, {any(s), b_.const_int(s, 1)}, ty(s));
      return b_.emit(pick(0, 1) ? OpKind::Div : OpKind::Rem, {any(s), d}, ty(s));
    }
    if (r < 80) {
      const OpKind counts[] = {OpKind::Popcount, OpKind::LeadingZeros, OpKind::TrailingZeros};
      Value c = b_.emit(counts[pick(0, 2)], {any(s)}, u32());
      keep(c);
      return s == Scalar::U32 ? c : b_.emit(OpKind::Cast, {c}, ty(s));
    }
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

  // for %i = lo to hi step s, carrying 1 to 3 values; hi is a unit's own value (0 to 4) or a
  // constant, so units of one plane take different trip counts.
  void for_loop(int depth) {
    Value lo = const_u32(uint32_t(pick(0, 2)));
    Value hi = chance(50) ? b_.emit(OpKind::Rem, {any(Scalar::U32), const_u32(5)}, u32()) : const_u32(uint32_t(pick(0, 6)));
    Value st = const_u32(uint32_t(pick(1, 2)));
    std::vector<Value> operands = {lo, hi, st};
    std::vector<Type> carried;
    for (int i = pick(0, 2); i >= 0; --i) {
      Value init = any(any_type());
      operands.push_back(init);
      carried.push_back(p_.kernel.value_types[init]);
    }
    std::vector<Value> outs = b_.emit_results(OpKind::For, operands, carried);
    ir::Region& r = b_.enter(0);
    scopes_.emplace_back();
    Value iv = p_.kernel.new_value(u32());
    r.args.push_back(iv);
    keep(iv);
    for (const Type& t : carried) {
      Value a = p_.kernel.new_value(t);
      r.args.push_back(a);
      keep(a);
    }
    body(pick(1, 6), depth + 1);
    std::vector<Value> ys;
    for (const Type& t : carried) ys.push_back(recent(t.scalar));
    b_.emit(OpKind::Yield, ys);
    scopes_.pop_back();
    b_.leave();
    for (Value v : outs) keep(v);
  }

  std::mt19937_64 rng_;
  Program p_;
  ir::Builder b_;
  std::vector<Scalar> types_;
  std::vector<std::map<Scalar, std::vector<Value>>> scopes_;
  Value gid_ = ir::kNoValue;
};

}  // namespace

const char* family_name(Family f) {
  switch (f) {
    case Family::Simt: return "simt";
  }
  return "?";
}

Program generate_simt(uint64_t seed) { return Generator(seed).make(); }

}  // namespace kiln::fuzz
