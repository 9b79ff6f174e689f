// The fuzzer's oracle: a tree-walking interpreter of kiln's IR, written from docs/ir.md alone. It
// shares no source with src/backends or src/passes (it includes only the IR's own headers) and
// works in another way than the CPU backend: one unit at a time, from the first op to the last, a
// value as the 64 bits of its type's encoding, and the rounding of f16, bf16, f32 and f64 done by
// one function of its own from an exact long double.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "kiln/error.h"
#include "program.h"

namespace kiln::fuzz {

namespace {

using ir::OpKind;
using ir::Scalar;

// ---- numbers ---------------------------------------------------------------------------------

int bits_of(Scalar s) { return s == Scalar::Bool ? 1 : ir::scalar_bytes(s) * 8; }

bool is_signed(Scalar s) { return ir::is_signed_int(s); }
using ir::is_float;
uint64_t mask(Scalar s) { return bits_of(s) >= 64 ? ~0ull : (1ull << bits_of(s)) - 1; }

// An integer's value: sign-extended where its type is signed.
int64_t as_signed(Scalar s, uint64_t v) {
  const int b = bits_of(s);
  if (b >= 64) return int64_t(v);
  const uint64_t sign = 1ull << (b - 1);
  return int64_t((v & mask(s)) ^ sign) - int64_t(sign);
}

struct Format {
  int precision, emin, emax, exp_bits;  // significand bits (with the hidden one)
};
Format format_of(Scalar s) {
  switch (s) {
    case Scalar::F16: return {11, -14, 15, 5};
    case Scalar::BF16: return {8, -126, 127, 8};
    case Scalar::F32: return {24, -126, 127, 8};
    default: return {53, -1022, 1023, 11};
  }
}

// A float's value, exactly.
long double float_value(Scalar s, uint64_t v) {
  if (s == Scalar::F32) {
    float f;
    uint32_t u = uint32_t(v);
    std::memcpy(&f, &u, 4);
    return f;
  }
  if (s == Scalar::F64) {
    double d;
    std::memcpy(&d, &v, 8);
    return d;
  }
  const Format f = format_of(s);
  const int mant = f.precision - 1, bias = (1 << (f.exp_bits - 1)) - 1;
  const bool negative = (v >> (mant + f.exp_bits)) & 1;
  const int e = int((v >> mant) & ((1u << f.exp_bits) - 1));
  const uint64_t m = v & ((1ull << mant) - 1);
  long double x;
  if (e == (1 << f.exp_bits) - 1) x = m ? std::numeric_limits<long double>::quiet_NaN() : INFINITY;
  else if (e == 0) x = std::ldexp((long double)m, f.emin - mant);
  else x = std::ldexp((long double)(m | (1ull << mant)), e - bias - mant);
  return negative ? -x : x;
}

// x rounded to nearest even in `s`'s format, encoded: the one rounding every float op ends with.
uint64_t round_to(Scalar s, long double x) {
  const Format f = format_of(s);
  const int mant = f.precision - 1, bias = (1 << (f.exp_bits - 1)) - 1;
  const uint64_t sign_bit = 1ull << (mant + f.exp_bits);
  const uint64_t exp_all = uint64_t((1 << f.exp_bits) - 1) << mant;
  const bool negative = std::signbit(x);
  if (std::isnan(x)) return exp_all | (1ull << (mant - 1));  // the quiet NaN
  long double a = std::fabs(x);
  uint64_t bits;
  if (std::isinf(a)) {
    bits = exp_all;
  } else if (a == 0) {
    bits = 0;
  } else {
    const int e = std::max(std::ilogb(a), f.emin);  // subnormals keep emin's quantum
    const long double q = std::nearbyint(std::ldexp(a, mant - e));  // the significand, rounded
    long double r = std::ldexp(q, e - mant);
    if (std::ilogb(r) > f.emax) {
      bits = exp_all;  // past the largest finite: inf
    } else if (std::ilogb(r) < f.emin) {
      bits = uint64_t(std::ldexp(r, mant - f.emin));  // subnormal: the significand alone
    } else {
      const int re = std::ilogb(r);
      const uint64_t m = uint64_t(std::ldexp(r, mant - re)) & ((1ull << mant) - 1);
      bits = (uint64_t(re + bias) << mant) | m;
    }
  }
  return (negative ? sign_bit : 0) | bits;
}

// ---- values ----------------------------------------------------------------------------------

struct Val {
  uint64_t bits = 0;
  Trust trust = Trust::Exact;
};

Trust worst(Trust a, Trust b) { return std::max(a, b); }

struct Failure {
  std::string kind, message;
};

class Interpreter {
 public:
  Interpreter(const Program& p, Evaluation& out) : p_(p), k_(p.kernel), out_(out) {
    values_.resize(k_.value_types.size());
    for (const auto& a : p.args) writer_.emplace_back(a.size(), -1);  // a byte each: elements enough
    for (size_t i = 0; i < k_.params.size(); ++i) param_index_[k_.params[i].value] = i;
  }

