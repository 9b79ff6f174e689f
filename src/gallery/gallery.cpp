// The gallery's entries: how `kiln dump` traces each kernel and how `kiln demo` runs it against
// a host reference on fresh random data.
#include "gallery/gallery.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "gallery/dump_id.h"
#include "gallery/kernels.h"
#include "gallery/tile_programs.h"
#include "kiln/runtime/launch.h"

namespace kiln::gallery {

namespace {

using clock_type = std::chrono::steady_clock;

// Runs `fn` twice (the first run compiles), timing the second, synchronised.
template <class Fn>
double timed(const Client& c, Fn&& fn) {
  fn();
  c.sync();
  auto t0 = clock_type::now();
  fn();
  c.sync();
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

std::mt19937_64& rng() {
  static std::mt19937_64 r(std::random_device{}());
  return r;
}

std::vector<float> random_floats(size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = d(rng());
  return v;
}

// The first index where |got - want| > tol * (1 + |want|), as a detail string; empty when none.
std::string compare(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(double(got[i]) - want[i]) <= tol * (1 + std::fabs(want[i])))) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "index %zu: got %.9g, want %.9g", i, double(got[i]), want[i]);
      return buf;
    }
  }
  return "";
}

DemoResult result(const std::string& mismatch, const std::string& what, double ms) {
  DemoResult r;
  r.ok = mismatch.empty();
  r.detail = r.ok ? what : mismatch;
  r.ms = ms;
  return r;
}

DemoResult demo_saxpy(const Client& c) {
  const size_t n = 1 << 20;
  auto xs = random_floats(n, -1, 1), ys = random_floats(n, -1, 1);
  const float a = 2.5f;
  Handle x = c.upload(xs), y = c.upload(ys);
  double ms = timed(c, [&] {
    c.write(y, ys);
    launch<Saxpy<float>>(c, CubeCount{uint32_t(n / 4 / 256)}, CubeDim{256}, 4, a, x, y);
  });
  std::vector<double> want(n);
  for (size_t i = 0; i < n; ++i) want[i] = double(a) * xs[i] + ys[i];
  return result(compare(c.read<float>(y), want, 1e-6), "1M floats, vector 4", ms);
}

DemoResult demo_add(const Client& c) {
  const size_t n = 100000;
  auto xs = random_floats(n, -1, 1), ys = random_floats(n, -1, 1);
  Handle x = c.upload(xs), y = c.upload(ys), out = c.empty<float>(n);
  uint32_t cubes = uint32_t((n + 255) / 256);
  double ms = timed(c, [&] { launch<Add>(c, CubeCount{cubes}, CubeDim{256}, 1, x, y, out, comptime(true)); });
  std::vector<double> want(n);
  for (size_t i = 0; i < n; ++i) want[i] = std::max(0.0f, xs[i] + ys[i]);
  return result(compare(c.read<float>(out), want, 0), "100000 floats, relu, checked tail", ms);
}

DemoResult demo_reduce(const Client& c) {
  const size_t n = 1000003;
  const int per_unit = 4;
  const uint32_t units = 256;
  auto xs = random_floats(n, 0, 1);
  uint32_t cubes = uint32_t((n + units * per_unit - 1) / (units * per_unit));
  Handle x = c.upload(xs), partial = c.empty<float>(cubes);
  double ms =
      timed(c, [&] { launch<ReduceSum>(c, CubeCount{cubes}, CubeDim{units}, 1, x, partial, comptime(per_unit)); });
  double got = 0, want = 0;
  for (float p : c.read<float>(partial)) got += p;
  for (float v : xs) want += v;
  std::string mismatch;
  if (std::fabs(got - want) > 1e-5 * want) mismatch = "sum " + std::to_string(got) + ", want " + std::to_string(want);
  return result(mismatch, "1000003 floats, shared-memory tree", ms);
}

