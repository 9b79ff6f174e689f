// Every tile op on every device against a host reference: parts of cells (store_sub), second views
// (retile), reads at computed addresses (load), casts, compares and where, math, explicit full and
// broadcast, reductions that drop a dimension, padding values other than zero at ragged edges,
// and dyn_dim extents that take the launch's grid.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kiln/runtime.h"
#include "kiln/tile.h"
#include "programs.h"

namespace kiln::tile {
namespace {

using testing::devices;

std::vector<float> draw(size_t n, uint32_t seed, float lo = -3, float hi = 3) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(g);
  return v;
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, float tol,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::abs(got[i] - want[i]), tol * std::max(1.0f, std::abs(want[i])))
        << what << " at " << i << ": " << got[i] << " vs " << want[i];
  }
}

// Padding values at ragged edges: the minimum of each 128-cell with pos_inf padding, and the
// maximum with neg_inf, over extents that end inside, at, and just past a cell.
TEST(TileOps, PaddingAtRaggedEdges) {
  for (int64_t n : {1, 7, 127, 129, 1000}) {
    int64_t cells_n = (n + 127) / 128;
    Traced t =
        trace("min_max", In<float>(cells({n}, {128}).pad(Pad::pos_inf)), In<float>(cells({n}, {128}).pad(Pad::neg_inf)),
              Out<float>(cells({cells_n * 2}, {2})), [](Param<float> lo, Param<float> hi, Param<float> out) {
                Tile<float> mn = reduce_min(load_cell(lo), {.keepdims = true});  // [1]
                Tile<float> mx = reduce_max(load_cell(hi), {.keepdims = true});
                Tile<float> pair =
                    where(full<bool>({2}, false) == full<bool>({2}, false), broadcast(mn, {2}), broadcast(mx, {2}));
                store_sub(out, broadcast(mn, {1}), {Index(0)});
                store_sub(out, broadcast(mx, {1}), {Index(1)});
                (void)pair;
              });
    for (const Device& dev : devices()) {
      Client c = dev.client();
      std::vector<float> xs = draw(size_t(n), 3);
      Handle h = c.upload(xs), o = c.upload(std::vector<float>(size_t(cells_n * 2), NAN));
      t.entry.launch(c, {h, h, o});
      std::vector<float> got = c.read<float>(o), want;
      for (int64_t cell = 0; cell < cells_n; ++cell) {
        float mn = INFINITY, mx = -INFINITY;
        for (int64_t i = cell * 128; i < std::min(n, cell * 128 + 128); ++i)
          mn = std::min(mn, xs[size_t(i)]), mx = std::max(mx, xs[size_t(i)]);
        want.push_back(mn);
        want.push_back(mx);
      }
      expect_near_all(got, want, 0, dev.name() + " n=" + std::to_string(n));
    }
  }
}

// Casts (f32 -> f16 -> f32 rounds), compares and where, sqrt/tanh/abs, a full tile widened and a
// rank-0 constant, a reduction along dimension 0 that drops it; over a dyn_dim extent of rows.
TEST(TileOps, ElementwiseCastsWhereMathAndDynDim) {
  Cells rows = cells({dyn_dim, 64}, {16, 64});
  Traced t = trace("mix", In<float>(rows), Out<float>(rows), Out<float>(cells({dyn_dim}, {64}).along({0})),
                   [](Param<float> x, Param<float> y, Param<float> colsum) {
                     Tile<float> v = load_cell(x);             // [16, 64]
                     Tile<float> h = v.to<f16>().to<float>();  // rounded to f16
                     Tile<float> w = where(v > 0.0, sqrt(abs(v)), tanh(v) * 2.0);
                     store_cell(y, w + h - v + broadcast(full<float>({1, 64}, 0.5), {16, 64}));
                     store_cell(colsum, reduce_sum(v, {.dim = 0}));  // [64]
                   });
  for (const Device& dev : devices()) {
    Client c = dev.client();
    const uint32_t blocks = 5;  // 80 rows
    std::vector<float> xs = draw(80 * 64, 9);
    Handle hx = c.upload(xs), hy = c.upload(std::vector<float>(80 * 64, NAN));
    Handle hs = c.upload(std::vector<float>(64 * blocks, NAN));
    // Both Outs follow grid axis 0 with a dyn_dim extent: the launch gives the grid, 5 blocks.
    t.entry.launch(c, {hx, hy, hs}, Grid{blocks, 1, 1});
    std::vector<float> y = c.read<float>(hy), want(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      float v = xs[i];
      float w = v > 0 ? std::sqrt(std::abs(v)) : std::tanh(v) * 2.0f;
      want[i] = w + float(f16(v)) - v + 0.5f;
    }
    expect_near_all(y, want, 2e-6f, dev.name() + " mix");
    std::vector<float> s = c.read<float>(hs);
    for (uint32_t b = 0; b < blocks; ++b) {
      for (int j = 0; j < 64; ++j) {
        float sum = 0;
        for (int i = 0; i < 16; ++i) sum += xs[size_t((b * 16 + i) * 64 + j)];
        ASSERT_NEAR(s[size_t(b * 64 + j)], sum, 1e-5f) << dev.name() << " block " << b << " column " << j;
      }
    }
  }
}

// A second view of one input (retile) and a read at a computed address (load with strides): the
// block's 32 x 32 cell through the cells, and the same elements transposed through the pointer.
TEST(TileOps, RetileAndLoadAtAnOffset) {
  Traced t = trace("views", In<float>(cells({64, 64}, {32, 32})), Shared<float>(),
                   Out<float>(cells({64, 64}, {32, 32})), [](Param<float> x, Param<float> raw, Param<float> out) {
                     Param<float> rows = retile(x, {64 * 64}, {1024});  // the same buffer as 1-D cells
                     Tile<float> flat = load_at(rows, {block_id(0) * 2 + block_id(1)});
                     Tile<float> cell = load_cell(x);
                     Index at = block_id(1) * (32 * 64) + block_id(0) * 32;  // cell (j, i), read transposed
                     Tile<float> swapped = load(raw, at, {32, 32}, {1, 64});
                     store_cell(out, cell + swapped.transpose() * 0.0 + reduce_sum(flat) * 0.0);
                   });
  for (const Device& dev : devices()) {
    Client c = dev.client();
    std::vector<float> xs = draw(64 * 64, 12);
    Handle hx = c.upload(xs), ho = c.upload(std::vector<float>(64 * 64, NAN));
    t.entry.launch(c, {hx, hx, ho});
    expect_near_all(c.read<float>(ho), xs, 0, dev.name());
  }
}

}  // namespace
}  // namespace kiln::tile
