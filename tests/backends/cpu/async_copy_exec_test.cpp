// copy.async on the CPU backend: a copy reads at the copy and lands at its unit's wait (before
// it, the destination holds what it held), groups land oldest first as `pending` allows, a
// masked-off copy lands zeros, copies of 4, 8 and 16 bytes, a copy reaching past either array
// (bounds.out_of_range, the buffers put back), and the facts that make the launch copy what it
// writes first.
#include <gtest/gtest.h>

#include <cmath>

#include "backends/cpu/analysis.h"
#include "cpu_test_util.h"

namespace kiln::cpu::testing {
namespace {

// Unit u copies x[u] into s[u] (group 1) and x[u + 64] into s[u + 64] (group 2), masked off for
// odd units; before any wait it writes s[u] to before[u]; after wait {pending = 1} s[u] and
// s[u + 64] to one[u], one[u + 64]; after wait {pending = 0} both to all[u], all[u + 64].
const char* kGroups = R"(
kernel @groups(%x: buffer<f32, ro>, %before: buffer<f32, rw>, %one: buffer<f32, rw>, %all: buffer<f32, rw>) {cube_dim = [64, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %0 = shared.alloc : shared<f32, 128>
  %1 = builtin.unit_pos : u32
  %2 = const 64 : u32
  %3 = add %1, %2 : u32
  copy.async %0, %1, %x, %1
  copy.async.commit
  %4 = const 1 : u32
  %5 = and %1, %4 : u32
  %6 = const 0 : u32
  %7 = cmp.eq %5, %6 : bool
  copy.async %0, %3, %x, %3, %7
  copy.async.commit
  %8 = load %0, %1 : f32
  store %before, %1, %8
  copy.async.wait {pending = 1}
  %9 = load %0, %1 : f32
  store %one, %1, %9
  %10 = load %0, %3 : f32
  store %one, %3, %10
  copy.async.wait {pending = 0}
  %11 = load %0, %1 : f32
  store %all, %1, %11
  %12 = load %0, %3 : f32
  store %all, %3, %12
}
)";

TEST(AsyncCopy, LandsAtItsUnitsWaitGroupByGroup) {
  ir::Kernel k = parse_verified(kGroups);
  std::vector<float> x(128);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i) * 0.5f + 1.0f;
  const std::vector<float> fill(128, -7.0f);
  Outcome o = run_both(k, {Arg::buffer(x), Arg::buffer(fill), Arg::buffer(fill), Arg::buffer(fill)}, {2, 1, 1});
  ASSERT_EQ(o.error_kind, "") << o.error_message;
  const std::vector<float> before = as<float>(o.after[1]), one = as<float>(o.after[2]), all = as<float>(o.after[3]);
  for (uint32_t u = 0; u < 64; ++u) {
    EXPECT_TRUE(std::isnan(before[u])) << "unit " << u << " read its copy's destination before the wait: poison";
    EXPECT_EQ(one[u], x[u]) << u;
    EXPECT_TRUE(std::isnan(one[u + 64])) << "unit " << u << ": its second group is still in flight";
    EXPECT_EQ(all[u], x[u]) << u;
    EXPECT_EQ(all[u + 64], u % 2 == 0 ? x[u + 64] : 0.0f) << "a masked-off copy lands zeros, unit " << u;
  }
}

// 8- and 16-byte elements: unit u copies v[u] (vector<2 x u32>) into s[2u, 2u + 2) and w[u]
// (vector<4 x u32>) into t[4u, 4u + 4), then writes what landed.
const char* kWide = R"(
kernel @wide(%v: buffer<vector<2 x u32>, ro>, %w: buffer<vector<4 x u32>, ro>, %out: buffer<u32, rw>) {cube_dim = [16, 1, 1], mode = unchecked, address = u32, vector = 1} {
  %0 = shared.alloc : shared<u32, 32>
  %1 = shared.alloc : shared<u32, 64>
  %2 = builtin.unit_pos : u32
  %3 = const 2 : u32
  %4 = mul %2, %3 : u32
  copy.async %0, %4, %v, %2
  %5 = const 4 : u32
  %6 = mul %2, %5 : u32
  copy.async %1, %6, %w, %2
  copy.async.commit
  copy.async.wait {pending = 0}
  sync.cube
  %7 = load %0, %2 : u32
  store %out, %2, %7
  %8 = const 16 : u32
  %9 = add %2, %8 : u32
  %10 = load %0, %9 : u32
  store %out, %9, %10
  %11 = const 32 : u32
  %12 = add %2, %11 : u32
  %13 = load %1, %2 : u32
  store %out, %12, %13
  %14 = const 48 : u32
  %15 = add %2, %14 : u32
  %16 = add %2, %11 : u32
  %17 = load %1, %16 : u32
  store %out, %15, %17
  %18 = const 64 : u32
  %19 = add %2, %18 : u32
  %20 = add %2, %14 : u32
  %21 = load %1, %20 : u32
  store %out, %19, %21
}
)";

