// Elementwise arithmetic (add sub mul div rem neg abs min max fma) over every numeric dtype and
// vector widths, with integer wrap cases (MIN, MAX, -1, MIN / -1) and float edge values (NaN, inf,
// -0, subnormals) in the inputs; and the same ops on constants, which the fold pass computes.
#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

template <class T>
struct AddSubMul {
  static constexpr std::string_view name = "add_sub_mul";
  void operator()(Slice<const Vector<T>> a, Slice<const Vector<T>> b, Slice<Vector<T>> sum, Slice<Vector<T>> diff,
                  Slice<Vector<T>> prod) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] {
      Vector<T> x = a[i], y = b[i];
      sum[i] = x + y;
      diff[i] = x - y;
      prod[i] = x * y;
    });
  }
};

template <class T>
struct DivRem {
  static constexpr std::string_view name = "div_rem";
  void operator()(Slice<const Vector<T>> a, Slice<const Vector<T>> b, Slice<Vector<T>> quot,
                  Slice<Vector<T>> rem) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] {
      quot[i] = a[i] / b[i];
      rem[i] = a[i] % b[i];
    });
  }
};

template <class T>
struct MinMax {
  static constexpr std::string_view name = "min_max";
  void operator()(Slice<const Vector<T>> a, Slice<const Vector<T>> b, Slice<Vector<T>> lo, Slice<Vector<T>> hi) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] {
      lo[i] = min(a[i], b[i]);
      hi[i] = max(a[i], b[i]);
    });
  }
};

template <class T>
struct NegAbs {
  static constexpr std::string_view name = "neg_abs";
  void operator()(Slice<const Vector<T>> a, Slice<Vector<T>> neg, Slice<Vector<T>> mag) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] {
      Vector<T> x = a[i];
      neg[i] = -x;
      mag[i] = abs(x);
    });
  }
};

template <class F>
struct Fma {
  static constexpr std::string_view name = "fma";
  void operator()(Slice<const Vector<F>> a, Slice<const Vector<F>> b, Slice<const Vector<F>> c,
                  Slice<Vector<F>> out) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] { out[i] = fma(a[i], b[i], c[i]); });
  }
};

// Operands the constant cases combine pairwise: the dtype's edge values and, for integers, shift
// amounts below, at and past the bit width.
template <class T>
std::vector<T> fold_operands() {
  std::vector<T> v = special_values<T>();
  if constexpr (is_int_v<T>) {
    for (unsigned s : {3u, ref::bits_of<T>() - 1, ref::bits_of<T>(), ref::bits_of<T>() + 1}) v.push_back(T(s));
  } else {
    v.push_back(narrow<T>(2.5L));
    v.push_back(narrow<T>(-0.75L));
  }
  return v;
}
template <class T>
constexpr size_t fold_ops() {
  return is_int_v<T> ? 12 : 7;
}

// Every op on every pair of constant operands; only unit 0 writes. Integer division by a zero
// constant is replaced by the dividend (dividing an integer by zero is an error).
template <class T>
struct FoldedArith {
  static constexpr std::string_view name = "folded_arith";
  void operator()(Slice<T> out) const {
    const std::vector<T> v = fold_operands<T>();
    If(absolute_pos() == 0u, [&] {
      uint32_t k = 0;
      for (T a : v) {
        for (T b : v) {
          Expr<T> x(a), y(b);
          out[k++] = x + y;
          out[k++] = x - y;
          out[k++] = x * y;
          bool zero = false;
          if constexpr (is_int_v<T>) zero = b == T(0);
          if (zero) {
            out[k++] = x;
            out[k++] = x;
          } else {
            out[k++] = x / y;
            out[k++] = x % y;
          }
          out[k++] = min(x, y);
          out[k++] = max(x, y);
          if constexpr (is_int_v<T>) {
            out[k++] = x << y;
            out[k++] = x >> y;
            out[k++] = x & y;
            out[k++] = x | y;
            out[k++] = x ^ y;
          }
        }
      }
    });
  }
};

