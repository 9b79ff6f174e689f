// The gallery's kernels. Seed 01's saxpy and add, and a few that show the rest of the language:
// a shared-memory tree reduction, an atomic histogram, a tiled transpose, a row softmax.
#pragma once

#include <cmath>

#include "kiln/dsl.h"

namespace kiln::gallery {

// The units of a plane (a warp's lanes), which plane reductions combine.
inline constexpr uint32_t kPlane = ir::Target::kPlaneWidth;
// Planes a cube of the most units has: one partial each fits shared arrays of this length.
inline constexpr uint32_t kMaxPlanes = ir::Target::kMaxCubeUnits / kPlane;

// y = a * x + y, one vector of floats per unit.
template <class F>
struct Saxpy {
  static constexpr std::string_view name = "saxpy";
  static constexpr std::array<std::string_view, 3> param_names{"a", "x", "y"};
  void operator()(Scalar<float> a, Slice<const Vector<F>> x, Slice<Vector<F>> y) const {
    If(absolute_pos() < x.len(),
       [&] { y[absolute_pos()] = Vector<F>(cast<F>(a)) * x[absolute_pos()] + y[absolute_pos()]; });
  }
};

// out = x + y; `relu` is decided when the kernel is compiled.
struct Add {
  static constexpr std::string_view name = "add";
  static constexpr std::array<std::string_view, 4> param_names{"x", "y", "out", "relu"};
  void operator()(Slice<const float> x, Slice<const float> y, Slice<float> out, Comptime<bool> relu) const {
    auto v = x[absolute_pos()] + y[absolute_pos()];
    if (relu) out[absolute_pos()] = max(v, 0.0f);  // a C++ if: only one branch is recorded
    else out[absolute_pos()] = v;
  }
};

// partial[cube] = the sum of the cube's slice of x: each unit sums a strided run, then the cube
// halves its shared array until one value is left.
struct ReduceSum {
  static constexpr std::string_view name = "reduce_sum";
  static constexpr std::array<std::string_view, 3> param_names{"x", "partial", "per_unit"};
  void operator()(Slice<const float> x, Slice<float> partial, Comptime<int> per_unit) const {
    uint32_t units = uint32_t(static_cube_dim().total());
    SharedArray<float> s(units);
    auto base = cube_pos() * (cube_dim() * uint32_t(per_unit.get()));
    Var<float> acc = 0.0f;
    for (int k = 0; k < per_unit; ++k) {  // a C++ loop: unrolled while tracing
      auto i = base + uint32_t(k) * cube_dim() + unit_pos();
      If(i < x.len(), [&] { acc += x[i]; });
    }
    s[unit_pos()] = acc;
    sync_cube();
    for (uint32_t stride = units / 2; stride > 0; stride /= 2) {
      If(unit_pos() < stride, [&] { s[unit_pos()] = s[unit_pos()] + s[unit_pos() + stride]; });
      sync_cube();
    }
    If(unit_pos() == 0u, [&] { partial[cube_pos()] = s[0u]; });
  }
};

// bins[v] += 1 for every byte v of data.
struct Histogram {
  static constexpr std::string_view name = "histogram";
  static constexpr std::array<std::string_view, 2> param_names{"data", "bins"};
  void operator()(Slice<const uint8_t> data, Slice<uint32_t> bins) const {
    auto i = absolute_pos();
    If(i < data.len(), [&] {
      auto v = cast<uint32_t>(data[i]);
      atomic_add(bins[v], 1u);
    });
  }
};

// out (cols x rows) = transpose of x (rows x cols), through a 32 x 33 shared tile (the extra
// column keeps the column reads on distinct banks).
struct Transpose {
  static constexpr std::string_view name = "transpose";
  static constexpr std::array<std::string_view, 4> param_names{"x", "out", "rows", "cols"};
  void operator()(Slice<const float> x, Slice<float> out, Scalar<uint32_t> rows, Scalar<uint32_t> cols) const {
    SharedArray<float> tile(32 * 33);
    auto tx = unit_pos_x();
    auto ty = unit_pos_y();
    auto c = cube_pos_x() * 32u + tx;
    auto r = cube_pos_y() * 32u + ty;
    If(r < rows && c < cols, [&] { tile[ty * 33u + tx] = x[r * cols + c]; });
    sync_cube();
    auto oc = cube_pos_y() * 32u + tx;  // column of out = row of x
    auto orow = cube_pos_x() * 32u + ty;
    If(orow < cols && oc < rows, [&] { out[orow * rows + oc] = tile[tx * 33u + ty]; });
  }
};

// out[row] = softmax(x[row]) for rows of `cols` floats, one cube per row: plane reductions, then
// one value per plane through shared memory.
struct Softmax {
  static constexpr std::string_view name = "softmax";
  static constexpr std::array<std::string_view, 3> param_names{"x", "out", "cols"};
  void operator()(Slice<const float> x, Slice<float> out, Scalar<uint32_t> cols) const {
    SharedArray<float> part(kMaxPlanes);
    auto row = cube_pos() * cols;
    auto plane = unit_pos() / kPlane;
    auto lane = unit_pos_plane();
    // The cube's maximum.
    Var<float> m = -INFINITY;
    For(range(unit_pos(), cols, cube_dim()), [&](Expr<uint32_t> c) { m = max(m, x[row + c]); });
    auto pm = plane_max(m.get());
    If(lane == 0u, [&] { part[plane] = pm; });
    sync_cube();
    Var<float> cube_max = part[0u];
    For(range(1u, cube_dim() / kPlane), [&](Expr<uint32_t> p) { cube_max = max(cube_max, part[p]); });
    auto mx = cube_max.get();
    sync_cube();
    // The sum of exp(x - max).
    Var<float> s = 0.0f;
    For(range(unit_pos(), cols, cube_dim()), [&](Expr<uint32_t> c) { s += exp(x[row + c] - mx); });
    auto ps = plane_sum(s.get());
    If(lane == 0u, [&] { part[plane] = ps; });
    sync_cube();
    Var<float> total = 0.0f;
    For(range(0u, cube_dim() / kPlane), [&](Expr<uint32_t> p) { total += part[p]; });
    auto inv = 1.0f / total.get();
    For(range(unit_pos(), cols, cube_dim()), [&](Expr<uint32_t> c) { out[row + c] = exp(x[row + c] - mx) * inv; });
  }
};

// partial[cube] = sum of x over a grid-stride loop; 16-byte loads, a plane sum, one value per plane
// through shared memory.
struct SumPartials {
  static constexpr std::string_view name = "sum_partials";
  void operator()(Slice<const Vector<float>> x, Slice<float> partial) const {
    const uint32_t planes = uint32_t(static_cube_dim().total() / kPlane);
    SharedArray<float> per_plane(planes);
    Var<Vector<float>> acc = 0.0f;
    For(range(absolute_pos(), x.len(), cube_count() * cube_dim()).unroll(4), [&](Expr<uint32_t> i) { acc += x[i]; });
    Vector<float> v = acc;
    Expr<float> s = v[0];
    for (int l = 1; l < v.width(); ++l) s = s + v[l];
    auto p = plane_sum(s);
    If(unit_pos_plane() == 0u, [&] { per_plane[unit_pos() / kPlane] = p; });
    sync_cube();
    If(unit_pos() == 0u, [&] {
      Var<float> total = per_plane[0u];
      for (uint32_t q = 1; q < planes; ++q) total += per_plane[q];
      partial[cube_pos()] = total;
    });
  }
};

// out[0] = sum of partial, one cube.
struct SumFinal {
  static constexpr std::string_view name = "sum_final";
  void operator()(Slice<const float> partial, Slice<float> out) const {
    const uint32_t planes = uint32_t(static_cube_dim().total() / kPlane);
    SharedArray<float> per_plane(planes);
    Var<float> acc = 0.0f;
    For(range(unit_pos(), partial.len(), cube_dim()), [&](Expr<uint32_t> i) { acc += partial[i]; });
    auto p = plane_sum(acc.get());
    If(unit_pos_plane() == 0u, [&] { per_plane[unit_pos() / kPlane] = p; });
    sync_cube();
    If(unit_pos() == 0u, [&] {
      Var<float> total = per_plane[0u];
      for (uint32_t q = 1; q < planes; ++q) total += per_plane[q];
      out[0u] = total;
    });
  }
};

}  // namespace kiln::gallery
