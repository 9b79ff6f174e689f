// Casts between every family (float <-> float of other widths, float <-> int with truncation,
// saturation and NaN -> 0, int <-> int wrapping and extension, to and from bool), with inputs that
// sit on and next to the target's rounding ties; and bitcasts, compared byte for byte.
#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

template <class From, class To>
struct Cast {
  static constexpr std::string_view name = "cast";
  void operator()(Slice<const Vector<From>> x, Slice<Vector<To>> y) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] { y[i] = cast<To>(x[i]); });
  }
};

template <class From, class To>
struct Bitcast {
  static constexpr std::string_view name = "bitcast";
  void operator()(Slice<const Vector<From>> x, Slice<Vector<To>> y) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] { y[i] = bitcast<To>(x[i]); });
  }
};

// Exponents (of 2) a float type spans, subnormals included.
template <class T>
std::pair<int, int> exponent_range() {
  if constexpr (std::is_same_v<T, f16>) return {-24, 16};
  else if constexpr (std::is_same_v<T, bf16>) return {-133, 128};
  else if constexpr (std::is_same_v<T, f8e4m3>) return {-9, 9};
  else if constexpr (std::is_same_v<T, f8e5m2>) return {-16, 16};
  else if constexpr (std::is_same_v<T, float>) return {-149, 128};
  else return {-1074, 1024};
}

// Normal exponents and significand bits of a float type.
struct Format {
  int emin, emax, p;
};
template <class T>
Format format_of() {
  if constexpr (std::is_same_v<T, f16>) return {-14, 15, 11};
  else if constexpr (std::is_same_v<T, bf16>) return {-126, 127, 8};
  else if constexpr (std::is_same_v<T, f8e4m3>) return {-6, 8, 4};
  else if constexpr (std::is_same_v<T, f8e5m2>) return {-14, 15, 3};
  else if constexpr (std::is_same_v<T, float>) return {-126, 127, 24};
  else return {-1022, 1023, 53};
}

// The next representable value of a float type, away from zero or toward it.
template <class T>
long double next_away(T v) {
  if constexpr (is_short_float_v<T>) return wide(T::from_bits(decltype(v.bits)(v.bits + 1)));
  else return std::nextafter(v, std::copysign(std::numeric_limits<T>::infinity(), v));
}
template <class T>
long double next_toward_zero(T v) {
  if constexpr (is_short_float_v<T>) return wide(T::from_bits(decltype(v.bits)(v.bits - 1)));
  else return std::nextafter(v, T(0));
}

// Values of From on, just below and just above the rounding ties of To (midpoints of two
// neighbouring To values), where rounding twice (From -> f32 -> To) goes wrong.
template <class From, class To>
void add_ties(std::vector<From>& v, std::mt19937_64& rng, size_t count) {
  if constexpr (is_float_v<To> && !std::is_same_v<To, double>) {
    Format to = format_of<To>();
    int lo, hi;
    if constexpr (is_float_v<From>) {
      lo = std::max(to.emin, format_of<From>().emin);
      hi = std::min(to.emax, format_of<From>().emax) - 1;
    } else {
      // Integer sources: ties are integers where To's spacing is at least 2.
      lo = to.p;
      hi = std::min(to.emax, int(sizeof(From) * 8) - (std::is_signed_v<From> ? 2 : 1)) - 1;
    }
    if (hi < lo || v.size() < 3) return;
    for (size_t k = 0; k < count; ++k) {
      long double mag = std::ldexp(1.0L + (rng() % 1024) / 1024.0L, lo + int(rng() % uint64_t(hi - lo + 1)));
      To t = narrow<To>(mag);
      long double tie = (wide(t) + next_away(t)) / 2;
      bool negative = (std::is_signed_v<From> || is_float_v<From>)&&(rng() & 1);
      long double s = negative ? -1.0L : 1.0L;
      size_t at = rng() % (v.size() - 2);
      if constexpr (is_float_v<From>) {
        From on = narrow<From>(s * tie);
        v[at] = on;
        v[at + 1] = narrow<From>(next_away(on));
        v[at + 2] = narrow<From>(next_toward_zero(on));
      } else {
        v[at] = static_cast<From>(s * tie);
        v[at + 1] = static_cast<From>(s * (tie + 1));
        v[at + 2] = static_cast<From>(s * (tie - 1));
      }
    }
  } else {
    (void)v;
    (void)rng;
    (void)count;
  }
}