  void run_unit(uint32_t cube, uint32_t unit) {
    cube_ = cube;
    unit_ = unit;
    std::fill(values_.begin(), values_.end(), Val{});
    region(k_.body);
  }

 private:
  Scalar scalar(ir::Value v) const { return k_.value_types[v].scalar; }
  const Val& get(ir::Value v) const { return values_[v]; }
  void set(ir::Value v, Val x) {
    x.bits &= mask(scalar(v));
    values_[v] = x;
  }

  // Ends a region early: a yield's values.
  std::vector<Val> region(const ir::Region& r) {
    for (const ir::Op& op : r.ops) {
      if (op.kind == OpKind::Yield) {
        std::vector<Val> out;
        for (ir::Value v : op.operands) out.push_back(get(v));
        return out;
      }
      step(op);
    }
    return {};
  }

  void step(const ir::Op& op) {
    const auto& o = op.operands;
    switch (op.kind) {
      case OpKind::Const: {
        const ir::AttrValue& a = op.get<ir::AttrKey::Value>();
        const Scalar s = op.type.scalar;
        Val v;
        if (s == Scalar::Bool) v.bits = a.i ? 1 : 0;
        else if (is_float(s)) v.bits = round_to(s, (long double)a.f);
        else v.bits = uint64_t(a.i);
        set(op.result, v);
        return;
      }
      case OpKind::UnitPos: set(op.result, {unit_, Trust::Exact}); return;
      case OpKind::CubePos: set(op.result, {cube_, Trust::Exact}); return;
      case OpKind::CubeDim: set(op.result, {p_.units, Trust::Exact}); return;
      case OpKind::CubeCount: set(op.result, {p_.cubes, Trust::Exact}); return;
      case OpKind::AbsolutePos: set(op.result, {uint64_t(cube_) * p_.units + unit_, Trust::Exact}); return;
      case OpKind::Len: set(op.result, {length(o[0]), Trust::Exact}); return;
      case OpKind::Load: {
        const size_t param = param_of(o[0]);
        const uint64_t i = get(o[1]).bits, n = length(o[0]);
        if (i >= n) {
          // A checked access of a checked launch reads zero; any other fails the launch.
          if (p_.checked && op.flag(ir::AttrKey::Checked)) {
            set(op.result, {0, get(o[1]).trust});
            return;
          }
          throw Failure{"bounds.out_of_range", "load past the end"};
        }
        const int bytes = ir::scalar_bytes(op.type.scalar);
        uint64_t v = 0;
        std::memcpy(&v, out_.outcome.after[param].data() + i * bytes, size_t(bytes));
        set(op.result, {v, get(o[1]).trust});
        return;
      }
      case OpKind::Store: {
        const size_t param = param_of(o[0]);
        const uint64_t i = get(o[1]).bits, n = length(o[0]);
        if (i >= n) {
          if (p_.checked && op.flag(ir::AttrKey::Checked)) return;
          throw Failure{"bounds.out_of_range", "store past the end"};
        }
        const int bytes = ir::scalar_bytes(scalar(o[2]));
        std::memcpy(out_.outcome.after[param].data() + i * bytes, &get(o[2]).bits, size_t(bytes));
        Trust t = get(o[2]).trust;
        if (get(o[1]).trust != Trust::Exact) t = Trust::Unknown;
        // Stores of two units to one element race: which lands is not the evaluator's to say.
        const int64_t me = int64_t(cube_) * p_.units + unit_;
        int64_t& last = writer_[param][i];  // -1: none yet, -2: two units did
        if (last == -2 || (last >= 0 && last != me)) {
          last = -2;
          t = Trust::Unknown;
        } else {
          last = me;
        }
        out_.trust[param][i] = t;
        return;
      }
      case OpKind::If: {
        const Val c = get(o[0]);
        std::vector<Val> ys;
        if (c.bits) ys = region(op.regions[0]);
        else if (op.regions.size() > 1) ys = region(op.regions[1]);
        for (size_t i = 0; i < op.result_count(); ++i) {
          Val y = ys.at(i);
          if (c.trust != Trust::Exact) y.trust = Trust::Unknown;
          set(op.result_at(i), y);
        }
        return;
      }
      case OpKind::For: {
        const Val lo = get(o[0]), hi = get(o[1]), st = get(o[2]);
        const Scalar s = scalar(o[0]);
        const ir::Region& body = op.regions[0];
        std::vector<Val> carried;
        for (size_t i = 3; i < o.size(); ++i) carried.push_back(get(o[i]));
        const bool known = lo.trust == Trust::Exact && hi.trust == Trust::Exact && st.trust == Trust::Exact;
        auto less = [&](uint64_t a, uint64_t b) { return is_signed(s) ? as_signed(s, a) < as_signed(s, b) : a < b; };
        int trips = 0;
        for (uint64_t i = lo.bits; less(i, hi.bits); i = (i + st.bits) & mask(s)) {
          if (++trips > 100000) throw Failure{"fuzz.runaway", "a loop ran 100000 trips"};
          set(body.args[0], {i, Trust::Exact});
          for (size_t a = 0; a < carried.size(); ++a) set(body.args[1 + a], carried[a]);
          carried = region(body);
          if (mask(s) - i < st.bits) break;  // the next induction value would wrap
        }
        for (size_t i = 0; i < op.result_count(); ++i) {
          Val y = carried.at(i);
          if (!known) y.trust = Trust::Unknown;
          set(op.result_at(i), y);
        }
        return;
      }
      default: break;
    }
    if (op.result == ir::kNoValue) throw Failure{"fuzz.unknown_op", std::string(ir::op_name(op.kind))};
    set(op.result, compute(op));
  }