TEST(AsyncCopy, CopiesEightAndSixteenByteElements) {
  ir::Kernel k = parse_verified(kWide);
  std::vector<uint32_t> v(32), w(64);
  for (uint32_t i = 0; i < 32; ++i) v[i] = 1000 + i * 3;
  for (uint32_t i = 0; i < 64; ++i) w[i] = 5000 + i * 7;
  Outcome o = run_both(k, {Arg::buffer(v), Arg::buffer(w), Arg::buffer(std::vector<uint32_t>(80, 0xdeadu))}, {1, 1, 1});
  ASSERT_EQ(o.error_kind, "") << o.error_message;
  const std::vector<uint32_t> out = as<uint32_t>(o.after[2]);
  for (uint32_t i = 0; i < 16; ++i) {
    EXPECT_EQ(out[i], v[i]) << i;
    EXPECT_EQ(out[16 + i], v[16 + i]) << i;
    EXPECT_EQ(out[32 + i], w[i]) << i;
    EXPECT_EQ(out[48 + i], w[32 + i]) << i;
    EXPECT_EQ(out[64 + i], w[48 + i]) << i;
  }
}

// Unit u copies x[u + %shift] into s[4u + %at, 4u + %at + 4).
const char* kReach = R"(
kernel @reach(%x: buffer<vector<4 x f32>, ro>, %out: buffer<f32, rw>, %shift: u32, %at: u32) {cube_dim = [8, 1, 1], mode = checked, address = u32, vector = 1} {
  %0 = shared.alloc : shared<f32, 32>
  %1 = builtin.unit_pos : u32
  %2 = add %1, %shift : u32
  %3 = const 4 : u32
  %4 = mul %1, %3 : u32
  %5 = add %4, %at : u32
  copy.async %0, %5, %x, %2
  copy.async.commit
  copy.async.wait {pending = 0}
  %6 = load %0, %4 : f32
  store %out, %1, %6 {checked}
}
)";

TEST(AsyncCopy, PastEitherArrayIsOutOfRangeAndPutsTheBuffersBack) {
  ir::Kernel k = parse_verified(kReach);
  std::vector<float> x(40, 2.5f), out(8, -1.0f);
  Outcome fine =
      run_both(k, {Arg::buffer(x), Arg::buffer(out), Arg::value(uint32_t(2)), Arg::value(uint32_t(0))}, {1, 1, 1});
  ASSERT_EQ(fine.error_kind, "") << fine.error_message;
  EXPECT_EQ(as<float>(fine.after[1]), std::vector<float>(8, 2.5f));

  // Unit 7 reads x[10] of 10: checked mode does not guard a copy.
  Outcome global =
      run_both(k, {Arg::buffer(x), Arg::buffer(out), Arg::value(uint32_t(3)), Arg::value(uint32_t(0))}, {1, 1, 1});
  EXPECT_EQ(global.error_kind, "bounds.out_of_range");
  EXPECT_EQ(global.error_message,
            "kernel 'reach' (checked): op #7 'copy.async' in unit 7 of cube (0, 0, 0): index 10 is out of range of "
            "argument 0 'x' (length 10)");
  EXPECT_EQ(as<float>(global.after[1]), out) << "the failed launch put out back";

  // Unit 7 lands s[29 .. 33) of 32.
  Outcome shared =
      run_both(k, {Arg::buffer(x), Arg::buffer(out), Arg::value(uint32_t(0)), Arg::value(uint32_t(1))}, {1, 1, 1});
  EXPECT_EQ(shared.error_kind, "bounds.out_of_range");
  EXPECT_EQ(shared.error_message,
            "kernel 'reach' (checked): op #7 'copy.async' in unit 7 of cube (0, 0, 0): the 4 elements from index 29 "
            "of the shared array of op #1 (length 32) that a copy lands in reach past its end");
  EXPECT_EQ(as<float>(shared.after[1]), out) << "the failed launch put out back";

  const Plan p = build_plan(k);
  EXPECT_NE(std::find(p.failing_ops.begin(), p.failing_ops.end(), 7u), p.failing_ops.end())
      << "a copy is not guarded: it can fail";
}

}  // namespace
}  // namespace kiln::cpu::testing
