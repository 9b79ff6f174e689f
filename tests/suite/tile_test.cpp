// 2D shared-memory kernels: a tiled transpose (16x16 cubes, a padded tile against bank conflicts),
// a tiled matmul whose run-time K loop holds two barriers, and a 1D stencil with a halo, all on
// sizes that are not multiples of the tile.
#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

constexpr uint32_t kTile = 16;

// out (cols x rows) = transpose of in (rows x cols), through a shared tile.
template <class T>
struct TransposeTiled {
  static constexpr std::string_view name = "transpose_tiled";
  void operator()(Slice<const T> in, Slice<T> out, Scalar<uint32_t> rows, Scalar<uint32_t> cols) const {
    SharedArray<T> tile(kTile * (kTile + 1));
    auto tx = unit_pos_x();
    auto ty = unit_pos_y();
    auto x = cube_pos_x() * kTile + tx;  // column of in
    auto y = cube_pos_y() * kTile + ty;  // row of in
    If(x < cols && y < rows, [&] { tile[ty * (kTile + 1) + tx] = in[y * cols + x]; });
    sync_cube();
    auto ox = cube_pos_y() * kTile + tx;  // column of out = row of in
    auto oy = cube_pos_x() * kTile + ty;  // row of out = column of in
    If(ox < rows && oy < cols, [&] { out[oy * rows + ox] = tile[tx * (kTile + 1) + ty]; });
  }
};

constexpr uint32_t kMm = 8;

// c (m x n) = a (m x k) * b (k x n), 8x8 tiles staged in shared memory.
template <class F>
struct MatmulTiled {
  static constexpr std::string_view name = "matmul_tiled";
  void operator()(Slice<const F> a, Slice<const F> b, Slice<F> c, Scalar<uint32_t> m, Scalar<uint32_t> n,
                  Scalar<uint32_t> k) const {
    SharedArray<F> ta(kMm * kMm), tb(kMm * kMm);
    auto tx = unit_pos_x();
    auto ty = unit_pos_y();
    auto row = cube_pos_y() * kMm + ty;
    auto col = cube_pos_x() * kMm + tx;
    Var<F> acc = 0.0f;
    For(range(0u, k, kMm), [&](Expr<uint32_t> t) {
      Var<F> av = 0.0f, bv = 0.0f;
      If(row < m && t + tx < k, [&] { av = a[row * k + t + tx]; });
      If(t + ty < k && col < n, [&] { bv = b[(t + ty) * n + col]; });
      ta[ty * kMm + tx] = av;
      tb[ty * kMm + tx] = bv;
      sync_cube();
      For(range(0u, kMm).unroll_full(), [&](Expr<uint32_t> q) { acc = acc + ta[ty * kMm + q] * tb[q * kMm + tx]; });
      sync_cube();
    });
    If(row < m && col < n, [&] { c[row * n + col] = acc; });
  }
};

// y[i] = x[i-1] / 4 + x[i] / 2 + x[i+1] / 4 with x = 0 outside; each cube stages its elements and
// a halo of one on each side.
template <class F>
struct Stencil1D {
  static constexpr std::string_view name = "stencil_1d";
  void operator()(Slice<const F> x, Slice<F> y, Comptime<int> block) const {
    SharedArray<F> s(block + 2);
    auto u = unit_pos();
    auto i = absolute_pos();
    auto n = x.len();
    Var<F> mid = 0.0f;
    If(i < n, [&] { mid = x[i]; });
    s[u + 1u] = mid;
    If(u == 0u, [&] {
      Var<F> left = 0.0f;
      If(i > 0u && i - 1u < n, [&] { left = x[i - 1u]; });
      s[0u] = left;
    });
    If(u == uint32_t(block - 1), [&] {
      Var<F> right = 0.0f;
      If(i + 1u < n, [&] { right = x[i + 1u]; });
      s[uint32_t(block + 1)] = right;
    });
    sync_cube();
    If(i < n, [&] { y[i] = s[u] * 0.25f + s[u + 1u] * 0.5f + s[u + 2u] * 0.25f; });
  }
};

