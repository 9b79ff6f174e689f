// Bitwise ops, shifts (amounts at and past the bit width, negative amounts read as unsigned, a
// scalar amount broadcast over a vector), popcount, leading_zeros and trailing_zeros; compares (NaN unequal to
// everything), select with a per-unit or a per-lane condition, and logic on bools.
#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

template <class T>
struct Bitwise {
  static constexpr std::string_view name = "bitwise";
  void operator()(Slice<const Vector<T>> a, Slice<const Vector<T>> b, Slice<Vector<T>> both, Slice<Vector<T>> either,
                  Slice<Vector<T>> differ, Slice<Vector<T>> inverted) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] {
      Vector<T> x = a[i], y = b[i];
      both[i] = x & y;
      either[i] = x | y;
      differ[i] = x ^ y;
      inverted[i] = ~x;
    });
  }
};

template <class T>
struct Shifts {
  static constexpr std::string_view name = "shifts";
  void operator()(Slice<const Vector<T>> a, Slice<const Vector<T>> s, Scalar<T> k, Slice<Vector<T>> left,
                  Slice<Vector<T>> right, Slice<Vector<T>> left_k, Slice<Vector<T>> right_k) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] {
      Vector<T> x = a[i];
      left[i] = x << s[i];
      right[i] = x >> s[i];
      left_k[i] = x << k;  // a scalar parameter broadcast over the vector
      right_k[i] = x >> k;
    });
  }
};

template <class T>
struct BitCount {
  static constexpr std::string_view name = "bit_count";
  void operator()(Slice<const Vector<T>> a, Slice<Vector<uint32_t>> ones, Slice<Vector<uint32_t>> lz,
                  Slice<Vector<uint32_t>> tz) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] {
      ones[i] = popcount(a[i]);
      lz[i] = leading_zeros(a[i]);
      tz[i] = trailing_zeros(a[i]);
    });
  }
};

template <class T>
struct Compare {
  static constexpr std::string_view name = "compare";
  void operator()(Slice<const Vector<T>> a, Slice<const Vector<T>> b, Slice<Vector<bool>> eq, Slice<Vector<bool>> ne,
                  Slice<Vector<bool>> lt, Slice<Vector<bool>> le, Slice<Vector<bool>> gt,
                  Slice<Vector<bool>> ge) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] {
      Vector<T> x = a[i], y = b[i];
      eq[i] = x == y;
      ne[i] = x != y;
      lt[i] = x < y;
      le[i] = x <= y;
      gt[i] = x > y;
      ge[i] = x >= y;
    });
  }
};

template <class T>
struct Select {
  static constexpr std::string_view name = "select";
  void operator()(Slice<const bool> c, Slice<const Vector<T>> a, Slice<const Vector<T>> b, Slice<Vector<T>> picked,
                  Slice<Vector<T>> larger) const {
    auto i = absolute_pos();
    If(i < c.len(), [&] {
      Vector<T> x = a[i], y = b[i];
      picked[i] = select(c[i], x, y);   // one condition per unit, broadcast over the lanes
      larger[i] = select(x < y, y, x);  // a condition per lane
    });
  }
};

struct BoolLogic {
  static constexpr std::string_view name = "bool_logic";
  void operator()(Slice<const bool> a, Slice<const bool> b, Slice<bool> both, Slice<bool> either, Slice<bool> differ,
                  Slice<bool> inverted, Slice<bool> same, Slice<bool> unequal) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] {
      Expr<bool> x = a[i], y = b[i];
      both[i] = x && y;
      either[i] = x || y;
      differ[i] = x ^ y;
      inverted[i] = !x;
      same[i] = x == y;
      unequal[i] = x != y;
    });
  }
};

template <class T>
std::vector<T> shift_amounts(std::mt19937_64& rng, size_t n) {
  constexpr int64_t bits = ref::bits_of<T>();
  std::vector<T> s = random_values<T>(rng, n, std::is_signed_v<T> ? -3.0 : 0.0, double(2 * bits + 2));
  for (size_t i = 0; i < n; i += 7) s[i] = T(bits);  // exactly the width
  if constexpr (std::is_signed_v<T>) {
    for (size_t i = 3; i < n; i += 11) s[i] = std::numeric_limits<T>::min();
  }
  return s;
}

