// Float math: every unary function of docs/ir.md on f32 and f64 (and a few on f16 and bf16), pow,
// and isnan/isinf, against long-double host references, with inputs over each function's domain
// plus its edge values (0, negative, inf, NaN).
#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

enum class Fn { Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Recip, Sin, Cos, Tan, Tanh, Erf, Floor, Ceil, Round, Trunc };

const char* fn_name(Fn f) {
  static const char* names[] = {"exp", "exp2", "log",  "log2", "sqrt",  "rsqrt", "recip", "sin",
                                "cos", "tan",  "tanh", "erf",  "floor", "ceil",  "round", "trunc"};
  return names[int(f)];
}

// One kernel for all unary functions: the function is a comptime int (an Fn), so each is its own
// compiled kernel with a single call in it. (A Comptime<Fn> would read better, but launching a
// kernel with a Comptime<enum> parameter does not compile: see the BUG case comptime_enum in
// control_test.cpp.)
template <class F>
struct UnaryMath {
  static constexpr std::string_view name = "unary_math";
  void operator()(Slice<const Vector<F>> x, Slice<Vector<F>> y, Comptime<int> fn) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Vector<F> v = x[i];
      switch (Fn(fn.get())) {
        case Fn::Exp: y[i] = exp(v); break;
        case Fn::Exp2: y[i] = exp2(v); break;
        case Fn::Log: y[i] = log(v); break;
        case Fn::Log2: y[i] = log2(v); break;
        case Fn::Sqrt: y[i] = sqrt(v); break;
        case Fn::Rsqrt: y[i] = rsqrt(v); break;
        case Fn::Recip: y[i] = recip(v); break;
        case Fn::Sin: y[i] = sin(v); break;
        case Fn::Cos: y[i] = cos(v); break;
        case Fn::Tan: y[i] = tan(v); break;
        case Fn::Tanh: y[i] = tanh(v); break;
        case Fn::Erf: y[i] = erf(v); break;
        case Fn::Floor: y[i] = floor(v); break;
        case Fn::Ceil: y[i] = ceil(v); break;
        case Fn::Round: y[i] = round(v); break;
        case Fn::Trunc: y[i] = trunc(v); break;
      }
    });
  }
};

template <class F>
struct Pow {
  static constexpr std::string_view name = "pow";
  void operator()(Slice<const Vector<F>> a, Slice<const Vector<F>> b, Slice<Vector<F>> y) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] { y[i] = pow(a[i], b[i]); });
  }
};

template <class F>
struct CopySign {
  static constexpr std::string_view name = "copysign";
  void operator()(Slice<const Vector<F>> a, Slice<const Vector<F>> b, Slice<Vector<F>> y) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] { y[i] = copysign(a[i], b[i]); });
  }
};

template <class F>
struct Classify {
  static constexpr std::string_view name = "classify";
  void operator()(Slice<const Vector<F>> x, Slice<Vector<bool>> nan, Slice<Vector<bool>> inf) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      nan[i] = isnan(x[i]);
      inf[i] = isinf(x[i]);
    });
  }
};

long double apply(Fn f, long double x) {
  switch (f) {
    case Fn::Exp: return std::exp(x);
    case Fn::Exp2: return std::exp2(x);
    case Fn::Log: return std::log(x);
    case Fn::Log2: return std::log2(x);
    case Fn::Sqrt: return std::sqrt(x);
    case Fn::Rsqrt: return 1.0L / std::sqrt(x);
    case Fn::Recip: return 1.0L / x;
    case Fn::Sin: return std::sin(x);
    case Fn::Cos: return std::cos(x);
    case Fn::Tan: return std::tan(x);
    case Fn::Tanh: return std::tanh(x);
    case Fn::Erf: return std::erf(x);
    case Fn::Floor: return std::floor(x);
    case Fn::Ceil: return std::ceil(x);
    case Fn::Round: return std::round(x);  // ties away from zero
    case Fn::Trunc: return std::trunc(x);
  }
  return x;
}

bool is_rounding(Fn f) { return f == Fn::Floor || f == Fn::Ceil || f == Fn::Round || f == Fn::Trunc; }

// sign * 2^[lo, hi) with a random significand.
template <class F>
F log_uniform(std::mt19937_64& rng, int lo, int hi, bool allow_negative) {
  long double m = std::ldexp(1.0L + (rng() % (1u << 20)) / double(1u << 20), lo + int(rng() % uint64_t(hi - lo)));
  return narrow<F>(allow_negative && (rng() & 1) ? -m : m);
}

template <class F>
std::vector<F> math_inputs(Fn f, std::mt19937_64& rng, size_t n) {
  constexpr bool half = is_short_float_v<F>;
  constexpr bool f64 = std::is_same_v<F, double>;
  std::vector<F> v(n);
  switch (f) {
    case Fn::Exp: v = random_values<F>(rng, n, half ? -8 : -20, half ? 8 : (f64 ? 200 : 20)); break;
    case Fn::Exp2: v = random_values<F>(rng, n, half ? -14 : -30, half ? 15 : 30); break;
    case Fn::Log:
    case Fn::Log2:
    case Fn::Sqrt:
    case Fn::Rsqrt:
      for (auto& x : v) x = log_uniform<F>(rng, half ? -14 : -40, half ? 15 : 40, false);
      break;
    case Fn::Recip:
      for (auto& x : v) x = log_uniform<F>(rng, half ? -14 : -40, half ? 14 : 40, true);
      break;
    case Fn::Sin:
    case Fn::Cos:
    case Fn::Tan:
    case Fn::Tanh: v = random_values<F>(rng, n, -10, 10); break;
    case Fn::Erf: v = random_values<F>(rng, n, -4, 4); break;
    default:
      // Quarters, so that halves (round's ties) and exact integers appear, and fractions.
      for (auto& x : v) x = narrow<F>((int64_t(rng() % 801) - 400) / 4.0L + ((rng() & 3) == 0 ? 0.1L : 0.0L));
      break;
  }
  std::vector<F> specials{narrow<F>(0.0L),
                          narrow<F>(-0.0L),
                          narrow<F>(std::numeric_limits<long double>::infinity()),
                          narrow<F>(-std::numeric_limits<long double>::infinity()),
                          narrow<F>(std::numeric_limits<long double>::quiet_NaN()),
                          narrow<F>(-1.0L),
                          narrow<F>(1.0L),
                          narrow<F>(0.5L),
                          narrow<F>(-2.5L)};
  sprinkle_specials(v, rng, specials);
  return v;
}

