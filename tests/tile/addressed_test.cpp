// Tile accesses at computed addresses on Shared parameters, on every device: loads and stores
// bounded by an extent, atomics at an offset with strides and at the offsets a tile holds, and the
// plain scatter. Inputs are drawn fresh (the seed is in each failure's message), outputs poisoned,
// and integer results compared exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "kiln/runtime.h"
#include "kiln/tile.h"
#include "programs.h"

namespace kiln::tile {
namespace {

using testing::devices;

constexpr double kPoison = 12345.0;

uint32_t fresh_seed() { return std::random_device{}(); }

template <class T>
std::vector<T> random_ints(size_t n, uint32_t seed, int64_t lo, int64_t hi) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int64_t> u(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = T(u(g));
  return v;
}

// The transpose of docs/tile.md on a ragged extent: x is 100 x 70 in cells of 32 x 32 (a 4 x 3
// grid whose last row and column of cells are partial). Each block writes its tile transposed into
// the 70 x 100 `out`, bounded by cell_extent(x): without the extent the ragged cells would write
// past row 70 and column 100, into the poisoned elements beyond the output.
TEST(TileAddressed, RaggedTransposeStoresOnlyInsideTheExtent) {
  const int64_t rows = 100, cols = 70;
  Traced t = trace("transpose", In<double>(cells({rows, cols}, {32, 32})), Shared<double>(),
                   [](Param<double> x, Param<double> out) {
                     Index at = block_id(1) * (32 * 100) + block_id(0) * 32;
                     store(out, at, load_cell(x), {1, 100}, cell_extent(x));
                   });
  for (const Device& dev : devices()) {
    Client c = dev.client();
    const uint32_t seed = fresh_seed();
    std::vector<double> xs = testing::random_values(size_t(rows * cols), seed);
    // Room for every element a whole-tile store would reach, all poisoned.
    std::vector<double> poison(size_t(4 * 32 * 3 * 32), kPoison);
    Handle hx = c.upload(std::span<const double>(xs)), ho = c.upload(std::span<const double>(poison));
    t.entry.launch(c, {hx, ho}, Grid{4, 3, 1});
    std::vector<double> out = c.read<double>(ho), want = poison;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) want[size_t(j * rows + i)] = xs[size_t(i * cols + j)];
    for (size_t k = 0; k < out.size(); ++k) ASSERT_EQ(out[k], want[k]) << dev.name() << " seed " << seed << " at " << k;
  }
}

// The same transpose as docs/tile.md's second form: an Out of the transposed cells, each block
// reading the cell it needs with load_at. Out cells are bounded by their extent, so the ragged
// cells need no extent here.
TEST(TileAddressed, RaggedTransposeThroughLoadAt) {
  const int64_t rows = 100, cols = 70;
  Traced t = trace("transpose_at", In<double>(cells({rows, cols}, {32, 32}).along({free_axis, free_axis})),
                   Out<double>(cells({cols, rows}, {32, 32})), [](Param<double> x, Param<double> out) {
                     store_cell(out, load_at(x, {block_id(1), block_id(0)}).transpose());
                   });
  for (const Device& dev : devices()) {
    Client c = dev.client();
    const uint32_t seed = fresh_seed();
    std::vector<double> xs = testing::random_values(size_t(rows * cols), seed);
    std::vector<double> poison(size_t(rows * cols) + 1, kPoison);
    Handle hx = c.upload(std::span<const double>(xs)), ho = c.upload(std::span<const double>(poison));
    t.entry.launch(c, {hx, ho});
    std::vector<double> out = c.read<double>(ho), want = poison;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) want[size_t(j * rows + i)] = xs[size_t(i * cols + j)];
    for (size_t k = 0; k < out.size(); ++k) ASSERT_EQ(out[k], want[k]) << dev.name() << " seed " << seed << " at " << k;
  }
}

// load with an extent: the lanes past it read nothing and hold the padding, so a ragged row's max
// (neg_inf padding) and sum (zero padding) see only its elements. The Shared input ends where the
// extent does: a lane that read past it would be an out-of-bounds access in checked mode.
constexpr int32_t kLoadEnd = 77, kLoadFrom = 5;