template <class T>
void register_bitwise(int width) {
  const size_t n = size_t(width) * 1009;
  const std::string t = dtype_name<T>(), w = vw(width), sz = nn(n);
  add_case(case_name({"bitwise", t, w, sz}), kernels<Bitwise<T>>(), [=](Client& client, std::mt19937_64& rng) {
    auto a = random_any<T>(rng, n), b = random_any<T>(rng, n);
    auto out = run_map<Bitwise<T>, T, 4>(client, width, 64, n, a, b);
    expect_equal("a & b", tabulate<T>(n, [&](size_t i) { return T(a[i] & b[i]); }), out[0]);
    expect_equal("a | b", tabulate<T>(n, [&](size_t i) { return T(a[i] | b[i]); }), out[1]);
    expect_equal("a ^ b", tabulate<T>(n, [&](size_t i) { return T(a[i] ^ b[i]); }), out[2]);
    expect_equal("~a", tabulate<T>(n, [&](size_t i) { return T(~a[i]); }), out[3]);
  });
  add_case(case_name({"shifts", t, w, sz}), kernels<Shifts<T>>(), [=](Client& client, std::mt19937_64& rng) {
    auto a = random_any<T>(rng, n);
    sprinkle_specials(a, rng);
    auto s = shift_amounts<T>(rng, n);
    for (T k : {T(1), T(ref::bits_of<T>() - 1), T(ref::bits_of<T>()), T(ref::bits_of<T>() + 5)}) {
      Handle ha = client.upload(a), hs = client.upload(s);
      std::array<Handle, 4> out;
      for (auto& h : out) h = poisoned_elems<T>(client, n);
      launch<Shifts<T>>(client, CubeCount{cubes_for(n / size_t(width), 64)}, CubeDim{64}, width, ha, hs, k, out[0],
                        out[1], out[2], out[3]);
      std::string by = " (k = " + format_value(k) + ")";
      expect_equal("a << s" + by, tabulate<T>(n, [&](size_t i) { return ref::shl(a[i], s[i]); }),
                   client.read<T>(out[0]));
      expect_equal("a >> s" + by, tabulate<T>(n, [&](size_t i) { return ref::shr(a[i], s[i]); }),
                   client.read<T>(out[1]));
      expect_equal("a << k" + by, tabulate<T>(n, [&](size_t i) { return ref::shl(a[i], k); }), client.read<T>(out[2]));
      expect_equal("a >> k" + by, tabulate<T>(n, [&](size_t i) { return ref::shr(a[i], k); }), client.read<T>(out[3]));
    }
  });
  add_case(case_name({"bit_count", t, w, sz}), kernels<BitCount<T>>(), [=](Client& client, std::mt19937_64& rng) {
    auto a = random_any<T>(rng, n);
    sprinkle_specials(a, rng);
    for (size_t i = 0; i < n; i += 5) a[i] = T(a[i] >> (rng() % ref::bits_of<T>()));  // more leading zeros
    for (size_t i = 2; i < n; i += 5) a[i] = T(a[i] << (rng() % ref::bits_of<T>()));  // more trailing zeros
    for (size_t i = 4; i < n; i += 31) a[i] = T(0);
    auto out = run_map<BitCount<T>, uint32_t, 3>(client, width, 64, n, a);
    expect_equal("popcount(a)", tabulate<uint32_t>(n, [&](size_t i) { return ref::popcount(a[i]); }), out[0]);
    expect_equal("leading_zeros(a)", tabulate<uint32_t>(n, [&](size_t i) { return ref::leading_zeros(a[i]); }), out[1]);
    expect_equal("trailing_zeros(a)", tabulate<uint32_t>(n, [&](size_t i) { return ref::trailing_zeros(a[i]); }),
                 out[2]);
  });
}