// y = min(3x + 1, 100) written with int literals.
struct F16IntLiteral {
  static constexpr std::string_view name = "f16_int_literal";
  void operator()(Slice<const f16> x, Slice<f16> y) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] { y[i] = min(x[i] * 3 + 1, 100); });
  }
};

template <class T>
std::vector<T> folded_reference() {
  std::vector<T> v = fold_operands<T>(), r;
  for (T a : v) {
    for (T b : v) {
      r.push_back(ref::add(a, b));
      r.push_back(ref::sub(a, b));
      r.push_back(ref::mul(a, b));
      bool zero = false;
      if constexpr (is_int_v<T>) zero = b == T(0);
      r.push_back(zero ? a : ref::div(a, b));
      r.push_back(zero ? a : ref::rem(a, b));
      r.push_back(ref::min(a, b));
      r.push_back(ref::max(a, b));
      if constexpr (is_int_v<T>) {
        r.push_back(ref::shl(a, b));
        r.push_back(ref::shr(a, b));
        r.push_back(T(a & b));
        r.push_back(T(a | b));
        r.push_back(T(a ^ b));
      }
    }
  }
  return r;
}

// Random inputs with edge values; for division, integer divisors are never 0 and MIN / -1 appears.
template <class T>
std::vector<T> operand(std::mt19937_64& rng, size_t n) {
  std::vector<T> v = random_any<T>(rng, n);
  sprinkle_specials(v, rng);
  return v;
}
template <class T>
void make_divisors(std::vector<T>& a, std::vector<T>& b, std::mt19937_64& rng) {
  if constexpr (is_int_v<T>) {
    for (auto& x : b) {
      if (x == T(0)) x = T(1);
    }
    if constexpr (std::is_signed_v<T>) {
      for (int k = 0; k < 4; ++k) {
        size_t i = rng() % a.size();
        a[i] = std::numeric_limits<T>::min();
        b[i] = T(-1);
      }
    }
    // Small divisors too, so that quotients are not all 0 or 1.
    for (size_t i = 0; i < b.size(); i += 3) b[i] = T(1 + rng() % 13);
  } else {
    (void)a;
    (void)rng;
  }
}

