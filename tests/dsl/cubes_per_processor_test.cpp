// A kernel's cubes_per_processor: declared as a static member, it enters the kernel's id and its
// traced facts, prints and parses back; a kernel without it leaves the choice to the backend. A
// recorded program keeps its own, as it keeps its fast math.
#include <gtest/gtest.h>

#include <string>

#include "dsl/traced_cases.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/kernel_ref.h"

namespace kiln::test {
namespace {

template <int N>
struct Twice {
  static constexpr std::string_view name = "twice";
  static constexpr std::array<std::string_view, 1> param_names{"y"};
  static constexpr int cubes_per_processor = N;
  void operator()(Slice<float> y) const { y[absolute_pos()] = y[absolute_pos()] * 2.0f; }
};

struct PlainTwice {
  static constexpr std::string_view name = "twice";
  static constexpr std::array<std::string_view, 1> param_names{"y"};
  void operator()(Slice<float> y) const { y[absolute_pos()] = y[absolute_pos()] * 2.0f; }
};

TEST(CubesPerProcessor, AKernelWithoutTheMemberLeavesItToTheBackend) {
  KernelId id = id_of<PlainTwice>({128, 1, 1});
  EXPECT_EQ(id.cubes_per_processor, 0);
  ir::Kernel k = define<PlainTwice>(id);
  EXPECT_EQ(k.facts.cubes_per_processor, 0);
  EXPECT_EQ(ir::print(k).find("cubes_per_processor"), std::string::npos) << ir::print(k);
}

TEST(CubesPerProcessor, TheMemberEntersTheIdAndTheTracedFacts) {
  KernelId id = id_of<Twice<3>>({128, 1, 1});
  EXPECT_EQ(id.cubes_per_processor, 3);
  EXPECT_NE(id.to_string().find("cubes_per_processor=3"), std::string::npos) << id.to_string();
  ir::Kernel k = define<Twice<3>>(id);
  EXPECT_EQ(k.facts.cubes_per_processor, 3);
  ir::verify(k, "test");
  const std::string text = ir::print(k);
  EXPECT_NE(text.find("vector = 1, cubes_per_processor = 3}"), std::string::npos) << text;
  EXPECT_EQ(ir::print(ir::parse(text)), text);
  EXPECT_EQ(ir::parse(text).facts.cubes_per_processor, 3);

  // Ids that differ in it alone are different kernels.
  KernelId other = id;
  other.cubes_per_processor = 2;
  other.finalize();
  EXPECT_FALSE(other == id);
  EXPECT_NE(other.hash, id.hash);
}

TEST(CubesPerProcessor, ARecordedProgramKeepsItsOwn) {
  ir::Kernel k = define<Twice<2>>(id_of<Twice<2>>({128, 1, 1}));
  Program p(k);
  EXPECT_EQ(p.signature().cubes_per_processor, 2);
  EXPECT_NE(p.text().find("cubes_per_processor = 2"), std::string::npos) << p.text();
  k.facts.cubes_per_processor = 0;
  Program plain(k);
  EXPECT_EQ(plain.signature().cubes_per_processor, 0);
  EXPECT_NE(plain.signature().kernel_hash, p.signature().kernel_hash);
}

}  // namespace
}  // namespace kiln::test
