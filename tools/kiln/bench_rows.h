// What kiln bench's groups share: a row of its table, timing, inputs.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::tool {

using clock_type = std::chrono::steady_clock;

inline double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

struct Row {
  std::string what, unit;
  double kiln = NAN;
  std::string peer_name;
  double peer = NAN;
  bool higher_is_better = true;
  double target = NAN;  // for the ratio kiln / peer (or the absolute figure when there is no peer)
};

// The median of `reps` timings of `batch` calls of fn, each timing synchronised, in ms per call.
template <class Fn>
double median_ms(const Client& c, int reps, int batch, Fn&& fn) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    c.sync();
    auto t0 = clock_type::now();
    for (int b = 0; b < batch; ++b) fn();
    c.sync();
    t.push_back(ms_since(t0) / batch);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

inline std::vector<float> random_floats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng);
  return v;
}

// The tile layer's benchmarks (bench_tile.cpp): row softmax, matmul, the prefetch sweep, attention.
void tile_benchmarks(const Client& c, bool gpu, const std::map<std::string, double>& peer, std::vector<Row>& rows);

// The tensor library's benchmarks (bench_tensor.cpp): elementwise add, a tiny op's host time, matmul.
void tensor_benchmarks(const Client& c, bool gpu, const std::map<std::string, double>& peer, std::vector<Row>& rows);

}  // namespace kiln::tool