TEST(TileAddressed, BoundedLoadsReadOnlyTheExtentAndPad) {
  const int32_t n = kLoadEnd, from = kLoadFrom;
  Traced t = trace("bounded", Shared<float>(), Out<float>(cells({1}, {1})), Out<float>(cells({1}, {1})),
                   [](Param<float> x, Param<float> hi, Param<float> sum) {
                     Index remain = Index(kLoadEnd) - Index(kLoadFrom);
                     Tile<float> padded = load(x, Index(kLoadFrom), {128}, {}, {remain}, Pad::neg_inf);
                     Tile<float> zeroed = load(x, Index(kLoadFrom), {128}, {}, {remain});
                     store_cell(hi, reduce_max(padded, {.dim = 0, .keepdims = true}));
                     store_cell(sum, reduce_sum(zeroed, {.dim = 0, .keepdims = true}));
                   });
  for (const Device& dev : devices()) {
    Client c = dev.client();
    const uint32_t seed = fresh_seed();
    // All below zero: a max that saw a zero-padded lane would answer 0.
    std::vector<double> drawn = testing::random_values(size_t(n), seed, -8, -1);
    std::vector<float> xs(drawn.begin(), drawn.end());
    Handle hx = c.upload(std::span<const float>(xs));
    Handle hh = c.upload(std::vector<float>{float(kPoison)}), hs = c.upload(std::vector<float>{float(kPoison)});
    t.entry.launch(c, {hx, hh, hs});
    float want_hi = *std::max_element(xs.begin() + from, xs.end());
    double want_sum = 0;
    for (int32_t i = from; i < n; ++i) want_sum += xs[size_t(i)];
    EXPECT_EQ(c.read<float>(hh)[0], want_hi) << dev.name() << " seed " << seed;
    EXPECT_NEAR(c.read<float>(hs)[0], want_sum, 1e-5 * (std::abs(want_sum) + 72)) << dev.name() << " seed " << seed;
  }
}

// A histogram: each block scatters its cell of bin numbers, adding one per element, so lanes of one
// tile (and of several blocks) meet in a bin. Counts are exact; 1000 values in cells of 256 leave a
// ragged last cell, whose lanes past the extent must add nothing.
TEST(TileAddressed, ScatterAddCountsAHistogram) {
  const int64_t n = 1000;
  const int32_t bins = 37;
  Traced t = trace("histogram", In<int32_t>(cells({n}, {256})), Shared<int32_t>(),
                   [](Param<int32_t> bin, Param<int32_t> hist) {
                     atomic_add(hist, load_cell(bin), full<int32_t>({256}, 1), cell_extent(bin));
                   });
  for (const Device& dev : devices()) {
    Client c = dev.client();
    const uint32_t seed = fresh_seed();
    std::vector<int32_t> b = random_ints<int32_t>(size_t(n), seed, 0, bins - 1);
    // Counts start at 1000 + bin, not zero: the kernel adds to what is there.
    std::vector<int32_t> start(static_cast<size_t>(bins));
    for (int32_t i = 0; i < bins; ++i) start[size_t(i)] = 1000 + i;
    Handle hb = c.upload(b), hh = c.upload(start);
    t.entry.launch(c, {hb, hh}, Grid{4, 1, 1});
    std::vector<int32_t> want = start;
    for (int32_t x : b) ++want[size_t(x)];
    EXPECT_EQ(c.read<int32_t>(hh), want) << dev.name() << " seed " << seed;
  }
}

// atomic_max and atomic_min at the offsets a tile holds, on u32 values past 2^31 (an unsigned
// comparison: a signed one would order them below the small ones) and on negative i32 values.
TEST(TileAddressed, ScatterMaxAndMinCompareByTheElementType) {
  const int64_t n = 512;
  const int32_t slots = 16;
  Traced t = trace("extremes", In<int32_t>(cells({n}, {128})), In<uint32_t>(cells({n}, {128})),
                   In<int32_t>(cells({n}, {128})), Shared<uint32_t>(), Shared<int32_t>(),
                   [](Param<int32_t> at, Param<uint32_t> u, Param<int32_t> s, Param<uint32_t> hi, Param<int32_t> lo) {
                     Tile<int32_t> where = load_cell(at);
                     atomic_max(hi, where, load_cell(u));
                     atomic_min(lo, where, load_cell(s));
                   });
  for (const Device& dev : devices()) {
    Client c = dev.client();
    const uint32_t seed = fresh_seed();
    std::vector<int32_t> at = random_ints<int32_t>(size_t(n), seed, 0, slots - 1);
    std::vector<uint32_t> u = random_ints<uint32_t>(size_t(n), seed + 1, 0, std::numeric_limits<uint32_t>::max());
    std::vector<int32_t> s = random_ints<int32_t>(size_t(n), seed + 2, std::numeric_limits<int32_t>::min(), 1000);
    std::vector<uint32_t> hi0(size_t(slots), 7u);
    std::vector<int32_t> lo0(size_t(slots), 999);
    Handle ha = c.upload(at), hu = c.upload(u), hs = c.upload(s), hh = c.upload(hi0), hl = c.upload(lo0);
    t.entry.launch(c, {ha, hu, hs, hh, hl}, Grid{4, 1, 1});
    std::vector<uint32_t> want_hi = hi0;
    std::vector<int32_t> want_lo = lo0;
    for (size_t i = 0; i < size_t(n); ++i) {
      want_hi[size_t(at[i])] = std::max(want_hi[size_t(at[i])], u[i]);
      want_lo[size_t(at[i])] = std::min(want_lo[size_t(at[i])], s[i]);
    }
    EXPECT_EQ(c.read<uint32_t>(hh), want_hi) << dev.name() << " seed " << seed;
    EXPECT_EQ(c.read<int32_t>(hl), want_lo) << dev.name() << " seed " << seed;
  }
}

