// CPU backend throughput against plain -O2 loops over the same data, and the host cost of a
// cached launch. `make bench`, or build/bin/kiln_cpu_bench --benchmark_format=json.
#include <benchmark/benchmark.h>

#include <random>

#include "kiln/kiln.h"
#include "plain_loops.h"

using namespace kiln;

namespace {

template <class F>
struct Saxpy {
  static constexpr std::string_view name = "saxpy";
  void operator()(Scalar<float> a, Slice<const Vector<F>> x, Slice<Vector<F>> y) const {
    If(absolute_pos() < x.len(), [&] {
      y[absolute_pos()] = Vector<F>(cast<F>(a)) * x[absolute_pos()] + y[absolute_pos()];
    });
  }
};

// partial[cube] = sum of the cube's run of per_unit * cube_dim elements: a register accumulator
// per unit, then a plane sum and one shared value per plane.
struct SumKernel {
  static constexpr std::string_view name = "sum";
  void operator()(Slice<const Vector<float>> x, Slice<float> partial, Comptime<int> per_unit) const {
    uint32_t units = uint32_t(static_cast_cube());
    SharedArray<float> planes(units / 32);
    Var<Vector<float>> acc = 0.0f;
    auto base = cube_pos() * (cube_dim() * uint32_t(per_unit.get()));
    For(range(0u, uint32_t(per_unit.get())), [&](Expr<uint32_t> k) {
      auto i = base + k * cube_dim() + unit_pos();
      acc += x[i];  // checked mode: past the end reads zero
    });
    Vector<float> v = acc;
    Expr<float> s = v[0];
    for (int l = 1; l < v.width(); ++l) s = s + v[l];
    auto p = plane_sum(s);
    If(unit_pos_plane() == 0u, [&] { planes[unit_pos() / 32u] = p; });
    sync_cube();
    If(unit_pos() == 0u, [&] {
      Var<float> total = 0.0f;
      for (uint32_t q = 0; q < units / 32; ++q) total += planes[q];
      partial[cube_pos()] = total;
    });
  }
  static uint64_t static_cast_cube() { return static_cube_dim().total(); }
};

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
  launch<Saxpy<float>>(c, CubeCount{cubes}, CubeDim{256}, 4, 2.0f, x, y);  // compile outside the loop
  for (auto _ : state) {
    launch<Saxpy<float>>(c, CubeCount{cubes}, CubeDim{256}, 4, 2.0f, x, y);
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
  Client c = Device::cpu().client();
  Handle x = c.upload(random_floats(kN));
  const int per_unit = 16;
  const uint32_t units = 256;
  uint32_t cubes = uint32_t(kN / 4 / (units * per_unit));
  Handle partial = c.empty(cubes * 4);
  launch<SumKernel>(c, CubeCount{cubes}, CubeDim{units}, 4, x, partial, comptime(per_unit));
  for (auto _ : state) {
    launch<SumKernel>(c, CubeCount{cubes}, CubeDim{units}, 4, x, partial, comptime(per_unit));
    auto p = c.read<float>(partial);
    float s = 0;
    for (float v : p) s += v;
    benchmark::DoNotOptimize(s);
  }
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
