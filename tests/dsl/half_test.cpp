// kiln::f16 and kiln::bf16 made from C++ numbers: every integer type converts (f16(1) was
// ambiguous between the float and double constructors), rounding once as a cast does; and a
// kernel templated over its element type can write T(2) for every element type kiln supports.
#include "kiln/half.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "kiln/dsl.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::test {
namespace {

template <class H, class... Is>
constexpr bool constructible_from_all = (std::is_constructible_v<H, Is> && ...);

// Every integer type, and the floating types that worked before, make an f16 or bf16; none does
// so implicitly (a stray int should not become a half without a cast).
static_assert(constructible_from_all<f16, bool, char, int8_t, uint8_t, int16_t, uint16_t, int, unsigned, long,
                                     unsigned long, long long, unsigned long long, float, double>);
static_assert(constructible_from_all<bf16, bool, char, int8_t, uint8_t, int16_t, uint16_t, int, unsigned, long,
                                     unsigned long, long long, unsigned long long, float, double>);
static_assert(!std::is_convertible_v<int, f16> && !std::is_convertible_v<int, bf16>);
static_assert(!std::is_convertible_v<double, f16> && !std::is_convertible_v<double, bf16>);

TEST(Half, SmallIntegersAreExact) {
  EXPECT_EQ(f16(1).bits, 0x3c00);
  EXPECT_EQ(bf16(1).bits, 0x3f80);
  EXPECT_EQ(f16(0).bits, 0x0000);
  EXPECT_EQ(bf16(0).bits, 0x0000);
  EXPECT_EQ(f16(1u).bits, 0x3c00);
  EXPECT_EQ(bf16(1u).bits, 0x3f80);
  EXPECT_EQ(f16(-3).bits, 0xc200);
  EXPECT_EQ(bf16(int8_t(-128)).bits, 0xc300);
  EXPECT_EQ(f16(uint8_t(255)).bits, 0x5bf8);
  EXPECT_EQ(f16(true).bits, 0x3c00);
  EXPECT_EQ(static_cast<float>(f16(int64_t(2048))), 2048.0f);
}

TEST(Half, FloatingArgumentsAreUnchanged) {
  EXPECT_EQ(f16(2.5).bits, 0x4100);
  EXPECT_EQ(bf16(2.5).bits, 0x4020);
  EXPECT_EQ(f16(1.0f).bits, 0x3c00);
  EXPECT_EQ(bf16(1.0f).bits, 0x3f80);
  EXPECT_EQ(f16(-0.0).bits, 0x8000);
}

// Large integers round to nearest even, once, as a cast does. Through float the bf16 case would
// round twice: 2^40 + 2^32 + 1 becomes the tie 2^40 + 2^32 in float, then 2^40 in bf16.
TEST(Half, LargeIntegersRoundOnceToNearestEven) {
  EXPECT_EQ(static_cast<float>(f16(2049)), 2048.0f);             // a tie: to the even neighbour
  EXPECT_EQ(static_cast<float>(f16(2051)), 2052.0f);             // a tie: to the even neighbour, upwards
  EXPECT_EQ(static_cast<float>(f16(int64_t(65519))), 65504.0f);  // below half an ulp past the top
  EXPECT_EQ(f16(int64_t(65520)).bits, 0x7c00);                   // rounds past 65504: inf
  EXPECT_EQ(f16(int64_t(-1) << 40).bits, 0xfc00);
  const int64_t over_a_tie = (int64_t(1) << 40) + (int64_t(1) << 32) + 1;
  EXPECT_EQ(static_cast<double>(static_cast<float>(bf16(over_a_tie))), double((int64_t(1) << 40) + (int64_t(1) << 33)));
  EXPECT_EQ(static_cast<float>(bf16(UINT64_MAX)), 18446744073709551616.0f);  // 2^64
  EXPECT_EQ(f16::from_integer(over_a_tie).bits, f16(over_a_tie).bits);
  EXPECT_EQ(bf16::from_integer(over_a_tie).bits, bf16(over_a_tie).bits);
}

// A kernel written once over its element type, with C++ numbers spelled T(...).
template <class T>
struct ScaleByTwo {
  static constexpr std::string_view name = "scale_by_two";
  void operator()(Slice<const T> x, Slice<T> y) const {
    Var<T> acc = T(0);
    acc += x[absolute_pos()] * T(2);
    y[absolute_pos()] = acc + T(1);
  }
};

template <class T>
class TemplatedOverElement : public ::testing::Test {};

using NumericElements = ::testing::Types<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, f16,
                                         bf16, float, double>;
TYPED_TEST_SUITE(TemplatedOverElement, NumericElements);

TYPED_TEST(TemplatedOverElement, TWithAnIntegerTracesAsThatConstant) {
  using T = TypeParam;
  ir::Kernel k = define<ScaleByTwo<T>>(kernel_id<ScaleByTwo<T>>(LaunchFacts{{32, 1, 1}}, param_descs<ScaleByTwo<T>>()));
  EXPECT_NO_THROW(ir::verify(k, "traced"));
  const std::string text = ir::print(k);
  const std::string type(ir::scalar_name(scalar_of<T>()));
  const bool is_float = ir::is_float(scalar_of<T>());
  for (const char* v : {"0", "1", "2"}) {
    std::string constant = "const " + std::string(v) + (is_float ? ".0" : "") + " : " + type;
    EXPECT_NE(text.find(constant), std::string::npos) << constant << " missing in\n" << text;
  }
}

}  // namespace
}  // namespace kiln::test
