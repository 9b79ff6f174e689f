// The tensor family's generator: from a seed, a chain of 2 to 8 tensor ops over 1 to 3 inputs of
// odd sizes (1, 31, 33, 127, 129, 1000 and small ones), seen through odd views (transposed,
// permuted, sliced with a step, expanded), with elementwise arithmetic and broadcasting, unary
// math, compares and where, casts between every element type, reductions, row ops and small
// matmuls. Inputs are mostly ordinary values, a few percent of them the edges (±0, ±inf, NaN,
// denormals, the largest floats, the integer extremes).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>

#include "tensor_chain.h"

namespace kiln::fuzz::tensor_chain {

namespace {

constexpr int64_t kMaxElements = 150000;  // per tensor: a case takes milliseconds on the CPU
constexpr int64_t kMaxMultiplyAdds = 2000000;
const int64_t kOddSizes[] = {1, 31, 33, 127, 129, 1000};
const int64_t kSmallSizes[] = {2, 3, 4, 5, 7, 8, 16};
// Numbers exact in every float type, so that converting one to the tensor's type cannot round.
const double kFloatNumbers[] = {0, 1, -1, 2, 0.5, -0.75, 3, -8, 0.125, 10, 1024};
const double kIntNumbers[] = {0, 1, -1, 2, 3, -7, 100, 127};
const double kByteNumbers[] = {0, 1, 2, 3, 7, 100, 255};

int64_t numel(const Shape& s) { return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<>()); }

// Right-aligned broadcasting; false when the shapes do not broadcast.
bool broadcast(const Shape& a, const Shape& b, Shape* out) {
  Shape r(std::max(a.size(), b.size()));
  for (size_t k = 0; k < r.size(); ++k) {
    const int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1, y = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (x != y && x != 1 && y != 1) return false;
    r[r.size() - 1 - k] = std::max(x, y);
  }
  if (out) *out = r;
  return true;
}

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) { c_.seed = seed; }

  Chain make() {
    c_.fused = chance(0.5);
    c_.hold = chance(0.35);
    const Shape base = base_shape();
    main_ = pick_dtype();
    pool_.push_back(viewed(main_, base, 0));
    for (int k = pick(1, 3); k > 1; --k) pool_.push_back(viewed(chance(0.7) ? main_ : pick_dtype(), varied(base), 0));
    int cur = pool_[0];
    for (int ops = pick(2, 8); ops > 0; --ops) {
      cur = extend(cur);
      pool_.push_back(cur);
    }
    return c_;
  }

  // Values for an input of `d`: a style per input (spread, small integers, positive), and the edges
  // in a few percent of the elements.
  static std::vector<unsigned char> draw(DType d, int64_t n, std::mt19937_64& rng) {
    std::vector<unsigned char> bytes(size_t(n) * element_bytes(d));
    const int style = int(rng() % 3);
    // Half the inputs hold no edges: a matmul or a sum over a thousand elements would meet one.
    const double edges = (rng() % 2 == 0) ? 0.0 : 0.02;
    for (int64_t k = 0; k < n; ++k) {
      unsigned char* p = bytes.data() + size_t(k) * element_bytes(d);
      const bool edge = std::uniform_real_distribution<double>(0, 1)(rng) < edges;
      if (ir::is_float(d))
        put_float(d, p, edge ? float_edge(d, rng) : ordinary_float(style, rng), edge && rng() % 8 == 0);
      else put_int(d, p, edge ? int_edge(d, rng) : ordinary_int(d, style, rng));
    }
    return bytes;
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class T, size_t N>
  const T& one_of(const T (&a)[N]) {
    return a[size_t(pick(0, int(N) - 1))];
  }

  DType pick_dtype() {
    const DType weighted[] = {DType::F32, DType::F32, DType::F32, DType::F16, DType::F16, DType::BF16, DType::BF16,
                              DType::F64, DType::I32, DType::I32, DType::I64, DType::U8,  DType::Bool};
    return one_of(weighted);
  }

  Shape base_shape() {
    for (;;) {
      const int rank = chance(0.25) ? 1 : chance(0.6) ? 2 : 3;
      Shape s;
      for (int k = 0; k < rank; ++k) s.push_back(chance(0.55) ? one_of(kOddSizes) : one_of(kSmallSizes));
      // Mostly a hundred elements or more: a few outputs are often equal for other inputs too.
      if (numel(s) <= kMaxElements && (numel(s) >= 100 || chance(0.1))) return s;
    }
  }

  // A shape that broadcasts with `s`: some dims 1, maybe fewer leading dims.
  Shape varied(const Shape& s) {
    Shape v = s;
    if (v.size() > 1 && chance(0.2)) v.erase(v.begin());
    for (int64_t& d : v) {
      if (chance(0.25)) d = 1;
    }
    return v;
  }

  int add(Step s) {
    approximate_.push_back(approximates(s));
    c_.steps.push_back(std::move(s));
    return int(c_.steps.size()) - 1;
  }

  // Whether a step's float values are only approximately known (a transcendental, a sum or a
  // product of rows fed them): what they decide through a compare, a remainder, a cast to an
  // integer or a position is often not comparable, so the generator makes such steps rarer there.
  bool approximates(const Step& s) const {
    const std::string ops[] = {"exp", "log", "tanh", "erf", "sigmoid", "gelu", "pow", "sum", "mean"};
    const bool fed = s.kind == StepKind::Rows || s.kind == StepKind::Matmul ||
                     std::find(std::begin(ops), std::end(ops), s.op) != std::end(ops);
    if (fed && ir::is_float(s.dtype)) return true;
    for (const Arg& a : s.args) {
      if (!a.is_number() && approximate_[size_t(a.node)]) return true;
    }
    return false;
  }
  bool rarely(int n) { return approximate_[size_t(n)] && chance(0.7); }
  const Step& node(int n) const { return c_.steps[size_t(n)]; }

  int input(DType d, const Shape& shape) {
    Input in{d, shape, draw(d, numel(shape), rng_)};
    c_.inputs.push_back(std::move(in));
    Step s;
    s.kind = StepKind::Input;
    s.input = int(c_.inputs.size()) - 1;
    s.dtype = d;
    s.shape = shape;
    return add(std::move(s));
  }

  // A node of logical shape `want`: an input seen through a view (or two) that gives that shape.
  int viewed(DType d, const Shape& want, int depth) {
    const int rank = int(want.size());
    Step s;
    s.dtype = d;
    s.shape = want;
    Shape from = want;
    const int kind = pick(0, 9);
    if (kind <= 2 || depth > 1) return input(d, want);
    if (kind <= 4 && rank >= 2) {
      const int a = pick(0, rank - 1), b = (a + pick(1, rank - 1)) % rank;
      std::swap(from[size_t(a)], from[size_t(b)]);
      s.kind = StepKind::SwapDims;
      s.dims = {chance(0.3) ? a - rank : a, b};
    } else if (kind == 5 && rank == 3) {
      std::vector<int64_t> order = {0, 1, 2};
      std::shuffle(order.begin(), order.end(), rng_);
      for (int k = 0; k < rank; ++k) from[size_t(order[size_t(k)])] = want[size_t(k)];
      s.kind = StepKind::Permute;
      s.dims = order;
    } else if (kind <= 7 && rank >= 1) {
      const int dim = pick(0, rank - 1);
      const int64_t step = pick(1, 3), start = pick(0, 4), end = start + (want[size_t(dim)] - 1) * step + 1;
      from[size_t(dim)] = end + pick(0, 3);
      s.kind = StepKind::Slice;
      s.dims = {dim, start, end, step};
    } else {
      for (int64_t& n : from) {
        if (n > 1 && chance(0.5)) n = 1;
      }
      if (rank >= 2 && chance(0.3)) from.erase(from.begin());
      if (from == want) return input(d, want);
      s.kind = StepKind::Expand;
      s.dims = want;
    }
    if (s.kind == StepKind::Input || numel(from) > 2 * kMaxElements) return input(d, want);
    s.args = {Arg{chance(0.25) ? viewed(d, from, depth + 1) : input(d, from)}};
    return add(std::move(s));
  }

  int cast(int n, DType to) {
    if (node(n).dtype == to) return n;
    // One cast of a node to a type: two would be equal operands, whose difference is no test.
    for (size_t k = size_t(n) + 1; k < c_.steps.size(); ++k) {
      const Step& c = c_.steps[k];
      if (c.kind == StepKind::Cast && c.args[0].node == n && c.dtype == to) return int(k);
    }
    Step s;
    s.kind = StepKind::Cast;
    s.args = {Arg{n}};
    s.dtype = to;
    s.shape = node(n).shape;
    return add(std::move(s));
  }

  Arg number(DType d, bool nonzero) {
    for (;;) {
      const double v = ir::is_float(d)  ? one_of(kFloatNumbers)
                       : d == DType::U8 ? one_of(kByteNumbers)
                                        : one_of(kIntNumbers);
      if (!nonzero || v != 0) return Arg{-1, v};
    }
  }

  // A second operand for `cur`: a number, a node of the pool whose shape broadcasts with it, or a
  // new input (cast to cur's type when it has another).
  Arg other(int cur, bool nonzero) {
    const DType d = node(cur).dtype;
    if (d != DType::Bool && chance(0.3)) return number(d, nonzero);
    std::vector<int> fits;
    for (int n : pool_) {
      Shape out;
      // Not cur itself: x - x, x == x and x % x ignore their inputs' values.
      if (n != cur && broadcast(node(cur).shape, node(n).shape, &out) && numel(out) <= kMaxElements) fits.push_back(n);
    }
    int n = fits.empty() || chance(0.3) ? viewed(chance(0.7) ? d : pick_dtype(), varied(node(cur).shape), 0)
                                        : fits[size_t(pick(0, int(fits.size()) - 1))];
    n = cast(n, d);
    if (n == cur && d != DType::Bool) return number(d, nonzero);  // cur cast back and forth
    if (nonzero && !ir::is_float(d)) {
      // An integer divisor of zero is an error on the CPU (docs/ir.md): where(n == 0, 1, n).
      const int zero = compare("eq", n, Arg{-1, 0});
      n = where(zero, Arg{-1, 1}, Arg{n});
    }
    return Arg{n};
  }

  Shape shape_of(const std::vector<Arg>& args) {
    Shape s;
    for (const Arg& a : args) {
      if (!a.is_number()) broadcast(s, node(a.node).shape, &s);
    }
    return s;
  }

  int compare(const std::string& op, int a, Arg b) {
    Step s;
    s.kind = StepKind::Binary;
    s.op = op;
    s.args = {Arg{a}, b};
    s.dtype = DType::Bool;
    s.shape = shape_of(s.args);
    return add(std::move(s));
  }

  int where(int condition, Arg a, Arg b) {
    Step s;
    s.kind = StepKind::Where;
    s.args = {Arg{condition}, a, b};
    s.dtype = a.is_number() ? node(b.node).dtype : node(a.node).dtype;
    s.shape = shape_of(s.args);
    return add(std::move(s));
  }

  // A type that arithmetic takes: bool tensors are cast to the chain's main type (or f32) first.
  DType numeric(DType d) {
    if (d != DType::Bool) return d;
    return main_ != DType::Bool && chance(0.5) ? main_ : DType::F32;
  }

  int extend(int cur) {
    const int what = pick(0, 99);
    if (what < 22) return unary(cur);
    if (what < 48) return binary(cur);
    if (what < 62) return rarely(cur) ? unary(cur) : compare_and_where(cur);
    if (what < 72) {
      const DType to = pick_other_dtype(node(cur).dtype);
      return cast(cur, ir::is_float(to) || !rarely(cur) ? to : DType::F64);
    }
    if (what < 82) return numel(node(cur).shape) > 16 ? reduce(cur) : binary(cur);
    if (what < 89) return rows(cur);
    if (what < 94) return matmul(cur);
    return view(cur);
  }

  DType pick_other_dtype(DType d) {
    for (;;) {
      const DType to = kDTypes[size_t(pick(0, 7))];
      if (to != d) return to;
    }
  }

  int unary(int cur) {
    cur = cast(cur, numeric(node(cur).dtype));
    const DType d = node(cur).dtype;
    const char* floats[] = {"exp", "log", "sqrt", "tanh", "erf", "sigmoid", "relu", "gelu", "neg", "abs"};
    const char* signed_ints[] = {"neg", "abs", "relu"};
    const char* bytes[] = {"abs", "relu"};
    Step s;
    s.kind = StepKind::Unary;
    s.op = ir::is_float(d) ? one_of(floats) : d == DType::U8 ? one_of(bytes) : one_of(signed_ints);
    s.args = {Arg{cur}};
    s.dtype = d;
    s.shape = node(cur).shape;
    return add(std::move(s));
  }

  int binary(int cur) {
    cur = cast(cur, numeric(node(cur).dtype));
    const DType d = node(cur).dtype;
    const char* floats[] = {"add", "sub", "mul", "div", "rem", "max", "min", "pow"};
    const char* ints[] = {"add", "sub", "mul", "div", "rem", "max", "min"};
    Step s;
    s.kind = StepKind::Binary;
    s.op = ir::is_float(d) ? one_of(floats) : one_of(ints);
    if (s.op == "rem" && rarely(cur)) s.op = "mul";
    const bool divides = s.op == "div" || s.op == "rem";
    Arg b = other(cur, divides);
    s.args = {Arg{cur}, b};
    // A number on the left (2 - x), but never as the integer divisor's dividend swapped into place.
    if (b.is_number() && !divides && chance(0.3)) std::swap(s.args[0], s.args[1]);
    s.dtype = d;
    s.shape = shape_of(s.args);
    return add(std::move(s));
  }

  int compare_and_where(int cur) {
    const char* ops[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    std::string op = one_of(ops);
    if (node(cur).dtype == DType::Bool && op != "eq" && op != "ne") cur = cast(cur, numeric(DType::Bool));
    const int condition = compare(op, cur, other(cur, false));
    if (chance(0.2)) return condition;
    Arg a{cur}, b = other(cur, false);
    if (chance(0.5)) std::swap(a, b);
    if (node(cur).dtype == DType::Bool) b = Arg{cur};  // bool tensors take no numbers
    return where(condition, a, b);
  }

  int reduce(int cur) {
    const DType d = node(cur).dtype;
    const char* floats[] = {"sum", "mean", "amax", "amin", "argmax", "argmin"};
    const char* ints[] = {"sum", "amax", "amin", "argmax", "argmin"};
    Step s;
    s.kind = StepKind::Reduce;
    s.op = d == DType::Bool ? "sum" : ir::is_float(d) ? one_of(floats) : one_of(ints);
    if (s.op.rfind("arg", 0) == 0 && rarely(cur)) s.op = s.op == "argmax" ? "amax" : "amin";
    s.args = {Arg{cur}};
    s.keepdim = chance(0.5);
    const Shape& in = node(cur).shape;
    const int rank = int(in.size());
    const bool all = rank == 0 || (chance(0.15) && s.op.rfind("arg", 0) != 0);
    if (rank == 0 && s.op.rfind("arg", 0) == 0) s.op = "amax";
    if (!all) {
      const int dim = long_dim(in);
      s.dims = {chance(0.3) ? dim - rank : dim};
    }
    for (int k = 0; k < rank; ++k) {
      const bool reduced = all || k == (s.dims[0] + rank) % rank;
      if (!reduced) s.shape.push_back(in[size_t(k)]);
      else if (s.keepdim) s.shape.push_back(1);
    }
    const bool to_i64 = s.op.rfind("arg", 0) == 0 || (s.op == "sum" && !ir::is_float(d));
    s.dtype = to_i64 ? DType::I64 : d;
    return add(std::move(s));
  }

  // A dim to reduce over: one longer than 1 where there is one (a softmax over one element is 1).
  int long_dim(const Shape& s) {
    std::vector<int> longer;
    for (size_t k = 0; k < s.size(); ++k) {
      if (s[k] > 1) longer.push_back(int(k));
    }
    if (longer.empty()) return pick(0, int(s.size()) - 1);
    return longer[size_t(pick(0, int(longer.size()) - 1))];
  }

  int rows(int cur) {
    if (node(cur).shape.empty()) return unary(cur);
    if (!ir::is_float(node(cur).dtype)) cur = cast(cur, ir::is_float(main_) ? main_ : DType::F32);
    const int rank = int(node(cur).shape.size());
    Step s;
    s.kind = StepKind::Rows;
    s.op = chance(0.5) ? "softmax" : "log_softmax";
    s.args = {Arg{cur}};
    const int dim = long_dim(node(cur).shape);
    s.dims = {chance(0.3) ? dim - rank : dim};
    s.dtype = node(cur).dtype;
    s.shape = node(cur).shape;
    return add(std::move(s));
  }

  int matmul(int cur) {
    const Shape a = node(cur).shape;  // a copy: the steps added below move the nodes
    const int64_t columns[] = {1, 16, 31, 33, 64};
    const int64_t n = one_of(columns);
    if (a.size() < 2 || numel(a) * n > kMaxMultiplyAdds) return binary(cur);
    cur = cast(cur, numeric(node(cur).dtype));
    const int64_t k = a.back();
    Step s;
    s.kind = StepKind::Matmul;
    s.args = {Arg{cur}, Arg{viewed(node(cur).dtype, {k, n}, 0)}};
    s.choice = rng_();
    s.dtype = node(cur).dtype;
    s.shape = a;
    s.shape.back() = n;
    return add(std::move(s));
  }

  // A view of an op's result: the next ops read it through strides.
  int view(int cur) {
    const Shape& in = node(cur).shape;
    const int rank = int(in.size());
    Step s;
    s.args = {Arg{cur}};
    s.dtype = node(cur).dtype;
    s.shape = in;
    if (rank >= 2 && chance(0.6)) {
      const int a = pick(0, rank - 1), b = (a + pick(1, rank - 1)) % rank;
      std::swap(s.shape[size_t(a)], s.shape[size_t(b)]);
      s.kind = StepKind::SwapDims;
      s.dims = {a, b};
      return add(std::move(s));
    }
    for (int dim = 0; dim < rank; ++dim) {
      if (in[size_t(dim)] > 2) {
        const int64_t step = pick(1, 3), start = pick(0, 1);
        s.kind = StepKind::Slice;
        s.dims = {dim, start, in[size_t(dim)], step};
        s.shape[size_t(dim)] = (in[size_t(dim)] - start + step - 1) / step;
        return add(std::move(s));
      }
    }
    return unary(cur);
  }

  static void put_float(DType d, unsigned char* p, double v, bool signalling) {
    if (std::isnan(v) && signalling) {
      const uint64_t bits64 = 0x7ff0000000000001ull;
      const uint32_t bits32 = 0x7f800001u;
      const uint16_t bits16 = d == DType::F16 ? 0x7c01 : 0x7f81;
      if (d == DType::F64) std::memcpy(p, &bits64, 8);
      else if (d == DType::F32) std::memcpy(p, &bits32, 4);
      else std::memcpy(p, &bits16, 2);
      return;
    }
    if (d == DType::F64) {
      std::memcpy(p, &v, 8);
    } else if (d == DType::F32) {
      const float f = float(v);
      std::memcpy(p, &f, 4);
    } else {
      const uint16_t h = half_bits(d, round_to(d, v));
      std::memcpy(p, &h, 2);
    }
  }

  static void put_int(DType d, unsigned char* p, int64_t v) {
    if (d == DType::I64) std::memcpy(p, &v, 8);
    else if (d == DType::I32) {
      const int32_t x = int32_t(v);
      std::memcpy(p, &x, 4);
    } else if (d == DType::U8) {
      *p = uint8_t(v);
    } else {
      *p = v != 0;
    }
  }

  static double float_edge(DType d, std::mt19937_64& rng) {
    const DType s = d;
    const double largest = s == DType::F16    ? 65504.0
                           : s == DType::BF16 ? 0x1.fep127
                           : s == DType::F32  ? 0x1.fffffep127
                                              : std::numeric_limits<double>::max();
    const double normal = s == DType::F16 ? 0x1p-14 : s == DType::F64 ? 0x1p-1022 : 0x1p-126;
    const double tiny = s == DType::F16    ? 0x1p-24
                        : s == DType::BF16 ? 0x1p-133
                        : s == DType::F32  ? 0x1p-149
                                           : 0x1p-1074;
    const double inf = std::numeric_limits<double>::infinity();
    const double edges[] = {0.0,  -0.0,          inf, -inf, std::nan(""), largest, -largest, normal, -tiny,
                            tiny, normal - tiny, 1,   -1};
    return edges[rng() % 13];
  }

  static double ordinary_float(int style, std::mt19937_64& rng) {
    if (style == 1) return double(int64_t(rng() % 17) - 8);
    if (style == 2) return std::uniform_real_distribution<double>(0.01, 10)(rng);
    return std::uniform_real_distribution<double>(-4, 4)(rng);
  }

  static int64_t int_edge(DType d, std::mt19937_64& rng) {
    if (d == DType::U8) return rng() % 2 ? 255 : 0;
    if (d == DType::Bool) return int64_t(rng() % 2);
    const int64_t lo = d == DType::I32 ? INT32_MIN : INT64_MIN, hi = d == DType::I32 ? INT32_MAX : INT64_MAX;
    const int64_t edges[] = {lo, hi, 0, -1, 1, lo + 1, hi - 1};
    return edges[rng() % 7];
  }

  static int64_t ordinary_int(DType d, int style, std::mt19937_64& rng) {
    if (d == DType::Bool) return int64_t(rng() % 2);
    if (d == DType::U8) return int64_t(rng() % 256);
    if (style == 0 && d == DType::I32) return int32_t(uint32_t(rng()));
    if (style == 0) return int64_t(rng());
    return int64_t(rng() % 201) - 100;
  }

  std::mt19937_64 rng_;
  Chain c_;
  DType main_ = DType::F32;
  std::vector<int> pool_;          // nodes a later op may take as its second operand
  std::vector<bool> approximate_;  // per node: approximates()
};

std::string shape_text(const Shape& s) {
  std::string t = "[";
  for (size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
  return t + "]";
}

std::string list_text(const std::vector<int64_t>& v) {
  std::string t;
  for (size_t k = 0; k < v.size(); ++k) t += (k ? ", " : "") + std::to_string(v[k]);
  return t;
}

std::string arg_text(const Arg& a) {
  if (!a.is_number()) return "%" + std::to_string(a.node);
  std::ostringstream o;
  o << a.number;
  return o.str();
}

const char* kind_name(StepKind k) {
  switch (k) {
    case StepKind::Input: return "input";
    case StepKind::SwapDims: return "swap_dims";
    case StepKind::Permute: return "permute";
    case StepKind::Slice: return "slice";
    case StepKind::Expand: return "expand";
    case StepKind::Cast: return "cast";
    case StepKind::Where: return "where";
    case StepKind::Matmul: return "matmul";
    default: return "";
  }
}

}  // namespace

Chain generate(uint64_t seed) { return Generator(seed).make(); }

Chain with_other_inputs(const Chain& c, uint64_t seed) {
  Chain other = c;
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  for (Input& in : other.inputs) in.bytes = Generator::draw(in.dtype, numel(in.shape), rng);
  return other;
}

std::string describe(const Chain& c) {
  std::ostringstream o;
  o << "// tensor chain, seed " << c.seed << ", fusion " << (c.fused ? "on" : "off") << ", "
    << (c.hold ? "every step held and compared" : "a step's last use takes it by std::move") << "\n";
  for (size_t n = 0; n < c.steps.size(); ++n) {
    const Step& s = c.steps[n];
    o << "%" << n << " = " << (s.op.empty() ? kind_name(s.kind) : s.op.c_str()) << "(";
    if (s.kind == StepKind::Input) o << s.input;
    for (size_t k = 0; k < s.args.size(); ++k) o << (k ? ", " : "") << arg_text(s.args[k]);
    if (s.kind == StepKind::Expand) o << ", " << shape_text(s.dims);
    else if (s.kind == StepKind::Reduce)
      o << (s.dims.empty() ? ", all" : ", dim " + list_text(s.dims)) << (s.keepdim ? ", keepdim" : "");
    else if (!s.dims.empty()) o << ", " << list_text(s.dims);
    o << ") : " << ir::scalar_name(s.dtype) << " " << shape_text(s.shape) << "\n";
  }
  return o.str();
}

std::vector<int> compared_nodes(const Chain& c) {
  std::vector<int> nodes = {int(c.steps.size()) - 1};
  if (!c.hold) return nodes;
  for (size_t n = 0; n + 1 < c.steps.size(); ++n) {
    const StepKind k = c.steps[n].kind;
    if (k != StepKind::Input && k != StepKind::SwapDims && k != StepKind::Permute && k != StepKind::Slice &&
        k != StepKind::Expand)
      nodes.push_back(int(n));
  }
  return nodes;
}

}  // namespace kiln::fuzz::tensor_chain
