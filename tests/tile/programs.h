// The tile programs the tests run and compile, by name (seed 04's kernels and a few more).
#pragma once

#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kiln/runtime.h"
#include "kiln/tile.h"

namespace kiln::tile::testing {

// The devices a tile test runs on: the CPU, and every CUDA device there is.
inline std::vector<Device> devices() {
  std::vector<Device> d = {Device::cpu()};
  for (const Device& x : Device::all()) {
    if (x.kind() == DeviceKind::Cuda) d.push_back(x);
  }
  return d;
}

// Fresh uniform values in [lo, hi).
inline std::vector<double> random_values(size_t n, uint32_t seed, double lo = -4, double hi = 4) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = u(g);
  return v;
}

inline Traced vadd_program(int64_t n) {
  Cells g = cells({n}, {128});
  return trace(
      "vadd", In<double>(g), In<double>(g), Out<double>(g),
      [](Param<double> a, Param<double> b, Param<double> out) { store_cell(out, load_cell(a) + load_cell(b)); });
}

inline Traced softmax_program() {
  return trace("softmax", In<double>(cells({3}, {4}).pad(Pad::neg_inf)), Out<double>(cells({3}, {4})),
               [](Param<double> x, Param<double> out) {
                 Tile<double> v = load_cell(x);
                 Tile<double> e = exp(v - reduce_max(v));
                 store_cell(out, e / reduce_sum(e));
               });
}

inline Traced row_softmax_program(int64_t rows) {
  Cells g = cells({rows, 64}, {32, 64});
  return trace("row_softmax", In<double>(g), Out<double>(g), [](Param<double> x, Param<double> out) {
    Tile<double> s = load_cell(x);
    Tile<double> p = exp(s - reduce_max(s, {.keepdims = true}));
    store_cell(out, p / reduce_sum(p, {.keepdims = true}));
  });
}

inline Traced col_sum_program() {
  return trace("col_sum", In<double>(cells({16, 32}, {16, 32})), Out<double>(cells({1, 32}, {1, 32})),
               [](Param<double> x, Param<double> out) {
                 store_cell(out, reduce_sum(load_cell(x), {.dim = 0, .keepdims = true}));
               });
}

inline Traced row_range_program() {
  return trace("row_range", In<double>(cells({16, 32}, {16, 32})), Out<double>(cells({16}, {16})),
               [](Param<double> x, Param<double> out) {
                 Tile<double> v = load_cell(x);
                 store_cell(out, reduce_max(v) - reduce_min(v, {.dim = 1}));
               });
}

// transpose_program with its typed entry (launch(client, x, out, grid) takes Buffer<double>s).
inline auto transpose_program_typed() {
  return trace("transpose", In<double>(cells({128, 64}, {32, 32})), Shared<double>(),
               [](Param<double> x, Param<double> out) {
                 Tile<double> t = load_cell(x);
                 Index at = block_id(1) * (32 * 128) + block_id(0) * 32;
                 store(out, at, t, {1, 128});
               });
}

inline Traced transpose_program() { return transpose_program_typed(); }

// A histogram of 1000 bin numbers (0 to 36) into a Shared of counts: a scatter with atomic adds.
inline Traced histogram_program() {
  return trace("histogram", In<int32_t>(cells({1000}, {256})), Shared<int32_t>(),
               [](Param<int32_t> bin, Param<int32_t> hist) {
                 atomic_add(hist, load_cell(bin), full<int32_t>({256}, 1), cell_extent(bin));
               });
}

// Column sums of f32 by atomic adds at an offset (stride 0 down the rows), bounded by the extent.
inline Traced col_atomic_program() {
  return trace("col_atomic", In<float>(cells({96, 40}, {32, 16})), Shared<float>(),
               [](Param<float> x, Param<float> sums) {
                 atomic_add(sums, block_id(1) * 16, load_cell(x), {0, 1}, cell_extent(x));
               });
}

// atomic max and min at offsets, and a plain scatter.
inline Traced scatter_program() {
  return trace("scatter", In<int32_t>(cells({512}, {128})), In<uint32_t>(cells({512}, {128})), Shared<uint32_t>(),
               Shared<uint32_t>(), [](Param<int32_t> at, Param<uint32_t> u, Param<uint32_t> hi, Param<uint32_t> out) {
                 Tile<int32_t> where = load_cell(at);
                 atomic_max(hi, where, load_cell(u));
                 atomic_min(hi, where, load_cell(u));
                 scatter(out, where, load_cell(u), cell_extent(u));
               });
}

