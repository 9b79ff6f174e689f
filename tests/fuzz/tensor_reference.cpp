// The tensor family's host reference: each step of a chain computed from docs/tensor.md and
// docs/ir.md alone, sharing no source with src/tensor, src/backends or src/passes. Floats are held
// as their exact values in doubles; f16 and bf16 compute in f32 and round (by this file's own
// rounding, from the exact value) when stored, as every op of the library does. Besides a value,
// each element carries how far the reference vouches for it: exact (integers, casts, the correctly
// rounded ops), approximate with a bound on |kiln - reference| (what a transcendental, a sum or a
// product of rows fed, the bound carried through later steps), or unknown (a compare, cast or
// where that such a value decided within its bound).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>

#include "numbers.h"
#include "tensor_chain.h"

namespace kiln::fuzz::tensor_chain {

namespace {

// The float formats' facts, from numbers.h (the fuzzer's one encoding of them).
double largest(DType d) { return double(largest_finite(d)); }
double ulp_of_one(DType d) { return double(2 * roundoff(d)); }
double smallest(DType d) { return double(ulp_of(d, 0)); }  // the smallest subnormal
int min_exponent(DType d) { return std::ilogb(smallest_normal(d)); }
// The tolerance table's bound for a value a transcendental op fed (numbers.h).
double op_tolerance(DType d) { return double(approximate_tolerance(d)); }
// f16 and bf16 compute in f32.
DType compute_type(DType d) { return d == DType::F64 ? DType::F64 : DType::F32; }

}  // namespace

// `x` (exact in a long double) rounded to nearest even in `d`, overflowing to infinity.
double round_to(DType d, long double x) { return double(float_value(d, fuzz::round_to(d, x))); }

// The bits of an f16 or bf16 value (`v` one of its values), and back.
uint16_t half_bits(DType d, double v) { return uint16_t(fuzz::round_to(d, v)); }
double from_half_bits(DType d, uint16_t b) { return double(float_value(d, b)); }

namespace {

// One element as the reference holds it.
struct El {
  double f = 0;
  int64_t i = 0;
  Trust t = Trust::Exact;
  double e = 0;  // for an approximate float: the bound on |kiln - f|
};

const El kUnknown{0, 0, Trust::Unknown, 0};

Trust worst(Trust a, Trust b) { return std::max(a, b); }

El get(const Values& v, size_t k) {
  El x;
  if (ir::is_float(v.dtype)) x.f = v.f[k];
  else x.i = v.i[k];
  x.t = v.trust[k];
  x.e = v.err[k];
  return x;
}

void put(Values& v, size_t k, const El& x) {
  if (ir::is_float(v.dtype)) v.f[k] = x.f;
  else v.i[k] = x.i;
  v.trust[k] = x.t;
  v.err[k] = x.e;
}

Values make(DType d, const Shape& shape) {
  Values v;
  v.dtype = d;
  v.shape = shape;
  const size_t n = size_t(std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<>()));
  if (ir::is_float(d)) v.f.resize(n);
  else v.i.resize(n);
  v.err.assign(n, 0);
  v.trust.assign(n, Trust::Exact);
  return v;
}

// A float computed by kiln's op to within `e` of `value` (the exact result): the bound grows by the
// rounding of the store; a value past the largest finite one may be either side of overflow.
El approx(DType d, long double value, double e) {
  const double v = round_to(d, value);
  if (std::isnan(v) || std::isinf(v)) return kUnknown;
  const double bound = e + ulp_of_one(d) * std::fabs(v) + smallest(d);
  if (!(std::fabs(v) + bound <= largest(d))) return kUnknown;  // a NaN bound too (0 x an infinite one)
  return El{v, 0, Trust::Approximate, bound};
}

// The integer value of `x` in type d, wrapping (two's complement) or as a bool.
int64_t wrap(DType d, int64_t x) {
  switch (d) {
    case DType::I32: return int32_t(uint32_t(uint64_t(x)));
    case DType::U8: return int64_t(uint64_t(x) & 0xff);
    case DType::Bool: return x != 0;
    default: return x;
  }
}

// Float to integer: truncated toward zero, saturated, NaN to 0 (docs/ir.md).
int64_t float_to_int(DType to, double v) {
  if (to == DType::Bool) return v != 0;  // NaN != 0 too
  if (std::isnan(v)) return 0;
  const long double lo = to == DType::U8 ? 0.0L : to == DType::I32 ? INT32_MIN : -0x1p63L;
  const long double hi = to == DType::U8 ? 255.0L : to == DType::I32 ? INT32_MAX : 0x1p63L - 1;
  const long double t = std::trunc((long double)v);
  if (t <= lo) return int64_t(lo);
  if (t >= hi) return to == DType::I64 ? INT64_MAX : int64_t(hi);
  return int64_t(t);
}

// ---- Elementwise steps ----

// `a op b` in f32 or f64 (c), rounded to d: exact for + - * / rem min max.
double arithmetic(const std::string& op, DType d, double a, double b) {
  double r;
  if (compute_type(d) == DType::F32) {
    const float x = float(a), y = float(b);
    if (op == "add") r = x + y;
    else if (op == "sub") r = x - y;
    else if (op == "mul") r = x * y;
    else if (op == "div") r = x / y;
    else r = std::fmod(x, y);
  } else {
    if (op == "add") r = a + b;
    else if (op == "sub") r = a - b;
    else if (op == "mul") r = a * b;
    else if (op == "div") r = a / b;
    else r = std::fmod(a, b);
  }
  return round_to(d, r);
}

// IEEE minNum/maxNum: a NaN gives the other operand. Of +0 and -0 either may come back: an
// approximate zero (a bound of 0, compared by value).
El min_max(bool is_max, const El& a, const El& b) {
  if (std::isnan(a.f)) return b;
  if (std::isnan(b.f)) return a;
  El r = (is_max ? a.f > b.f : a.f < b.f) ? a : b;
  r.t = worst(a.t, b.t);
  r.e = std::max(a.e, b.e);
  if (a.f == 0 && b.f == 0 && std::signbit(a.f) != std::signbit(b.f)) r.t = worst(r.t, Trust::Approximate);
  return r;
}

El float_binary(const std::string& op, DType d, const El& a, const El& b) {
  if (a.t == Trust::Unknown || b.t == Trust::Unknown) return kUnknown;
  if (op == "max" || op == "min") return min_max(op == "max", a, b);
  if (op == "pow") {
    const long double r = std::pow((long double)a.f, (long double)b.f);
    if (a.e > 0 || b.e > 0) {
      // x^y = exp(y ln x): carried through the exponent, for a base that stays positive and finite.
      if (!(a.f - 2 * a.e > 0) || !std::isfinite(a.f) || !std::isfinite(b.f)) return kUnknown;
      const double log_change = -std::log1p(-a.e / a.f);
      const double exponent = std::fabs(b.f) * log_change + b.e * (std::fabs(std::log(a.f)) + log_change);
      const double own = op_tolerance(d) * (1 + std::fabs(b.f * std::log(a.f)));
      return approx(d, r, std::fabs(double(r)) * (std::expm1(exponent) + own));
    }
    // The special cases of C's pow (F.10.4.4) are exact; elsewhere it is a transcendental.
    const bool special = !std::isfinite(a.f) || !std::isfinite(b.f) || a.f == 0 || b.f == 0 || a.f == 1 ||
                         (a.f < 0 && b.f != std::trunc(b.f));
    if (special) return El{round_to(d, double(r)), 0, worst(a.t, b.t), 0};
    if (std::isinf(round_to(d, double(r))) && std::fabs(r) > 2 * (long double)largest(d)) {
      return El{round_to(d, double(r)), 0, Trust::Exact, 0};
    }
    const double tol = op_tolerance(d) * (1 + std::fabs(double(b.f * std::log(std::fabs(a.f)))));
    return approx(d, r, tol * std::fabs(double(r)) + op_tolerance(d) * std::ldexp(1.0, min_exponent(d)));
  }
  const double v = arithmetic(op, d, a.f, b.f);
  if (a.e == 0 && b.e == 0) {
    // By value: an approximate zero divides into an infinity of either sign.
    if (op == "div" && b.t == Trust::Approximate && b.f == 0) return kUnknown;
    if (op == "rem" && a.t == Trust::Approximate && b.t == Trust::Approximate) return kUnknown;
    return El{v, 0, worst(a.t, b.t), 0};
  }
  if (std::isnan(a.f) || std::isnan(b.f)) return op == "rem" ? kUnknown : El{v, 0, Trust::Exact, 0};
  if (op == "rem" && b.e == 0 && std::isfinite(a.f) && std::isfinite(b.f) && b.f != 0) {
    // fmod is continuous (slope 1) where the quotient's integer part does not change.
    const double lo = std::trunc((a.f - a.e) / b.f), hi = std::trunc((a.f + a.e) / b.f);
    const bool one_piece = lo == hi && (a.f - a.e > 0 || a.f + a.e < 0);
    return one_piece ? approx(d, std::fmod((long double)a.f, (long double)b.f), a.e) : kUnknown;
  }
  if ((op == "add" || op == "sub") && (std::isinf(a.f) || std::isinf(b.f))) return El{v, 0, Trust::Exact, 0};
  if (!std::isfinite(a.f) || !std::isfinite(b.f) || op == "rem") return kUnknown;
  const long double x = a.f, y = b.f;
  if (op == "add" || op == "sub") return approx(d, op == "add" ? x + y : x - y, a.e + b.e);
  if (op == "mul") return approx(d, x * y, std::fabs(a.f) * b.e + std::fabs(b.f) * a.e + a.e * b.e);
  if (std::fabs(b.f) <= b.e) return kUnknown;
  const long double q = x / y;
  return approx(d, q, double((a.e + std::fabs(q) * b.e) / (std::fabs(y) - b.e)));
}

El int_binary(const std::string& op, DType d, const El& a, const El& b) {
  if (a.t == Trust::Unknown || b.t == Trust::Unknown) return kUnknown;
  const uint64_t x = uint64_t(a.i), y = uint64_t(b.i);
  int64_t r;
  if (op == "add") r = int64_t(x + y);
  else if (op == "sub") r = int64_t(x - y);
  else if (op == "mul") r = int64_t(x * y);
  else if (op == "max") r = std::max(a.i, b.i);
  else if (op == "min") r = std::min(a.i, b.i);
  else {
    // Truncating; MIN / -1 wraps to MIN and its remainder is 0 (the divisor is never 0).
    const bool overflow = b.i == -1 && a.i == (d == DType::I32 ? INT32_MIN : INT64_MIN);
    if (op == "div") r = overflow ? a.i : a.i / b.i;
    else r = overflow ? 0 : a.i % b.i;
  }
  return El{0, wrap(d, r), Trust::Exact, 0};
}

El compare(const std::string& op, bool floats, const El& a, const El& b) {
  if (a.t == Trust::Unknown || b.t == Trust::Unknown) return kUnknown;
  auto truth = [&](auto x, auto y) {
    if (op == "eq") return x == y;
    if (op == "ne") return x != y;
    if (op == "lt") return x < y;
    if (op == "le") return x <= y;
    if (op == "gt") return x > y;
    return x >= y;
  };
  if (!floats) return El{0, truth(a.i, b.i), Trust::Exact, 0};
  const bool r = truth(a.f, b.f);
  if ((a.e == 0 && b.e == 0) || std::isnan(a.f) || std::isnan(b.f)) return El{0, r, Trust::Exact, 0};
  // Decided only when every pair of values within the bounds compares alike.
  const bool low = truth(a.f - a.e, b.f + b.e), high = truth(a.f + a.e, b.f - b.e);
  const bool apart = std::fabs(a.f - b.f) > a.e + b.e;
  if (op == "eq" || op == "ne") return apart ? El{0, r, Trust::Exact, 0} : kUnknown;
  return low == high && low == r ? El{0, r, Trust::Exact, 0} : kUnknown;
}

// The unary math ops: exact results where C and IEEE fix them, else within the tolerance.
El transcendental(const std::string& op, DType d, const El& a) {
  const long double x = a.f;
  long double r;
  double slope;  // a bound on |f'|, to carry a's own bound through
  if (op == "exp") r = std::exp(x), slope = double(r);
  else if (op == "log") r = std::log(x), slope = a.e > 0 ? 1 / (std::fabs(a.f) - a.e) : 0;
  else if (op == "tanh") r = std::tanh(x), slope = 1;
  else if (op == "erf") r = std::erf(x), slope = 1.13;
  else if (op == "sigmoid") r = 1 / (1 + std::exp(-x)), slope = 0.25;
  else r = x / 2 * (1 + std::erf(x / std::sqrt(2.0L))), slope = 1.13;  // gelu
  if (std::isnan(a.f)) return El{a.f, 0, a.t, 0};
  // log of a value whose bound reaches 0: -inf, NaN or finite, as the rounding before it fell
  // (seed 1687: log of a log_softmax that kiln rounds to 0 and the reference to just below).
  if (a.e > 0 && op == "log" && std::fabs(a.f) <= a.e) return kUnknown;
  if (std::isinf(a.f) || (op == "log" && a.f <= 0)) {
    if (op == "gelu" && a.f < 0) return kUnknown;  // -inf / 2 * (1 + -1): NaN by the formula, 0 in the limit
    return El{round_to(d, double(r)), 0, a.t, 0};
  }
  const double own = op_tolerance(d) * (std::fabs(double(r)) + (op == "gelu" ? std::fabs(a.f) : 0.0)) +
                     op_tolerance(d) * std::ldexp(1.0, min_exponent(d));
  double carried = slope * a.e;
  if (op == "exp") carried = std::fabs(double(r)) * std::expm1(a.e);
  const double v = round_to(d, double(r));
  if (std::isinf(v) && a.e == 0 && std::fabs(r) > 2 * (long double)largest(d)) return El{v, 0, Trust::Exact, 0};
  return approx(d, r, own + carried);
}

El float_unary(const std::string& op, DType d, const El& a) {
  if (a.t == Trust::Unknown) return kUnknown;
  if (op == "neg") return El{-a.f, 0, a.t, a.e};
  if (op == "abs") return El{std::fabs(a.f), 0, a.t, a.e};
  if (op == "relu") return min_max(true, a, El{0.0, 0, Trust::Exact, 0});
  if (op == "sqrt") {
    const double v = compute_type(d) == DType::F32 ? round_to(d, std::sqrt(float(a.f))) : std::sqrt(a.f);
    if (a.e == 0) return El{v, 0, a.t, 0};
    if (a.f - a.e < 0) return kUnknown;
    return approx(d, std::sqrt((long double)a.f), std::min(std::sqrt(a.e), a.e / std::sqrt(a.f)));
  }
  return transcendental(op, d, a);
}

El int_unary(const std::string& op, DType d, const El& a) {
  if (a.t == Trust::Unknown) return kUnknown;
  if (op == "neg") return El{0, wrap(d, int64_t(0 - uint64_t(a.i))), Trust::Exact, 0};
  if (op == "abs") return El{0, a.i < 0 ? wrap(d, int64_t(0 - uint64_t(a.i))) : a.i, Trust::Exact, 0};
  return El{0, std::max<int64_t>(a.i, 0), Trust::Exact, 0};  // relu
}

El cast(DType from, DType to, const El& a) {
  if (a.t == Trust::Unknown) return kUnknown;
  if (!ir::is_float(from)) {
    if (ir::is_float(to)) return El{round_to(to, (long double)a.i), 0, Trust::Exact, 0};
    return El{0, wrap(to, a.i), Trust::Exact, 0};
  }
  if (ir::is_float(to)) {
    const double v = round_to(to, a.f);
    if (a.e == 0 || !std::isfinite(a.f)) return El{v, 0, a.t, 0};
    return approx(to, a.f, a.e);
  }
  const int64_t v = float_to_int(to, a.f);
  if (a.e == 0) return El{0, v, Trust::Exact, 0};
  // Decided when every value within the bound converts alike.
  const bool decided = float_to_int(to, a.f - a.e) == v && float_to_int(to, a.f + a.e) == v &&
                       (to != DType::Bool || std::fabs(a.f) > a.e);
  return decided ? El{0, v, Trust::Exact, 0} : kUnknown;
}

// ---- Index maps: views and broadcasting ----

// For each element of `shape` (row-major), the position in a row-major tensor that the strides
// (in its elements) and the offset pick.
std::vector<size_t> positions(const Shape& shape, const std::vector<int64_t>& strides, int64_t offset) {
  const size_t n = size_t(std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<>()));
  std::vector<size_t> at(n);
  std::vector<int64_t> index(shape.size(), 0);
  int64_t p = offset;
  for (size_t k = 0; k < n; ++k) {
    at[k] = size_t(p);
    for (size_t d = shape.size(); d-- > 0;) {
      p += strides[d];
      if (++index[d] < shape[d]) break;
      p -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return at;
}

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// Where each element of `to` reads `from` under right-aligned broadcasting.
std::vector<size_t> broadcast_positions(const Shape& from, const Shape& to) {
  const std::vector<int64_t> st = row_major_strides(from);
  std::vector<int64_t> strides(to.size(), 0);
  for (size_t k = 0; k < from.size(); ++k) {
    const size_t d = to.size() - from.size() + k;
    strides[d] = from[k] == 1 ? 0 : st[k];
  }
  return positions(to, strides, 0);
}

Values gather(const Values& in, const Shape& shape, const std::vector<size_t>& at) {
  Values out = make(in.dtype, shape);
  for (size_t k = 0; k < at.size(); ++k) put(out, k, get(in, at[k]));
  return out;
}

int64_t normal_dim(int64_t d, size_t rank) { return d < 0 ? d + int64_t(rank) : d; }

Values view(const Step& s, const Values& in) {
  const std::vector<int64_t> st = row_major_strides(in.shape);
  const size_t rank = in.shape.size();
  if (s.kind == StepKind::Expand) return gather(in, s.shape, broadcast_positions(in.shape, s.shape));
  std::vector<int64_t> strides = st;
  int64_t offset = 0;
  if (s.kind == StepKind::SwapDims) {
    std::swap(strides[size_t(normal_dim(s.dims[0], rank))], strides[size_t(normal_dim(s.dims[1], rank))]);
  } else if (s.kind == StepKind::Permute) {
    for (size_t k = 0; k < rank; ++k) strides[k] = st[size_t(s.dims[k])];
  } else {  // Slice
    const size_t dim = size_t(normal_dim(s.dims[0], rank));
    offset = s.dims[1] * st[dim];
    strides[dim] = st[dim] * s.dims[3];
  }
  return gather(in, s.shape, positions(s.shape, strides, offset));
}

Values input(const Input& in) {
  Values v = make(in.dtype, in.shape);
  const size_t b = element_bytes(in.dtype);
  for (size_t k = 0; k < v.size(); ++k) {
    const unsigned char* p = in.bytes.data() + k * b;
    switch (in.dtype) {
      case DType::F64: std::memcpy(&v.f[k], p, 8); break;
      case DType::F32: {
        float x;
        std::memcpy(&x, p, 4);
        v.f[k] = x;
        break;
      }
      case DType::F16:
      case DType::BF16: {
        uint16_t h;
        std::memcpy(&h, p, 2);
        v.f[k] = from_half_bits(in.dtype, h);
        break;
      }
      case DType::I64: std::memcpy(&v.i[k], p, 8); break;
      case DType::I32: {
        int32_t x;
        std::memcpy(&x, p, 4);
        v.i[k] = x;
        break;
      }
      default: v.i[k] = in.dtype == DType::Bool ? *p != 0 : *p;
    }
  }
  return v;
}

// An operand of an elementwise step, broadcast to the result's shape.
struct Operand {
  const Values* values = nullptr;
  std::vector<size_t> at;
  El number;
  El operator[](size_t k) const { return values ? get(*values, at[k]) : number; }
};

Operand operand(const Arg& a, const std::vector<Values>& nodes, const Shape& shape) {
  Operand o;
  if (a.is_number()) {
    o.number = El{a.number, int64_t(a.number), Trust::Exact, 0};
    return o;
  }
  o.values = &nodes[size_t(a.node)];
  o.at = broadcast_positions(o.values->shape, shape);
  return o;
}

Values elementwise(const Step& s, const std::vector<Values>& nodes) {
  std::vector<Operand> ops;
  for (const Arg& a : s.args) ops.push_back(operand(a, nodes, s.shape));
  Values out = make(s.dtype, s.shape);
  // The operands' element type (a compare's result is bool, a where's condition is).
  DType in = s.dtype;
  for (const Arg& a : s.args) {
    if (!a.is_number() && s.kind != StepKind::Where) in = nodes[size_t(a.node)].dtype;
  }
  for (size_t k = 0; k < out.size(); ++k) {
    El r;
    if (s.kind == StepKind::Where) {
      const El c = ops[0][k];
      r = c.t == Trust::Unknown ? kUnknown : ops[c.i ? 1 : 2][k];
    } else if (s.kind == StepKind::Cast) {
      r = cast(in, s.dtype, ops[0][k]);
    } else if (s.kind == StepKind::Unary) {
      r = ir::is_float(in) ? float_unary(s.op, in, ops[0][k]) : int_unary(s.op, in, ops[0][k]);
    } else if (s.dtype == DType::Bool && s.op != "max" && s.op != "min") {
      r = compare(s.op, ir::is_float(in), ops[0][k], ops[1][k]);
    } else {
      r = ir::is_float(in) ? float_binary(s.op, in, ops[0][k], ops[1][k]) : int_binary(s.op, in, ops[0][k], ops[1][k]);
    }
    put(out, k, r);
  }
  return out;
}

// ---- Reductions, rows and matmul ----

// A reduction's walk: outer x length x inner, the reduced dim (or all of them) in the middle.
struct Walk {
  size_t outer = 1, length = 1, inner = 1;
  size_t at(size_t o, size_t j) const { return ((o / inner) * length + j) * inner + o % inner; }
};

Walk walk_of(const Shape& shape, const std::vector<int64_t>& dims) {
  Walk w;
  if (dims.empty()) {
    for (int64_t n : shape) w.length *= size_t(n);
    return w;
  }
  const size_t dim = size_t(normal_dim(dims[0], shape.size()));
  for (size_t k = 0; k < shape.size(); ++k) {
    (k < dim ? w.outer : k == dim ? w.length : w.inner) *= size_t(shape[k]);
  }
  w.outer *= w.inner;  // outputs: outer x inner
  return w;
}

El float_sum(const std::vector<El>& xs, DType d, bool mean) {
  const DType c = compute_type(d);
  long double total = 0, magnitude = 0;
  double carried = 0;
  bool nan = false, plus_inf = false, minus_inf = false;
  for (const El& x : xs) {
    if (x.t == Trust::Unknown) return kUnknown;
    nan |= std::isnan(x.f);
    plus_inf |= x.f == INFINITY;
    minus_inf |= x.f == -INFINITY;
    if (std::isfinite(x.f)) total += x.f, magnitude += std::fabs(x.f) + x.e;
    carried += x.e;
  }
  // Partial sums that might overflow make the order matter.
  if (magnitude > largest(c) / 2) return kUnknown;
  if (nan || (plus_inf && minus_inf)) return El{NAN, 0, Trust::Exact, 0};
  if (plus_inf || minus_inf) return El{plus_inf ? INFINITY : -INFINITY, 0, Trust::Exact, 0};
  const double n = double(xs.size());
  const double order = n * ulp_of_one(c) * double(magnitude) + n * smallest(c);
  if (!mean) return approx(d, total, carried + order);
  return approx(d, total / n, (carried + order) / n + 2 * ulp_of_one(c) * std::fabs(double(total / n)));
}

El extreme(const std::vector<El>& xs, DType d, bool is_max) {
  El best = xs[0];
  for (const El& x : xs) {
    if (x.t == Trust::Unknown) return kUnknown;
  }
  if (!ir::is_float(d)) {
    for (const El& x : xs) best.i = is_max ? std::max(best.i, x.i) : std::min(best.i, x.i);
    return best;
  }
  double bound = 0;
  bool approximate = false, plus_zero = false, minus_zero = false;
  for (const El& x : xs) {
    if (std::isnan(x.f)) return El{NAN, 0, Trust::Exact, 0};  // NaN wins
    if (is_max ? x.f > best.f : x.f < best.f) best = x;
    bound = std::max(bound, x.e);
    approximate |= x.t == Trust::Approximate;
    if (x.f == 0) (std::signbit(x.f) ? minus_zero : plus_zero) = true;
  }
  const bool zero_sign = best.f == 0 && (approximate || (plus_zero && minus_zero));
  return El{best.f, 0, bound > 0 || zero_sign ? Trust::Approximate : Trust::Exact, bound};
}

// The position of the largest (smallest) of approximate values: decided when no other value's
// bound reaches the best one's.
El approximate_position(const std::vector<El>& xs, bool is_max) {
  size_t best = 0;
  for (size_t j = 0; j < xs.size(); ++j) {
    if (std::isnan(xs[j].f)) return El{0, int64_t(j), Trust::Exact, 0};  // NaN wins (an exact one)
    if (is_max ? xs[j].f > xs[best].f : xs[j].f < xs[best].f) best = j;
  }
  for (size_t j = 0; j < xs.size(); ++j) {
    if (j != best && std::fabs(xs[j].f - xs[best].f) <= xs[j].e + xs[best].e) return kUnknown;
  }
  return El{0, int64_t(best), Trust::Exact, 0};
}

El position(const std::vector<El>& xs, DType d, bool is_max) {
  size_t best = 0;
  bool approximate = false;
  for (size_t j = 0; j < xs.size(); ++j) {
    if (xs[j].t == Trust::Unknown) return kUnknown;
    approximate |= xs[j].e > 0;
  }
  if (approximate) return approximate_position(xs, is_max);
  for (size_t j = 1; j < xs.size(); ++j) {
    if (!ir::is_float(d)) {
      if (is_max ? xs[j].i > xs[best].i : xs[j].i < xs[best].i) best = j;
    } else if (std::isnan(xs[best].f)) {
      break;
    } else if (std::isnan(xs[j].f) || (is_max ? xs[j].f > xs[best].f : xs[j].f < xs[best].f)) {
      best = j;
    }
  }
  return El{0, int64_t(best), Trust::Exact, 0};
}

Values reduce(const Step& s, const Values& in) {
  Values out = make(s.dtype, s.shape);
  const Walk w = walk_of(in.shape, s.dims);
  std::vector<El> xs(w.length);
  for (size_t o = 0; o < out.size(); ++o) {
    for (size_t j = 0; j < w.length; ++j) xs[j] = get(in, w.at(o, j));
    El r;
    if (s.op == "sum" && !ir::is_float(in.dtype)) {
      uint64_t total = 0;
      bool unknown = false;
      for (const El& x : xs) total += uint64_t(x.i), unknown |= x.t == Trust::Unknown;
      r = unknown ? kUnknown : El{0, int64_t(total), Trust::Exact, 0};
    } else if (s.op == "sum" || s.op == "mean") {
      r = float_sum(xs, in.dtype, s.op == "mean");
    } else if (s.op == "amax" || s.op == "amin") {
      r = extreme(xs, in.dtype, s.op == "amax");
    } else {
      r = position(xs, in.dtype, s.op == "argmax");
    }
    put(out, o, r);
  }
  return out;
}

Values rows(const Step& s, const Values& in) {
  Values out = make(s.dtype, s.shape);
  const Walk w = walk_of(in.shape, s.dims);
  const DType d = in.dtype, c = compute_type(d);
  const double n = double(w.length);
  for (size_t o = 0; o < w.outer; ++o) {
    long double top = -INFINITY, total = 0;
    double bound = 0;
    bool known = true, nan = false;
    for (size_t j = 0; j < w.length; ++j) {
      const El x = get(in, w.at(o, j));
      known &= x.t != Trust::Unknown;
      nan |= std::isnan(x.f);
      top = std::max(top, (long double)x.f);
      bound = std::max(bound, x.e);
    }
    // By the formula, exp(x - max) / sum(exp(x - max)): a NaN or +inf in the row (inf - inf), or
    // a row of -inf only, makes every element NaN; a -inf among finite values gives 0 (-inf).
    nan |= std::isinf(top);
    for (size_t j = 0; known && !nan && j < w.length; ++j) total += std::exp((long double)get(in, w.at(o, j)).f - top);
    for (size_t j = 0; j < w.length; ++j) {
      if (!known || nan) {
        put(out, w.at(o, j), known ? El{NAN, 0, Trust::Exact, 0} : kUnknown);
        continue;
      }
      const long double x = get(in, w.at(o, j)).f;
      if (std::isinf(x)) {
        put(out, w.at(o, j), El{s.op == "softmax" ? 0.0 : -INFINITY, 0, Trust::Exact, 0});
        continue;
      }
      const double tol = op_tolerance(d) + 4 * n * ulp_of_one(c);
      if (s.op == "softmax") {
        const long double r = std::exp(x - top) / total;
        put(out, w.at(o, j), approx(d, r, std::fabs(double(r)) * (std::expm1(2 * bound) + tol) + smallest(c)));
      } else {
        const long double r = (x - top) - std::log(total);
        const double rounding = 2 * ulp_of_one(c) * double(std::fabs(x) + std::fabs(top) + std::fabs(r));
        put(out, w.at(o, j), approx(d, r, 2 * bound + rounding + tol * (1 + std::fabs(double(r)))));
      }
    }
  }
  return out;
}

Values matmul(const Step& s, const Values& a, const Values& b) {
  Values out = make(s.dtype, s.shape);
  const size_t k = size_t(a.shape.back()), n = size_t(b.shape.back()), rows = a.size() / k;
  const DType d = a.dtype, c = ir::is_float(d) ? compute_type(d) : d;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t j = 0; j < n; ++j) {
      long double total = 0, magnitude = 0;
      uint64_t wrapped = 0;
      double carried = 0;
      bool known = true, nan = false, plus_inf = false, minus_inf = false;
      for (size_t l = 0; l < k; ++l) {
        const El x = get(a, r * k + l), y = get(b, l * n + j);
        known &= x.t != Trust::Unknown && y.t != Trust::Unknown;
        wrapped += uint64_t(x.i) * uint64_t(y.i);
        const long double p = (long double)x.f * y.f;
        if (std::isnan(p)) {
          nan = true;
        } else if (std::isinf(p)) {
          // An infinite factor times one that might be zero (within its bound) might be NaN.
          known &= std::fabs(x.f) > x.e && std::fabs(y.f) > y.e;
          (p > 0 ? plus_inf : minus_inf) = true;
        } else {
          total += p;
          magnitude += std::fabs(p);
          carried += std::fabs(x.f) * y.e + std::fabs(y.f) * x.e + x.e * y.e;
        }
      }
      El e;
      if (!known) e = kUnknown;
      else if (!ir::is_float(d)) e = El{0, wrap(d, int64_t(wrapped)), Trust::Exact, 0};
      else if (magnitude + carried > largest(c) / 2) e = kUnknown;  // partial sums might overflow
      else if (nan || (plus_inf && minus_inf)) e = El{NAN, 0, Trust::Exact, 0};
      else if (plus_inf || minus_inf) e = El{plus_inf ? INFINITY : -INFINITY, 0, Trust::Exact, 0};
      else e = approx(d, total, carried + 2 * double(k) * ulp_of_one(c) * double(magnitude) + double(k) * smallest(c));
      put(out, r * n + j, e);
    }
  }
  return out;
}

}  // namespace

std::vector<Values> reference(const Chain& c) {
  std::vector<Values> nodes;
  nodes.reserve(c.steps.size());
  for (const Step& s : c.steps) {
    switch (s.kind) {
      case StepKind::Input: nodes.push_back(input(c.inputs[size_t(s.input)])); break;
      case StepKind::SwapDims:
      case StepKind::Permute:
      case StepKind::Slice:
      case StepKind::Expand: nodes.push_back(view(s, nodes[size_t(s.args[0].node)])); break;
      case StepKind::Reduce: nodes.push_back(reduce(s, nodes[size_t(s.args[0].node)])); break;
      case StepKind::Rows: nodes.push_back(rows(s, nodes[size_t(s.args[0].node)])); break;
      case StepKind::Matmul:
        nodes.push_back(matmul(s, nodes[size_t(s.args[0].node)], nodes[size_t(s.args[1].node)]));
        break;
      default: nodes.push_back(elementwise(s, nodes));
    }
  }
  return nodes;
}

}  // namespace kiln::fuzz::tensor_chain
