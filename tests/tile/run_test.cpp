// Tile kernels run on every device against host references: fresh random inputs, outputs
// poisoned before the run, tolerances by element type.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kiln/runtime.h"
#include "kiln/tile.h"
#include "programs.h"

namespace kiln::tile {
namespace {

using testing::devices;

using testing::random_values;

constexpr double kPoison = 12345.0;

TEST(TileRun, VaddRaggedSizes) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (int64_t n : {1, 7, 127, 128, 129, 1000}) {
      Cells g = cells({n}, {128});
      Traced t = trace(
          "vadd", In<double>(g), In<double>(g), Out<double>(g),
          [](Param<double> a, Param<double> b, Param<double> out) { store_cell(out, load_cell(a) + load_cell(b)); });
      std::vector<double> a = random_values(size_t(n), 1), b = random_values(size_t(n), 2);
      // One element past the extent: the kernel must leave it alone.
      std::vector<double> poison(size_t(n) + 1, kPoison);
      Handle ha = c.upload(std::span<const double>(a)), hb = c.upload(std::span<const double>(b));
      Handle ho = c.upload(std::span<const double>(poison));
      t.entry.launch(c, {ha, hb, ho});
      std::vector<double> out = c.read<double>(ho);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(out[size_t(i)], a[size_t(i)] + b[size_t(i)]) << dev.name() << " n=" << n << " i=" << i;
      EXPECT_EQ(out[size_t(n)], kPoison) << dev.name() << " n=" << n;
    }
  }
}

}  // namespace
}  // namespace kiln::tile

namespace kiln::tile {
namespace {

// Relative error of a float result against a double reference, in units of the type's epsilon.
void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    double err = std::abs(got[i] - want[i]) / std::max(1.0, std::abs(want[i]));
    ASSERT_LE(err, tol) << what << " at " << i << ": " << got[i] << " vs " << want[i];
  }
}

TEST(TileRun, SoftmaxPadsNegInfAndLeavesTheTail) {
  Traced t = trace("softmax", In<double>(cells({3}, {4}).pad(Pad::neg_inf)), Out<double>(cells({3}, {4})),
                   [](Param<double> x, Param<double> out) {
                     Tile<double> v = load_cell(x);
                     Tile<double> e = exp(v - reduce_max(v));
                     store_cell(out, e / reduce_sum(e));
                   });
  for (const Device& dev : devices()) {
    Client c = dev.client();
    std::vector<double> xs = {1, 2, 3, 0}, os = {9, 9, 9, 9};
    Handle hx = c.upload(std::span<const double>(xs)), ho = c.upload(std::span<const double>(os));
    t.entry.launch(c, {hx, ho});
    std::vector<double> out = c.read<double>(ho);
    double m = 3, s = std::exp(1 - m) + std::exp(2 - m) + std::exp(3 - m);
    expect_close({out[0], out[1], out[2]}, {std::exp(1 - m) / s, std::exp(2 - m) / s, std::exp(3 - m) / s}, 4e-16,
                 dev.name());
    EXPECT_EQ(out[3], 9.0) << dev.name();
  }
}

auto row_softmax = [](Param<double> x, Param<double> out) {
  Tile<double> s = load_cell(x);
  Tile<double> p = exp(s - reduce_max(s, {.keepdims = true}));
  store_cell(out, p / reduce_sum(p, {.keepdims = true}));
};

TEST(TileRun, RowSoftmaxKeepdims) {
  for (int64_t rows : {256, 100}) {
    Cells g = cells({rows, 64}, {32, 64});
    Traced t = trace("row_softmax", In<double>(g), Out<double>(g), row_softmax);
    for (const Device& dev : devices()) {
      Client c = dev.client();
      std::vector<double> xs = random_values(size_t(rows * 64), 7);
      std::vector<double> poison(size_t(rows * 64), kPoison);
      Handle hx = c.upload(std::span<const double>(xs)), ho = c.upload(std::span<const double>(poison));
      t.entry.launch(c, {hx, ho});
      std::vector<double> out = c.read<double>(ho), want(xs.size());
      for (int64_t r = 0; r < rows; ++r) {
        double m = -INFINITY, sum = 0;
        for (int j = 0; j < 64; ++j) m = std::max(m, xs[size_t(r * 64 + j)]);
        for (int j = 0; j < 64; ++j) sum += std::exp(xs[size_t(r * 64 + j)] - m);
        for (int j = 0; j < 64; ++j) want[size_t(r * 64 + j)] = std::exp(xs[size_t(r * 64 + j)] - m) / sum;
      }
      expect_close(out, want, 1e-14, dev.name() + " rows=" + std::to_string(rows));
    }
  }
}

