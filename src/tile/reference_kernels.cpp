// Host references for kiln's example tile kernels (examples/tile_*.cpp, seed 04), by kernel name.
// Each reads its shapes from the buffers' cells, computes in double over the inputs as the kernel
// sees them, and writes only the elements inside the Out's extent (or the Shared's target), so
// whatever lies past them stays as it was, as the kernel must leave it.
#include <algorithm>
#include <cmath>

#include "kiln/tile/reference.h"

namespace kiln::tile {

namespace {

int64_t elements(const std::vector<int64_t>& extent) {
  int64_t n = 1;
  for (int64_t e : extent) n *= e;
  return n;
}

// out = a + b over the extent.
void vadd(std::span<const HostBuffer> in, HostBuffer& out) {
  for (size_t i = 0; i < size_t(elements(out.extent())); ++i) out.set(i, in[0].get(i) + in[1].get(i));
}

// Softmax along the last dimension within each cell (a cell's row is what the kernel reduces):
// seed 04's softmax (one row of one cell) and row_softmax (rows of [32, 64] cells).
void softmax_in_cells(std::span<const HostBuffer> in, HostBuffer& out) {
  const std::vector<int64_t>& e = out.extent();
  int64_t cols = e.back(), rows = elements(e) / cols, width = out.cells()->tile().back();
  std::vector<double> x = in[0].values();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c0 = 0; c0 < cols; c0 += width) {
      int64_t c1 = std::min(cols, c0 + width);
      double m = -INFINITY, sum = 0;
      for (int64_t c = c0; c < c1; ++c) m = std::max(m, x[size_t(r * cols + c)]);
      for (int64_t c = c0; c < c1; ++c) sum += std::exp(x[size_t(r * cols + c)] - m);
      for (int64_t c = c0; c < c1; ++c) out.set(size_t(r * cols + c), std::exp(x[size_t(r * cols + c)] - m) / sum);
    }
  }
}

// out (a Shared, [cols, rows]) = the [rows, cols] input transposed.
void transpose(std::span<const HostBuffer> in, HostBuffer& out) {
  int64_t rows = in[0].extent()[0], cols = in[0].extent()[1];
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out.set(size_t(j * rows + i), in[0].get(size_t(i * cols + j)));
}

// c[M, N] = a[M, K] b[K, N].
void matmul(std::span<const HostBuffer> in, HostBuffer& c) {
  int64_t m = in[0].extent()[0], k = in[0].extent()[1], n = in[1].extent()[1];
  std::vector<double> a = in[0].values(), b = in[1].values(), acc(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) acc[size_t(j)] += a[size_t(i * k + p)] * b[size_t(p * n + j)];
    for (int64_t j = 0; j < n; ++j) c.set(size_t(i * n + j), acc[size_t(j)]);
  }
}

// out[S, D] = softmax(q k^T / sqrt(D)) v, for q, k, v of [S, D] (any float element type).
void flash_attn(std::span<const HostBuffer> in, HostBuffer& out) {
  int64_t seq = in[0].extent()[0], dim = in[0].extent()[1], keys = in[1].extent()[0];
  std::vector<double> q = in[0].values(), k = in[1].values(), v = in[2].values(), s(static_cast<size_t>(keys));
  for (int64_t i = 0; i < seq; ++i) {
    double m = -INFINITY, total = 0;
    for (int64_t j = 0; j < keys; ++j) {
      double d = 0;
      for (int64_t c = 0; c < dim; ++c) d += q[size_t(i * dim + c)] * k[size_t(j * dim + c)];
      s[size_t(j)] = d / std::sqrt(double(dim));
      m = std::max(m, s[size_t(j)]);
    }
    for (double& x : s) total += (x = std::exp(x - m));
    for (int64_t c = 0; c < dim; ++c) {
      double o = 0;
      for (int64_t j = 0; j < keys; ++j) o += s[size_t(j)] * v[size_t(j * dim + c)];
      out.set(size_t(i * dim + c), o / total);
    }
  }
}

}  // namespace

References reference_kernels() {
  References r;
  r.add("vadd", 3, last_out(vadd));
  r.add("softmax", 2, last_out(softmax_in_cells));
  r.add("row_softmax", 2, last_out(softmax_in_cells));
  r.add("transpose", 2, last_out(transpose));
  r.add("matmul", 3, last_out(matmul));
  r.add("flash_attn", 4, last_out(flash_attn));
  r.add("flash_attn_bf16", 4, last_out(flash_attn));
  return r;
}

}  // namespace kiln::tile
