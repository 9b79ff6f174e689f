// Golden tests of the front end: the traced IR (what define<K>(id) returns, the "traced" stage)
// of each kernel in dsl/kernels.h is compared exactly with tests/dsl/golden/<case>.kir. Leading
// `//` lines of a golden file are its comment and are not compared. Structural tests below pin
// the facts a golden file shows, so that a regenerated file cannot quietly lose them.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dsl/traced_cases.h"
#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"

namespace kiln::test {
namespace {

// The golden text of a case, without its leading comment lines; empty when the file is missing.
std::string golden_text(const std::string& name) {
  std::ifstream in(std::string(KILN_TEST_DATA) + "/golden/" + name + ".kir");
  std::string text, line;
  bool header = true;
  while (std::getline(in, line)) {
    if (header && line.rfind("//", 0) == 0) continue;
    header = false;
    text += line + "\n";
  }
  return text;
}

class TracedGolden : public ::testing::TestWithParam<TracedCase> {};

TEST_P(TracedGolden, TracedIrMatchesTheGoldenFile) {
  const TracedCase& c = GetParam();
  std::string expected = golden_text(c.name);
  ASSERT_FALSE(expected.empty()) << "missing or empty tests/dsl/golden/" << c.name << ".kir";
  std::string actual = ir::print(c.trace());
  EXPECT_EQ(actual, expected) << "golden/" << c.name << ".kir\n--- expected:\n"
                              << expected << "--- actual:\n"
                              << actual;
}

// The golden text is in the one text form: it parses, verifies and prints back unchanged.
TEST_P(TracedGolden, GoldenFileIsCanonicalValidIr) {
  const TracedCase& c = GetParam();
  std::string expected = golden_text(c.name);
  ASSERT_FALSE(expected.empty());
  ir::Kernel k = ir::parse(expected);
  EXPECT_NO_THROW(ir::verify(k, "golden"));
  EXPECT_EQ(ir::print(k), expected);
}

// Tracing is deterministic: the same id gives the same text every time.
TEST_P(TracedGolden, TracingTwiceGivesTheSameText) {
  const TracedCase& c = GetParam();
  EXPECT_EQ(ir::print(c.trace()), ir::print(c.trace()));
}

std::string case_name(const ::testing::TestParamInfo<TracedCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Dsl, TracedGolden, ::testing::ValuesIn(traced_cases()), case_name);

// ---- structure ---------------------------------------------------------------------------------

int count_ops(const ir::Kernel& k, ir::OpKind kind) {
  int n = 0;
  ir::walk(k.body, [&](const ir::Op& op) { n += op.kind == kind ? 1 : 0; });
  return n;
}

const ir::Op* first_op(const ir::Region& r, ir::OpKind kind) {
  const ir::Op* found = nullptr;
  ir::walk(r, [&](const ir::Op& op) {
    if (!found && op.kind == kind) found = &op;
  });
  return found;
}

// Seed 01: relu is decided while tracing, so the IR has the max only when relu is true.
TEST(TracedStructure, AddHasExactlyOneMaxWithReluAndNoneWithout) {
  ir::Kernel relu = define<Add>(add_id(ir::ExecMode::Checked, true));
  ir::Kernel plain = define<Add>(add_id(ir::ExecMode::Checked, false));
  EXPECT_EQ(count_ops(relu, ir::OpKind::Max), 1);
  EXPECT_EQ(count_ops(plain, ir::OpKind::Max), 0);
  EXPECT_EQ(count_ops(relu, ir::OpKind::If), 0) << "a C++ if records no run-time branch";
  EXPECT_EQ(count_ops(plain, ir::OpKind::Store), 1);
  EXPECT_EQ(count_ops(relu, ir::OpKind::Store), 1);
  ASSERT_EQ(relu.facts.comptime.size(), 1u);
  EXPECT_EQ(relu.facts.comptime[0], (std::pair<std::string, std::string>{"relu", "true"}));
  EXPECT_EQ(plain.facts.comptime[0].second, "false");
}

TEST(TracedStructure, SaxpyLoadsAndStoresVectorsOfTheLaunchWidth) {
  ir::Kernel k = define<Saxpy<float>>(id_of<Saxpy<float>>({4, 1, 1}, 4));
  ir::Type v4 = ir::Type::vector_of(ir::Scalar::F32, 4);
  ASSERT_EQ(k.params.size(), 3u);
  EXPECT_EQ(k.params[0].type, ir::Type::scalar_of(ir::Scalar::F32)) << "a is a run-time scalar";
  EXPECT_EQ(k.params[1].type, ir::Type::buffer(v4, ir::Access::ReadOnly));
  EXPECT_EQ(k.params[2].type, ir::Type::buffer(v4, ir::Access::ReadWrite));
  EXPECT_EQ(count_ops(k, ir::OpKind::VectorSplat), 1) << "the scalar a broadcasts once";
  EXPECT_EQ(count_ops(k, ir::OpKind::Load), 2);
  const ir::Op* store = first_op(k.body, ir::OpKind::Store);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(k.type_of(store->operand(ir::ops::Store::value)), v4);
  EXPECT_TRUE(store->flag(ir::AttrKey::Checked));
  EXPECT_EQ(k.facts.cube_dim, (ir::Dim3{4, 1, 1}));
  EXPECT_EQ(k.facts.vector_width, 4);
}

// The ElseIf's condition is computed inside the else region: it runs only when the first
// condition is false, as in C++.
TEST(TracedStructure, ElseIfConditionIsInsideTheElseRegion) {
  ir::Kernel k = define<Classify>(id_of<Classify>({64, 1, 1}));
  std::vector<const ir::Op*> ifs;
  for (const ir::Op& op : k.body.ops) {
    if (op.kind == ir::OpKind::If) ifs.push_back(&op);
  }
  ASSERT_EQ(ifs.size(), 2u) << "the Terminate guard and the sign chain";
  const ir::Region& else_region = ifs[1]->regions[1];
  ASSERT_FALSE(else_region.ops.empty());
  EXPECT_EQ(first_op(else_region, ir::OpKind::Eq), &else_region.ops[else_region.ops.size() - 2]);
  EXPECT_EQ(else_region.ops.back().kind, ir::OpKind::If);
  EXPECT_EQ(count_ops(k, ir::OpKind::Eq), 1);
  EXPECT_EQ(count_ops(k, ir::OpKind::Terminate), 1);
}

// Two ElseIfs: each condition lands in the else region of the if before it; a condition made
// before the If stays where it was made; a condition read from a Var is read in its else region.
struct Grade {
  static constexpr std::string_view name = "grade";
  void operator()(Slice<const float> x, Slice<uint32_t> out) const {
    Expr<float> v = x[absolute_pos()];
    Var<float> threshold = 50.0f;
    Var<bool> high = v > 90.0f;
    Expr<bool> early = v > 75.0f;
    If(high, [&] { out[absolute_pos()] = 4u; })
        .ElseIf(early, [&] { out[absolute_pos()] = 3u; })
        .ElseIf(v > threshold, [&] { out[absolute_pos()] = 2u; })
        .Else([&] { out[absolute_pos()] = 1u; });
    out[absolute_pos()] += 10u;
  }
};

TEST(TracedStructure, ElseIfChainsNestInTheElseRegions) {
  ir::Kernel k = define<Grade>(id_of<Grade>({32, 1, 1}));
  const ir::Op* outer = nullptr;
  for (const ir::Op& op : k.body.ops) {
    if (op.kind == ir::OpKind::If) outer = &op;
  }
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(count_ops(k, ir::OpKind::If), 3);
  // The first if's condition is a var.load just before it, at the top.
  ASSERT_GT(outer, &k.body.ops[0]);
  EXPECT_EQ((outer - 1)->kind, ir::OpKind::VarLoad);
  // `early` was computed before the If: the else region opens directly with the second if.
  const ir::Region& else1 = outer->regions[1];
  ASSERT_EQ(else1.ops.size(), 1u);
  ASSERT_EQ(else1.ops[0].kind, ir::OpKind::If);
  // `v > threshold` is computed in the second if's else region: a var.load, then the compare.
  const ir::Region& else2 = else1.ops[0].regions[1];
  ASSERT_EQ(else2.ops.size(), 3u);
  EXPECT_EQ(else2.ops[0].kind, ir::OpKind::VarLoad);
  EXPECT_EQ(else2.ops[1].kind, ir::OpKind::Gt);
  EXPECT_EQ(else2.ops[2].kind, ir::OpKind::If);
  EXPECT_EQ(else2.ops[2].regions[1].ops.size(), 2u) << "the Else: a constant and a store";
  // After the chain, recording continues at the top.
  EXPECT_EQ(k.body.ops.back().kind, ir::OpKind::Store);
}

TEST(TracedStructure, LoopsCarryTheirAttributes) {
  ir::Kernel k = define<Loops>(id_of<Loops>({32, 1, 1}));
  std::vector<const ir::Op*> loops;
  for (const ir::Op& op : k.body.ops) {
    if (op.kind == ir::OpKind::For) loops.push_back(&op);
  }
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_EQ(loops[0]->attr_int(ir::AttrKey::Unroll), 4);
  EXPECT_EQ(loops[0]->attr_int(ir::AttrKey::PrefetchStages), 2);
  EXPECT_TRUE(loops[1]->flag(ir::AttrKey::UnrollFull));
  EXPECT_FALSE(loops[1]->has_attr(ir::AttrKey::Unroll));
  EXPECT_EQ(loops[2]->attr_int(ir::AttrKey::Unroll), 1);
  EXPECT_EQ(loops[2]->attr_int(ir::AttrKey::PrefetchStages, -1), 0) << "prefetch_stages(0) is kept";
  EXPECT_EQ(k.type_of(loops[2]->regions[0].args[0]), ir::Type::scalar_of(ir::Scalar::I32));
  // The Var carries the sum: declared once at the top, loaded after the loops for the store.
  EXPECT_EQ(count_ops(k, ir::OpKind::VarDecl), 1);
  EXPECT_EQ(k.body.ops.back().kind, ir::OpKind::Store);
}

TEST(TracedStructure, VectorizeAndAtLeastOnceAreRecordedOnTheLoop) {
  ir::Kernel k = define<ScaleLoop>(id_of<ScaleLoop>({32, 1, 1}));
  const ir::Op* loop = first_op(k.body, ir::OpKind::For);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->attr_int(ir::AttrKey::Vectorize), 4);
  EXPECT_TRUE(loop->flag(ir::AttrKey::AtLeastOnce));
  EXPECT_FALSE(loop->has_attr(ir::AttrKey::Unroll)) << "only the attributes asked for";
}

TEST(TracedStructure, WhileHasItsConditionBreakAndContinue) {
  ir::Kernel k = define<Collatz>(id_of<Collatz>({16, 1, 1}));
  const ir::Op* loop = first_op(k.body, ir::OpKind::While);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->regions[0].ops.back().kind, ir::OpKind::Condition);
  EXPECT_NE(first_op(loop->regions[1], ir::OpKind::Break), nullptr);
  EXPECT_NE(first_op(loop->regions[1], ir::OpKind::Continue), nullptr);
}