TEST(TileRun, ReductionsAlongEachDimension) {
  // [16, 32] cells; sums along 0 and max/min along 1, with and without keepdims.
  Cells g = cells({16, 32}, {16, 32});
  for (const Device& dev : devices()) {
    Client c = dev.client();
    std::vector<double> xs = random_values(16 * 32, 11);
    Handle hx = c.upload(std::span<const double>(xs));
    {
      Traced t =
          trace("col_sum", In<double>(g), Out<double>(cells({1, 32}, {1, 32})), [](Param<double> x, Param<double> out) {
            store_cell(out, reduce_sum(load_cell(x), {.dim = 0, .keepdims = true}));
          });
      std::vector<double> poison(32, kPoison);
      Handle ho = c.upload(std::span<const double>(poison));
      t.entry.launch(c, {hx, ho});
      std::vector<double> want(32, 0.0);
      for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 32; ++j) want[size_t(j)] += xs[size_t(i * 32 + j)];
      expect_close(c.read<double>(ho), want, 1e-14, dev.name() + " col_sum");
    }
    {
      Traced t =
          trace("row_range", In<double>(g), Out<double>(cells({16}, {16})), [](Param<double> x, Param<double> out) {
            Tile<double> v = load_cell(x);
            store_cell(out, reduce_max(v) - reduce_min(v, {.dim = 1}));
          });
      std::vector<double> poison(16, kPoison);
      Handle ho = c.upload(std::span<const double>(poison));
      t.entry.launch(c, {hx, ho});
      std::vector<double> want(16);
      for (int i = 0; i < 16; ++i) {
        double hi = -INFINITY, lo = INFINITY;
        for (int j = 0; j < 32; ++j)
          hi = std::max(hi, xs[size_t(i * 32 + j)]), lo = std::min(lo, xs[size_t(i * 32 + j)]);
        want[size_t(i)] = hi - lo;
      }
      expect_close(c.read<double>(ho), want, 0, dev.name() + " row_range");
    }
  }
}

TEST(TileRun, TransposeThroughShared) {
  auto transpose = [](Param<double> x, Param<double> out) {
    Tile<double> t = load_cell(x);
    Index at = block_id(1) * (32 * 128) + block_id(0) * 32;
    store(out, at, t, {1, 128});
  };
  Traced t = trace("transpose", In<double>(cells({128, 64}, {32, 32})), Shared<double>(), transpose);
  for (const Device& dev : devices()) {
    Client c = dev.client();
    std::vector<double> xs = random_values(128 * 64, 5);
    std::vector<double> poison(128 * 64, kPoison);
    Handle hx = c.upload(std::span<const double>(xs)), ho = c.upload(std::span<const double>(poison));
    t.entry.launch(c, {hx, ho}, Grid{4, 2, 1});
    std::vector<double> out = c.read<double>(ho), want(xs.size());
    for (int i = 0; i < 128; ++i)
      for (int j = 0; j < 64; ++j) want[size_t(j * 128 + i)] = xs[size_t(i * 64 + j)];
    expect_close(out, want, 0, dev.name());
  }
}

