// fold: constant folding and exact algebraic identities. Traced kernels are full of constants
// (comptime arguments, literal indices, the bounds checked_io adds), and every backend profits
// when they are computed once here instead of per unit. The rule is that a fold must give the
// value docs/ir.md defines on every backend, bit for bit; anything that could differ is left
// alone:
// - integer and bool ops fold with wrap-around, shifts past the width give 0 or the sign fill,
//   and an integer division or remainder by zero is kept (the CPU reports it at run time);
// - float add sub mul div neg abs min max fma, compares, floor ceil trunc round isnan isinf and
//   casts fold; exp, sqrt, sin and the other math ops are only accurate to a few ulp and are
//   not folded, nor is any op carrying {fast_math};
// - f16 and bf16 results are computed in f32 and rounded to the type (kiln/half.h), as the
//   backends do;
// - a result that is NaN is not folded (its bits differ between backends and a bitcast can see
//   them); float min/max of +0.0 and -0.0 is not folded (IEEE lets either come back);
// - conversions that a double rounding could get wrong (an i64 or f64 into f16/bf16 that is not
//   exact in f32) and float constants not exact in their own type (hand-written text) are kept.
// Identities replace the op's result by an operand everywhere it is used: x + 0 and x - 0 on
// integers, x * 1, x / 1, x & all-ones, x | 0, x ^ 0, shifts by 0, a cast or bitcast to the
// operand's own type, select on a constant condition or of one value twice. On floats only
// x + (-0.0) and x - (+0.0) are identities: x + (+0.0) turns x = -0.0 into +0.0. (x * 1.0 and
// x / 1.0 are x except that hardware would quieten a signalling NaN; NaN bits mean nothing in
// kiln, as above, so they fold.) An `if` on a constant is replaced by the ops of its taken
// region (its results by what that region yields; when the region ends with a break, continue or
// terminate instead, the ops after the if, which no unit runs, go with it), and a `for` whose constant bounds
// give no iteration is deleted (its results are its initial values). Constants made here keep the
// attribute form the verifier expects.
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kiln/half.h"
#include "kiln/passes/passes.h"