// A Shared load bounded by an extent and padded.
inline Traced bounded_load_program() {
  return trace("bounded", Shared<float>(), Out<float>(cells({1}, {1})), [](Param<float> x, Param<float> hi) {
    Tile<float> v = load(x, Index(5), {128}, {}, {Index(72)}, Pad::neg_inf);
    store_cell(hi, reduce_max(v, {.dim = 0, .keepdims = true}));
  });
}

inline Traced matmul_program() {
  return trace("matmul", In<double>(cells({256, 256}, {64, 32}).along({0, free_axis})),
               In<double>(cells({256, 256}, {32, 64}).along({free_axis, 1})), Out<double>(cells({256, 256}, {64, 64})),
               [](Param<double> a, Param<double> b, Param<double> c) {
                 Var<double> acc = zeros(c);
                 For(d_range(0, 256 / 32), [&](Index k) { acc = mma(load_at(a, {k}), load_at(b, {k}), acc); });
                 store_cell(c, acc);
               });
}

// bf16 factors into an f32 accumulator: tensor cores on sm_80 and later.
inline Traced matmul_bf16_program(int64_t n, int64_t stages) {
  return trace("matmul_bf16", In<bf16>(cells({n, n}, {128, 32}).along({0, free_axis})),
               In<bf16>(cells({n, n}, {32, 128}).along({free_axis, 1})), Out<float>(cells({n, n}, {128, 128})),
               [n, stages](Param<bf16> a, Param<bf16> b, Param<float> c) {
                 Var<float> acc = zeros(c);
                 For(d_range(0, int32_t(n / 32)).prefetch_stages(stages),
                     [&](Index k) { acc = mma(load_at(a, {k}), load_at(b, {k}), acc); });
                 store_cell(c, acc);
               });
}

// Twice the column sums of x and the sums of v, 16 rows a step: loads that no product reads,
// pipelined by prefetch_stages (stages < 2: loaded each iteration). `rows` need not be a multiple
// of 16 (the last step's cells are ragged); an odd count makes v's vectors one f32 wide.
inline Traced streamed_sums_program(int64_t rows, int64_t stages) {
  const int32_t steps = int32_t((rows + 15) / 16);
  return trace("streamed_sums", In<float>(cells({rows, 64}, {16, 64}).along({free_axis, free_axis})),
               In<float>(cells({rows}, {16}).along({free_axis})), Out<float>(cells({64}, {64})),
               Out<float>(cells({16}, {16})),
               [steps, stages](Param<float> x, Param<float> v, Param<float> col_sums, Param<float> v_sums) {
                 Var<float> acc = zeros<float>({64});
                 Var<float> vacc = zeros<float>({16});
                 For(d_range(0, steps).prefetch_stages(stages), [&](Index i) {
                   acc = acc.get() + reduce_sum(load_at(x, {i, 0}) * 2.0f, {.dim = 0});
                   vacc = vacc.get() + load_at(v, {i});
                 });
                 store_cell(col_sums, acc);
                 store_cell(v_sums, vacc);
               });
}

// c = q x sum over steps of the k cells: q (bf16, [64, 64]) is loaded once before the loop, so
// the loop's products take a factor from before it (kept resident in shared memory); with
// `nested`, the loop stands inside another of two steps that adds its result twice.
inline Traced resident_factor_program(int64_t steps, int64_t stages, bool nested) {
  return trace("resident_factor", In<bf16>(cells({64, 64}, {64, 64})),
               In<bf16>(cells({steps * 64, 64}, {64, 64}).along({free_axis, free_axis})),
               Out<float>(cells({64, 64}, {64, 64})),
               [steps, stages, nested](Param<bf16> q, Param<bf16> k, Param<float> c) {
                 Tile<bf16> qt = load_cell(q);
                 Var<float> acc = zeros(c);
                 auto inner = [&] {
                   For(d_range(0, int32_t(steps)).prefetch_stages(stages), [&](Index j) {
                     acc = mma(qt, load_at(k, {j, Index(0)}), acc.get());
                   });
                 };
                 if (nested) For(d_range(0, 2), [&](Index) { inner(); });
                 else inner();
                 store_cell(c, acc);
               });
}