TEST(TileRun, MatmulOverAFreeAxis) {
  auto matmul = [](Param<double> a, Param<double> b, Param<double> c) {
    Var<double> acc = zeros(c);
    For(d_range(0, 256 / 32), [&](Index k) { acc = mma(load_at(a, {k}), load_at(b, {k}), acc); });
    store_cell(c, acc);
  };
  Traced t = trace("matmul", In<double>(cells({256, 256}, {64, 32}).along({0, free_axis})),
                   In<double>(cells({256, 256}, {32, 64}).along({free_axis, 1})),
                   Out<double>(cells({256, 256}, {64, 64})), matmul);
  for (const Device& dev : devices()) {
    Client c = dev.client();
    std::vector<double> as = random_values(256 * 256, 21, -1, 1), bs = random_values(256 * 256, 22, -1, 1);
    std::vector<double> poison(256 * 256, kPoison);
    Handle ha = c.upload(std::span<const double>(as)), hb = c.upload(std::span<const double>(bs)),
           hc = c.upload(std::span<const double>(poison));
    t.entry.launch(c, {ha, hb, hc});
    std::vector<double> out = c.read<double>(hc), want(out.size(), 0.0);
    for (int i = 0; i < 256; ++i)
      for (int k = 0; k < 256; ++k)
        for (int j = 0; j < 256; ++j) want[size_t(i * 256 + j)] += as[size_t(i * 256 + k)] * bs[size_t(k * 256 + j)];
    expect_close(out, want, 1e-13, dev.name());
  }
}

}  // namespace
}  // namespace kiln::tile

namespace kiln::tile {
namespace {

// bf16 factors, f32 accumulator: tensor cores on a GPU, exact loops on the CPU; the reference
// multiplies the bf16 values exactly in double.
TEST(TileRun, MatmulBf16IntoF32) {
  for (int64_t stages : {1, 3}) {
    Traced t = testing::matmul_bf16_program(256, stages);
    for (const Device& dev : devices()) {
      Client c = dev.client();
      std::vector<double> as = random_values(256 * 256, 31, -1, 1), bs = random_values(256 * 256, 32, -1, 1);
      std::vector<bf16> an, bn;
      for (double v : as) an.push_back(bf16(float(v)));
      for (double v : bs) bn.push_back(bf16(float(v)));
      std::vector<float> poison(256 * 256, NAN);
      Handle ha = c.upload(std::span<const bf16>(an)), hb = c.upload(std::span<const bf16>(bn));
      Handle hc = c.upload(std::span<const float>(poison));
      t.entry.launch(c, {ha, hb, hc});
      std::vector<float> out = c.read<float>(hc);
      double worst = 0;
      for (int i = 0; i < 256; ++i) {
        for (int j = 0; j < 256; ++j) {
          double want = 0, scale = 0;
          for (int k = 0; k < 256; ++k) {
            double p = double(float(an[size_t(i * 256 + k)])) * double(float(bn[size_t(k * 256 + j)]));
            want += p;
            scale += std::abs(p);
          }
          double e = std::abs(double(out[size_t(i * 256 + j)]) - want) / scale;
          worst = std::isnan(e) ? INFINITY : std::max(worst, e);  // a NaN (the poison) fails
        }
      }
      // f32 accumulation over 256 products: well under 256 ulps of the sum of magnitudes.
      EXPECT_LT(worst, 1e-5) << dev.name() << " stages=" << stages;
    }
  }
}

}  // namespace
}  // namespace kiln::tile

