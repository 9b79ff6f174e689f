// What kiln bench's groups share: a row of its table, timing, inputs.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
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

// A peer's figure from the --peers files; NaN when no file gave it.
inline double peer_of(const std::map<std::string, double>& peer, const std::string& key) {
  auto it = peer.find(key);
  return it == peer.end() ? NAN : it->second;
}

// The largest relative error over `samples` elements of c = a x b (n x n, bf16, row-major)
// against products of the same bf16 values summed in double.
inline double matmul_error(const std::vector<bf16>& a, const std::vector<bf16>& b, const std::vector<bf16>& c,
                           int64_t n, int64_t samples) {
  double worst = 0;
  for (int64_t s = 0; s < samples; ++s) {
    int64_t i = (s * 7919) % n, j = (s * 104729 + 13) % n;
    double want = 0, scale = 0;
    for (int64_t k = 0; k < n; ++k) {
      double p = double(float(a[size_t(i * n + k)])) * double(float(b[size_t(k * n + j)]));
      want += p;
      scale += std::abs(p);
    }
    worst = std::max(worst, std::abs(double(float(c[size_t(i * n + j)])) - want) / scale);
  }
  return worst;
}

// The tile layer's benchmarks (bench_tile.cpp): row softmax, matmul, the prefetch sweep, attention.
void tile_benchmarks(const Client& c, bool gpu, const std::map<std::string, double>& peer, std::vector<Row>& rows);

// The tensor library's benchmarks (bench_tensor.cpp): elementwise add, a tiny op's host time, matmul.
// `wanted(part)` for each part: add, tiny, rows, sum, matmul.
void tensor_benchmarks(const Client& c, bool gpu, const std::map<std::string, double>& peer, std::vector<Row>& rows,
                       const std::function<bool(const std::string&)>& wanted);

}  // namespace kiln::tool