template <class F>
void register_unary(Fn f, int width) {
  const size_t n = size_t(width) * 1009;
  add_case(case_name({"math", fn_name(f), dtype_name<F>(), vw(width), nn(n)}), kernels<UnaryMath<F>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = math_inputs<F>(f, rng, n);
             Handle hx = client.upload(x), hy = poisoned_elems<F>(client, n);
             launch<UnaryMath<F>>(client, CubeCount{cubes_for(n / size_t(width), 128)}, CubeDim{128}, width, hx, hy,
                                  comptime(int(f)));
             auto expected = tabulate<F>(n, [&](size_t i) { return narrow<F>(apply(f, wide(x[i]))); });
             expect_near(std::string(fn_name(f)) + "(x)", expected, client.read<F>(hy),
                         is_rounding(f) ? exact() : tol_math<F>());
           });
}

template <class F>
void register_pow(int width) {
  const size_t n = size_t(width) * 1009;
  add_case(case_name({"pow", dtype_name<F>(), vw(width), nn(n)}), kernels<Pow<F>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto a = random_values<F>(rng, n, 0.01, 10), b = random_values<F>(rng, n, -4, 4);
             for (size_t i = 0; i < n; i += 9) {  // negative bases with integer exponents
               a[i] = narrow<F>(-wide(a[i]));
               b[i] = narrow<F>(std::round(wide(b[i])));
             }
             for (size_t i = 5; i < n; i += 97) {  // pow(x, 0) = 1, pow(1, y) = 1, pow(0, y > 0) = 0
               a[i] = narrow<F>(i % 3 == 0 ? 1.0L : i % 3 == 1 ? 0.0L : wide(a[i]));
               if (i % 3 == 2) b[i] = narrow<F>(0.0L);
               if (i % 3 == 1) b[i] = narrow<F>(2.0L);
             }
             auto out = run_map<Pow<F>, F, 1>(client, width, 64, n, a, b);
             expect_near("pow(a, b)",
                         tabulate<F>(n, [&](size_t i) { return narrow<F>(std::pow(wide(a[i]), wide(b[i]))); }), out[0],
                         tol_math<F>());
           });
}

// Exact on every device: the magnitude's bits with the sign's bit, NaNs and zeros included.
template <class F>
void register_copysign(int width) {
  const size_t n = size_t(width) * 1009;
  add_case(case_name({"copysign", dtype_name<F>(), vw(width), nn(n)}), kernels<CopySign<F>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto a = random_any<F>(rng, n), b = random_any<F>(rng, n);
             sprinkle_specials(a, rng);
             sprinkle_specials(b, rng);
             auto out = run_map<CopySign<F>, F, 1>(client, width, 64, n, a, b);
             expect_equal("copysign(a, b)",
                          tabulate<F>(n, [&](size_t i) { return narrow<F>(std::copysign(wide(a[i]), wide(b[i]))); }),
                          out[0]);
           });
}

template <class F>
void register_classify(int width) {
  const size_t n = size_t(width) * 1009;
  add_case(case_name({"classify", dtype_name<F>(), vw(width), nn(n)}), kernels<Classify<F>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_any<F>(rng, n);
             sprinkle_specials(x, rng);
             auto out = run_map<Classify<F>, bool, 2>(client, width, 64, n, x);
             expect_equal("isnan(x)", tabulate<uint8_t>(n, [&](size_t i) { return uint8_t(std::isnan(wide(x[i]))); }),
                          out[0]);
             expect_equal("isinf(x)", tabulate<uint8_t>(n, [&](size_t i) { return uint8_t(std::isinf(wide(x[i]))); }),
                          out[1]);
           });
}

KILN_SUITE_CASES(math) {
  for (int k = 0; k <= int(Fn::Trunc); ++k) {
    Fn f = Fn(k);
    register_unary<float>(f, 4);
    register_unary<double>(f, 1);
  }
  for (Fn f : {Fn::Exp, Fn::Sin, Fn::Log, Fn::Round}) register_unary<float>(f, 1);
  for (Fn f : {Fn::Exp, Fn::Sqrt, Fn::Sin, Fn::Floor, Fn::Round}) register_unary<f16>(f, 2);
  for (Fn f : {Fn::Exp, Fn::Tanh, Fn::Sqrt, Fn::Log, Fn::Sin, Fn::Floor, Fn::Recip}) register_unary<bf16>(f, 1);
  register_pow<float>(1);
  register_pow<float>(4);
  register_pow<double>(2);
  for_types<float, double, f16, bf16>([]<class F>() { register_copysign<F>(1); });
  register_copysign<float>(4);
  for_types<float, double, f16, bf16>([]<class F>() { register_classify<F>(1); });
  register_classify<float>(8);
}

}  // namespace
}  // namespace kiln::suite