namespace kiln::tile {
namespace {

// A kernel with products numbers its blocks in groups of 8 rows (decision 020): on a grid of 11 x 3
// blocks the last group is ragged (3 rows), so every block must still find its own cell; grids
// narrower than a group, and of one row or column, too. Both in f64 (exact loops everywhere) and
// bf16 (tensor cores, a pipelined ring whose memory the output relayout reuses, on a GPU).
template <class T, class Acc>
void ragged_grid_matmul(int64_t gx, int64_t gy, int64_t tile_mn, int64_t tile_k, int64_t stages, double tolerance) {
  const int64_t m = gx * tile_mn, n = gy * tile_mn, k = 4 * tile_k;
  Traced t = trace("ragged_grid_matmul", In<T>(cells({m, k}, {tile_mn, tile_k}).along({0, free_axis})),
                   In<T>(cells({k, n}, {tile_k, tile_mn}).along({free_axis, 1})),
                   Out<Acc>(cells({m, n}, {tile_mn, tile_mn})), [&](Param<T> a, Param<T> b, Param<Acc> c) {
                     tile::Var<Acc> acc = zeros(c);
                     For(d_range(0, 4).prefetch_stages(stages),
                         [&](Index i) { acc = mma(load_at(a, {i}), load_at(b, {i}), acc); });
                     store_cell(c, acc);
                   });
  for (const Device& dev : devices()) {
    Client c = dev.client();
    std::vector<double> as = random_values(size_t(m * k), 41, -1, 1), bs = random_values(size_t(k * n), 42, -1, 1);
    std::vector<T> an, bn;
    for (double v : as) an.push_back(T(float(v)));
    for (double v : bs) bn.push_back(T(float(v)));
    std::vector<Acc> poison(size_t(m * n), Acc(NAN));
    Handle ha = c.upload(std::span<const T>(an)), hb = c.upload(std::span<const T>(bn)),
           hc = c.upload(std::span<const Acc>(poison));
    t.entry.launch(c, {ha, hb, hc});
    std::vector<Acc> out = c.read<Acc>(hc);
    double worst = 0;
    int64_t unwritten = 0;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double want = 0, scale = 0;
        for (int64_t x = 0; x < k; ++x) {
          double p = double(float(an[size_t(i * k + x)])) * double(float(bn[size_t(x * n + j)]));
          want += p;
          scale += std::abs(p);
        }
        double e = std::abs(double(out[size_t(i * n + j)]) - want) / scale;
        if (std::isnan(e)) ++unwritten;  // the poison left in place: a cell no block wrote
        else worst = std::max(worst, e);
      }
    }
    EXPECT_EQ(unwritten, 0) << dev.name() << " grid " << gx << " x " << gy;
    EXPECT_LE(worst, tolerance) << dev.name() << " grid " << gx << " x " << gy;
  }
}

// prefetch_stages pipelines every tile load of the loop, not only a product's factors: column sums
// of 2x and sums of v, 16 rows a step, over 1001 rows (the last step ragged, its copies masked to
// zeros) and over 64, at 1 (loaded each iteration) to 4 stages. Each stage count adds the same
// values in the same order, so the results are the same bits.
TEST(TileRun, PrefetchPipelinesLoadsThatNoProductReads) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (int64_t rows : {1001, 64}) {
      std::vector<double> xs = random_values(size_t(rows * 64), 61, -2, 2), vs = random_values(size_t(rows), 62, -2, 2);
      std::vector<float> x(xs.begin(), xs.end()), v(vs.begin(), vs.end());
      std::vector<double> want_cols(64, 0), want_v(16, 0);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < 64; ++j) want_cols[size_t(j)] += 2.0 * double(x[size_t(r * 64 + j)]);
        want_v[size_t(r % 16)] += double(v[size_t(r)]);
      }
      std::vector<float> first_cols, first_v;
      for (int64_t stages : {1, 2, 3, 4}) {
        Traced t = testing::streamed_sums_program(rows, stages);
        Handle hx = c.upload(std::span<const float>(x)), hv = c.upload(std::span<const float>(v));
        std::vector<float> poison(64, float(kPoison));
        Handle hc = c.upload(std::span<const float>(poison)), hs = c.upload(std::span<const float>(poison.data(), 16));
        t.entry.launch(c, {hx, hv, hc, hs});
        std::vector<float> cols = c.read<float>(hc), sums = c.read<float>(hs);
        const std::string what = dev.name() + " rows " + std::to_string(rows) + " stages " + std::to_string(stages);
        for (size_t j = 0; j < 64; ++j) EXPECT_NEAR(cols[j], want_cols[j], 1e-3) << what << " column " << j;
        for (size_t j = 0; j < 16; ++j) EXPECT_NEAR(sums[j], want_v[j], 1e-3) << what << " v sum " << j;
        if (stages == 1) {
          first_cols = cols;
          first_v = sums;
        } else {
          EXPECT_EQ(cols, first_cols) << what;
          EXPECT_EQ(sums, first_v) << what;
        }
      }
    }
  }
}