template <class T>
void register_compare(int width) {
  const size_t n = size_t(width) * 1009;
  const std::string t = dtype_name<T>(), w = vw(width), sz = nn(n);
  add_case(case_name({"compare", t, w, sz}), kernels<Compare<T>>(), [=](Client& client, std::mt19937_64& rng) {
    auto a = random_values<T>(rng, n, -20, 20), b = random_values<T>(rng, n, -20, 20);
    for (size_t i = 0; i < n; i += 4) b[i] = a[i];  // equal pairs
    sprinkle_specials(a, rng);
    sprinkle_specials(b, rng);
    auto out = run_map<Compare<T>, bool, 6>(client, width, 64, n, a, b);
    auto cmp = [&](auto op) {
      return tabulate<uint8_t>(n, [&](size_t i) { return uint8_t(op(wide(a[i]), wide(b[i])) ? 1 : 0); });
    };
    expect_equal("a == b", cmp([](auto x, auto y) { return x == y; }), out[0]);
    expect_equal("a != b", cmp([](auto x, auto y) { return x != y; }), out[1]);
    expect_equal("a < b", cmp([](auto x, auto y) { return x < y; }), out[2]);
    expect_equal("a <= b", cmp([](auto x, auto y) { return x <= y; }), out[3]);
    expect_equal("a > b", cmp([](auto x, auto y) { return x > y; }), out[4]);
    expect_equal("a >= b", cmp([](auto x, auto y) { return x >= y; }), out[5]);
  });
  add_case(case_name({"select", t, w, sz}), kernels<Select<T>>(), [=](Client& client, std::mt19937_64& rng) {
    size_t units = n / size_t(width);
    auto c = random_values<uint8_t>(rng, units, 0, 1);
    auto a = random_any<T>(rng, n), b = random_any<T>(rng, n);
    auto out = run_map<Select<T>, T, 2>(client, width, 64, n, c, a, b);
    // run_map sized the grid by n / width units: c has one bool per unit.
    expect_equal("select(c, a, b)", tabulate<T>(n, [&](size_t i) { return c[i / size_t(width)] ? a[i] : b[i]; }),
                 out[0]);
    expect_equal("select(a < b, b, a)", tabulate<T>(n, [&](size_t i) { return wide(a[i]) < wide(b[i]) ? b[i] : a[i]; }),
                 out[1]);
  });
}

KILN_SUITE_CASES(bitwise) {
  for_types<int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>(
      []<class T>() { register_bitwise<T>(1); });
  for_types<uint32_t, int64_t, int8_t>([]<class T>() { register_bitwise<T>(4); });
  for_types<float, double, f16, bf16, int32_t, uint32_t, int64_t, uint8_t, int8_t>([]<class T>() {
    register_compare<T>(1);
    register_compare<T>(4);
  });
  const size_t n = 1013;
  add_case(case_name({"bool_logic", nn(n)}), kernels<BoolLogic>(), [=](Client& client, std::mt19937_64& rng) {
    auto a = random_values<uint8_t>(rng, n, 0, 1), b = random_values<uint8_t>(rng, n, 0, 1);
    auto out = run_map<BoolLogic, bool, 6>(client, 1, 96, n, a, b);
    expect_equal("a && b", tabulate<uint8_t>(n, [&](size_t i) { return uint8_t(a[i] && b[i]); }), out[0]);
    expect_equal("a || b", tabulate<uint8_t>(n, [&](size_t i) { return uint8_t(a[i] || b[i]); }), out[1]);
    expect_equal("a ^ b", tabulate<uint8_t>(n, [&](size_t i) { return uint8_t(a[i] != b[i]); }), out[2]);
    expect_equal("!a", tabulate<uint8_t>(n, [&](size_t i) { return uint8_t(!a[i]); }), out[3]);
    expect_equal("a == b", tabulate<uint8_t>(n, [&](size_t i) { return uint8_t(a[i] == b[i]); }), out[4]);
    expect_equal("a != b", tabulate<uint8_t>(n, [&](size_t i) { return uint8_t(a[i] != b[i]); }), out[5]);
  });
}

}  // namespace
}  // namespace kiln::suite
