// kiln::f8e4m3 and kiln::f8e5m2 on the host: every bit pattern's value, and conversions that round
// once to nearest even and saturate as cvt.rn.satfinite does. The expected values are written from
// the formats' definitions (OCP FP8), not from the conversion under test.
#include "kiln/float8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace kiln::test {
namespace {

TEST(Float8, E4M3PatternsHaveTheirValues) {
  auto v = [](uint8_t b) { return float(f8e4m3::from_bits(b)); };
  EXPECT_EQ(v(0x00), 0.0f);
  EXPECT_TRUE(std::signbit(v(0x80)) && v(0x80) == 0.0f);
  EXPECT_EQ(v(0x01), std::ldexp(1.0f, -9));  // the smallest subnormal
  EXPECT_EQ(v(0x07), 7 * std::ldexp(1.0f, -9));
  EXPECT_EQ(v(0x08), std::ldexp(1.0f, -6));  // the smallest normal
  EXPECT_EQ(v(0x38), 1.0f);
  EXPECT_EQ(v(0x39), 1.125f);
  EXPECT_EQ(v(0x78), 256.0f);  // exponent field 15 is finite: no infinities
  EXPECT_EQ(v(0x7e), 448.0f);
  EXPECT_EQ(v(0xfe), -448.0f);
  EXPECT_TRUE(std::isnan(v(0x7f)) && std::isnan(v(0xff)));
}

TEST(Float8, E5M2PatternsHaveTheirValues) {
  auto v = [](uint8_t b) { return float(f8e5m2::from_bits(b)); };
  EXPECT_EQ(v(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(v(0x04), std::ldexp(1.0f, -14));
  EXPECT_EQ(v(0x3c), 1.0f);
  EXPECT_EQ(v(0x3d), 1.25f);
  EXPECT_EQ(v(0x7b), 57344.0f);
  EXPECT_EQ(v(0x7c), INFINITY);
  EXPECT_EQ(v(0xfc), -INFINITY);
  for (uint8_t b : {0x7d, 0x7e, 0x7f, 0xfd, 0xff}) EXPECT_TRUE(std::isnan(v(b))) << int(b);
}

// Every finite pattern converts back to itself; the values are increasing in the pattern.
template <class F>
void expect_round_trips(int last_finite) {
  float previous = -1;
  for (int b = 0; b <= last_finite; ++b) {
    const float x = float(F::from_bits(uint8_t(b)));
    EXPECT_EQ(F(x).bits, b) << b;
    EXPECT_EQ(F(-x).bits, b | 0x80) << b;
    EXPECT_EQ(F(double(x)).bits, b) << b;
    EXPECT_GT(x, previous) << b;
    previous = x;
  }
}
TEST(Float8, FinitePatternsRoundTrip) {
  expect_round_trips<f8e4m3>(0x7e);
  expect_round_trips<f8e5m2>(0x7b);
}

// Between each two neighbours: the midpoint goes to the one with the even pattern, a float just
// either side of it to the nearer one. This covers the subnormal-normal edge and each binade.
template <class F>
void expect_nearest_even(int last_finite) {
  for (int b = 0; b < last_finite; ++b) {
    const float lo = float(F::from_bits(uint8_t(b))), hi = float(F::from_bits(uint8_t(b + 1)));
    const float mid = lo + (hi - lo) / 2;  // exact: both are short floats
    EXPECT_EQ(F(mid).bits, (b % 2 == 0) ? b : b + 1) << "between " << lo << " and " << hi;
    EXPECT_EQ(F(std::nextafter(mid, 0.0f)).bits, b) << lo;
    EXPECT_EQ(F(std::nextafter(mid, INFINITY)).bits, b + 1) << hi;
    EXPECT_EQ(F(-mid).bits, ((b % 2 == 0) ? b : b + 1) | 0x80) << lo;
  }
}
TEST(Float8, RoundsToNearestEven) {
  expect_nearest_even<f8e4m3>(0x7e);
  expect_nearest_even<f8e5m2>(0x7b);
}

TEST(Float8, BelowHalfTheSmallestIsZero) {
  EXPECT_EQ(f8e4m3(std::ldexp(1.0f, -10)).bits, 0x00);  // a tie with zero: zero is even
  EXPECT_EQ(f8e4m3(std::nextafter(std::ldexp(1.0f, -10), 1.0f)).bits, 0x01);
  EXPECT_EQ(f8e4m3(-1e-30f).bits, 0x80);
  EXPECT_EQ(f8e5m2(std::ldexp(1.0f, -18)).bits, 0x00);
}

TEST(Float8, SaturatesAsSatfinite) {
  EXPECT_EQ(f8e4m3(449.0f).bits, 0x7e);
  EXPECT_EQ(f8e4m3(480.0f).bits, 0x7e);  // would round past 448 to 512
  EXPECT_EQ(f8e4m3(1e30f).bits, 0x7e);
  EXPECT_EQ(f8e4m3(INFINITY).bits, 0x7e);
  EXPECT_EQ(f8e4m3(-INFINITY).bits, 0xfe);
  EXPECT_EQ(f8e5m2(61440.0f).bits, 0x7b);  // the tie with 2^16, which is infinity's place
  EXPECT_EQ(f8e5m2(INFINITY).bits, 0x7b);
  EXPECT_EQ(f8e5m2(-INFINITY).bits, 0xfb);
  EXPECT_EQ(f8e5m2(std::numeric_limits<double>::max()).bits, 0x7b);
}

TEST(Float8, NanIsTheFormatsNan) {
  EXPECT_EQ(f8e4m3(NAN).bits, 0x7f);
  EXPECT_EQ(f8e4m3(-NAN).bits, 0x7f);
  EXPECT_EQ(f8e5m2(NAN).bits, 0x7f);
  EXPECT_FALSE(f8e4m3(NAN) == f8e4m3(NAN));
}

TEST(Float8, IntegersConvertOnceAndSaturate) {
  EXPECT_EQ(float(f8e4m3(3)), 3.0f);
  EXPECT_EQ(float(f8e4m3(17)), 16.0f);  // 17 is a tie between 16 and 18: 16 is even
  EXPECT_EQ(float(f8e4m3(19)), 20.0f);
  EXPECT_EQ(f8e4m3(std::numeric_limits<int64_t>::min()).bits, 0xfe);
  EXPECT_EQ(f8e5m2(std::numeric_limits<uint64_t>::max()).bits, 0x7b);
  EXPECT_EQ(f8e4m3::from_integer(uint8_t(200)).bits, f8e4m3(200.0f).bits);
}

}  // namespace
}  // namespace kiln::test