// A product's factor from before its loop (q) is written into shared memory once and read there
// every iteration: the product over 4 steps (2 stages), and the loop inside another (3 stages,
// twice), against the host's sums of q x k_j in double.
TEST(TileRun, AFactorFromBeforeTheLoopStaysResident) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (auto [steps, stages, nested] : {std::tuple{4, 2, false}, std::tuple{3, 3, true}, std::tuple{5, 1, false}}) {
      std::vector<double> qs = random_values(64 * 64, 71, -1, 1),
                          ks = random_values(size_t(steps) * 64 * 64, 72, -1, 1);
      std::vector<bf16> q, k;
      for (double v : qs) q.push_back(bf16(float(v)));
      for (double v : ks) k.push_back(bf16(float(v)));
      Traced t = testing::resident_factor_program(steps, stages, nested);
      std::vector<float> poison(64 * 64, float(kPoison));
      Handle hq = c.upload(std::span<const bf16>(q)), hk = c.upload(std::span<const bf16>(k)),
             hc = c.upload(std::span<const float>(poison));
      t.entry.launch(c, {hq, hk, hc});
      std::vector<float> out = c.read<float>(hc);
      double worst = 0;
      for (int64_t i = 0; i < 64; ++i) {
        for (int64_t j = 0; j < 64; ++j) {
          double want = 0, scale = 0;
          for (int64_t s = 0; s < steps; ++s) {
            for (int64_t x = 0; x < 64; ++x) {
              const double p = double(float(q[size_t(i * 64 + x)])) * double(float(k[size_t((s * 64 + x) * 64 + j)]));
              want += p;
              scale += std::abs(p);
            }
          }
          if (nested) want *= 2, scale *= 2;
          worst = std::max(worst, std::abs(double(out[size_t(i * 64 + j)]) - want) / scale);
        }
      }
      EXPECT_LE(worst, 1e-5) << dev.name() << " steps " << steps << " stages " << stages << " nested " << nested;
    }
  }
}

// A product whose a is another product's result (relu, then bf16) takes a from registers on tensor
// cores (place_products' a_fragments; mma.sync.a_frag): h = relu(x w1) and y = h w2 over 64 rows,
// with w2 as rows and as the transposed view of its stored transpose (b as columns), and with the
// pair inside a loop that carries y (attention's shape: a product reduced along rows, its result
// the next product's a). The reference rounds h to bf16 as the kernel does; an element of h whose
// f32 sum rounds the other way moves y by at most 2^-8 of its scale.
TEST(TileRun, AProductOfAProductReadsItsAFromRegisters) {
  using testing::kChainHidden, testing::kChainIn, testing::kChainOut, testing::kChainRows, testing::kChainSteps;
  constexpr int64_t kRows = kChainRows, kIn = kChainIn, kHidden = kChainHidden, kOut = kChainOut, kSteps = kChainSteps;
  for (const Device& dev : devices()) {
    Client c = dev.client();
    for (auto [transposed, looped] :
         {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}, std::pair{true, true}}) {
      const int64_t steps = looped ? kSteps : 1;
      auto draw = [](size_t n, uint32_t seed) {
        std::vector<bf16> v;
        for (double x : random_values(n, seed, -1, 1)) v.push_back(bf16(float(x)));
        return v;
      };
      std::vector<bf16> x = draw(kRows * kIn, 81), w1 = draw(size_t(steps * kIn * kHidden), 82),
                        w2 = draw(size_t(steps * kHidden * kOut), 83);
      // w2 as the kernel reads it: (k, j) of step s is w2[(s * kHidden + k) * kOut + j], each step's
      // block stored transposed when asked.
      std::vector<bf16> w2_stored = w2;
      for (int64_t s = 0; s < steps && transposed; ++s) {
        for (int64_t k = 0; k < kHidden; ++k)
          for (int64_t j = 0; j < kOut; ++j)
            w2_stored[size_t((s * kOut + j) * kHidden + k)] = w2[size_t((s * kHidden + k) * kOut + j)];
      }
      Traced t = testing::chained_products_program(transposed, looped);
      std::vector<float> poison_y(kRows * kOut, NAN), poison_rows(kRows, NAN);
      Handle hx = c.upload(std::span<const bf16>(x)), hw1 = c.upload(std::span<const bf16>(w1)),
             hw2 = c.upload(std::span<const bf16>(w2_stored)), hy = c.upload(std::span<const float>(poison_y)),
             hr = c.upload(std::span<const float>(poison_rows));
      t.entry.launch(c, {hx, hw1, hw2, hy, hr});
      std::vector<float> y = c.read<float>(hy), rows = c.read<float>(hr);
      double worst = 0, worst_row = 0;
      for (int64_t i = 0; i < kRows; ++i) {
        std::vector<double> want(kOut, 0.0), scale(kOut, 0.0);
        double row_sum = 0, row_scale = 0;
        for (int64_t s = 0; s < steps; ++s) {
          for (int64_t h = 0; h < kHidden; ++h) {
            double v = 0, v_scale = 0;
            for (int64_t k = 0; k < kIn; ++k) {
              const double p =
                  double(float(x[size_t(i * kIn + k)])) * double(float(w1[size_t((s * kIn + k) * kHidden + h)]));
              v += p;
              v_scale += std::abs(p);
            }
            v = std::max(v, 0.0);
            row_sum += v;
            row_scale += v_scale;
            const double hb = double(float(bf16(float(v))));
            for (int64_t j = 0; j < kOut; ++j) {
              const double w = double(float(w2[size_t((s * kHidden + h) * kOut + j)]));
              want[size_t(j)] += hb * w;
              scale[size_t(j)] += std::abs(hb * w);
            }
          }
        }
        for (int64_t j = 0; j < kOut; ++j) {
          const double e = std::abs(double(y[size_t(i * kOut + j)]) - want[size_t(j)]) / scale[size_t(j)];
          worst = std::isnan(e) ? INFINITY : std::max(worst, e);
        }
        const double e = std::abs(double(rows[size_t(i)]) - row_sum) / row_scale;
        worst_row = std::isnan(e) ? INFINITY : std::max(worst_row, e);
      }
      const std::string what = dev.name() + (transposed ? " w2 transposed" : "") + (looped ? " looped" : "");
      EXPECT_LE(worst, 1.0 / 256) << what;
      EXPECT_LE(worst_row, 1e-5) << what;
    }
  }
}