  uint64_t length(ir::Value array) const {
    const size_t i = param_of(array);
    return out_.outcome.after[i].size() / size_t(k_.params[i].type.element_bytes());
  }
  size_t param_of(ir::Value array) const {
    auto it = param_index_.find(array);
    if (it == param_index_.end()) throw Failure{"fuzz.unknown_array", "an array that is not a parameter"};
    return it->second;
  }

  Val compute(const ir::Op& op) {
    const auto& o = op.operands;
    const Scalar s = scalar(o[0]);  // the operands' type (a cast's source)
    Trust t = Trust::Exact;
    for (ir::Value v : o) t = worst(t, get(v).trust);
    const uint64_t a = get(o[0]).bits, b = o.size() > 1 ? get(o[1]).bits : 0;
    switch (op.kind) {
      case OpKind::Select: return {get(o[0]).bits ? get(o[1]).bits : get(o[2]).bits,
                                   get(o[0]).trust != Trust::Exact ? Trust::Unknown : worst(get(o[1]).trust, get(o[2]).trust)};
      case OpKind::Cast: return cast(s, op.type.scalar, a, t);
      // A NaN's bits mean nothing in kiln (docs/ir.md): backends may give any NaN, and a bitcast shows which.
      case OpKind::Bitcast: return {a, is_float(s) && std::isnan(float_value(s, a)) ? Trust::Unknown : t};
      default: break;
    }
    if (ir::op_info(op.kind).family == ir::OpFamily::Compare) {
      bool r;
      if (is_float(s)) {
        const long double x = float_value(s, a), y = float_value(s, b);
        r = op.kind == OpKind::Eq ? x == y : op.kind == OpKind::Ne ? x != y : op.kind == OpKind::Lt ? x < y
          : op.kind == OpKind::Le ? x <= y : op.kind == OpKind::Gt ? x > y : x >= y;
      } else {
        auto cmp = [&](auto x, auto y) {
          return op.kind == OpKind::Eq ? x == y : op.kind == OpKind::Ne ? x != y : op.kind == OpKind::Lt ? x < y
               : op.kind == OpKind::Le ? x <= y : op.kind == OpKind::Gt ? x > y : x >= y;
        };
        r = is_signed(s) ? cmp(as_signed(s, a), as_signed(s, b)) : cmp(a & mask(s), b & mask(s));
      }
      return {r ? 1u : 0u, t == Trust::Exact ? t : Trust::Unknown};
    }
    if (is_float(s)) return float_op(op, s, t);
    return int_op(op, s, a, b, t);
  }