namespace kiln::passes {

namespace {

using ir::AttrKey;
using ir::AttrValue;
using ir::Op;
using ir::OpKind;
using ir::Scalar;
using ir::Type;
using ir::Value;

int bit_width(Scalar s) { return s == Scalar::Bool ? 1 : ir::scalar_bytes(s) * 8; }

uint64_t width_mask(Scalar s) {
  int w = bit_width(s);
  return w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
}

// The canonical form of integer constants: the low bits of the type, sign-extended for signed
// types, zero-extended for unsigned ones and bool.
int64_t wrap(Scalar s, uint64_t bits) {
  uint64_t m = width_mask(s);
  bits &= m;
  if (ir::is_signed_int(s) && (bits >> (bit_width(s) - 1)) != 0) bits |= ~m;
  return static_cast<int64_t>(bits);
}

// Rounds a value that is exact in f32 (or any value, for f32 and f64) to the type.
double round_to(Scalar s, double v) {
  return ir::visit_scalar(s, [&]<class T>() -> double {
    if constexpr (ir::is_short_float_type<T>) return static_cast<float>(T(static_cast<float>(v)));
    else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(v);
    else return v;
  });
}

bool exact_in_f32(double v) { return std::isnan(v) || static_cast<double>(static_cast<float>(v)) == v; }

// Whether `v` is a value of type `s` (hand-written text may hold 0.1 as an f32 constant).
bool exact_in(Scalar s, double v) {
  if (s == Scalar::F64 || std::isnan(v)) return true;
  return exact_in_f32(v) && round_to(s, v) == v;
}

bool is_neg_zero(double v) { return v == 0 && std::signbit(v); }
bool is_pos_zero(double v) { return v == 0 && !std::signbit(v); }

// A folded value: one lane, as the constant attribute holds it.
AttrValue make_value(Scalar s, int64_t i, double f) {
  if (s == Scalar::Bool) return AttrValue::of_bool(i != 0);
  if (ir::is_float(s)) return AttrValue::of_float(f);
  return AttrValue::of_int(wrap(s, static_cast<uint64_t>(i)));
}

std::optional<AttrValue> int_result(Scalar s, uint64_t bits) { return make_value(s, static_cast<int64_t>(bits), 0); }
std::optional<AttrValue> bool_result(bool b) { return AttrValue::of_bool(b); }
std::optional<AttrValue> float_result(double v) {
  if (std::isnan(v)) return std::nullopt;
  return AttrValue::of_float(v);
}

// Integer and bool ops. `a` and `b` are canonical (see wrap), `s` is the operands' scalar.
std::optional<AttrValue> fold_int(OpKind kind, Scalar s, int64_t a, int64_t b) {
  bool is_signed = ir::is_signed_int(s);
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  int w = bit_width(s);
  bool less = is_signed ? a < b : ua < ub;
  switch (kind) {
    case OpKind::Add: return int_result(s, ua + ub);
    case OpKind::Sub: return int_result(s, ua - ub);
    case OpKind::Mul: return int_result(s, ua * ub);
    case OpKind::Div:
      if (b == 0) return std::nullopt;  // an error on the CPU, unspecified on GPUs: keep it
      if (is_signed) return int_result(s, b == -1 ? 0 - ua : static_cast<uint64_t>(a / b));  // MIN / -1 wraps
      return int_result(s, ua / ub);
    case OpKind::Rem:
      if (b == 0) return std::nullopt;
      if (is_signed) return int_result(s, b == -1 ? 0 : static_cast<uint64_t>(a % b));
      return int_result(s, ua % ub);
    case OpKind::Min: return int_result(s, less ? ua : ub);
    case OpKind::Max: return int_result(s, less ? ub : ua);
    case OpKind::And: return int_result(s, ua & ub);
    case OpKind::Or: return int_result(s, ua | ub);
    case OpKind::Xor: return int_result(s, ua ^ ub);
    case OpKind::Shl: {
      uint64_t amount = ub & width_mask(s);  // the amount is read as unsigned
      return int_result(s, amount >= uint64_t(w) ? 0 : ua << amount);
    }
    case OpKind::Shr: {
      uint64_t amount = ub & width_mask(s);
      if (amount >= uint64_t(w)) return int_result(s, is_signed && a < 0 ? ~uint64_t{0} : 0);
      return int_result(s, is_signed ? static_cast<uint64_t>(a >> amount) : ua >> amount);
    }
    case OpKind::Eq: return bool_result(a == b);
    case OpKind::Ne: return bool_result(a != b);
    case OpKind::Lt: return bool_result(less);
    case OpKind::Le: return bool_result(less || a == b);
    case OpKind::Gt: return bool_result(!less && a != b);
    case OpKind::Ge: return bool_result(!less);
    default: return std::nullopt;
  }
}

std::optional<AttrValue> fold_int_unary(OpKind kind, Scalar s, int64_t a) {
  uint64_t ua = static_cast<uint64_t>(a);
  switch (kind) {
    case OpKind::Neg: return int_result(s, 0 - ua);
    // abs(MIN) wraps to MIN. An unsigned value is its own (a u64 past 2^63 is held as a negative a).
    case OpKind::Abs: return int_result(s, ir::is_signed_int(s) && a < 0 ? 0 - ua : ua);
    case OpKind::Not: return s == Scalar::Bool ? bool_result(a == 0) : int_result(s, ~ua);
    case OpKind::Popcount: return int_result(Scalar::U32, uint64_t(std::popcount(ua & width_mask(s))));
    case OpKind::LeadingZeros:
      return int_result(Scalar::U32, uint64_t(std::countl_zero(ua & width_mask(s)) - (64 - bit_width(s))));
    default: return std::nullopt;
  }
}

// f16, bf16 and f32 compute in float, f64 in double; the result is rounded to `s`.
template <class Fn>
double arith(Scalar s, double a, double b, Fn&& fn) {
  if (s == Scalar::F64) return fn(a, b);
  return round_to(s, static_cast<double>(fn(static_cast<float>(a), static_cast<float>(b))));
}

std::optional<AttrValue> fold_float(OpKind kind, Scalar s, double a, double b) {
  switch (kind) {
    case OpKind::Add: return float_result(arith(s, a, b, [](auto x, auto y) { return x + y; }));
    case OpKind::Sub: return float_result(arith(s, a, b, [](auto x, auto y) { return x - y; }));
    case OpKind::Mul: return float_result(arith(s, a, b, [](auto x, auto y) { return x * y; }));
    case OpKind::Div: return float_result(arith(s, a, b, [](auto x, auto y) { return x / y; }));
    case OpKind::Min:
    case OpKind::Max: {
      if (std::isnan(a)) return float_result(b);  // IEEE minNum/maxNum: the other operand
      if (std::isnan(b)) return float_result(a);
      if (a == 0 && b == 0 && std::signbit(a) != std::signbit(b)) return std::nullopt;  // either zero may come back
      bool pick_a = kind == OpKind::Min ? a < b : a > b;
      return float_result(pick_a ? a : b);
    }
    case OpKind::Eq: return bool_result(a == b);
    case OpKind::Ne: return bool_result(a != b);  // NaN compares unequal to everything
    case OpKind::Lt: return bool_result(a < b);
    case OpKind::Le: return bool_result(a <= b);
    case OpKind::Gt: return bool_result(a > b);
    case OpKind::Ge: return bool_result(a >= b);
    default: return std::nullopt;
  }
}

std::optional<AttrValue> fold_float_unary(OpKind kind, double a) {
  switch (kind) {
    case OpKind::Neg: return float_result(-a);
    case OpKind::Abs: return float_result(std::fabs(a));
    // Exact in every type: an integral value of a float type is a value of that type.
    case OpKind::Floor: return float_result(std::floor(a));
    case OpKind::Ceil: return float_result(std::ceil(a));
    case OpKind::Trunc: return float_result(std::trunc(a));
    case OpKind::Round: return float_result(std::round(a));  // ties away from zero, as C round
    case OpKind::IsNan: return bool_result(std::isnan(a));
    case OpKind::IsInf: return bool_result(std::isinf(a));
    default: return std::nullopt;
  }
}

// cast: int to int wraps or extends by the source's signedness; int to float and float to a
// narrower float round to nearest even; float to int truncates and saturates, NaN gives 0; to
// bool is != 0.
std::optional<AttrValue> fold_cast(Scalar from, Scalar to, const AttrValue& v) {
  bool from_float = ir::is_float(from);
  if (to == Scalar::Bool) return bool_result(from_float ? v.f != 0 : v.i != 0);
  if (!from_float) {
    if (!ir::is_float(to)) return int_result(to, static_cast<uint64_t>(v.i));
    bool from_unsigned = ir::is_unsigned_int(from) || from == Scalar::Bool;
    uint64_t u = static_cast<uint64_t>(v.i);
    if (to == Scalar::F64) return float_result(from_unsigned ? static_cast<double>(u) : static_cast<double>(v.i));
    float f = from_unsigned ? static_cast<float>(u) : static_cast<float>(v.i);
    if (to == Scalar::F32) return float_result(f);
    // Into f16/bf16 through f32 is one rounding only when the integer is exact in f32.
    bool exact = from_unsigned ? u <= (uint64_t{1} << 24) : (v.i >= -(int64_t{1} << 24) && v.i <= (int64_t{1} << 24));
    if (!exact) return std::nullopt;
    return float_result(round_to(to, f));
  }
  double d = v.f;
  if (ir::is_float(to)) {
    if (to == Scalar::F64 || (to == Scalar::F32 && from != Scalar::F64)) return float_result(d);  // widening: exact
    if (to == Scalar::F32) return float_result(static_cast<float>(d));
    if (from == Scalar::F64 && !exact_in_f32(d)) return std::nullopt;  // f64 to f16 via f32 could round twice
    return float_result(round_to(to, d));
  }
  if (std::isnan(d)) return int_result(to, 0);
  double t = std::trunc(d);
  int w = bit_width(to);
  if (ir::is_signed_int(to)) {
    double lo = -std::ldexp(1.0, w - 1), hi = std::ldexp(1.0, w - 1);
    if (t <= lo) return int_result(to, uint64_t{1} << (w - 1));        // MIN
    if (t >= hi) return int_result(to, (uint64_t{1} << (w - 1)) - 1);  // MAX
    return int_result(to, static_cast<uint64_t>(static_cast<int64_t>(t)));
  }
  if (t <= 0) return int_result(to, 0);
  if (t >= std::ldexp(1.0, w)) return int_result(to, width_mask(to));
  return int_result(to, static_cast<uint64_t>(t));
}

// The bits of float `d` in float type `s`, and back (f64's for every other type).
uint64_t float_bits(Scalar s, double d) {
  return ir::visit_scalar(s, [&]<class T>() -> uint64_t {
    if constexpr (ir::is_short_float_type<T>) return T(static_cast<float>(d)).bits;
    else if constexpr (std::is_same_v<T, float>) return std::bit_cast<uint32_t>(static_cast<float>(d));
    else return std::bit_cast<uint64_t>(d);
  });
}

double float_of_bits(Scalar s, uint64_t bits) {
  return ir::visit_scalar(s, [&]<class T>() -> double {
    if constexpr (ir::is_short_float_type<T>) return static_cast<float>(T::from_bits(static_cast<uint16_t>(bits)));
    else if constexpr (std::is_same_v<T, float>) return std::bit_cast<float>(static_cast<uint32_t>(bits));
    else return std::bit_cast<double>(bits);
  });
}

// bitcast between scalars of one size (lane for lane); NaN payloads are not representable in a
// constant, and bool has no bit pattern to reinterpret, so those stay.
std::optional<AttrValue> fold_bitcast(Scalar from, Scalar to, const AttrValue& v) {
  if (from == Scalar::Bool || to == Scalar::Bool) return std::nullopt;
  if (ir::is_float(from) && std::isnan(v.f)) return std::nullopt;
  uint64_t bits = ir::is_float(from) ? float_bits(from, v.f) : static_cast<uint64_t>(v.i) & width_mask(from);
  if (ir::is_float(to)) return float_result(float_of_bits(to, bits));
  return int_result(to, bits);
}

// Constants compare by bits: 0.0 and -0.0 are different constants.
bool same_constant(const AttrValue& a, const AttrValue& b) {
  return a.tag == b.tag && a.i == b.i && std::bit_cast<uint64_t>(a.f) == std::bit_cast<uint64_t>(b.f);
}

class Folder {
 public:
  explicit Folder(ir::Kernel& k) : k_(k), replacement_(k.value_types.size()), constant_(k.value_types.size()) {
    for (Value v = 0; v < replacement_.size(); ++v) replacement_[v] = v;
  }