DemoResult demo_histogram(const Client& c) {
  const size_t n = 1 << 20;
  std::vector<uint8_t> data(n);
  std::uniform_int_distribution<int> d(0, 255);
  for (uint8_t& b : data) b = uint8_t(d(rng()));
  Handle h = c.upload(data), bins = c.empty<uint32_t>(256);
  const std::vector<uint32_t> zero(256, 0);
  double ms = timed(c, [&] {
    c.write(bins, zero);
    launch<Histogram>(c, CubeCount{uint32_t(n / 256)}, CubeDim{256}, 1, h, bins);
  });
  std::vector<uint32_t> want(256, 0);
  for (uint8_t b : data) ++want[b];
  auto got = c.read<uint32_t>(bins);
  std::string mismatch;
  for (size_t i = 0; i < 256 && mismatch.empty(); ++i) {
    if (got[i] != want[i])
      mismatch = "bin " + std::to_string(i) + ": " + std::to_string(got[i]) + ", want " + std::to_string(want[i]);
  }
  return result(mismatch, "1M bytes into 256 bins, atomics", ms);
}

DemoResult demo_transpose(const Client& c) {
  const uint32_t rows = 1000, cols = 700;
  auto xs = random_floats(size_t(rows) * cols, -1, 1);
  Handle x = c.upload(xs), out = c.empty<float>(size_t(rows) * cols);
  double ms = timed(c, [&] {
    launch<Transpose>(c, CubeCount{(cols + 31) / 32, (rows + 31) / 32}, CubeDim{32, 32}, 1, x, out, rows, cols);
  });
  std::vector<double> want(xs.size());
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t col = 0; col < cols; ++col) want[size_t(col) * rows + r] = xs[size_t(r) * cols + col];
  }
  return result(compare(c.read<float>(out), want, 0), "1000 x 700 floats, 32 x 32 shared tiles", ms);
}

DemoResult demo_softmax(const Client& c) {
  const uint32_t rows = 512, cols = 1000;
  auto xs = random_floats(size_t(rows) * cols, -4, 4);
  Handle x = c.upload(xs), out = c.empty<float>(xs.size());
  double ms = timed(c, [&] { launch<Softmax>(c, CubeCount{rows}, CubeDim{256}, 1, x, out, cols); });
  std::vector<double> want(xs.size());
  for (uint32_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (uint32_t i = 0; i < cols; ++i) m = std::max(m, double(xs[size_t(r) * cols + i]));
    for (uint32_t i = 0; i < cols; ++i) s += std::exp(double(xs[size_t(r) * cols + i]) - m);
    for (uint32_t i = 0; i < cols; ++i) want[size_t(r) * cols + i] = std::exp(double(xs[size_t(r) * cols + i]) - m) / s;
  }
  return result(compare(c.read<float>(out), want, 1e-5), "512 rows of 1000 floats, plane reductions", ms);
}

// The tile programs: bf16 in, f32 accumulation, compared with a double reference over the bf16
// inputs (the tolerances: f32 sums of a few hundred products, and attention's bf16 output).
std::vector<bf16> random_bf16(size_t n, float lo, float hi) {
  std::vector<float> f = random_floats(n, lo, hi);
  return std::vector<bf16>(f.begin(), f.end());
}

DemoResult demo_tile_matmul(const Client& c) {
  const int64_t n = 256;
  tile::Traced t = tile_matmul_bf16(n, {128, 128, 32, 3});
  std::vector<bf16> a = random_bf16(size_t(n * n), -1, 1), b = random_bf16(size_t(n * n), -1, 1);
  Handle ha = c.upload(std::span<const bf16>(a)), hb = c.upload(std::span<const bf16>(b)),
         hc = c.empty<bf16>(size_t(n * n));
  double ms = timed(c, [&] { t.entry.launch(c, {ha, hb, hc}); });
  std::vector<double> want(size_t(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < n; ++k) {
      const double x = double(float(a[size_t(i * n + k)]));
      for (int64_t j = 0; j < n; ++j) want[size_t(i * n + j)] += x * double(float(b[size_t(k * n + j)]));
    }
  }
  std::vector<float> got;
  for (bf16 v : c.read<bf16>(hc)) got.push_back(float(v));
  return result(compare(got, want, 1.0 / 128), "256^3 bf16 on 128 x 128 blocks, three stages (tile layer)", ms);
}

