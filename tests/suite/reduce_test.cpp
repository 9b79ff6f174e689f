// Reductions and scans through shared memory with sync_cube barriers: a per-cube tree sum (the host
// adds the partials), a tree max driven by a run-time While, a two-kernel prefix sum (scan each
// cube, then add the cube offsets), and row softmax (one unit per row, and one plane per row).
// Where a kernel fixes the order of its additions, the host reference replays that order, so even
// float results are compared at arithmetic tolerance.
#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

// partial[cube] = sum of the cube's elements, by halving strides (block is the cube size, a power
// of two); the loop over strides runs while tracing, so each level is its own If and barrier.
template <class F>
struct BlockSum {
  static constexpr std::string_view name = "block_sum";
  void operator()(Slice<const F> x, Slice<F> partial, Comptime<int> block) const {
    SharedArray<F> s(block);
    auto u = unit_pos();
    auto i = absolute_pos();
    Var<F> v = 0.0f;
    If(i < x.len(), [&] { v = x[i]; });
    s[u] = v;
    sync_cube();
    for (int stride = block / 2; stride > 0; stride /= 2) {
      If(u < uint32_t(stride), [&] { s[u] = s[u] + s[u + uint32_t(stride)]; });
      sync_cube();
    }
    If(u == 0u, [&] { partial[cube_pos()] = s[0u]; });
  }
};

// best[cube] = max of the cube's elements; the stride halves in a run-time While.
template <class T>
struct BlockMaxWhile {
  static constexpr std::string_view name = "block_max_while";
  void operator()(Slice<const T> x, Slice<T> best) const {
    SharedArray<T> s(256);
    auto u = unit_pos();
    auto i = absolute_pos();
    Var<T> v = std::numeric_limits<T>::lowest();
    If(i < x.len(), [&] { v = x[i]; });
    s[u] = v;
    sync_cube();
    Var<uint32_t> stride = cube_dim() / 2u;
    While([&] { return stride > 0u; },
          [&] {
            If(u < stride, [&] { s[u] = max(s[u], s[u + stride]); });
            sync_cube();
            stride = stride / 2u;
          });
    If(u == 0u, [&] { best[cube_pos()] = s[0u]; });
  }
};

// Inclusive scan of each cube (Hillis-Steele in shared memory); the cube's total goes to sums.
template <class T>
struct ScanBlock {
  static constexpr std::string_view name = "scan_block";
  void operator()(Slice<const T> x, Slice<T> out, Slice<T> sums, Comptime<int> block) const {
    SharedArray<T> s(block);
    auto u = unit_pos();
    auto i = absolute_pos();
    Var<T> v = T(0);
    If(i < x.len(), [&] { v = x[i]; });
    s[u] = v;
    sync_cube();
    for (int off = 1; off < block; off *= 2) {
      Var<T> t = s[u];
      If(u >= uint32_t(off), [&] { t = t + s[u - uint32_t(off)]; });
      sync_cube();
      s[u] = t;
      sync_cube();
    }
    If(i < x.len(), [&] { out[i] = s[u]; });
    If(u == uint32_t(block - 1), [&] { sums[cube_pos()] = s[u]; });
  }
};

// Adds to each element the totals of the cubes before its own (a run-time loop over cubes).
template <class T>
struct ScanAddOffsets {
  static constexpr std::string_view name = "scan_add_offsets";
  void operator()(Slice<T> out, Slice<const T> sums) const {
    auto i = absolute_pos();
    Var<T> offset = T(0);
    For(range(0u, cube_pos()), [&](Expr<uint32_t> c) { offset = offset + sums[c]; });
    If(i < out.len(), [&] { out[i] = out[i] + offset; });
  }
};

// Softmax of each row, one unit per row.
template <class F>
struct SoftmaxRows {
  static constexpr std::string_view name = "softmax_rows";
  void operator()(Slice<const F> x, Slice<F> y, Scalar<uint32_t> rows, Scalar<uint32_t> cols) const {
    auto r = absolute_pos();
    If(r < rows, [&] {
      auto base = r * cols;
      Var<F> m = x[base];
      For(range(1u, cols), [&](Expr<uint32_t> j) { m = max(m, x[base + j]); });
      Var<F> s = 0.0f;
      For(range(0u, cols), [&](Expr<uint32_t> j) { s = s + exp(x[base + j] - m); });
      For(range(0u, cols), [&](Expr<uint32_t> j) { y[base + j] = exp(x[base + j] - m) / s; });
    });
  }
};