  bool run() {
    region(k_.body);
    return changed_;
  }

 private:
  void region(ir::Region& r) {
    std::vector<Op> out;
    out.reserve(r.ops.size());
    ops(r.ops, out);
    r.ops = std::move(out);
  }

  // Folds `in` into `out`. An `if` on a constant continues with its taken region's ops, in place
  // of the if: they run exactly when the if ran, and the values they define were visible only
  // after them in that region, so they stay defined before every use. The region's yield gives
  // the if's results; a region that ends with another terminator ends `out` there too (nothing
  // after it runs). Returns whether `out` now ends with such a terminator.
  bool ops(std::vector<Op>& in, std::vector<Op>& out) {
    bool ends = false;
    for (Op& op : in) {
      ends = false;
      for (Value& v : op.operands) v = replacement_[v];
      if (op.kind == OpKind::If) {
        if (const AttrValue* c = constant(op.operand(ir::ops::If::condition))) {
          changed_ = true;
          std::vector<Op>& taken = op.regions[c->i != 0 ? 0 : 1].ops;
          std::optional<Op> yield;
          if (!taken.empty() && taken.back().kind == OpKind::Yield) {
            yield = std::move(taken.back());
            taken.pop_back();
          }
          // Ops after it could read the if's results, which no yield gives: they go (no unit
          // runs them). Without results they stay for dce, as after any break.
          if (ops(taken, out) && op.result_count() > 0) return true;
          if (yield) {
            for (size_t i = 0; i < op.result_count(); ++i) {
              replacement_[op.result_at(i)] = replacement_[yield->operands[i]];
            }
          }
          continue;
        }
      }
      if (op.kind == OpKind::For && never_runs(op)) {
        std::span<const Value> inits = ir::loop_inits(op);
        for (size_t i = 0; i < op.result_count(); ++i) replacement_[op.result_at(i)] = inits[i];
        changed_ = true;
        continue;
      }
      for (ir::Region& sub : op.regions) region(sub);
      if (op.result != ir::kNoValue && op.has(ir::kPure) && !op.flag(AttrKey::FastMath)) {
        if (op.kind != OpKind::Const) {
          if (std::optional<Value> same = identity(op)) {
            replacement_[op.result] = *same;
            changed_ = true;
            continue;
          }
          if (std::optional<AttrValue> v = evaluate(op)) {
            op.kind = OpKind::Const;
            op.operands.clear();
            op.attrs = {ir::Attr{AttrKey::Value, std::move(*v)}};
            changed_ = true;
          }
        }
        if (op.kind == OpKind::Const) constant_[op.result] = *op.attr(AttrKey::Value);
      }
      ends = op.has(ir::kTerminator) && op.kind != OpKind::Yield && op.kind != OpKind::Condition;
      out.push_back(std::move(op));
    }
    return ends;
  }

