// The kernel cache: one compile per KernelId, shared by threads that race to launch a new kernel;
// seed 01's four launches of add compile three times.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <thread>

#include "kiln/kiln.h"

using namespace kiln;

namespace {

struct Add {
  static constexpr std::string_view name = "add";
  static constexpr std::array<std::string_view, 4> param_names{"x", "y", "out", "relu"};
  void operator()(Slice<const float> x, Slice<const float> y, Slice<float> out, Comptime<bool> relu) const {
    auto v = x[absolute_pos()] + y[absolute_pos()];
    if (relu) out[absolute_pos()] = max(v, 0.0f);
    else out[absolute_pos()] = v;
  }
};

TEST(KernelCache, SeedOneFourLaunchesCompileThreeTimes) {
  Client c = Device::cpu().client();
  Handle x = c.upload(std::vector<float>{1, -1, 3, -3, 5, -5});
  Handle y = c.upload(std::vector<float>{0.5f, -0.5f, 0.5f, -0.5f, 0.5f, -0.5f});
  Handle out = c.empty<float>(6);
  // The cache is per device and shared by every test in this process: count the difference.
  uint64_t before = c.stats().compilations;
  launch<Add>(c, CubeCount{1}, CubeDim{6}, 1, x, y, out, comptime(false));
  launch_unchecked<Add>(c, CubeCount{1}, CubeDim{6}, 1, x, y, out, comptime(false));
  launch<Add>(c, CubeCount{1}, CubeDim{6}, 1, x, y, out, comptime(true));
  launch<Add>(c, CubeCount{1}, CubeDim{6}, 1, x, y, out, comptime(false));
  EXPECT_EQ(c.stats().compilations - before, 3u);
  // Other data, same id: no compile.
  Handle x2 = c.upload(std::vector<float>{9, 9, 9, 9, 9, 9});
  launch<Add>(c, CubeCount{1}, CubeDim{6}, 1, x2, y, out, comptime(false));
  EXPECT_EQ(c.stats().compilations - before, 3u);
  EXPECT_EQ(c.read<float>(out)[0], 9.5f);
  // A different cube dim is a different id.
  launch<Add>(c, CubeCount{3}, CubeDim{2}, 1, x, y, out, comptime(false));
  EXPECT_EQ(c.stats().compilations - before, 4u);
  bool found = false;
  for (const auto& [name, n] : c.stats().launches_by_kernel) {
    if (name == "add") {
      found = true;
      EXPECT_GE(n, 6u);
    }
  }
  EXPECT_TRUE(found);
}

// A kernel no other test launches, so the first launch here is its first anywhere.
struct RaceKernel {
  static constexpr std::string_view name = "race_kernel";
  void operator()(Scalar<uint32_t> k, Slice<uint32_t> out) const {
    If(absolute_pos() < out.len(), [&] { out[absolute_pos()] = absolute_pos() * k + 7u; });
  }
};

TEST(KernelCache, EightThreadsOneCompile) {
  Client c = Device::cpu().client();
  const int threads = 8;
  uint64_t before = c.stats().compilations;
  std::barrier start(threads);
  std::atomic<int> wrong{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      Handle out = c.empty<uint32_t>(100);
      start.arrive_and_wait();
      launch<RaceKernel>(c, CubeCount{4}, CubeDim{32}, 1, uint32_t(t + 1), out);
      auto got = c.read<uint32_t>(out);
      for (uint32_t i = 0; i < 100; ++i) {
        if (got[i] != i * uint32_t(t + 1) + 7u) ++wrong;
      }
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(c.stats().compilations - before, 1u);
}

}  // namespace