template <class T>
void register_arith(int width) {
  const size_t n = size_t(width) * 1009;  // 1009 units (a prime): 16 cubes of 64, the last one partial
  const std::string t = dtype_name<T>(), w = vw(width), sz = nn(n);
  add_case(case_name({"add_sub_mul", t, w, sz}), kernels<AddSubMul<T>>(), [=](Client& client, std::mt19937_64& rng) {
    auto a = operand<T>(rng, n), b = operand<T>(rng, n);
    auto out = run_map<AddSubMul<T>, T, 3>(client, width, 64, n, a, b);
    expect_near("a + b", tabulate<T>(n, [&](size_t i) { return ref::add(a[i], b[i]); }), out[0], tol_arith<T>());
    expect_near("a - b", tabulate<T>(n, [&](size_t i) { return ref::sub(a[i], b[i]); }), out[1], tol_arith<T>());
    expect_near("a * b", tabulate<T>(n, [&](size_t i) { return ref::mul(a[i], b[i]); }), out[2], tol_arith<T>());
  });
  add_case(case_name({"div_rem", t, w, sz}), kernels<DivRem<T>>(), [=](Client& client, std::mt19937_64& rng) {
    auto a = operand<T>(rng, n), b = operand<T>(rng, n);
    make_divisors(a, b, rng);
    auto out = run_map<DivRem<T>, T, 2>(client, width, 64, n, a, b);
    expect_near("a / b", tabulate<T>(n, [&](size_t i) { return ref::div(a[i], b[i]); }), out[0], tol_arith<T>());
    expect_near("a % b", tabulate<T>(n, [&](size_t i) { return ref::rem(a[i], b[i]); }), out[1], tol_arith<T>());
  });
  add_case(case_name({"min_max", t, w, sz}), kernels<MinMax<T>>(), [=](Client& client, std::mt19937_64& rng) {
    auto a = operand<T>(rng, n), b = operand<T>(rng, n);
    auto out = run_map<MinMax<T>, T, 2>(client, width, 64, n, a, b);
    expect_near("min(a, b)", tabulate<T>(n, [&](size_t i) { return ref::min(a[i], b[i]); }), out[0], exact());
    expect_near("max(a, b)", tabulate<T>(n, [&](size_t i) { return ref::max(a[i], b[i]); }), out[1], exact());
  });
  if constexpr (std::is_signed_v<T> || is_float_v<T>) {
    add_case(case_name({"neg_abs", t, w, sz}), kernels<NegAbs<T>>(), [=](Client& client, std::mt19937_64& rng) {
      auto a = operand<T>(rng, n);
      auto out = run_map<NegAbs<T>, T, 2>(client, width, 64, n, a);
      expect_near("-a", tabulate<T>(n, [&](size_t i) { return ref::neg(a[i]); }), out[0], exact());
      expect_near("abs(a)", tabulate<T>(n, [&](size_t i) { return ref::abs(a[i]); }), out[1], exact());
    });
  }
  if constexpr (is_float_v<T>) {
    add_case(case_name({"fma", t, w, sz}), kernels<Fma<T>>(), [=](Client& client, std::mt19937_64& rng) {
      auto a = operand<T>(rng, n), b = operand<T>(rng, n), c = operand<T>(rng, n);
      auto out = run_map<Fma<T>, T, 1>(client, width, 64, n, a, b, c);
      expect_near("fma(a, b, c)", tabulate<T>(n, [&](size_t i) { return ref::fma(a[i], b[i], c[i]); }), out[0],
                  tol_arith<T>());
    });
  }
}

template <class T>
void register_folded() {
  const size_t n = fold_operands<T>().size() * fold_operands<T>().size() * fold_ops<T>();
  add_case(case_name({"folded_arith", dtype_name<T>()}), kernels<FoldedArith<T>>(),
           [=](Client& client, std::mt19937_64&) {
             Handle out = poisoned_elems<T>(client, n);
             launch<FoldedArith<T>>(client, CubeCount{1}, CubeDim{32}, 1, out);
             expect_near("ops on constants", folded_reference<T>(), client.read<T>(out), tol_arith<T>());
           });
}

KILN_SUITE_CASES(arith) {
  for_types<float, double, f16, bf16, int32_t, uint32_t, int64_t, uint64_t, int8_t, uint8_t, int16_t, uint16_t>(
      []<class T>() {
        register_arith<T>(1);
        register_arith<T>(4);
      });
  for_types<float, f16, int32_t, uint8_t>([]<class T>() {
    register_arith<T>(2);
    register_arith<T>(8);
  });
  for_types<float, double, f16, int8_t, int32_t, uint32_t, int64_t, uint64_t>([]<class T>() { register_folded<T>(); });

  // An integer literal next to an f16 proxy (it did not compile: literal_as<f16>(int) was ambiguous).
  add_case("f16_int_literal", kernels<F16IntLiteral>(), [](Client& client, std::mt19937_64& rng) {
    auto x = random_values<f16>(rng, 100, -50, 50);
    auto out = run_map<F16IntLiteral, f16, 1>(client, 1, 64, 100, x);
    expect_equal("min(3x + 1, 100)",
                 tabulate<f16>(100,
                               [&](size_t i) {
                                 return ref::min(ref::add(ref::mul(x[i], make<f16>(3)), make<f16>(1)), make<f16>(100));
                               }),
                 out[0]);
  });
}

}  // namespace
}  // namespace kiln::suite