  Val cast(Scalar from, Scalar to, uint64_t a, Trust t) {
    if (to == Scalar::Bool) {
      const bool nz = is_float(from) ? float_value(from, a) != 0 || std::isnan(float_value(from, a)) : (a & mask(from)) != 0;
      return {nz ? 1u : 0u, t == Trust::Exact ? t : Trust::Unknown};
    }
    long double x;
    if (is_float(from)) x = float_value(from, a);
    else if (is_signed(from)) x = (long double)as_signed(from, a);
    else x = (long double)(a & mask(from));
    if (is_float(to)) return {round_to(to, x), t};
    const Trust it = t == Trust::Exact ? t : Trust::Unknown;
    if (!is_float(from)) {  // integer to integer: wrap, extended by the source's signedness
      const uint64_t v = is_signed(from) ? uint64_t(as_signed(from, a)) : (a & mask(from));
      return {v & mask(to), it};
    }
    if (std::isnan(x)) return {0, it};
    x = std::trunc(x);
    if (is_signed(to)) {
      const long double lo = -std::ldexp(1.0L, bits_of(to) - 1), hi = std::ldexp(1.0L, bits_of(to) - 1) - 1;
      const int64_t v = x < lo ? int64_t(lo) : x > hi ? int64_t(hi) : int64_t(x);
      return {uint64_t(v) & mask(to), it};
    }
    const long double hi = std::ldexp(1.0L, bits_of(to)) - 1;
    const uint64_t v = x < 0 ? 0 : x > hi ? mask(to) : uint64_t(x);
    return {v, it};
  }

  // f16 and bf16 compute in f32; f32 in float; f64 in double. Each op rounds once into its type.
  template <class C>
  long double calc(const ir::Op& op, C x, C y, C z, Trust& t) {
    auto inexact = [&](long double r) {
      t = worst(t, Trust::Approximate);
      return r;
    };
    switch (op.kind) {
      case OpKind::Add: return C(x + y);
      case OpKind::Sub: return C(x - y);
      case OpKind::Mul: return C(x * y);
      case OpKind::Div: return C(x / y);
      case OpKind::Rem: return C(std::fmod(x, y));
      // The other operand where one is NaN (docs/ir.md): said outright, whatever C's fmin does.
      case OpKind::Min: return std::isnan(x) ? y : std::isnan(y) ? x : C(std::fmin(x, y));
      case OpKind::Max: return std::isnan(x) ? y : std::isnan(y) ? x : C(std::fmax(x, y));
      case OpKind::Neg: return C(-x);
      case OpKind::Abs: return C(std::fabs(x));
      case OpKind::Fma: return C(std::fma(x, y, z));
      case OpKind::Sqrt: return C(std::sqrt(x));
      case OpKind::Floor: return C(std::floor(x));
      case OpKind::Ceil: return C(std::ceil(x));
      case OpKind::Trunc: return C(std::trunc(x));
      case OpKind::Round: return C(std::round(x));
      case OpKind::CopySign: return C(std::copysign(x, y));
      case OpKind::Exp: return inexact(C(std::exp(x)));
      case OpKind::Log: return inexact(C(std::log(x)));
      case OpKind::Sin: return inexact(C(std::sin(x)));
      case OpKind::Cos: return inexact(C(std::cos(x)));
      case OpKind::Tanh: return inexact(C(std::tanh(x)));
      default: throw Failure{"fuzz.unknown_op", std::string(ir::op_name(op.kind))};
    }
  }

