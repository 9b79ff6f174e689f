// Why passes::vectorize leaves a loop as it is (vectorize_refusal, what KILN_LOG=compile prints):
// one kernel per condition of docs/ir.md's list, each breaking only that one, and the loop left
// unchanged by the pass. vectorize.kir shows the rewrites themselves.
#include <gtest/gtest.h>

#include <string>

#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"

namespace kiln {
namespace {

// A checked kernel whose body is `body`, after the constants %c0 and %c1 (u32). Parameters: %x
// (ro) and %y (rw) buffers of f32, %u of u32, %v of vector<4 x f32>, %n and %o u32, %a f32;
// `facts` are added to the kernel's facts.
std::string kernel_text(const std::string& body, const std::string& facts = "") {
  return "kernel @k(%x: buffer<f32, ro>, %y: buffer<f32, rw>, %u: buffer<u32, rw>, %v: buffer<vector<4 x f32>, rw>, "
         "%n: u32, %o: u32, %a: f32) {cube_dim = [32, 1, 1], mode = checked, address = u32, vector = 1" +
         facts +
         "} {\n"
         "  %c0 = const 0 : u32\n  %c1 = const 1 : u32\n" +
         body + "}\n";
}

// The reason vectorize gives for the kernel's first loop, after checking that the pass leaves the
// kernel as it was.
std::string refusal(const std::string& text) {
  ir::Kernel k = ir::parse(text);
  ir::verify(k, "input");
  const ir::Op* loop = nullptr;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (!loop && op.kind == ir::OpKind::For && op.has_attr(ir::AttrKey::Vectorize)) loop = &op;
  });
  if (!loop) return "<no loop>";
  std::string why = passes::vectorize_refusal(k, *loop);
  std::string before = ir::print(k);
  bool changed = passes::vectorize(k);
  EXPECT_EQ(changed, why.empty()) << why;
  if (!why.empty()) {
    EXPECT_EQ(ir::print(k), before) << "a refused loop must stay as it was";
  }
  return why;
}

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

const std::string kScale =
    "  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
    "    %l = load %x, %i {checked} : f32\n"
    "    %m = mul %l, %a : f32\n"
    "    store %y, %i, %m {checked}\n"
    "  }\n";

TEST(Vectorize, TakesAnElementwiseLoop) { EXPECT_EQ(refusal(kernel_text(kScale)), ""); }

TEST(Vectorize, TakesAnOffsetIndexAndAnInvariantLoad) {
  EXPECT_EQ(refusal(kernel_text("  for %c0, %n, %c1 {vectorize = 8} (%i: u32) {\n"
                                "    %j = add %o, %i : u32\n"
                                "    %l = load %x, %j {checked} : f32\n"
                                "    %z = load %x, %c0 {checked} : f32\n"
                                "    %m = mul %l, %z : f32\n"
                                "    store %y, %j, %m {checked}\n"
                                "  }\n")),
            "");
}

TEST(Vectorize, TakesAConstantOffsetTheBodyDefinesAndRefusesAComputedOne) {
  EXPECT_EQ(refusal(kernel_text("  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                                "    %k = const 1 : u32\n"
                                "    %j = add %i, %k : u32\n"
                                "    %l = load %x, %j {checked} : f32\n"
                                "    store %y, %i, %l {checked}\n"
                                "  }\n")),
            "");
  std::string why =
      refusal(kernel_text("  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                          "    %k = mul %o, %o : u32\n"
                          "    %j = add %i, %k : u32\n"
                          "    %l = load %x, %j {checked} : f32\n"
                          "    store %y, %i, %l {checked}\n"
                          "  }\n"));
  EXPECT_TRUE(has(why, "plus a value its body computes")) << why;
}

TEST(Vectorize, RefusesCarriedValues) {
  std::string why =
      refusal(kernel_text("  %z = const 0.0 : f32\n"
                          "  %s = for %c0, %n, %c1, %z {vectorize = 4} : f32 (%i: u32, %acc: f32) {\n"
                          "    %l = load %x, %i {checked} : f32\n"
                          "    %t = add %acc, %l : f32\n"
                          "    yield %t\n"
                          "  }\n"));
  EXPECT_TRUE(has(why, "carries values from one iteration to the next")) << why;
}

TEST(Vectorize, RefusesAStepThatIsNotTheConstantOne) {
  std::string why =
      refusal(kernel_text("  for %c0, %n, %o {vectorize = 4} (%i: u32) {\n"
                          "    store %u, %i, %n {checked}\n"
                          "  }\n"));
  EXPECT_EQ(why, "its step is not the constant 1");
}

TEST(Vectorize, RefusesASignedInductionValue) {
  std::string why =
      refusal(kernel_text("  %s0 = const 0 : i32\n  %s1 = const 1 : i32\n  %h = cast %n : i32\n"
                          "  for %s0, %h, %s1 {vectorize = 4} (%i: i32) {\n"
                          "    store %y, %i, %a {checked}\n"
                          "  }\n"));
  EXPECT_TRUE(has(why, "its induction value is i32; vectorize takes unsigned loops")) << why;
}