template <class T>
void register_transpose(uint32_t rows, uint32_t cols) {
  add_case(case_name({"transpose_tiled", dtype_name<T>(), std::to_string(rows) + "x" + std::to_string(cols)}),
           kernels<TransposeTiled<T>>(), [=](Client& client, std::mt19937_64& rng) {
             auto in = random_any<T>(rng, size_t(rows) * cols);
             Handle hi = client.upload(in), ho = poisoned_elems<T>(client, in.size());
             launch<TransposeTiled<T>>(client, CubeCount{cubes_for(cols, kTile), cubes_for(rows, kTile)},
                                       CubeDim{kTile, kTile}, 1, hi, ho, rows, cols);
             std::vector<T> e(in.size());
             for (size_t r = 0; r < rows; ++r)
               for (size_t c = 0; c < cols; ++c) e[c * rows + r] = in[r * cols + c];
             expect_equal("transpose", e, client.read<T>(ho));
           });
}

template <class F>
void register_matmul(uint32_t m, uint32_t n, uint32_t k) {
  add_case(case_name({"matmul_tiled", dtype_name<F>(),
                      std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k)}),
           kernels<MatmulTiled<F>>(), [=](Client& client, std::mt19937_64& rng) {
             auto a = random_values<F>(rng, size_t(m) * k, -1, 1), b = random_values<F>(rng, size_t(k) * n, -1, 1);
             Handle ha = client.upload(a), hb = client.upload(b), hc = poisoned_elems<F>(client, size_t(m) * n);
             launch<MatmulTiled<F>>(client, CubeCount{cubes_for(n, kMm), cubes_for(m, kMm)}, CubeDim{kMm, kMm}, 1, ha,
                                    hb, hc, m, n, k);
             std::vector<F> e(size_t(m) * n);
             for (size_t r = 0; r < m; ++r)
               for (size_t c = 0; c < n; ++c) {
                 long double acc = 0;
                 for (size_t q = 0; q < k; ++q) acc += wide(a[r * k + q]) * wide(b[q * n + c]);
                 e[r * n + c] = narrow<F>(acc);
               }
             expect_near("a * b", e, client.read<F>(hc), tol_reduce<F>(k));
           });
}

template <class F>
void register_stencil(int block, size_t n) {
  add_case(case_name({"stencil_1d", dtype_name<F>(), "b" + std::to_string(block), nn(n)}), kernels<Stencil1D<F>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<F>(rng, n, -100, 100);
             Handle hx = client.upload(x), hy = poisoned_elems<F>(client, n);
             launch<Stencil1D<F>>(client, CubeCount{cubes_for(n, uint32_t(block))}, CubeDim{uint32_t(block)}, 1, hx, hy,
                                  comptime(block));
             F quarter = make<F>(0.25L), half = make<F>(0.5L), zero = make<F>(0);
             auto e = tabulate<F>(n, [&](size_t i) {
               F l = i > 0 ? x[i - 1] : zero, r = i + 1 < n ? x[i + 1] : zero;
               return ref::add(ref::add(ref::mul(l, quarter), ref::mul(x[i], half)), ref::mul(r, quarter));
             });
             expect_near("3-point stencil", e, client.read<F>(hy), tol_arith<F>());
           });
}

KILN_SUITE_CASES(tile) {
  register_transpose<float>(37, 53);
  register_transpose<uint8_t>(70, 19);
  register_transpose<double>(16, 33);
  register_transpose<int64_t>(1, 100);
  register_matmul<float>(37, 29, 41);
  register_matmul<double>(16, 9, 70);
  register_matmul<float>(1, 64, 8);
  register_stencil<float>(64, 1000);
  register_stencil<double>(96, 2021);
  register_stencil<f16>(32, 500);
}

}  // namespace
}  // namespace kiln::suite