// Softmax of each row, one plane (32 units) per row: strided loops, then plane_max and plane_sum.
template <class F>
struct SoftmaxPlane {
  static constexpr std::string_view name = "softmax_plane";
  void operator()(Slice<const F> x, Slice<F> y, Scalar<uint32_t> cols) const {
    auto base = cube_pos() * cols;
    auto lane = unit_pos();
    Var<F> m = -std::numeric_limits<float>::infinity();
    For(range(lane, cols, 32u), [&](Expr<uint32_t> j) { m = max(m, x[base + j]); });
    Expr<F> row_max = plane_max(m);
    Var<F> s = 0.0f;
    For(range(lane, cols, 32u), [&](Expr<uint32_t> j) { s = s + exp(x[base + j] - row_max); });
    Expr<F> total = plane_sum(s);
    For(range(lane, cols, 32u), [&](Expr<uint32_t> j) { y[base + j] = exp(x[base + j] - row_max) / total; });
  }
};

// The host replay of BlockSum's tree for one cube.
template <class F>
F tree_sum(std::vector<F> s) {
  for (size_t stride = s.size() / 2; stride > 0; stride /= 2) {
    for (size_t u = 0; u < stride; ++u) s[u] = ref::add(s[u], s[u + stride]);
  }
  return s[0];
}

template <class F>
void register_block_sum(int block, size_t n) {
  add_case(case_name({"block_sum", dtype_name<F>(), "b" + std::to_string(block), nn(n)}), kernels<BlockSum<F>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<F>(rng, n, -1, 1);
             uint32_t cubes = cubes_for(n, uint32_t(block));
             Handle hx = client.upload(x), hp = poisoned_elems<F>(client, cubes);
             launch<BlockSum<F>>(client, CubeCount{cubes}, CubeDim{uint32_t(block)}, 1, hx, hp, comptime(block));
             std::vector<F> partial = client.read<F>(hp), expected(cubes);
             long double total = 0, magnitude = 0, got = 0;
             for (uint32_t c = 0; c < cubes; ++c) {
               std::vector<F> s(size_t(block), make<F>(0));
               for (size_t u = 0; u < size_t(block) && c * size_t(block) + u < n; ++u) s[u] = x[c * size_t(block) + u];
               expected[c] = tree_sum(s);
               got += wide(partial[c]);
             }
             for (F v : x) total += wide(v), magnitude += std::fabs(wide(v));
             expect_near("per-cube tree sums", expected, partial, tol_arith<F>());
             expect_near("sum of the partials", std::vector<double>{double(total)}, std::vector<double>{double(got)},
                         // f16 partials each carry up to log2(32) roundings of 2^-11.
                         Tol{0, double(magnitude) * tol_reduce<F>(1).abs * (is_short_float_v<F> ? 4 : 1), 0});
           });
}

template <class T>
void register_block_max(uint32_t block, size_t n) {
  add_case(case_name({"block_max_while", dtype_name<T>(), "b" + std::to_string(block), nn(n)}),
           kernels<BlockMaxWhile<T>>(), [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<T>(rng, n, -1e6, 1e6);
             uint32_t cubes = cubes_for(n, block);
             Handle hx = client.upload(x), hb = poisoned_elems<T>(client, cubes);
             launch<BlockMaxWhile<T>>(client, CubeCount{cubes}, CubeDim{block}, 1, hx, hb);
             std::vector<T> expected(cubes, std::numeric_limits<T>::lowest());
             for (size_t i = 0; i < n; ++i) expected[i / block] = ref::max(expected[i / block], x[i]);
             expect_equal("per-cube max", expected, client.read<T>(hb));
           });
}

// The host replay of ScanBlock + ScanAddOffsets.
template <class T>
std::vector<T> blocked_scan(const std::vector<T>& x, size_t block) {
  size_t cubes = (x.size() + block - 1) / block;
  std::vector<T> out(x.size()), sums(cubes);
  for (size_t c = 0; c < cubes; ++c) {
    std::vector<T> s(block, make<T>(0));
    for (size_t u = 0; u < block && c * block + u < x.size(); ++u) s[u] = x[c * block + u];
    for (size_t off = 1; off < block; off *= 2) {
      // Downward, so that s[u - off] still holds the previous step's value (as after the barrier).
      for (size_t u = block - 1; u >= off; --u) s[u] = ref::add(s[u], s[u - off]);
    }
    for (size_t u = 0; u < block && c * block + u < x.size(); ++u) out[c * block + u] = s[u];
    sums[c] = s[block - 1];
  }
  for (size_t i = 0; i < x.size(); ++i) {
    T offset = make<T>(0);
    for (size_t c = 0; c < i / block; ++c) offset = ref::add(offset, sums[c]);
    out[i] = ref::add(out[i], offset);
  }
  return out;
}