// atomic_add at an offset with strides: a stride of 0 over the rows sends every row of a block's
// tile to one row of `sums`, so 96 x 40 i64 values in cells of 32 x 8 sum by column. The tile
// meets itself (32 rows into one slot each) and other blocks (3 row blocks) there; the extent
// keeps the ragged last column cell from adding past column 40.
TEST(TileAddressed, AtomicAddAtAnOffsetSumsColumns) {
  const int64_t rows = 96, cols = 40;
  Traced t = trace("col_sums", In<int64_t>(cells({rows, cols}, {32, 16})), Shared<int64_t>(),
                   [](Param<int64_t> x, Param<int64_t> sums) {
                     atomic_add(sums, block_id(1) * 16, load_cell(x), {0, 1}, cell_extent(x));
                   });
  for (const Device& dev : devices()) {
    Client c = dev.client();
    const uint32_t seed = fresh_seed();
    std::vector<int64_t> xs = random_ints<int64_t>(size_t(rows * cols), seed, -(int64_t(1) << 40), int64_t(1) << 40);
    std::vector<int64_t> start = random_ints<int64_t>(size_t(cols), seed + 1, -1000, 1000);
    // Poison past the 40 sums, where the ragged column cell's masked lanes would add.
    std::vector<int64_t> init = start;
    init.resize(48, 777);
    Handle hx = c.upload(xs), hs = c.upload(init);
    t.entry.launch(c, {hx, hs}, Grid{3, 3, 1});
    std::vector<int64_t> want = init;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) want[size_t(j)] += xs[size_t(i * cols + j)];
    EXPECT_EQ(c.read<int64_t>(hs), want) << dev.name() << " seed " << seed;
  }
}

// f32 atomic adds: the order of the adds is the device's, so the sums compare with a tolerance.
TEST(TileAddressed, FloatAtomicAddIsCloseToTheSum) {
  const int64_t n = 4096;
  Traced t = trace("total", In<float>(cells({n}, {512})), Shared<float>(),
                   [](Param<float> x, Param<float> total) { atomic_add(total, Index(0), load_cell(x), {0}); });
  for (const Device& dev : devices()) {
    Client c = dev.client();
    const uint32_t seed = fresh_seed();
    std::vector<double> drawn = testing::random_values(size_t(n), seed, 0, 1);
    std::vector<float> xs(drawn.begin(), drawn.end());
    Handle hx = c.upload(std::span<const float>(xs)), ht = c.upload(std::vector<float>{0.5f});
    t.entry.launch(c, {hx, ht}, Grid{8, 1, 1});
    double want = 0.5;
    for (float x : xs) want += x;
    EXPECT_NEAR(c.read<float>(ht)[0], want, 1e-5 * want * 12) << dev.name() << " seed " << seed;
  }
}

// scatter: values to the offsets beside them, here a permutation, so each element is written once
// and nothing else changes.
TEST(TileAddressed, ScatterPermutes) {
  const int64_t n = 300;
  Traced t = trace("permute", In<int32_t>(cells({n}, {128})), In<double>(cells({n}, {128})), Shared<double>(),
                   [](Param<int32_t> to, Param<double> x, Param<double> out) {
                     scatter(out, load_cell(to), load_cell(x), cell_extent(x));
                   });
  for (const Device& dev : devices()) {
    Client c = dev.client();
    const uint32_t seed = fresh_seed();
    std::vector<int32_t> perm(static_cast<size_t>(n));
    for (int32_t i = 0; i < int32_t(n); ++i) perm[size_t(i)] = i;
    std::shuffle(perm.begin(), perm.end(), std::mt19937(seed));
    std::vector<double> xs = testing::random_values(size_t(n), seed + 1);
    std::vector<double> poison(size_t(n) + 1, kPoison);
    Handle hp = c.upload(perm), hx = c.upload(std::span<const double>(xs)),
           ho = c.upload(std::span<const double>(poison));
    t.entry.launch(c, {hp, hx, ho}, Grid{3, 1, 1});
    std::vector<double> want = poison;
    for (size_t i = 0; i < size_t(n); ++i) want[size_t(perm[i])] = xs[i];
    EXPECT_EQ(c.read<double>(ho), want) << dev.name() << " seed " << seed;
  }
}

}  // namespace
}  // namespace kiln::tile