TEST(Vectorize, RefusesControlFlowInTheBody) {
  std::string why =
      refusal(kernel_text("  %b = cmp.lt %o, %n : bool\n"
                          "  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                          "    if %b {\n      store %y, %i, %a {checked}\n    }\n"
                          "  }\n"));
  EXPECT_EQ(why, "its body holds 'if' (control flow); vectorize takes straight-line bodies");
}

TEST(Vectorize, RefusesAtomicsPlaneOpsBarriersAndPrints) {
  EXPECT_TRUE(has(refusal(kernel_text("  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                                      "    %old = atomic.add %u, %i, %c1 {checked} : u32\n"
                                      "  }\n")),
                  "its body holds 'atomic.add' (an atomic)"));
  EXPECT_TRUE(has(refusal(kernel_text("  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                                      "    %l = load %x, %i {checked} : f32\n"
                                      "    %p = plane.sum %l : f32\n"
                                      "    store %y, %i, %p {checked}\n"
                                      "  }\n")),
                  "its body holds 'plane.sum' (a plane op"));
  EXPECT_TRUE(has(refusal(kernel_text("  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                                      "    sync.cube\n"
                                      "    store %y, %i, %a {checked}\n"
                                      "  }\n")),
                  "its body holds 'sync.cube' (a barrier)"));
  EXPECT_TRUE(has(refusal(kernel_text("  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                                      "    debug.print %a {format = \"%f\"}\n"
                                      "  }\n")),
                  "its body holds 'debug.print' (its output would come in another order)"));
}

TEST(Vectorize, RefusesSharedAndLocalArrays) {
  std::string why =
      refusal(kernel_text("  %s = shared.alloc : shared<f32, 64>\n"
                          "  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                          "    store %s, %i, %a\n"
                          "  }\n"));
  EXPECT_EQ(why, "its body accesses a shared array; vectorize takes global buffers");
}

TEST(Vectorize, RefusesBuffersOfVectorsAndVectorValues) {
  std::string why =
      refusal(kernel_text("  %w = vector.splat %a : vector<4 x f32>\n"
                          "  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                          "    store %v, %i, %w {checked}\n"
                          "  }\n"));
  EXPECT_EQ(why, "its body computes on vector<4 x f32>; vectorize takes bodies of scalars");
}

TEST(Vectorize, RefusesAMaskedAccess) {
  std::string why =
      refusal(kernel_text("  %b = cmp.lt %o, %n : bool\n"
                          "  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                          "    store %y, %i, %a, %b {checked}\n"
                          "  }\n"));
  EXPECT_EQ(why, "its store of 'y' has a mask");
}

TEST(Vectorize, RefusesIndicesThatAreNotTheInductionValuePlusAnInvariant) {
  std::string why =
      refusal(kernel_text("  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                          "    %l = load %u, %i {checked} : u32\n"
                          "    %g = load %x, %l {checked} : f32\n"
                          "    store %y, %i, %g {checked}\n"
                          "  }\n"));
  EXPECT_TRUE(has(why, "it loads from 'x' at an index that is neither the induction value nor")) << why;
  why =
      refusal(kernel_text("  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                          "    %j = mul %i, %o : u32\n"
                          "    store %y, %j, %a {checked}\n"
                          "  }\n"));
  EXPECT_TRUE(has(why, "it uses the induction value as a value ('mul')")) << why;
}

TEST(Vectorize, RefusesAStoreAtAnIndexThatDoesNotChange) {
  std::string why =
      refusal(kernel_text("  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                          "    %l = load %x, %i {checked} : f32\n"
                          "    store %y, %c0, %l {checked}\n"
                          "  }\n"));
  EXPECT_TRUE(has(why, "it stores into 'y' at an index that does not change with the iteration")) << why;
}

TEST(Vectorize, RefusesWhatOneIterationCouldSeeOfAnother) {
  // y[i + o] = y[i]: another iteration's element.
  std::string why =
      refusal(kernel_text("  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                          "    %l = load %y, %i {checked} : f32\n"
                          "    %j = add %i, %o : u32\n"
                          "    store %y, %j, %l {checked}\n"
                          "  }\n"));
  EXPECT_TRUE(has(why, "it stores into 'y' and loads from it at another index too")) << why;
  // y[0] read while y[i] is written.
  why =
      refusal(kernel_text("  for %c0, %n, %c1 {vectorize = 4} (%i: u32) {\n"
                          "    %l = load %y, %c0 {checked} : f32\n"
                          "    store %y, %i, %l {checked}\n"
                          "  }\n"));
  EXPECT_TRUE(has(why, "it stores into 'y' and loads from it at another index too")) << why;
}

TEST(Vectorize, RefusesBuffersTheLaunchAliases) {
  // y (parameter 1) shares x's memory (parameter 0).
  std::string why = refusal(kernel_text(kScale, ", alias = [2, 1, 0, 0, 0, 0, 0]"));
  EXPECT_EQ(why, "it stores into 'y', which may share memory with 'x' (the launch aliases them)");
  // Aliases the loop does not touch do not matter.
  EXPECT_EQ(refusal(kernel_text(kScale, ", alias = [0, 0, 4, 3, 0, 0, 0]")), "");
}

}  // namespace
}  // namespace kiln