  Val float_op(const ir::Op& op, Scalar s, Trust t) {
    const auto& o = op.operands;
    auto operand = [&](size_t i) { return i < o.size() ? float_value(s, get(o[i]).bits) : 0.0L; };
    if (op.kind == OpKind::IsNan || op.kind == OpKind::IsInf) {
      const long double x = operand(0);
      const bool r = op.kind == OpKind::IsNan ? std::isnan(x) : std::isinf(x);
      return {r ? 1u : 0u, t == Trust::Exact ? t : Trust::Unknown};
    }
    // copysign from a NaN takes a sign bit kiln does not define (a NaN's bits mean nothing, docs/ir.md).
    if (op.kind == OpKind::CopySign && std::isnan(operand(1))) t = Trust::Unknown;
    // min and max of +0 and -0 may give either (docs/ir.md): what follows is not the evaluator's to say.
    if ((op.kind == OpKind::Min || op.kind == OpKind::Max) && operand(0) == 0 && operand(1) == 0 &&
        std::signbit(operand(0)) != std::signbit(operand(1))) {
      t = Trust::Unknown;
    }
    long double r;
    if (s == Scalar::F64) r = calc<double>(op, double(operand(0)), double(operand(1)), double(operand(2)), t);
    else r = calc<float>(op, float(operand(0)), float(operand(1)), float(operand(2)), t);
    return {round_to(s, r), t};
  }

  Val int_op(const ir::Op& op, Scalar s, uint64_t a, uint64_t b, Trust t) {
    const uint64_t m = mask(s);
    const int w = bits_of(s);
    const int64_t sa = as_signed(s, a), sb = as_signed(s, b);
    const bool sig = is_signed(s);
    a &= m;
    b &= m;
    switch (op.kind) {
      case OpKind::Add: return {(a + b) & m, t};
      case OpKind::Sub: return {(a - b) & m, t};
      case OpKind::Mul: return {(a * b) & m, t};
      case OpKind::Div:
      case OpKind::Rem: {
        if (b == 0) throw Failure{"arith.division_by_zero", "an integer divided by zero"};
        const bool rem = op.kind == OpKind::Rem;
        if (sig) {
          if (sa == as_signed(s, 1ull << (w - 1)) && sb == -1) return {rem ? 0 : a, t};
          return {uint64_t(rem ? sa % sb : sa / sb) & m, t};
        }
        return {rem ? a % b : a / b, t};
      }
      case OpKind::Min: return {(sig ? sa < sb : a < b) ? a : b, t};
      case OpKind::Max: return {(sig ? sa < sb : a < b) ? b : a, t};
      case OpKind::Neg: return {(0 - a) & m, t};
      case OpKind::Abs: return {sig && sa < 0 ? (0 - a) & m : a, t};
      case OpKind::And: return {a & b, t};
      case OpKind::Or: return {a | b, t};
      case OpKind::Xor: return {a ^ b, t};
      case OpKind::Not: return {s == Scalar::Bool ? a ^ 1 : ~a & m, t};
      case OpKind::Shl: return {b >= uint64_t(w) ? 0 : (a << b) & m, t};
      case OpKind::Shr:
        if (b >= uint64_t(w)) return {sig && sa < 0 ? m : 0, t};
        return {sig ? uint64_t(sa >> b) & m : a >> b, t};
      case OpKind::Popcount: return {uint64_t(std::popcount(a)), t};
      case OpKind::LeadingZeros: return {uint64_t(std::countl_zero(a) - (64 - w)), t};
      case OpKind::TrailingZeros: return {a == 0 ? uint64_t(w) : uint64_t(std::countr_zero(a)), t};
      default: throw Failure{"fuzz.unknown_op", std::string(ir::op_name(op.kind))};
    }
  }

  const Program& p_;
  const ir::Kernel& k_;
  Evaluation& out_;
  std::vector<Val> values_;
  std::map<ir::Value, size_t> param_index_;
  std::vector<std::vector<int64_t>> writer_;  // per parameter, per element: which unit stored it
  uint32_t cube_ = 0, unit_ = 0;
};

}  // namespace

Evaluation evaluate(const Program& p) {
  Evaluation e;
  e.outcome.after = p.args;
  e.trust.resize(p.args.size());
  for (size_t i = 0; i < p.args.size(); ++i) {
    e.trust[i].assign(p.args[i].size() / size_t(p.kernel.params[i].type.element_bytes()), Trust::Exact);
  }
  Interpreter run(p, e);
  try {
    for (uint32_t c = 0; c < p.cubes; ++c) {
      for (uint32_t u = 0; u < p.units; ++u) run.run_unit(c, u);
    }
  } catch (const Failure& f) {
    e.outcome.after = p.args;  // a failed launch changes nothing
    e.outcome.error_kind = f.kind;
    e.outcome.error_message = f.message;
  }
  return e;
}

}  // namespace kiln::fuzz