TEST(TracedStructure, BuiltinsAndLengthsAreRecordedOnceAtTheTop) {
  ir::Kernel k = define<Transpose>(transpose_id());
  // absolute_pos_x and _y, in's two shapes, the four strides: each once, before any other op.
  size_t leaves = 0;
  while (leaves < k.body.ops.size() &&
         (k.body.ops[leaves].has(ir::kBuiltin) || k.body.ops[leaves].kind == ir::OpKind::TensorShape ||
          k.body.ops[leaves].kind == ir::OpKind::TensorStride)) {
    ++leaves;
  }
  EXPECT_EQ(leaves, 8u);
  EXPECT_EQ(count_ops(k, ir::OpKind::AbsolutePos), 2);
  EXPECT_EQ(count_ops(k, ir::OpKind::TensorShape), 2);
  EXPECT_EQ(count_ops(k, ir::OpKind::TensorStride), 4);
}

// The pipeline's first pass turns every Var of these kernels into values: a Var assigned in a loop
// body is a loop argument and result, one assigned in both branches an if result.
TEST(PromotedStructure, VarsAssignedInLoopsBecomeLoopArgumentsAndResults) {
  for (const char* name :
       {"loops_attributes_and_var", "collatz_while_break_continue", "local_sum", "var_assigned_in_both_branches"}) {
    ir::Kernel k;
    for (const TracedCase& c : traced_cases()) {
      if (c.name == std::string(name) + "_promoted") k = c.trace();
    }
    ASSERT_FALSE(k.name.empty()) << name;
    int var_ops =
        count_ops(k, ir::OpKind::VarDecl) + count_ops(k, ir::OpKind::VarLoad) + count_ops(k, ir::OpKind::VarStore);
    EXPECT_EQ(var_ops, 0) << name;
    EXPECT_NO_THROW(ir::verify(k, "promoted")) << name;
  }
  ir::Kernel loops = promoted(define<Loops>(id_of<Loops>({32, 1, 1})));
  std::vector<const ir::Op*> fors;
  ir::walk(loops.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::For) fors.push_back(&op);
  });
  ASSERT_EQ(fors.size(), 3u);
  for (size_t i = 0; i < fors.size(); ++i) {
    EXPECT_EQ(fors[i]->result_count(), 1u) << "loop " << i << " carries the sum";
    EXPECT_EQ(fors[i]->regions[0].args.size(), 2u);
    EXPECT_EQ(fors[i]->regions[0].ops.back().kind, ir::OpKind::Yield);
    if (i > 0) {
      EXPECT_EQ(ir::loop_inits(*fors[i])[0], fors[i - 1]->result) << "each loop starts from the last one's sum";
    }
  }
  EXPECT_EQ(loops.body.ops.back().operand(ir::ops::Store::value), fors[2]->result)
      << "the store writes the last loop's result";

  ir::Kernel collatz = promoted(define<Collatz>(id_of<Collatz>({16, 1, 1})));
  const ir::Op* loop = first_op(collatz.body, ir::OpKind::While);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->result_count(), 2u);
  EXPECT_EQ(loop->regions[0].args.size(), 2u);
  EXPECT_EQ(loop->regions[1].args.size(), 2u);
  EXPECT_EQ(first_op(loop->regions[1], ir::OpKind::Break)->operands.size(), 2u);
  EXPECT_EQ(first_op(loop->regions[1], ir::OpKind::Continue)->operands.size(), 2u);
}

TEST(TracedStructure, GoldenFilesHaveNoOrphans) {
  // Every case has its file, and the number of cases is what this test file says.
  std::vector<TracedCase> cases = traced_cases();
  EXPECT_EQ(cases.size(), 24u);
  for (const TracedCase& c : cases) EXPECT_FALSE(golden_text(c.name).empty()) << c.name;
}

}  // namespace
}  // namespace kiln::test