DemoResult demo_flash_attention(const Client& c) {
  const int64_t heads = 2, seq = 128, dim = 64;
  tile::Traced t = tile_flash_attention(heads, seq, dim, {.exp2 = true});
  const size_t n = size_t(heads * seq * dim);
  std::vector<bf16> q = random_bf16(n, -2, 2), k = random_bf16(n, -2, 2), v = random_bf16(n, -1, 1);
  Handle hq = c.upload(std::span<const bf16>(q)), hk = c.upload(std::span<const bf16>(k)),
         hv = c.upload(std::span<const bf16>(v)), ho = c.empty<bf16>(n);
  double ms = timed(c, [&] { t.entry.launch(c, {hq, hk, hv, ho}); });
  auto at = [](const std::vector<bf16>& x, int64_t row, int64_t col) {
    return double(float(x[size_t(row * 64 + col)]));
  };
  std::vector<double> want(n);
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < seq; ++i) {
      std::vector<double> s(static_cast<size_t>(seq));
      double m = -INFINITY, total = 0;
      for (int64_t j = 0; j < seq; ++j) {
        double dot = 0;
        for (int64_t x = 0; x < dim; ++x) dot += at(q, h * seq + i, x) * at(k, h * seq + j, x);
        m = std::max(m, s[size_t(j)] = dot / std::sqrt(double(dim)));
      }
      for (double& x : s) total += (x = std::exp(x - m));
      for (int64_t x = 0; x < dim; ++x) {
        double o = 0;
        for (int64_t j = 0; j < seq; ++j) o += s[size_t(j)] * at(v, h * seq + j, x);
        want[size_t((h * seq + i) * dim + x)] = o / total;
      }
    }
  }
  std::vector<float> got;
  for (bf16 x : c.read<bf16>(ho)) got.push_back(float(x));
  return result(compare(got, want, 1.0 / 64), "2 heads of 128 x 64, bf16, exp2 form (tile layer)", ms);
}

// A tile program's kernel as a launch on `o.target` would compile it: its units, the mode.
std::function<ir::Kernel(const DumpOptions&)> tile_definer(std::function<tile::Traced()> make) {
  return [make](const DumpOptions& o) {
    tile::Traced t = make();
    ir::Kernel k = t.program->kernel();
    k.facts.cube_dim = ir::Dim3{t.program->units_for(o.target), 1, 1};
    k.facts.mode = o.mode;
    return k;
  };
}

template <KernelFunction K>
std::function<ir::Kernel(const DumpOptions&)> definer(ir::Dim3 dim, int vector,
                                                      std::map<std::string, std::string> defaults = {}) {
  return [=](const DumpOptions& o) { return define<K>(dump_id<K>(o, dim, vector, defaults)); };
}

}  // namespace

const std::vector<Entry>& entries() {
  static const std::vector<Entry> list = {
      {"saxpy", "y = a * x + y on vectors of floats (seed 01)", definer<Saxpy<float>>({256, 1, 1}, 4), demo_saxpy},
      {"add", "out = x + y with a comptime relu (seed 01)", definer<Add>({256, 1, 1}, 1, {{"relu", "false"}}),
       demo_add},
      {"reduce_sum", "sum per cube through a shared-memory tree",
       definer<ReduceSum>({256, 1, 1}, 1, {{"per_unit", "4"}}), demo_reduce},
      {"histogram", "256-bin byte histogram with atomics", definer<Histogram>({256, 1, 1}, 1), demo_histogram},
      {"transpose", "tiled transpose through shared memory", definer<Transpose>({32, 32, 1}, 1), demo_transpose},
      {"softmax", "row softmax with plane reductions", definer<Softmax>({256, 1, 1}, 1), demo_softmax},
      {"tile_matmul", "bf16 matmul on 128 x 128 blocks, K by 32 in a ring of three stages (tile layer)",
       tile_definer([] {
         return tile_matmul_bf16(256, {128, 128, 32, 3});
       }),
       demo_tile_matmul},
      {"flash_attention", "flash attention forward, bf16, FlashAttention-2's form (tile layer)",
       tile_definer([] { return tile_flash_attention(2, 128, 64, {.exp2 = true}); }), demo_flash_attention},
  };
  return list;
}

const Entry* find(std::string_view name) {
  for (const Entry& e : entries()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

}  // namespace kiln::gallery
