// CPU backend throughput against plain -O2 loops over the same data, and the host cost of a
// cached launch. `make bench`, or build/bin/kiln_cpu_bench --benchmark_format=json.
#include <benchmark/benchmark.h>

#include <random>

#include "gallery/kernels.h"
#include "kiln/kiln.h"
#include "plain_loops.h"

using namespace kiln;

namespace {

struct Tiny {
  static constexpr std::string_view name = "tiny";
  void operator()(Scalar<float> a, Slice<float> y) const { y[unit_pos()] = y[unit_pos()] + a; }
};

std::vector<float> random_floats(size_t n) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

constexpr size_t kN = size_t(4) << 20;  // 4M floats

void BM_SaxpyPlainLoop(benchmark::State& state) {
  auto x = random_floats(kN), y = random_floats(kN);
  for (auto _ : state) {
    plain_saxpy(2.0f, x.data(), y.data(), kN);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kN) * 12);
}
BENCHMARK(BM_SaxpyPlainLoop)->Unit(benchmark::kMillisecond);

void BM_SaxpyKiln(benchmark::State& state) {
  Client c = Device::cpu().client();
  Handle x = c.upload(random_floats(kN)), y = c.upload(random_floats(kN));
  uint32_t cubes = uint32_t(kN / 4 / 256);
  launch<gallery::Saxpy<float>>(c, CubeCount{cubes}, CubeDim{256}, 4, 2.0f, x, y);  // compile outside the loop
  for (auto _ : state) {
    launch<gallery::Saxpy<float>>(c, CubeCount{cubes}, CubeDim{256}, 4, 2.0f, x, y);
    c.sync();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kN) * 12);
}
BENCHMARK(BM_SaxpyKiln)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SumPlainLoop(benchmark::State& state) {
  auto x = random_floats(kN);
  for (auto _ : state) benchmark::DoNotOptimize(plain_sum(x.data(), kN));
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kN) * 4);
}
BENCHMARK(BM_SumPlainLoop)->Unit(benchmark::kMillisecond);

void BM_SumKiln(benchmark::State& state) {
  // The same kernels `kiln bench` runs on GPUs: partial sums over a grid-stride loop, then one cube.
  Client c = Device::cpu().client();
  Handle x = c.upload(random_floats(kN));
  const uint32_t cubes = 64;
  Handle partial = c.empty<float>(cubes), out = c.empty<float>(1);
  auto run = [&] {
    launch_unchecked<gallery::SumPartials>(c, CubeCount{cubes}, CubeDim{256}, 4, x, partial);
    launch_unchecked<gallery::SumFinal>(c, CubeCount{1}, CubeDim{64}, 1, partial, out);
    return c.read<float>(out)[0];
  };
  run();
  for (auto _ : state) benchmark::DoNotOptimize(run());
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kN) * 4);
}
BENCHMARK(BM_SumKiln)->Unit(benchmark::kMillisecond)->UseRealTime();

// Host time of a launch whose kernel is cached: argument checks, id, lookup, and (on the CPU,
// which runs synchronously) one cube of 32 units.
void BM_CachedLaunchOneCube(benchmark::State& state) {
  Client c = Device::cpu().client();
  Handle y = c.upload(std::vector<float>(32, 1.0f));
  launch<Tiny>(c, CubeCount{1}, CubeDim{32}, 1, 1.0f, y);
  for (auto _ : state) launch<Tiny>(c, CubeCount{1}, CubeDim{32}, 1, 1.0f, y);
}
BENCHMARK(BM_CachedLaunchOneCube)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
