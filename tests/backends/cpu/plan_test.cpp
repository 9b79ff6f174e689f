// The CPU plan's analyses, asserted on small kernels written as IR: which values are uniform (and
// stored once per cube), and which ops can stop a launch midway (and so which buffers a launch
// copies first, decision 005).
#include <gtest/gtest.h>

#include <algorithm>

#include "backends/cpu/analysis.h"
#include "backends/cpu/exec.h"
#include "cpu_test_util.h"

namespace kiln::cpu::testing {
namespace {

const char* kFacts = "{cube_dim = [64, 1, 1], mode = unchecked, address = u32, vector = 1}";

std::string kernel(const std::string& params, const std::string& body, const char* facts = kFacts) {
  return "kernel @k(" + params + ") " + facts + " {\n" + body + "}\n";
}

// The instruction that computes op #n's result.
const Instr* instr_of(const Plan& p, uint32_t n) {
  for (const Instr& in : p.code) {
    if (in.op_number == n) return &in;
  }
  return nullptr;
}

// ---- uniform values ------------------------------------------------------------------------

const std::string kUniformity = kernel("%a: f32, %x: buffer<f32, ro>, %w: buffer<u32, rw>, %out: buffer<f32, rw>",
                                       "  %0 = builtin.absolute_pos : u32\n"            // #1
                                       "  %1 = builtin.cube_pos : u32\n"                // #2
                                       "  %2 = len %x : u32\n"                          // #3
                                       "  %3 = add %1, %2 : u32\n"                      // #4
                                       "  %4 = add %0, %2 : u32\n"                      // #5
                                       "  %5 = const 2 : u32\n"                         // #6
                                       "  %6 = load %x, %5 : f32\n"                     // #7
                                       "  %7 = load %w, %5 : u32\n"                     // #8
                                       "  %8 = mul %6, %a : f32\n"                      // #9
                                       "  %9 = load %x, %0 : f32\n"                     // #10
                                       "  %10 = add %8, %9 : f32\n"                     // #11
                                       "  %11 = plane.sum %8 : f32\n"                   // #12
                                       "  %12 = builtin.unit_pos_plane : u32\n"         // #13
                                       "  %13 = builtin.cube_count {axis = 1} : u32\n"  // #14
                                       "  %14 = var.decl : var<f32>\n"                  // #15
                                       "  var.store %14, %8\n"                          // #16
                                       "  %15 = var.load %14 : f32\n"                   // #17
                                       "  %16 = const 1 : u32\n"                        // #18
                                       "  for %5, %2, %16 (%17: u32) {\n"               // #19
                                       "    %18 = mul %17, %3 : u32\n"                  // #20
                                       "    store %w, %18, %7\n"                        // #21
                                       "  }\n"
                                       "  for %0, %2, %16 (%19: u32) {\n"  // #22
                                       "    %20 = add %19, %5 : u32\n"     // #23
                                       "    store %w, %20, %20\n"          // #24
                                       "  }\n"
                                       "  %21 = add %10, %15 : f32\n"  // #25
                                       "  %22 = add %21, %11 : f32\n"  // #26
                                       "  store %out, %0, %22\n");     // #27

TEST(Uniformity, ValuesThatAreTheSameForEveryUnitOfACube) {
  ir::Kernel k = parse_verified(kUniformity);
  const std::vector<uint8_t> u = uniform_values(k);
  auto uniform = [&](uint32_t n) { return u[op_number(k, n).result] != 0; };
  EXPECT_FALSE(uniform(1)) << "absolute_pos";
  EXPECT_TRUE(uniform(2)) << "cube_pos";
  EXPECT_TRUE(uniform(3)) << "len";
  EXPECT_TRUE(uniform(4)) << "uniform + uniform";
  EXPECT_FALSE(uniform(5)) << "varying + uniform";
  EXPECT_TRUE(uniform(6)) << "const";
  EXPECT_TRUE(uniform(7)) << "a read-only buffer nothing writes, at a uniform index";
  EXPECT_FALSE(uniform(8)) << "a buffer the kernel writes, at a uniform index";
  EXPECT_TRUE(uniform(9)) << "uniform * scalar parameter";
  EXPECT_FALSE(uniform(10)) << "a varying index";
  EXPECT_FALSE(uniform(11));
  EXPECT_FALSE(uniform(12)) << "plane ops combine units";
  EXPECT_FALSE(uniform(13)) << "unit_pos_plane";
  EXPECT_TRUE(uniform(14)) << "cube_count";
  EXPECT_FALSE(uniform(17)) << "var.load";
  EXPECT_TRUE(u[op_number(k, 19).regions[0].args[0]]) << "induction of a loop with uniform bounds";
  EXPECT_TRUE(uniform(20));
  EXPECT_FALSE(u[op_number(k, 22).regions[0].args[0]]) << "induction of a loop with a varying start";
  EXPECT_FALSE(uniform(23));
  EXPECT_TRUE(u[k.params[0].value]) << "scalar parameter";

  // The plan stores the uniform ones once per cube: their instructions write a row.
  const Plan p = build_plan(k);
  for (uint32_t n : {2u, 3u, 4u, 7u, 9u, 14u, 20u}) {
    const Instr* in = instr_of(p, n);
    ASSERT_NE(in, nullptr) << n;
    EXPECT_TRUE(in->dst.uniform) << "op #" << n;
    EXPECT_EQ(in->fn, &run_uniform) << "op #" << n;
  }
  for (uint32_t n : {1u, 5u, 8u, 10u, 11u, 12u, 13u, 17u, 23u}) {
    const Instr* in = instr_of(p, n);
    ASSERT_NE(in, nullptr) << n;
    EXPECT_FALSE(in->dst.uniform) << "op #" << n;
  }
  EXPECT_EQ(instr_of(p, 6), nullptr) << "a constant is written when the cube's registers are made";
  // 11 values in rows (a, 2, 3, 4, 6, 7, 9, 14, 16 = const 1, 18's induction, 20).
  EXPECT_EQ(p.uniform_values, 11u);
  const Plan without = build_plan(k, PlanOptions{false});
  EXPECT_EQ(without.uniform_values, 0u);
  EXPECT_LT(p.register_bytes, without.register_bytes);
}

TEST(Uniformity, ALoadFromABufferThatMayAliasAWrittenOneIsVarying) {
  // x (read-only) and y overlap; y is written, so x's element 2 may change during the launch.
  const std::string body =
      "  %0 = builtin.absolute_pos : u32\n"
      "  %1 = const 2 : u32\n"
      "  %2 = load %x, %1 : f32\n"
      "  store %y, %0, %2\n";
  ir::Kernel aliased =
      parse_verified(kernel("%x: buffer<f32, ro>, %y: buffer<f32, rw>", body,
                            "{cube_dim = [64, 1, 1], mode = unchecked, address = u32, vector = 1, alias = [2, 1]}"));
  EXPECT_FALSE(uniform_values(aliased)[op_number(aliased, 3).result]);
  ir::Kernel apart = parse_verified(kernel("%x: buffer<f32, ro>, %y: buffer<f32, rw>", body));
  EXPECT_TRUE(uniform_values(apart)[op_number(apart, 3).result]);
}

// ---- failure points and restored buffers -----------------------------------------------------

FailureFacts facts_of(const std::string& text) {
  ir::Kernel k = parse_verified(text);
  return failure_facts(k, uniform_values(k));
}

using Ops = std::vector<uint32_t>;

TEST(Failures, CheckedAccessesCannotFailAndTakeNoCopy) {
  // saxpy as checked_io leaves it: each access masked by index < len(its array).
  FailureFacts f = facts_of(kernel("%a: f32, %x: buffer<vector<4 x f32>, ro>, %y: buffer<vector<4 x f32>, rw>",
                                   "  %0 = builtin.absolute_pos : u32\n"
                                   "  %1 = len %x : u32\n"
                                   "  %2 = cmp.lt %0, %1 : bool\n"
                                   "  %3 = load %x, %0, %2 : vector<4 x f32>\n"
                                   "  %4 = vector.splat %a : vector<4 x f32>\n"
                                   "  %5 = len %y : u32\n"
                                   "  %6 = cmp.lt %0, %5 : bool\n"
                                   "  %7 = load %y, %0, %6 : vector<4 x f32>\n"
                                   "  %8 = mul %4, %3 : vector<4 x f32>\n"
                                   "  %9 = add %8, %7 : vector<4 x f32>\n"
                                   "  %10 = and %2, %6 : bool\n"
                                   "  store %y, %0, %9, %10\n",
                                   "{cube_dim = [256, 1, 1], mode = checked, address = u32, vector = 4}"));
  EXPECT_EQ(f.failing_ops, Ops{});
  EXPECT_EQ(f.restore_params, Ops{});
}

TEST(Failures, UncheckedAccessesCanFailAndOnlyWrittenBuffersAreCopied) {
  // y is read-write but only read: a failed launch cannot have changed it.
  FailureFacts f = facts_of(kernel("%x: buffer<f32, ro>, %y: buffer<f32, rw>, %out: buffer<f32, rw>",
                                   "  %0 = builtin.absolute_pos : u32\n"  // #1
                                   "  %1 = load %x, %0 : f32\n"           // #2
                                   "  %2 = load %y, %0 : f32\n"           // #3
                                   "  %3 = add %1, %2 : f32\n"            // #4
                                   "  store %out, %0, %3\n"));            // #5
  EXPECT_EQ(f.failing_ops, (Ops{2, 3, 5}));
  EXPECT_EQ(f.restore_params, Ops{2});
}

TEST(Failures, AMaskThatIsNotTheBoundOfTheSameArrayDoesNotProtect) {
  // The mask bounds the index by len(x), not len(out).
  FailureFacts f = facts_of(kernel("%x: buffer<f32, ro>, %out: buffer<f32, rw>",
                                   "  %0 = builtin.absolute_pos : u32\n"
                                   "  %1 = len %x : u32\n"
                                   "  %2 = cmp.lt %0, %1 : bool\n"
                                   "  %3 = load %x, %0, %2 : f32\n"
                                   "  store %out, %0, %3, %2\n"));  // #5
  EXPECT_EQ(f.failing_ops, Ops{5});
  EXPECT_EQ(f.restore_params, Ops{1});
}

TEST(Failures, ASignedIndexIsProtectedOnlyByACompareThatReadsItAsTheExecutorDoes) {
  // An i32 index sign-extends when read; in u32 the compare sees -2^31 as 2^31, which passes for a
  // buffer longer than that. In u64 it is the executor's own number.
  auto with_compare = [](const std::string& to) {
    std::string len = to == "u32" ? "  %3 = len %x : u32\n" : "  %9 = len %x : u32\n  %3 = cast %9 : u64\n";
    return facts_of(kernel("%x: buffer<f32, ro>, %out: buffer<f32, rw>, %i: i32",
                           "  %0 = builtin.absolute_pos : u32\n"
                           "  %1 = const 0.0 : f32\n"
                           "  %2 = cast %i : " +
                               to + "\n" + len +
                               "  %4 = cmp.lt %2, %3 : bool\n"
                               "  %5 = load %x, %i, %4 : f32\n"
                               "  %6 = len %out : u32\n"
                               "  %7 = cmp.lt %0, %6 : bool\n"
                               "  store %out, %0, %5, %7\n",
                           "{cube_dim = [64, 1, 1], mode = checked, address = u32, vector = 1}"));
  };
  FailureFacts narrow = with_compare("u32");
  EXPECT_EQ(narrow.failing_ops.size(), 1u);
  EXPECT_EQ(narrow.restore_params, Ops{1});
  FailureFacts wide = with_compare("u64");
  EXPECT_EQ(wide.failing_ops, Ops{});
  EXPECT_EQ(wide.restore_params, Ops{});
}

TEST(Failures, SharedIndicesInRangeAndABarrierAllUnitsReachCannotFail) {
  // A block reduction's shape: one slot per plane at unit_pos / 32, a barrier at the top level,
  // constant slots read back.
  const std::string params = "%out: buffer<f32, rw>";
  const std::string checked_store =
      "  %9 = len %out : u32\n"
      "  %10 = cmp.lt %1, %9 : bool\n"
      "  store %out, %1, %8, %10\n";
  FailureFacts safe = facts_of(kernel(params,
                                      "  %0 = builtin.unit_pos : u32\n"
                                      "  %1 = builtin.cube_pos : u32\n"
                                      "  %2 = shared.alloc : shared<f32, 2>\n"
                                      "  %3 = const 32 : u32\n"
                                      "  %4 = div %0, %3 : u32\n"
                                      "  %5 = cast %0 : f32\n"
                                      "  store %2, %4, %5\n"
                                      "  sync.cube\n"
                                      "  %6 = const 1 : u32\n"
                                      "  %7 = load %2, %6 : f32\n"
                                      "  %8 = plane.sum %7 : f32\n" +
                                          checked_store));
  EXPECT_EQ(safe.failing_ops, Ops{});
  EXPECT_EQ(safe.restore_params, Ops{});
  // unit_pos / 16 reaches 3 in a cube of 64: past the two slots.
  FailureFacts past = facts_of(kernel(params,
                                      "  %0 = builtin.unit_pos : u32\n"
                                      "  %1 = builtin.cube_pos : u32\n"
                                      "  %2 = shared.alloc : shared<f32, 2>\n"
                                      "  %3 = const 16 : u32\n"
                                      "  %4 = div %0, %3 : u32\n"  // #5
                                      "  %5 = cast %0 : f32\n"
                                      "  store %2, %4, %5\n"  // #7
                                      "  sync.cube\n"
                                      "  %6 = const 1 : u32\n"
                                      "  %7 = load %2, %6 : f32\n"
                                      "  %8 = plane.sum %7 : f32\n" +
                                          checked_store));
  EXPECT_EQ(past.failing_ops, Ops{7});
  EXPECT_EQ(past.restore_params, Ops{0});
}

TEST(Failures, IntegerDivisionFailsOnlyWhenTheDivisorMayBeZero) {
  auto divide_by = [](const std::string& divisor_ops) {
    return facts_of(kernel("%x: buffer<u32, ro>, %out: buffer<u32, rw>, %n: u32",
                           "  %0 = builtin.absolute_pos : u32\n"
                           "  %1 = len %out : u32\n"
                           "  %2 = cmp.lt %0, %1 : bool\n" +
                               divisor_ops +
                               "  %4 = rem %0, %3 : u32\n"
                               "  store %out, %0, %4, %2\n",
                           "{cube_dim = [64, 1, 1], mode = checked, address = u32, vector = 1}"));
  };
  EXPECT_EQ(divide_by("  %3 = const 3 : u32\n").failing_ops, Ops{});
  EXPECT_EQ(divide_by("  %3 = builtin.cube_count {axis = 0} : u32\n").failing_ops, Ops{});
  EXPECT_EQ(divide_by("  %8 = const 1 : u32\n  %3 = max %n, %8 : u32\n").failing_ops, Ops{});
  FailureFacts by_param = divide_by("  %3 = add %n, %n : u32\n");
  EXPECT_EQ(by_param.failing_ops, Ops{5});
  EXPECT_EQ(by_param.restore_params, Ops{1});
}

// A barrier in `wrap` (which holds "BODY") after a store, in a kernel that cannot fail otherwise.
FailureFacts barrier_in(const std::string& wrap) {
  std::string inner = wrap;
  inner.replace(inner.find("BODY"), 4, "sync.cube");
  return facts_of(kernel("%out: buffer<u32, rw>, %n: u32",
                         "  %0 = builtin.unit_pos : u32\n"
                         "  %1 = const 0 : u32\n"
                         "  %2 = const 1 : u32\n"
                         "  %3 = len %out : u32\n"
                         "  %4 = cmp.lt %0, %3 : bool\n"
                         "  store %out, %0, %0, %4\n"
                         "  %5 = cmp.lt %0, %n : bool\n"  // varying
                         "  %6 = cmp.lt %1, %n : bool\n"  // uniform
                             + inner));
}

TEST(Failures, ABarrierFailsOnlyWhereSomeLiveUnitsMayBeInactive) {
  EXPECT_EQ(barrier_in("  BODY\n").failing_ops, Ops{});
  EXPECT_EQ(barrier_in("  if %6 {\n    BODY\n  }\n").failing_ops, Ops{}) << "a uniform if";
  EXPECT_EQ(barrier_in("  for %1, %n, %2 (%7: u32) {\n    BODY\n  }\n").failing_ops, Ops{}) << "uniform bounds";
  EXPECT_EQ(barrier_in("  while {\n    condition %6\n  } do {\n    BODY\n  }\n").failing_ops, Ops{})
      << "a uniform while condition";
  EXPECT_EQ(barrier_in("  if %5 {\n    terminate\n  }\n  BODY\n").failing_ops, Ops{})
      << "terminated units are not waited for";
  EXPECT_EQ(barrier_in("  for %1, %n, %2 (%7: u32) {\n    BODY\n    if %6 {\n      break\n    }\n  }\n").failing_ops,
            Ops{})
      << "a break all units take together";

  FailureFacts divergent = barrier_in("  if %5 {\n    BODY\n  }\n");
  EXPECT_EQ(divergent.failing_ops, Ops{10});
  EXPECT_EQ(divergent.restore_params, Ops{0});
  EXPECT_EQ(barrier_in("  for %1, %0, %2 (%7: u32) {\n    BODY\n  }\n").failing_ops, Ops{10}) << "per-unit bounds";
  EXPECT_EQ(barrier_in("  for %1, %n, %2 (%7: u32) {\n    BODY\n    if %5 {\n      break\n    }\n  }\n").failing_ops,
            Ops{10})
      << "some units break, the others meet the barrier in the next iteration";
  EXPECT_EQ(barrier_in("  while {\n    condition %5\n  } do {\n    BODY\n  }\n").failing_ops, Ops{11});
}

TEST(Failures, DebugPrintCanFail) {
  // It formats into a growing string, which can run out of memory after other cubes wrote.
  FailureFacts f = facts_of(kernel("%out: buffer<u32, rw>",
                                   "  %0 = builtin.absolute_pos : u32\n"
                                   "  %1 = len %out : u32\n"
                                   "  %2 = cmp.lt %0, %1 : bool\n"
                                   "  store %out, %0, %0, %2\n"
                                   "  debug.print %0 {format = \"%u\\n\"}\n"));
  EXPECT_EQ(f.failing_ops, Ops{5});
  EXPECT_EQ(f.restore_params, Ops{0});
}

TEST(Failures, ThePlanCarriesTheFacts) {
  ir::Kernel k = parse_verified(kernel("%x: buffer<f32, ro>, %y: buffer<f32, rw>, %out: buffer<f32, rw>",
                                       "  %0 = builtin.absolute_pos : u32\n"
                                       "  %1 = load %x, %0 : f32\n"
                                       "  store %out, %0, %1\n"));
  const Plan p = build_plan(k);
  EXPECT_EQ(p.failing_ops, (Ops{2, 3}));
  EXPECT_EQ(p.restore_params, Ops{2});
}

}  // namespace
}  // namespace kiln::cpu::testing