template <class From, class To>
std::vector<From> cast_inputs(std::mt19937_64& rng, size_t n) {
  std::vector<From> v;
  if constexpr (is_float_v<From>) {
    long double r = 1e4L;
    if constexpr (is_int_v<To>) r = static_cast<long double>(std::numeric_limits<To>::max()) * 1.25L;
    auto [flo, fhi] = exponent_range<From>();
    v = random_values<From>(rng, n, -double(std::min<long double>(r, 6e4L)), double(std::min<long double>(r, 6e4L)));
    if constexpr (!is_short_float_v<From>) {
      auto ru = random_values<From>(rng, n / 3, -double(r), double(r));
      std::copy(ru.begin(), ru.end(), v.begin());
    }
    // A third spread over the exponents both types reach.
    int lo = flo, hi = fhi;
    if constexpr (is_float_v<To>) {
      lo = std::max(flo, exponent_range<To>().first - 3);
      hi = std::min(fhi, exponent_range<To>().second + 2);
    } else {
      lo = std::max(flo, -8);
      hi = std::min(fhi, int(sizeof(To) * 8 + 2));
    }
    for (size_t i = n / 3; i < 2 * n / 3; ++i) {
      long double m = std::ldexp(1.0L + (rng() % (1u << 20)) / double(1u << 20), lo + int(rng() % uint64_t(hi - lo)));
      v[i] = narrow<From>((rng() & 1) ? -m : m);
    }
    // Halves and near-integers, for truncation toward zero.
    for (size_t i = 2 * n / 3; i < 2 * n / 3 + n / 12; ++i) {
      v[i] = narrow<From>((int64_t(rng() % 2001) - 1000) / 2.0L);
    }
    if constexpr (is_int_v<To>) {  // the saturation edges, as From rounds them
      long double mx = static_cast<long double>(std::numeric_limits<To>::max());
      long double mn = static_cast<long double>(std::numeric_limits<To>::min());
      std::vector<long double> edges{mx, mx + 1, mx - 1, mn, mn - 1, mn + 1, -0.5L, 0.99L, -0.99L};
      for (long double e : edges) v[rng() % n] = narrow<From>(e);
    }
    sprinkle_specials(v, rng);
  } else if constexpr (std::is_same_v<From, bool>) {
    v = random_values<bool>(rng, n, 0, 1);
  } else {
    v = random_any<From>(rng, n);
    for (size_t i = 0; i < n; i += 3) v[i] = From(v[i] >> (rng() % (sizeof(From) * 8)));  // small magnitudes too
    sprinkle_specials(v, rng);
  }
  add_ties<From, To>(v, rng, n / 16);
  return v;
}

template <class From, class To>
void register_cast(int width) {
  const size_t n = size_t(width) * 1009;
  add_case(case_name({"cast", dtype_name<From>(), "to", dtype_name<To>(), vw(width), nn(n)}), kernels<Cast<From, To>>(),
           [=](Client& client, std::mt19937_64& rng) {
             std::vector<host_t<From>> x;
             if constexpr (std::is_same_v<From, bool>) {
               x = random_values<uint8_t>(rng, n, 0, 1);
             } else {
               x = cast_inputs<From, To>(rng, n);
             }
             auto out = run_map<Cast<From, To>, To, 1>(client, width, 64, n, x);
             auto expected = tabulate<host_t<To>>(n, [&](size_t i) {
               if constexpr (std::is_same_v<From, bool>) return host_t<To>(ref::cast<To, bool>(x[i] != 0));
               else return host_t<To>(ref::cast<To, From>(x[i]));
             });
             // Rounding to a float is exactly specified (nearest even): compare exactly.
             expect_near(std::string("cast<") + dtype_name<To>() + ">(" + dtype_name<From>() + ")", expected, out[0],
                         exact());
           });
}

