// kiln bench's tile group: tile kernels (seed 04's) at the sizes the peers run. Row softmax
// 32768 x 4096 f32 against Triton's fused softmax and PyTorch's; matmul bf16 4096^3 and 8192^3
// against cuBLAS through PyTorch; a prefetch_stages sweep of the matmul; flash attention forward
// bf16 (b 4, h 16, s 4096, d 128) against SDPA. Every figure is checked against a host
// reference on a sample before it is reported.
#include <cmath>
#include <cstdio>
#include <string>

#include "bench_rows.h"
#include "kiln/tile.h"
#include "tile_programs.h"

namespace kiln::tool {

namespace {

using namespace kiln::tile;

// One row of 4096 per block.
void row_softmax(Param<float> x, Param<float> out) {
  Tile<float> s = load_cell(x);
  Tile<float> p = exp(s - reduce_max(s, {.keepdims = true}));
  store_cell(out, p / reduce_sum(p, {.keepdims = true}));
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

void matmuls(const Client& c, bool gpu, const std::map<std::string, double>& peer, std::vector<Row>& rows) {
  for (int64_t n : gpu ? std::vector<int64_t>{4096, 8192} : std::vector<int64_t>{256}) {
    std::vector<float> af = random_floats(size_t(n * n), 11), bf = random_floats(size_t(n * n), 12);
    std::vector<bf16> a(af.begin(), af.end()), b(bf.begin(), bf.end());
    Handle ha = c.upload(std::span<const bf16>(a)), hb = c.upload(std::span<const bf16>(b)),
           hc = c.empty<bf16>(size_t(n * n));
    // The prefetch_stages sweep (1 to 4) at 4096 (and on the CPU), with K steps of 32 and 64 on
    // 128 x 128 blocks, then the 128 x 256 and 256 x 128 blocks; the four best of those at 8192.
    // The best of each size is its headline, as autotune would pick.
    std::vector<gallery::MatmulBlocks> configs = {
        {128, 128, 32, 1}, {128, 128, 32, 2}, {128, 128, 32, 3}, {128, 128, 32, 4}, {128, 128, 64, 1},
        {128, 128, 64, 2}, {128, 128, 64, 3}, {128, 128, 64, 4}, {128, 256, 64, 3}, {256, 128, 64, 3}};
    if (n == 8192) configs = {{128, 128, 64, 3}, {128, 256, 64, 3}, {256, 128, 64, 3}, {256, 128, 32, 4}};
    if (!gpu) configs = {{128, 128, 32, 1}, {128, 128, 64, 2}, {128, 256, 32, 3}};
    size_t first_row = rows.size();
    double best = 0;
    size_t best_row = 0;
    for (gallery::MatmulBlocks shape : configs) {
      Traced t = gallery::tile_matmul_bf16(n, shape);
      auto run = [&] { t.entry.launch(c, {ha, hb, hc}); };
      run();
      double err = matmul_error(a, b, c.read<bf16>(hc), n, 64);
      double ms = median_ms(c, 3, gpu ? 10 : 1, run);
      double tflops = 2.0 * double(n) * double(n) * double(n) / ms / 1e9;
      std::string what = "tile matmul bf16 " + std::to_string(n) + "^3, " + std::to_string(shape.bm) + " x " +
                         std::to_string(shape.bn) + " blocks, k step " + std::to_string(shape.bk) +
                         ", prefetch_stages " + std::to_string(shape.stages);
      if (tflops > best) best = tflops, best_row = rows.size();
      rows.push_back({what, "TFLOP/s", tflops, "cublas", peer_of(peer, "matmul_bf16_" + std::to_string(n) + "_TFLOPs"),
                      true, NAN});
      rows.push_back({what + ", max rel. error (64 samples)", "", err, "", NAN, false, 1e-2});
    }
    if (rows.size() > first_row) rows[best_row].target = 0.5;
  }
}

void attention(const Client& c, bool gpu, const std::map<std::string, double>& peer, std::vector<Row>& rows,
               gallery::AttentionForm f) {
  const int64_t b = gpu ? 4 : 1, h = gpu ? 16 : 2, seq = gpu ? 4096 : 128, dim = 128;
  size_t n = size_t(b * h * seq * dim);
  auto draw = [&](uint64_t seed) {
    std::vector<float> f = random_floats(n, seed);
    return std::vector<bf16>(f.begin(), f.end());
  };
  std::vector<bf16> q = draw(21), k = draw(22), v = draw(23);
  Handle hq = c.upload(std::span<const bf16>(q)), hk = c.upload(std::span<const bf16>(k)),
         hv = c.upload(std::span<const bf16>(v));
  Handle ho = c.empty<bf16>(n);
  Traced t = gallery::tile_flash_attention(b * h, seq, dim, f);
  auto run = [&] { t.entry.launch(c, {hq, hk, hv, ho}); };
  run();
  // A few query rows of the first and last head against float64.
  std::vector<bf16> got = c.read<bf16>(ho);
  double worst = 0;
  for (int64_t head : {int64_t(0), b * h - 1}) {
    for (int64_t i : {int64_t(0), seq / 3, seq - 1}) {
      const int64_t row = head * seq + i;
      std::vector<double> s(static_cast<size_t>(seq));
      double m = -INFINITY, total = 0;
      for (int64_t j = 0; j < seq; ++j) {
        double dot = 0;
        for (int64_t x = 0; x < dim; ++x)
          dot += double(float(q[size_t(row * dim + x)])) * double(float(k[size_t((head * seq + j) * dim + x)]));
        s[size_t(j)] = dot / std::sqrt(double(dim));
        m = std::max(m, s[size_t(j)]);
      }
      for (double& x : s) total += (x = std::exp(x - m));
      for (int64_t x = 0; x < dim; ++x) {
        double o = 0;
        for (int64_t j = 0; j < seq; ++j) o += s[size_t(j)] * double(float(v[size_t((head * seq + j) * dim + x)]));
        worst = std::max(worst, std::abs(double(float(got[size_t(row * dim + x)])) - o / total));
      }
    }
  }
  double ms = median_ms(c, 3, gpu ? 5 : 1, run);
  double tflops = 4.0 * double(b * h) * double(seq) * double(seq) * double(dim) / ms / 1e9;
  std::vector<std::string> parts;
  if (f.exp2) parts.push_back("exp2, fast math");
  if (f.block_q != 64 || f.block_k != 64)
    parts.push_back(std::to_string(f.block_q) + " x " + std::to_string(f.block_k) + " blocks");
  std::string form;
  for (const std::string& p : parts) form += (form.empty() ? " (" : ", ") + p;
  if (!form.empty()) form += ")";
  std::string what = "tile flash attention fwd bf16" + form + ", b " + std::to_string(b) + " h " + std::to_string(h) +
                     " s " + std::to_string(seq) + " d " + std::to_string(dim);
  rows.push_back({what, "TFLOP/s", tflops, "sdpa", peer_of(peer, "sdpa_bf16_causal0_TFLOPs"), true, NAN});
  rows.push_back({"tile flash attention" + form + ", max abs error (6 rows)", "", worst, "", NAN, false, 2e-2});
}

}  // namespace

void tile_benchmarks(const Client& c, bool gpu, const std::map<std::string, double>& peer, std::vector<Row>& rows) {
  softmax_rows(c, gpu, peer, rows);
  matmuls(c, gpu, peer, rows);
  attention(c, gpu, peer, rows, {});
  attention(c, gpu, peer, rows, {.exp2 = true});
  // FlashAttention-2's blocks: 128 queries (32 rows a plane) over 32 keys a step, and over 64.
  attention(c, gpu, peer, rows, {.exp2 = true, .block_q = 128, .block_k = 32});
  attention(c, gpu, peer, rows, {.exp2 = true, .block_q = 128, .block_k = 64});
}

}  // namespace kiln::tool
