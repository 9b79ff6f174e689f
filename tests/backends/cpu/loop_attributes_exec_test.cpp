// The CPU backend's part of the loop attributes (docs/decisions/027): wide loads and stores
// ({lanes = W}) in both plan forms (a uniform wide load fills its row with copies of its vector),
// a wide access past the end of a buffer (bounds.out_of_range, the buffers put back), check.trips
// (loop.zero_trips at the first active unit whose bounds give no trip), and the facts that make
// the launch copy what it writes first.
#include <gtest/gtest.h>

#include <algorithm>

#include "backends/cpu/analysis.h"
#include "cpu_test_util.h"

namespace kiln::cpu::testing {
namespace {

// Each unit: out[4u .. 4u + 4) = x[4u .. 4u + 4) * 2 + x[0 .. 4) (a uniform wide load of a
// read-only buffer), and y[4u .. 4u + 4) = the splat of s (a uniform value stored wide).
const char* kWide = R"(
kernel @wide(%x: buffer<u32, ro>, %out: buffer<u32, rw>, %y: buffer<u32, rw>, %s: u32) {cube_dim = [37, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %0 = builtin.absolute_pos : u32
  %1 = const 4 : u32
  %2 = mul %0, %1 : u32
  %3 = load %x, %2 {lanes = 4} : vector<4 x u32>
  %4 = const 0 : u32
  %5 = load %x, %4 {lanes = 4} : vector<4 x u32>
  %6 = const 2 : vector<4 x u32>
  %7 = mul %3, %6 : vector<4 x u32>
  %8 = add %7, %5 : vector<4 x u32>
  store %out, %2, %8 {lanes = 4}
  %9 = vector.splat %s : vector<4 x u32>
  store %y, %2, %9 {lanes = 4}
}
)";

TEST(WideAccess, LoadsAndStoresFourElementsInEitherPlanForm) {
  ir::Kernel k = parse_verified(kWide);
  const uint32_t units = 37 * 2;
  std::vector<uint32_t> x(units * 4);
  for (uint32_t i = 0; i < x.size(); ++i) x[i] = i * 7 + 3;
  Outcome o = run_both(k,
                       {Arg::buffer(x), Arg::buffer(std::vector<uint32_t>(units * 4, 0xdeadu)),
                        Arg::buffer(std::vector<uint32_t>(units * 4, 0xdeadu)), Arg::value(uint32_t(99))},
                       {2, 1, 1});
  ASSERT_EQ(o.error_kind, "") << o.error_message;
  std::vector<uint32_t> out = as<uint32_t>(o.after[1]), y = as<uint32_t>(o.after[2]);
  for (uint32_t i = 0; i < units * 4; ++i) {
    EXPECT_EQ(out[i], x[i] * 2 + x[i % 4]) << i;
    EXPECT_EQ(y[i], 99u) << i;
  }
}

// A wide load whose last elements lie past its buffer.
const char* kPastTheEnd = R"(
kernel @past(%x: buffer<f32, ro>, %out: buffer<f32, rw>) {cube_dim = [8, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %0 = builtin.absolute_pos : u32
  %1 = const 4 : u32
  %2 = mul %0, %1 : u32
  %3 = load %x, %2 {lanes = 8} : vector<8 x f32>
  store %out, %2, %3 {lanes = 8}
}
)";

TEST(WideAccess, PastTheEndIsOutOfRangeAndPutsTheBuffersBack) {
  ir::Kernel k = parse_verified(kPastTheEnd);
  std::vector<float> x(34, 1.5f), out(64, -1.0f);
  Outcome o = run_both(k, {Arg::buffer(x), Arg::buffer(out)}, {1, 1, 1});
  EXPECT_EQ(o.error_kind, "bounds.out_of_range");
  // Units 0 to 6 read up to element 31; unit 7 reads 28..35 of 34.
  EXPECT_EQ(o.error_message,
            "kernel 'past' (unchecked): op #4 'load' in unit 7 of cube (0, 0, 0): the 8 elements from index 28 (a wide "
            "access) reach past argument 0 'x' (length 34)");
  EXPECT_EQ(as<float>(o.after[1]), out) << "the failed launch put out back";
  const Plan p = build_plan(k);
  EXPECT_EQ(p.failing_ops, (std::vector<uint32_t>{4, 5})) << "a wide access has no mask: it can fail";
}

// Units with x[u] = 0 have an empty [0, x[u]).
const char* kCheck = R"(
kernel @trips(%x: buffer<i32, ro>, %out: buffer<i32, rw>) {cube_dim = [16, 1, 1], mode = checked, address = u32, vector = 1} {
  %0 = builtin.absolute_pos : u32
  %1 = load %x, %0 : i32
  %2 = const -3 : i32
  %3 = const 1 : i32
  store %out, %0, %1
  check.trips %2, %1 {loop = 2}
  for %2, %1, %3 (%4: i32) {
    store %out, %0, %4
  }
}
)";

TEST(CheckTrips, ZeroTripsStopTheLaunchAtTheFirstUnitAndPutTheBuffersBack) {
  ir::Kernel k = parse_verified(kCheck);
  std::vector<int32_t> x(32, 5), out(32, 77);
  x[19] = -3;  // lo = hi
  x[23] = -7;  // hi < lo
  Outcome o = run_both(k, {Arg::buffer(x), Arg::buffer(out)}, {2, 1, 1});
  EXPECT_EQ(o.error_kind, "loop.zero_trips");
  EXPECT_EQ(
      o.error_message,
      "kernel 'trips' (checked): op #6 'check.trips' in unit 3 of cube (1, 0, 0): the at_least_once loop #2 of the "
      "kernel starts with lo = -3 and hi = -3, which give it zero trips; at_least_once promises lo < hi (drop the "
      "promise where the range may be empty)");
  EXPECT_EQ(as<int32_t>(o.after[1]), out) << "the failed launch put out back";
  const std::vector<uint32_t> failing = build_plan(k).failing_ops;
  EXPECT_NE(std::find(failing.begin(), failing.end(), 6u), failing.end()) << "check.trips can fail";
  // With a trip for every unit the check passes and the loop runs.
  x[19] = x[23] = -2;
  o = run_both(k, {Arg::buffer(x), Arg::buffer(out)}, {2, 1, 1});
  ASSERT_EQ(o.error_kind, "") << o.error_message;
  std::vector<int32_t> got = as<int32_t>(o.after[1]);
  for (uint32_t u = 0; u < 32; ++u) EXPECT_EQ(got[u], x[u] - 1) << u;
}

}  // namespace
}  // namespace kiln::cpu::testing