  const AttrValue* constant(Value v) const { return constant_[v] ? &*constant_[v] : nullptr; }

  // A constant lane as the op reads it: float constants that are not values of their own type
  // (only hand-written text makes those) are treated as unknown.
  const AttrValue* operand_constant(Value v) const {
    const AttrValue* c = constant(v);
    Scalar s = k_.type_of(v).scalar;
    if (c && ir::is_float(s) && !exact_in(s, c->f)) return nullptr;
    return c;
  }

  bool const_int_is(Value v, int64_t want) const {
    const AttrValue* c = operand_constant(v);
    return c && !ir::is_float(k_.type_of(v).scalar) && c->i == want;
  }
  bool const_float_is(Value v, bool (*pred)(double)) const {
    const AttrValue* c = operand_constant(v);
    return c && ir::is_float(k_.type_of(v).scalar) && pred(c->f);
  }
  // The integer (or bool) with every bit set: -1 for signed types, the mask for the others.
  int64_t all_ones(Scalar s) const { return wrap(s, ~uint64_t{0}); }

  // An operand equal to the op's result for every input; the identity's constant operand may be
  // on either side for commutative ops.
  std::optional<Value> identity(const Op& op) const {
    switch (op.info().signature) {
      case ir::Signature::Binary: return binary_identity(op);
      case ir::Signature::Unary:
        if ((op.kind == OpKind::Cast || op.kind == OpKind::Bitcast) &&
            k_.type_of(op.operand(ir::ops::Unary::x)) == op.type) {
          return op.operand(ir::ops::Unary::x);
        }
        return std::nullopt;
      case ir::Signature::Select: {
        using S = ir::ops::Select;
        const Value a = op.operand(S::if_true), b = op.operand(S::if_false);
        if (a == b) return a;
        // A constant condition is a splat: every lane picks the same side.
        if (const AttrValue* c = constant(op.operand(S::condition))) return c->i != 0 ? a : b;
        return std::nullopt;
      }
      default: return std::nullopt;
    }
  }