// What pipeline_loops must leave alone or take apart, each against a host reference on every
// device: a ring load transposed inside an inner loop (its product reads the slot as columns and
// the transpose goes), a view made inside the loop (a retile there: loaded each iteration), and an
// f32 product whose rows of 2 floats are not whole 16-byte chunks (its ring pads them to 4, and
// the exact loops read them there).
TEST(TileRun, PipelinedLoopsWithNestedUsesInnerViewsAndNarrowRows) {
  for (const Device& dev : devices()) {
    Client c = dev.client();
    {  // acc = sum over 4 steps of 2 * x_i w_i^T, the product inside an inner loop of 2 trips
      Traced t = trace("nested_transpose", In<bf16>(cells({256, 64}, {64, 64}).along({free_axis, 1})),
                       In<bf16>(cells({256, 64}, {64, 64}).along({free_axis, 1})),
                       Out<float>(cells({64, 64}, {64, 64})), [](Param<bf16> x, Param<bf16> w, Param<float> out) {
                         Var<float> acc = zeros(out);
                         For(d_range(0, 4).prefetch_stages(2), [&](Index i) {
                           Tile<bf16> xt = load_at(x, {i, Index(0)}), wt = load_at(w, {i, Index(0)});
                           For(d_range(0, 2), [&](Index) { acc = mma(xt, wt.transpose(), acc.get()); });
                         });
                         store_cell(out, acc);
                       });
      std::vector<bf16> x, w;
      for (double v : random_values(256 * 64, 91, -1, 1)) x.push_back(bf16(float(v)));
      for (double v : random_values(256 * 64, 92, -1, 1)) w.push_back(bf16(float(v)));
      std::vector<float> poison(64 * 64, NAN);
      Handle hx = c.upload(std::span<const bf16>(x)), hw = c.upload(std::span<const bf16>(w)),
             ho = c.upload(std::span<const float>(poison));
      t.entry.launch(c, {hx, hw, ho});
      std::vector<float> out = c.read<float>(ho);
      double worst = 0;
      for (int64_t r = 0; r < 64; ++r) {
        for (int64_t col = 0; col < 64; ++col) {
          double want = 0, scale = 0;
          for (int64_t i = 0; i < 4; ++i) {
            for (int64_t k = 0; k < 64; ++k) {
              const double p =
                  double(float(x[size_t((i * 64 + r) * 64 + k)])) * double(float(w[size_t((i * 64 + col) * 64 + k)]));
              want += 2 * p;
              scale += 2 * std::abs(p);
            }
          }
          const double e = std::abs(double(out[size_t(r * 64 + col)]) - want) / scale;
          worst = std::isnan(e) ? INFINITY : std::max(worst, e);
        }
      }
      EXPECT_LE(worst, 1e-5) << dev.name() << " nested transpose";
    }
    {  // sums of a view retiled inside the loop: 4 steps of 16 of 64 floats
      Traced t = trace("inner_view", In<float>(cells({64}, {64})), Out<float>(cells({16}, {16})),
                       [](Param<float> v, Param<float> out) {
                         Var<float> acc = zeros(out);
                         For(d_range(0, 4).prefetch_stages(2),
                             [&](Index i) { acc = acc.get() + load_at(retile(v, {64}, {16}), {i}); });
                         store_cell(out, acc);
                       });
      std::vector<double> vs = random_values(64, 93);
      std::vector<float> v(vs.begin(), vs.end()), poison(16, NAN);
      Handle hv = c.upload(std::span<const float>(v)), ho = c.upload(std::span<const float>(poison));
      t.entry.launch(c, {hv, ho});
      std::vector<float> out = c.read<float>(ho);
      for (int64_t j = 0; j < 16; ++j) {
        const double want = double(v[size_t(j)]) + v[size_t(16 + j)] + v[size_t(32 + j)] + v[size_t(48 + j)];
        EXPECT_NEAR(out[size_t(j)], want, 1e-5 * (1 + std::abs(want))) << dev.name() << " inner view, column " << j;
      }
    }
    {  // f32 [16, 16] x [16, 2] over 4 steps of K, b's rows of 2 floats in a ring of rows of 4
      Traced t = trace("narrow_rows", In<float>(cells({16, 64}, {16, 16}).along({0, free_axis})),
                       In<float>(cells({64, 2}, {16, 2}).along({free_axis, 1})), Out<float>(cells({16, 2}, {16, 2})),
                       [](Param<float> a, Param<float> b, Param<float> out) {
                         Var<float> acc = zeros(out);
                         For(d_range(0, 4).prefetch_stages(2),
                             [&](Index k) { acc = mma(load_at(a, {k}), load_at(b, {k}), acc.get()); });
                         store_cell(out, acc);
                       });
      std::vector<double> as = random_values(16 * 64, 94, -1, 1), bs = random_values(64 * 2, 95, -1, 1);
      std::vector<float> a(as.begin(), as.end()), b(bs.begin(), bs.end()), poison(32, NAN);
      Handle ha = c.upload(std::span<const float>(a)), hb = c.upload(std::span<const float>(b)),
             ho = c.upload(std::span<const float>(poison));
      t.entry.launch(c, {ha, hb, ho});
      std::vector<float> out = c.read<float>(ho);
      for (int64_t r = 0; r < 16; ++r) {
        for (int64_t col = 0; col < 2; ++col) {
          double want = 0;
          for (int64_t k = 0; k < 64; ++k) want += double(a[size_t(r * 64 + k)]) * b[size_t(k * 2 + col)];
          EXPECT_NEAR(out[size_t(r * 2 + col)], want, 1e-4) << dev.name() << " narrow rows " << r << ", " << col;
        }
      }
    }
  }
}

TEST(TileRun, MatmulOnARaggedGridOfBlockGroups) {
  for (auto [gx, gy] : {std::pair<int64_t, int64_t>{11, 3}, {3, 5}, {9, 1}, {1, 4}, {17, 2}}) {
    ragged_grid_matmul<double, double>(gx, gy, 32, 16, 1, 1e-14);
  }
  ragged_grid_matmul<bf16, float>(11, 3, 64, 32, 3, 1e-5);
}

}  // namespace
}  // namespace kiln::tile