template <class T>
void register_scan(int block, size_t n) {
  add_case(case_name({"prefix_sum", dtype_name<T>(), "b" + std::to_string(block), nn(n)}),
           kernels<ScanBlock<T>, ScanAddOffsets<T>>(), [=](Client& client, std::mt19937_64& rng) {
             std::vector<T> x = is_float_v<T> ? random_values<T>(rng, n, -1, 1) : random_any<T>(rng, n);
             uint32_t cubes = cubes_for(n, uint32_t(block));
             Handle hx = client.upload(x), ho = poisoned_elems<T>(client, n), hs = poisoned_elems<T>(client, cubes);
             launch<ScanBlock<T>>(client, CubeCount{cubes}, CubeDim{uint32_t(block)}, 1, hx, ho, hs, comptime(block));
             launch<ScanAddOffsets<T>>(client, CubeCount{cubes}, CubeDim{uint32_t(block)}, 1, ho, hs);
             expect_near("inclusive prefix sum", blocked_scan(x, size_t(block)), client.read<T>(ho), tol_arith<T>());
             if constexpr (is_float_v<T>) {  // and against the plain sequential sum
               std::vector<T> seq(n);
               long double run = 0, mag = 0;
               for (size_t i = 0; i < n; ++i) {
                 run += wide(x[i]);
                 mag += std::fabs(wide(x[i]));
                 seq[i] = narrow<T>(run);
               }
               expect_near("close to the sequential prefix sum", seq, client.read<T>(ho), tol_reduce<T>(mag));
             }
           });
}

template <class F>
std::vector<F> softmax_reference(const std::vector<F>& x, size_t rows, size_t cols) {
  std::vector<F> y(x.size());
  for (size_t r = 0; r < rows; ++r) {
    long double m = -INFINITY, s = 0;
    for (size_t j = 0; j < cols; ++j) m = std::max(m, wide(x[r * cols + j]));
    for (size_t j = 0; j < cols; ++j) s += std::exp(wide(x[r * cols + j]) - m);
    for (size_t j = 0; j < cols; ++j) y[r * cols + j] = narrow<F>(std::exp(wide(x[r * cols + j]) - m) / s);
  }
  return y;
}

template <class F>
void register_softmax(uint32_t rows, uint32_t cols) {
  std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
  add_case(case_name({"softmax_rows", dtype_name<F>(), shape}), kernels<SoftmaxRows<F>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<F>(rng, size_t(rows) * cols, -8, 8);
             Handle hx = client.upload(x), hy = poisoned_elems<F>(client, x.size());
             launch<SoftmaxRows<F>>(client, CubeCount{cubes_for(rows, 16)}, CubeDim{16}, 1, hx, hy, rows, cols);
             expect_near("softmax by row", softmax_reference(x, rows, cols), client.read<F>(hy), tol_math<F>());
           });
  add_case(case_name({"softmax_plane", dtype_name<F>(), shape}), kernels<SoftmaxPlane<F>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<F>(rng, size_t(rows) * cols, -8, 8);
             Handle hx = client.upload(x), hy = poisoned_elems<F>(client, x.size());
             launch<SoftmaxPlane<F>>(client, CubeCount{rows}, CubeDim{32}, 1, hx, hy, cols);
             expect_near("softmax by row, a plane per row", softmax_reference(x, rows, cols), client.read<F>(hy),
                         tol_math<F>());
           });
}

KILN_SUITE_CASES(reduce) {
  register_block_sum<float>(128, 3001);
  register_block_sum<float>(256, 4099);
  register_block_sum<double>(64, 1000);
  register_block_sum<f16>(32, 777);
  register_block_max<int32_t>(128, 2999);
  register_block_max<float>(256, 1500);
  register_block_max<uint64_t>(64, 1001);
  register_scan<int32_t>(128, 3001);
  register_scan<uint32_t>(64, 2047);
  register_scan<float>(256, 2500);
  register_scan<int64_t>(32, 1000);
  register_softmax<float>(37, 77);
  register_softmax<double>(5, 300);
}

}  // namespace
}  // namespace kiln::suite