  std::optional<Value> binary_identity(const Op& op) const {
    const Value lhs = op.operand(ir::ops::Binary::lhs), rhs = op.operand(ir::ops::Binary::rhs);
    Scalar s = k_.type_of(lhs).scalar;
    bool fl = ir::is_float(s);
    // The unit on the right gives the left operand, and on the left (commutative ops) the right.
    auto either = [&](auto&& is_unit) -> std::optional<Value> {
      if (is_unit(rhs)) return lhs;
      if (is_unit(lhs)) return rhs;
      return std::nullopt;
    };
    auto one = [](double v) { return v == 1; };
    switch (op.kind) {
      case OpKind::Add:
        if (fl) return either([&](Value v) { return const_float_is(v, is_neg_zero); });
        return either([&](Value v) { return const_int_is(v, 0); });
      case OpKind::Sub:
        if (fl ? const_float_is(rhs, is_pos_zero) : const_int_is(rhs, 0)) return lhs;
        return std::nullopt;
      case OpKind::Mul:
        if (fl) return either([&](Value v) { return const_float_is(v, one); });
        return either([&](Value v) { return const_int_is(v, 1); });
      case OpKind::Div:
        if (fl ? const_float_is(rhs, one) : const_int_is(rhs, 1)) return lhs;
        return std::nullopt;
      case OpKind::And: return either([&](Value v) { return const_int_is(v, all_ones(s)); });
      case OpKind::Or:
      case OpKind::Xor: return either([&](Value v) { return const_int_is(v, 0); });
      case OpKind::Shl:
      case OpKind::Shr:
        if (const_int_is(rhs, 0)) return lhs;
        return std::nullopt;
      default: return std::nullopt;
    }
  }