// h = relu(x w1), y = h w2 (f32) and the row sums of h: a product whose a is another product's
// result; w2 as rows or as the transposed view of its stored transpose. Looped, attention's shape:
// y = sum over s of relu(x w1_s) w2_s for kChainSteps blocks of w1 and w2 (2 stages), carrying y
// and the sums; a transposed w2_s is then staged as columns by the loop's ring.
constexpr int64_t kChainRows = 64, kChainIn = 128, kChainHidden = 64, kChainOut = 128, kChainSteps = 3;
inline Traced chained_products_program(bool w2_transposed, bool looped) {
  constexpr int64_t kRows = kChainRows, kIn = kChainIn, kHidden = kChainHidden, kOut = kChainOut;
  const int64_t steps = looped ? kChainSteps : 1;
  Cells w1 = cells({steps * kIn, kHidden}, {kIn, kHidden}).along({free_axis, 1});
  Cells w2 = w2_transposed ? cells({steps * kOut, kHidden}, {kOut, kHidden}).along({free_axis, 1})
                           : cells({steps * kHidden, kOut}, {kHidden, kOut}).along({free_axis, 1});
  return trace(
      "chained_products", In<bf16>(cells({kRows, kIn}, {kRows, kIn})), In<bf16>(w1), In<bf16>(w2),
      Out<float>(cells({kRows, kOut}, {kRows, kOut})), Out<float>(cells({kRows, 1}, {kRows, 1})),
      [=](Param<bf16> x, Param<bf16> w1p, Param<bf16> w2p, Param<float> y, Param<float> rows) {
        Tile<bf16> xt = load_cell(x);
        auto layer = [&](Index s, Tile<float> acc, Tile<float> sums) {
          Tile<bf16> w2t = w2_transposed ? load_at(w2p, {s, Index(0)}).transpose() : load_at(w2p, {s, Index(0)});
          Tile<float> h =
              max(mma(xt, load_at(w1p, {s, Index(0)}), zeros<float>({kRows, kHidden})), zeros<float>({kRows, kHidden}));
          return std::pair{mma(h.to<bf16>(), w2t, acc), sums + reduce_sum(h, {.keepdims = true})};
        };
        if (!looped) {
          auto [out, sums] = layer(Index(0), zeros<float>({kRows, kOut}), zeros<float>({kRows, 1}));
          store_cell(y, out);
          store_cell(rows, sums);
          return;
        }
        Var<float> acc = zeros<float>({kRows, kOut});
        Var<float> sums = zeros<float>({kRows, 1});
        For(d_range(0, int32_t(kChainSteps)).prefetch_stages(2), [&](Index s) {
          auto [out, more] = layer(s, acc.get(), sums.get());
          acc = out;
          sums = more;
        });
        store_cell(y, acc.get());
        store_cell(rows, sums.get());
      });
}

inline std::vector<std::pair<std::string, std::function<Traced()>>> programs() {
  return {
      {"vadd_1000", [] { return vadd_program(1000); }},
      {"vadd_7", [] { return vadd_program(7); }},
      {"softmax", softmax_program},
      {"row_softmax_256", [] { return row_softmax_program(256); }},
      {"row_softmax_100", [] { return row_softmax_program(100); }},
      {"col_sum", col_sum_program},
      {"row_range", row_range_program},
      {"transpose", transpose_program},
      {"histogram", histogram_program},
      {"col_atomic", col_atomic_program},
      {"scatter", scatter_program},
      {"bounded_load", bounded_load_program},
      {"matmul", matmul_program},
      {"matmul_bf16", [] { return matmul_bf16_program(256, 1); }},
      {"matmul_bf16_prefetch_3", [] { return matmul_bf16_program(256, 3); }},
      {"streamed_sums_prefetch_3", [] { return streamed_sums_program(1001, 3); }},
      {"resident_factor", [] { return resident_factor_program(4, 2, false); }},
      {"resident_factor_nested", [] { return resident_factor_program(3, 3, true); }},
      {"chained_products", [] { return chained_products_program(false, false); }},
      {"chained_products_w2_transposed", [] { return chained_products_program(true, false); }},
      {"chained_products_looped", [] { return chained_products_program(false, true); }},
      {"chained_products_looped_w2_transposed", [] { return chained_products_program(true, true); }},
  };
}

}  // namespace kiln::tile::testing
