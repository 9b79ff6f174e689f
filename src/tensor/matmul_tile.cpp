// matmul's tile-layer candidates: one block product per output block, the factors' cells walked
// along k in a pipelined loop (tensor cores through ldmatrix + mma.sync for f16 and bf16 on sm_80+,
// exact loops in the same layout for f32 and f64 and on the CPU). A tile program's extents are
// fixed when it is recorded, so each is recorded per product size (and kept); a batch runs one
// launch per product. An operand stored as dense columns (a transposed view) is read in its own
// layout and transposed as a tile, so that no copy of it is made.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "common/key.h"
#include "kiln/ir/mma.h"
#include "kiln/tile.h"
#include "tensor/matmul_plan.h"

namespace kiln::tensor {

namespace {

using namespace kiln::tile;

struct BlockShape {
  int64_t bm, bn, bk, stages;
  std::string name() const {
    return "tile " + std::to_string(bm) + "x" + std::to_string(bn) + " k" + std::to_string(bk) + " s" +
           std::to_string(stages);
  }
};

// The shapes tried, the one to run untuned first. Tensor cores: 128 x 128 with k steps of 32 and
// 64, the wide 128 x 256, and 64 x 64 for smaller products (docs/perf.md has the sweep). Exact
// loops keep the k step short: each unit reads its factors from shared memory one k at a time.
std::vector<BlockShape> block_shapes(DType d) {
  if (ir::mma_instruction(d, ir::compute_scalar(d))) {
    return {{128, 128, 32, 3}, {128, 128, 64, 3}, {128, 256, 64, 3}, {64, 64, 32, 3}};
  }
  return {{64, 64, 16, 2}, {128, 128, 16, 2}, {32, 32, 32, 2}};
}

// One product's facts: its sizes and whether each factor is stored as columns (transposed).
struct Problem {
  DType dtype;
  int64_t m, n, k;
  bool a_columns, b_columns;
  BlockShape block;
  // A batch in one launch (products > 1): the products' matrices stacked in memory (or one shared
  // by all), the batch folded into the grid's rows.
  int64_t products = 1;
  bool a_shared = false, b_shared = false;
  common::Key key() const {
    common::Key key;
    key("dtype", dtype)("m", m)("n", n)("k", k)("a_columns", a_columns)("b_columns", b_columns)("block", block.name())(
        "products", products)("a_shared", a_shared)("b_shared", b_shared);
    return key;
  }
};

// A batch in one launch: the output is [products * m, n], cut into blocks of bm rows that never
// straddle two products (m % bm == 0); block row r works on product r / (m / bm). Each factor's
// cells are all free and indexed from the block's position: a product's matrices are stacked
// along their rows ([products * m, k], or [products * k, m] for columns), and a shared factor is
// one matrix for every product.
template <Element T, Element Acc>
Traced record_batched(const Problem& q) {
  const BlockShape s = q.block;
  const int64_t pa = q.a_shared ? 1 : q.products, pb = q.b_shared ? 1 : q.products;
  Cells ca = q.a_columns ? cells({pa * q.k, q.m}, {s.bk, s.bm}).along({free_axis, free_axis})
                         : cells({pa * q.m, q.k}, {s.bm, s.bk}).along({free_axis, free_axis});
  Cells cb = q.b_columns ? cells({pb * q.n, q.k}, {s.bn, s.bk}).along({free_axis, free_axis})
                         : cells({pb * q.k, q.n}, {s.bk, s.bn}).along({free_axis, free_axis});
  const int64_t steps = (q.k + s.bk - 1) / s.bk, m_blocks = q.m / s.bm, n_blocks = q.n / s.bn;
  return trace("tensor_matmul_tile_batched", In<T>(ca), In<T>(cb), Out<T>(cells({q.products * q.m, q.n}, {s.bm, s.bn})),
               [q, s, steps, m_blocks, n_blocks](Param<T> a, Param<T> b, Param<T> c) {
                 const Index product = block_id(0) / int32_t(m_blocks), i = block_id(0) % int32_t(m_blocks),
                             j = block_id(1);
                 const Index a_product = q.a_shared ? Index(0) : product, b_product = q.b_shared ? Index(0) : product;
                 tile::Var<Acc> acc = zeros<Acc>({uint32_t(s.bm), uint32_t(s.bn)});
                 For(d_range(0, int32_t(steps)).prefetch_stages(s.stages), [&](Index kk) {
                   Tile<T> x = q.a_columns ? load_at(a, {a_product * int32_t(steps) + kk, i}).transpose()
                                           : load_at(a, {a_product * int32_t(m_blocks) + i, kk});
                   Tile<T> y = q.b_columns ? load_at(b, {b_product * int32_t(n_blocks) + j, kk}).transpose()
                                           : load_at(b, {b_product * int32_t(steps) + kk, j});
                   acc = mma(x, y, acc);
                 });
                 if constexpr (std::is_same_v<T, Acc>) {
                   store_cell(c, acc.get());
                 } else {
                   store_cell(c, acc.get().template to<T>());
                 }
               });
}

template <Element T, Element Acc>
Traced record(const Problem& q) {
  const BlockShape s = q.block;
  Cells ca = q.a_columns ? cells({q.k, q.m}, {s.bk, s.bm}).along({free_axis, 0})
                         : cells({q.m, q.k}, {s.bm, s.bk}).along({0, free_axis});
  Cells cb = q.b_columns ? cells({q.n, q.k}, {s.bn, s.bk}).along({1, free_axis})
                         : cells({q.k, q.n}, {s.bk, s.bn}).along({free_axis, 1});
  const int64_t steps = (q.k + s.bk - 1) / s.bk;
  return trace("tensor_matmul_tile", In<T>(ca), In<T>(cb), Out<T>(cells({q.m, q.n}, {s.bm, s.bn})),
               [q, s, steps](Param<T> a, Param<T> b, Param<T> c) {
                 tile::Var<Acc> acc = zeros<Acc>({uint32_t(s.bm), uint32_t(s.bn)});
                 For(d_range(0, int32_t(steps)).prefetch_stages(s.stages), [&](Index kk) {
                   Tile<T> x = load_at(a, {kk}), y = load_at(b, {kk});
                   acc = mma(q.a_columns ? x.transpose() : x, q.b_columns ? y.transpose() : y, acc);
                 });
                 if constexpr (std::is_same_v<T, Acc>) {
                   store_cell(c, acc.get());
                 } else {
                   store_cell(c, acc.get().template to<T>());
                 }
               });
}

std::mutex& kept_mutex() {
  static std::mutex m;
  return m;
}
std::unordered_map<common::Key, std::shared_ptr<const Traced>, common::KeyHasher>& kept() {
  // Lives to exit, as the kernels do.
  static auto& k = *new std::unordered_map<common::Key, std::shared_ptr<const Traced>, common::KeyHasher>;
  return k;
}

// The recorded program of a problem, recorded once per process.
std::shared_ptr<const Traced> program(const Problem& q) {
  std::lock_guard lock(kept_mutex());
  auto& slot = kept()[q.key()];
  if (!slot) {
    const bool batched = q.products > 1;
    // Factors of the dtype, accumulators of its compute type (f32 for f16 and bf16).
    ir::visit_scalar(q.dtype, [&]<class T>() {
      if constexpr (ir::is_float_type<T>) {
        using Acc = ir::scalar_t<ir::compute_scalar(scalar_of<T>())>;
        slot = std::make_shared<const Traced>(batched ? record_batched<T, Acc>(q) : record<T, Acc>(q));
      }
    });
    if (!slot)
      throw Error("tensor.unsupported_dtype",
                  "matmul's tile products take floats, not " + std::string(ir::scalar_name(q.dtype)));
  }
  return slot;
}

// Dense rows (false), dense columns (true), or neither.
std::optional<bool> dense(int64_t rows, int64_t cols, const std::array<int64_t, 2>& stride) {
  if ((cols == 1 || stride[1] == 1) && (rows == 1 || stride[0] == cols)) return false;
  if ((rows == 1 || stride[0] == 1) && (cols == 1 || stride[1] == rows)) return true;
  return std::nullopt;
}

// The element offset of each product of the batch, per operand.
std::vector<std::array<int64_t, 3>> product_offsets(const MatmulPlan& p) {
  std::vector<std::array<int64_t, 3>> out;
  const size_t rank = p.batch.size();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0, n = p.products(); i < n; ++i) {
    std::array<int64_t, 3> off{};
    for (size_t o = 0; o < 3; ++o) {
      for (size_t d = 0; d < rank; ++d) off[o] += idx[d] * p.batch_strides[o][d];
    }
    out.push_back(off);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < p.batch[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

constexpr int64_t kMinSide = 16;                    // smaller products are the one-unit kernel's
constexpr int64_t kMaxLaunches = 4096;              // a batch of more products than this is the one-unit kernel's
constexpr int64_t kMaxElements = int64_t(1) << 32;  // tile kernels index a parameter with u32

}  // namespace

std::vector<std::shared_ptr<const tile::Traced>> recorded_tile_matmuls() {
  std::lock_guard lock(kept_mutex());
  std::vector<std::shared_ptr<const tile::Traced>> out;
  for (const auto& [key, t] : kept()) out.push_back(t);
  return out;
}

void add_tile_candidates(const MatmulPlan& p, const Tensor& lhs, const Tensor& rhs, const Tensor* out,
                         std::vector<autotune::Candidate>& to, size_t* preferred) {
  if (!ir::is_float(p.dtype)) return;
  if (p.rows < kMinSide || p.n < kMinSide || p.k < kMinSide || p.products() > kMaxLaunches) return;
  if (p.rows * p.k >= kMaxElements || p.k * p.n >= kMaxElements || p.rows * p.n >= kMaxElements) return;
  std::optional<bool> a = dense(p.rows, p.k, p.matrix_strides[0]), b = dense(p.k, p.n, p.matrix_strides[1]);
  if (!a || !b || dense(p.rows, p.n, p.matrix_strides[2]) != false) return;
  // Every product's factors and output start on a 16-byte boundary (tile kernels read vectors).
  const int64_t bytes = ir::scalar_bytes(p.dtype);
  std::vector<std::array<int64_t, 3>> offsets = product_offsets(p);
  const std::array<uint64_t, 3> base = {lhs.handle().address(), rhs.handle().address(),
                                        out ? out->handle().address() : 0};
  for (const auto& off : offsets) {
    for (size_t o = 0; o < 3; ++o) {
      if ((base[o] + uint64_t(off[o] * bytes)) % 16 != 0) return;
    }
  }
  // Blocks no larger than the product (in buckets); the smallest when every one is larger.
  const int64_t rows_bucket = autotune::bucket(p.rows), n_bucket = autotune::bucket(p.n);
  std::vector<BlockShape> shapes;
  for (const BlockShape& s : block_shapes(p.dtype)) {
    if (s.bm <= rows_bucket && s.bn <= n_bucket) shapes.push_back(s);
  }
  if (shapes.empty()) {
    std::vector<BlockShape> all = block_shapes(p.dtype);
    shapes.push_back(*std::min_element(
        all.begin(), all.end(), [](const BlockShape& x, const BlockShape& y) { return x.bm * x.bn < y.bm * y.bn; }));
  }
  *preferred = to.size();
  // Whether each factor's products are stacked (product i's matrix i matrices on) or shared.
  auto stacking = [&](size_t o, int64_t matrix) -> std::optional<bool> {
    bool stacked = true, shared = true;
    for (size_t i = 0; i < offsets.size(); ++i) {
      stacked = stacked && offsets[i][o] == int64_t(i) * matrix;
      shared = shared && offsets[i][o] == 0;
    }
    if (stacked) return false;
    if (shared) return true;
    return std::nullopt;
  };
  const std::optional<bool> a_shared = stacking(0, p.rows * p.k), b_shared = stacking(1, p.k * p.n),
                            o_shared = stacking(2, p.rows * p.n);
  for (const BlockShape& s : shapes) {
    Problem q{p.dtype, p.rows, p.n, p.k, *a, *b, s};
    // One launch for the batch where blocks never straddle two products.
    // (k runs along the stacked rows of a factor stored as columns on the left, or as rows on the right.)
    const bool k_stacked = *a || !*b;
    const bool one_launch =
        offsets.size() > 1 && a_shared && b_shared && o_shared == false && p.rows % s.bm == 0 &&
        (!k_stacked || p.k % s.bk == 0) && (!*b || p.n % s.bn == 0) &&
        int64_t(offsets.size()) * std::max(p.rows * p.k, std::max(p.k * p.n, p.rows * p.n)) < kMaxElements;
    if (one_launch) {
      q.products = int64_t(offsets.size());
      q.a_shared = *a_shared;
      q.b_shared = *b_shared;
    }
    if (!out) {
      to.push_back({s.name(), nullptr});
      continue;
    }
    Client client = out->client();
    Handle ha = lhs.handle(), hb = rhs.handle(), hc = out->handle();
    if (one_launch) {
      to.push_back({s.name(), [q, client, ha, hb, hc] { program(q)->entry.launch(client, {ha, hb, hc}); }});
      continue;
    }
    to.push_back({s.name(), [q, client, ha, hb, hc, offsets, bytes] {
                    std::shared_ptr<const Traced> t = program(q);
                    for (const auto& off : offsets) {
                      t->entry.launch(client,
                                      {ha.offset_start(size_t(off[0] * bytes)), hb.offset_start(size_t(off[1] * bytes)),
                                       hc.offset_start(size_t(off[2] * bytes))});
                    }
                  }});
  }
}

}  // namespace kiln::tensor
