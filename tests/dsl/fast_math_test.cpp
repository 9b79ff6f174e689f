// A kernel's fast_math (docs/decisions/015-fast-math.md): declared as a static member, it enters the
// kernel's id and its traced facts, prints and parses back; a kernel without it is exact.
#include <gtest/gtest.h>

#include <string>

#include "dsl/traced_cases.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::test {
namespace {

// y = x * x + exp(x), with the fast math of the template arguments.
template <bool Contract, bool Approx>
struct Poly {
  static constexpr std::string_view name = "poly";
  static constexpr std::array<std::string_view, 2> param_names{"x", "y"};
  static constexpr FastMath fast_math{.contract = Contract, .approx = Approx};
  void operator()(Slice<const float> x, Slice<float> y) const {
    Expr<float> v = x[absolute_pos()];
    y[absolute_pos()] = v * v + exp(v);
  }
};

// The same body, saying nothing about fast math.
struct PlainPoly {
  static constexpr std::string_view name = "poly";
  static constexpr std::array<std::string_view, 2> param_names{"x", "y"};
  void operator()(Slice<const float> x, Slice<float> y) const {
    Expr<float> v = x[absolute_pos()];
    y[absolute_pos()] = v * v + exp(v);
  }
};

TEST(FastMath, AKernelWithoutTheMemberIsExact) {
  KernelId id = id_of<PlainPoly>({32, 1, 1});
  EXPECT_FALSE(id.fast_math.any());
  ir::Kernel k = define<PlainPoly>(id);
  EXPECT_FALSE(k.facts.fast_math.any());
  EXPECT_EQ(ir::print(k).find("fast_math"), std::string::npos) << ir::print(k);
  // Declaring every choice false is the same kernel text.
  EXPECT_EQ(ir::print(define<Poly<false, false>>(id_of<Poly<false, false>>({32, 1, 1}))), ir::print(k));
}

TEST(FastMath, TheMemberEntersTheIdAndTheTracedFacts) {
  KernelId id = id_of<Poly<true, true>>({32, 1, 1});
  EXPECT_TRUE(id.fast_math.contract);
  EXPECT_TRUE(id.fast_math.approx);
  EXPECT_NE(id.to_string().find(", fast_math=[contract, approx]"), std::string::npos) << id.to_string();
  ir::Kernel k = define<Poly<true, true>>(id);
  EXPECT_EQ(k.facts.fast_math, id.fast_math);
  ir::verify(k, "test");
  std::string text = ir::print(k);
  EXPECT_NE(text.find("vector = 1, fast_math = [contract, approx]}"), std::string::npos) << text;
  EXPECT_EQ(ir::print(ir::parse(text)), text);
  EXPECT_EQ(ir::parse(text).facts.fast_math, id.fast_math);

  ir::Kernel approx = define<Poly<false, true>>(id_of<Poly<false, true>>({32, 1, 1}));
  EXPECT_NE(ir::print(approx).find("fast_math = [approx]}"), std::string::npos) << ir::print(approx);
  ir::Kernel contract = define<Poly<true, false>>(id_of<Poly<true, false>>({32, 1, 1}));
  EXPECT_NE(ir::print(contract).find("fast_math = [contract]}"), std::string::npos) << ir::print(contract);
}

// Two ids that differ in fast math alone (not in their kernel type) are different kernels: a
// cache keyed by the id compiles each.
TEST(FastMath, IdsThatDifferOnlyInFastMathDiffer) {
  KernelId exact = id_of<PlainPoly>({32, 1, 1});
  for (FastMath f : {FastMath{.contract = true}, FastMath{.approx = true}, FastMath{true, true}}) {
    KernelId fast = exact;
    fast.fast_math = f;
    fast.finalize();
    EXPECT_FALSE(fast == exact) << fast.to_string();
    EXPECT_NE(fast.hash, exact.hash) << fast.to_string();
  }
  KernelId again = exact;
  again.finalize();
  EXPECT_TRUE(again == exact);
}

}  // namespace
}  // namespace kiln::test