  // The op's value when every operand is a constant. Constants of vector type are splats, so a
  // lane-wise op on them is the scalar op on one lane, splatted to the result type.
  std::optional<AttrValue> evaluate(const Op& op) const {
    if (op.operands.empty()) return std::nullopt;  // builtins
    for (Value v : op.operands) {
      if (!operand_constant(v)) return std::nullopt;
    }
    switch (op.info().signature) {
      case ir::Signature::Unary: {
        const Value x = op.operand(ir::ops::Unary::x);
        const Type& in = k_.type_of(x);
        const AttrValue& c = *operand_constant(x);
        switch (op.kind) {
          case OpKind::Cast: return fold_cast(in.scalar, op.type.scalar, c);
          case OpKind::Bitcast:
            if (in.width != op.type.width) return std::nullopt;
            return fold_bitcast(in.scalar, op.type.scalar, c);
          case OpKind::VectorSplat:
          case OpKind::VectorExtract: return c;
          default:
            return ir::is_float(in.scalar) ? fold_float_unary(op.kind, c.f) : fold_int_unary(op.kind, in.scalar, c.i);
        }
      }
      case ir::Signature::Binary: {
        const Value lhs = op.operand(ir::ops::Binary::lhs), rhs = op.operand(ir::ops::Binary::rhs);
        const Scalar s = k_.type_of(lhs).scalar;
        const AttrValue &a = *operand_constant(lhs), &b = *operand_constant(rhs);
        return ir::is_float(s) ? fold_float(op.kind, s, a.f, b.f) : fold_int(op.kind, s, a.i, b.i);
      }
      case ir::Signature::VectorConstruct: {
        std::span<const Value> lanes = op.operands_from(ir::ops::VectorConstruct::lanes);
        const AttrValue& first = *operand_constant(lanes.front());
        for (Value lane : lanes) {
          if (!same_constant(*operand_constant(lane), first)) return std::nullopt;
        }
        return first;
      }
      case ir::Signature::Fma: {
        using F = ir::ops::Fma;
        const Scalar s = k_.type_of(op.operand(F::a)).scalar;
        const double a = operand_constant(op.operand(F::a))->f, b = operand_constant(op.operand(F::b))->f,
                     c = operand_constant(op.operand(F::c))->f;
        double r = s == Scalar::F64
                       ? std::fma(a, b, c)
                       : round_to(s, std::fma(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c)));
        return float_result(r);
      }
      default: return std::nullopt;
    }
  }

  // for lo, hi, step runs while i < hi, compared in the bounds' type.
  bool never_runs(const Op& op) const {
    const AttrValue* lo = constant(op.operand(ir::ops::For::lower_bound));
    const AttrValue* hi = constant(op.operand(ir::ops::For::upper_bound));
    if (!lo || !hi) return false;
    if (ir::is_signed_int(k_.type_of(op.operand(ir::ops::For::lower_bound)).scalar)) return lo->i >= hi->i;
    return static_cast<uint64_t>(lo->i) >= static_cast<uint64_t>(hi->i);
  }

  ir::Kernel& k_;
  std::vector<Value> replacement_;                  // by value: the value that now stands for it (itself by default)
  std::vector<std::optional<AttrValue>> constant_;  // by value: its constant, for values of const ops
  bool changed_ = false;
};

}  // namespace

bool fold(ir::Kernel& k) { return Folder(k).run(); }

}  // namespace kiln::passes