template <class From, class To>
void register_bitcast(int width) {
  const size_t n = size_t(width) * 1009;
  add_case(case_name({"bitcast", dtype_name<From>(), "to", dtype_name<To>(), vw(width), nn(n)}),
           kernels<Bitcast<From, To>>(), [=](Client& client, std::mt19937_64& rng) {
             std::vector<From> x(n);
             for (auto& e : x) {
               uint64_t bits = rng();
               std::memcpy(static_cast<void*>(&e), &bits, sizeof(From));  // every pattern, NaN payloads too
             }
             auto out = run_map<Bitcast<From, To>, To, 1>(client, width, 64, n, x);
             std::vector<unsigned char> want(n * sizeof(From)), got(n * sizeof(To));
             std::memcpy(want.data(), x.data(), want.size());
             std::memcpy(got.data(), out[0].data(), got.size());
             expect_same_bytes(std::string("bitcast<") + dtype_name<To>() + ">(" + dtype_name<From>() + ")", want, got);
           });
}

template <class From, class... Tos>
void casts_from(int width) {
  (register_cast<From, Tos>(width), ...);
}

KILN_SUITE_CASES(cast) {
  casts_from<float, int32_t, uint32_t, int8_t, uint8_t, int16_t, int64_t, uint64_t, bool, f16, bf16, double>(1);
  casts_from<double, int32_t, int64_t, uint64_t, uint8_t, float, f16, bf16, bool>(1);
  casts_from<f16, float, double, bf16, int32_t, uint8_t, int16_t, bool>(1);
  casts_from<bf16, float, f16, int32_t, int64_t>(1);
  casts_from<int32_t, float, double, f16, bf16, int8_t, uint8_t, int64_t, uint64_t, bool>(1);
  casts_from<uint32_t, float, double, int32_t, uint16_t, f16>(1);
  casts_from<int64_t, float, double, bf16, f16, int32_t, uint64_t, int8_t>(1);
  casts_from<uint64_t, float, double, bf16, int64_t, uint32_t>(1);
  casts_from<int8_t, int32_t, uint32_t, uint64_t, int64_t, float>(1);
  casts_from<uint8_t, int32_t, int8_t, f16, double>(1);
  casts_from<int16_t, uint16_t, int32_t, float>(1);
  casts_from<bool, int32_t, float, uint8_t, f16>(1);
  casts_from<f16, uint64_t, int64_t, uint16_t>(1);
  casts_from<bf16, uint8_t, double, bool, uint64_t>(1);
  casts_from<double, uint16_t, int8_t, int16_t, uint32_t>(1);
  casts_from<float, uint16_t>(1);
  casts_from<bool, double, bf16, int64_t>(1);
  casts_from<int16_t, f16, bf16, int8_t>(1);
  casts_from<uint16_t, bf16, float, int16_t>(1);
  casts_from<int64_t, bool>(1);
  casts_from<uint8_t, bool, bf16>(1);
  // Vector widths on a few.
  casts_from<float, int32_t, f16, bf16, uint8_t>(4);
  casts_from<f16, float>(8);
  casts_from<int32_t, float>(2);
  casts_from<double, float>(4);
  // fp8: rounding once to nearest even and saturating (past the largest, infinities too, is the
  // largest; NaN is 0x7f), from every float and a few integers, and back exactly.
  casts_from<float, f8e4m3, f8e5m2>(1);
  casts_from<double, f8e4m3, f8e5m2>(1);
  casts_from<f16, f8e4m3, f8e5m2>(1);
  casts_from<bf16, f8e4m3>(1);
  casts_from<int32_t, f8e4m3, f8e5m2>(1);
  casts_from<int64_t, f8e5m2>(1);
  casts_from<f8e4m3, float, double, f16, bf16, f8e5m2, int32_t, uint8_t, bool>(1);
  casts_from<f8e5m2, float, f16, f8e4m3, int16_t, uint64_t>(1);
  casts_from<float, f8e4m3>(4);
  casts_from<f8e4m3, float>(8);

  register_bitcast<float, uint32_t>(1);
  register_bitcast<uint32_t, float>(4);
  register_bitcast<float, int32_t>(2);
  register_bitcast<double, uint64_t>(1);
  register_bitcast<int64_t, double>(2);
  register_bitcast<f16, uint16_t>(1);
  register_bitcast<uint16_t, f16>(8);
  register_bitcast<bf16, int16_t>(4);
  register_bitcast<f16, bf16>(1);
  register_bitcast<uint8_t, int8_t>(8);
  register_bitcast<f8e4m3, uint8_t>(1);
  register_bitcast<uint8_t, f8e5m2>(4);
}

}  // namespace
}  // namespace kiln::suite
