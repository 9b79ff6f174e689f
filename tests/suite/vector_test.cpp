// Vectors and launch geometry: saxpy over vector widths 1..8 with a scalar broadcast, building and
// taking apart vectors (vector_of, lanes, with_lane), 2D and 3D cube dims and counts against the
// builtins' linearisation rules, scalar parameters of several types, and an output aliasing an input.
#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

// y = a * x + y, one vector per unit; y may be longer than x (its tail must stay untouched).
template <class F>
struct Saxpy {
  static constexpr std::string_view name = "saxpy";
  void operator()(Scalar<float> a, Slice<const Vector<F>> x, Slice<Vector<F>> y) const {
    If(absolute_pos() < x.len(),
       [&] { y[absolute_pos()] = Vector<F>(cast<F>(a)) * x[absolute_pos()] + y[absolute_pos()]; });
  }
};

// Reverses each vector's lanes, puts lane0 + lane(W-1) into the middle lane, and writes
// lane0 * lane(W-1) as a scalar.
template <class T, int W>
struct VectorLanes {
  static constexpr std::string_view name = "vector_lanes";
  void operator()(Slice<const Vector<T>> x, Slice<Vector<T>> y, Slice<T> s) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Vector<T> v = x[i];
      Vector<T> r = [&]<size_t... L>(std::index_sequence<L...>) { return vector_of<T>(v[W - 1 - int(L)]...); }
      (std::make_index_sequence<W>{});
      y[i] = r.with_lane(W / 2, v[0] + v[W - 1]);
      s[i] = v[0] * v[W - 1];
    });
  }
};

// A 2D grid over a w x h matrix: each unit writes its element and where it ran.
template <class T>
struct Grid2D {
  static constexpr std::string_view name = "grid_2d";
  void operator()(Slice<const T> in, Slice<T> out, Slice<uint32_t> where, Scalar<uint32_t> w,
                  Scalar<uint32_t> h) const {
    auto x = absolute_pos_x();
    auto y = absolute_pos_y();
    If(x < w && y < h, [&] {
      auto idx = y * w + x;
      out[idx] = in[idx] * 3 + cast<T>(x) - cast<T>(y);  // an int literal: every T holds 3
      where[idx * 4u] = unit_pos_x();
      where[idx * 4u + 1u] = unit_pos_y();
      where[idx * 4u + 2u] = cube_pos_x();
      where[idx * 4u + 3u] = cube_pos_y();
    });
  }
};

constexpr uint32_t kFields = 22;

// Every builtin of every unit, at absolute_pos() * kFields.
struct Builtins {
  static constexpr std::string_view name = "builtins";
  void operator()(Slice<uint32_t> out) const {
    auto base = absolute_pos() * kFields;
    Expr<uint32_t> f[kFields] = {absolute_pos(), absolute_pos_x(), absolute_pos_y(), absolute_pos_z(), unit_pos(),
                                 unit_pos_x(),   unit_pos_y(),     unit_pos_z(),     cube_pos(),       cube_pos_x(),
                                 cube_pos_y(),   cube_pos_z(),     cube_dim(),       cube_dim_x(),     cube_dim_y(),
                                 cube_dim_z(),   cube_count(),     cube_count_x(),   cube_count_y(),   cube_count_z(),
                                 plane_dim(),    unit_pos_plane()};
    for (uint32_t k = 0; k < kFields; ++k) out[base + k] = f[k];
  }
};

// Scalar parameters of several types next to buffers.
struct ScalarParams {
  static constexpr std::string_view name = "scalar_params";
  void operator()(Slice<const int32_t> x, Scalar<int32_t> a, Scalar<double> b, Scalar<uint64_t> c, Scalar<bool> flag,
                  Scalar<f16> h, Scalar<int8_t> s8, Slice<double> out_d, Slice<uint64_t> out_u, Slice<f16> out_h,
                  Slice<int8_t> out_i8) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Expr<int32_t> v = x[i];
      out_d[i] = cast<double>(v) * b + cast<double>(a);
      out_u[i] = cast<uint64_t>(v) ^ c;
      out_h[i] = select(flag, Expr<f16>(h), -Expr<f16>(h)) * cast<f16>(v % 8);
      out_i8[i] = cast<int8_t>(v) + s8;
    });
  }
};

// out = x + y, launched with out and x the same buffer.
template <class F>
struct AliasedAdd {
  static constexpr std::string_view name = "aliased_add";
  void operator()(Slice<const F> x, Slice<const F> y, Slice<F> out) const {
    auto i = absolute_pos();
    If(i < out.len(), [&] { out[i] = x[i] + y[i]; });
  }
};

template <class F>
void register_saxpy(int width) {
  const size_t units = 1009, n = units * size_t(width), tail = size_t(width) * 3;
  add_case(case_name({"saxpy", dtype_name<F>(), vw(width), nn(n)}), kernels<Saxpy<F>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<F>(rng, n, -10, 10), y = random_values<F>(rng, n + tail, -10, 10);
             float a = float(std::uniform_real_distribution<double>(-4, 4)(rng));
             for (size_t i = n; i < n + tail; ++i) y[i] = poison_vector<F>(1)[0];  // past x: must stay as is
             Handle hx = client.upload(x), hy = client.upload(y);
             launch<Saxpy<F>>(client, CubeCount{cubes_for(units + 3, 64)}, CubeDim{64}, width, a, hx, hy);
             std::vector<F> expected = y;
             F af = narrow<F>(a);
             for (size_t i = 0; i < n; ++i) expected[i] = ref::add(ref::mul(af, x[i]), y[i]);
             expect_near("a * x + y", expected, client.read<F>(hy), tol_fused<F>(40));
           });
}

template <class T, int W>
void register_lanes() {
  const size_t units = 1013, n = units * W;
  add_case(case_name({"vector_lanes", dtype_name<T>(), vw(W), nn(n)}), kernels<VectorLanes<T, W>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<T>(rng, n, -50, 50);
             Handle hx = client.upload(x), hy = poisoned_elems<T>(client, n), hs = poisoned_elems<T>(client, units);
             launch<VectorLanes<T, W>>(client, CubeCount{cubes_for(units, 100)}, CubeDim{100}, W, hx, hy, hs);
             std::vector<T> ey(n), es(units);
             for (size_t u = 0; u < units; ++u) {
               const T* v = &x[u * W];
               for (int l = 0; l < W; ++l) ey[u * W + size_t(l)] = v[W - 1 - l];
               ey[u * W + W / 2] = ref::add(v[0], v[W - 1]);
               es[u] = ref::mul(v[0], v[W - 1]);
             }
             expect_near("reversed lanes with a middle sum", ey, client.read<T>(hy), tol_arith<T>());
             expect_near("lane0 * last lane", es, client.read<T>(hs), tol_arith<T>());
           });
}

template <class T>
void register_grid2d(uint32_t w, uint32_t h, uint32_t dx, uint32_t dy) {
  add_case(case_name({"grid_2d", dtype_name<T>(), std::to_string(w) + "x" + std::to_string(h),
                      "dim" + std::to_string(dx) + "x" + std::to_string(dy)}),
           kernels<Grid2D<T>>(), [=](Client& client, std::mt19937_64& rng) {
             size_t n = size_t(w) * h;
             auto in = random_values<T>(rng, n, -100, 100);
             Handle hin = client.upload(in), hout = poisoned_elems<T>(client, n),
                    hw = poisoned_elems<uint32_t>(client, 4 * n);
             launch<Grid2D<T>>(client, CubeCount{cubes_for(w, dx), cubes_for(h, dy)}, CubeDim{dx, dy}, 1, hin, hout, hw,
                               w, h);
             std::vector<T> eo(n);
             std::vector<uint32_t> ew(4 * n);
             for (uint32_t y = 0; y < h; ++y) {
               for (uint32_t x = 0; x < w; ++x) {
                 size_t i = size_t(y) * w + x;
                 eo[i] = ref::sub(ref::add(ref::mul(in[i], make<T>(3)), ref::cast<T>(x)), ref::cast<T>(y));
                 ew[4 * i] = x % dx;
                 ew[4 * i + 1] = y % dy;
                 ew[4 * i + 2] = x / dx;
                 ew[4 * i + 3] = y / dy;
               }
             }
             expect_near("in * 3 + x - y", eo, client.read<T>(hout), tol_fused<T>(400));
             expect_equal("unit_pos_x, unit_pos_y, cube_pos_x, cube_pos_y", ew, client.read<uint32_t>(hw));
           });
}

void register_builtins(CubeCount c, CubeDim d) {
  auto s = [](uint32_t x, uint32_t y, uint32_t z) {
    return std::to_string(x) + "x" + std::to_string(y) + "x" + std::to_string(z);
  };
  add_case(
      case_name({"builtins", "count" + s(c.x, c.y, c.z), "dim" + s(d.x, d.y, d.z)}), kernels<Builtins>(),
      [=](Client& client, std::mt19937_64&) {
        uint32_t per = d.x * d.y * d.z, cubes = c.x * c.y * c.z;
        size_t total = size_t(per) * cubes;
        Handle out = poisoned_elems<uint32_t>(client, total * kFields);
        launch<Builtins>(client, c, d, 1, out);
        std::vector<uint32_t> e(total * kFields);
        for (uint32_t cz = 0; cz < c.z; ++cz)
          for (uint32_t cy = 0; cy < c.y; ++cy)
            for (uint32_t cx = 0; cx < c.x; ++cx)
              for (uint32_t uz = 0; uz < d.z; ++uz)
                for (uint32_t uy = 0; uy < d.y; ++uy)
                  for (uint32_t ux = 0; ux < d.x; ++ux) {
                    uint32_t unit = ux + uy * d.x + uz * d.x * d.y;
                    uint32_t cube = cx + cy * c.x + cz * c.x * c.y;
                    uint32_t abs = cube * per + unit;
                    uint32_t f[kFields] = {
                        abs, cx * d.x + ux, cy * d.y + uy, cz * d.z + uz, unit, ux,    uy,  uz,  cube, cx, cy,
                        cz,  per,           d.x,           d.y,           d.z,  cubes, c.x, c.y, c.z,  32, unit % 32};
                    std::copy(f, f + kFields, e.begin() + std::ptrdiff_t(size_t(abs) * kFields));
                  }
        expect_equal(
            "builtins per unit (abs, abs_xyz, unit, unit_xyz, cube, cube_xyz, dim, dim_xyz, count, "
            "count_xyz, plane_dim, unit_pos_plane)",
            e, client.read<uint32_t>(out));
      });
}

KILN_SUITE_CASES(vector) {
  for (int w : {1, 2, 4, 8}) register_saxpy<float>(w);
  register_saxpy<f16>(2);
  register_saxpy<f16>(8);
  register_saxpy<double>(2);
  register_saxpy<bf16>(4);
  register_lanes<float, 4>();
  register_lanes<int32_t, 8>();
  register_lanes<f16, 2>();
  register_lanes<uint8_t, 16>();
  register_lanes<double, 2>();
  register_grid2d<float>(37, 19, 16, 8);
  register_grid2d<int32_t>(101, 7, 32, 4);
  register_grid2d<f16>(5, 61, 4, 16);
  register_builtins(CubeCount{3, 2, 2}, CubeDim{4, 3, 2});
  register_builtins(CubeCount{2, 1, 3}, CubeDim{40, 1, 1});
  register_builtins(CubeCount{1, 5, 1}, CubeDim{7, 6, 1});

  const size_t n = 1021;
  add_case(case_name({"scalar_params", nn(n)}), kernels<ScalarParams>(), [=](Client& client, std::mt19937_64& rng) {
    auto x = random_values<int32_t>(rng, n, -1000000, 1000000);
    Handle hx = client.upload(x);
    uint64_t compiled = 0;
    for (int round = 0; round < 2; ++round) {
      int32_t a = random_values<int32_t>(rng, 1, -1e9, 1e9)[0];
      double b = random_values<double>(rng, 1, -3, 3)[0];
      uint64_t c = rng();
      bool flag = (rng() & 1) != 0;
      f16 h = random_values<f16>(rng, 1, -8, 8)[0];
      int8_t s8 = random_values<int8_t>(rng, 1, -128, 127)[0];
      Handle od = poisoned_elems<double>(client, n), ou = poisoned_elems<uint64_t>(client, n),
             oh = poisoned_elems<f16>(client, n), o8 = poisoned_elems<int8_t>(client, n);
      launch<ScalarParams>(client, CubeCount{cubes_for(n, 128)}, CubeDim{128}, 1, hx, a, b, c, flag, h, s8, od, ou, oh,
                           o8);
      std::string r = " (round " + std::to_string(round) + ")";
      expect_near("x * b + a" + r, tabulate<double>(n, [&](size_t i) { return double(x[i]) * b + double(a); }),
                  client.read<double>(od), tol_arith<double>());
      expect_equal("x ^ c" + r, tabulate<uint64_t>(n, [&](size_t i) { return uint64_t(int64_t(x[i])) ^ c; }),
                   client.read<uint64_t>(ou));
      expect_near("(flag ? h : -h) * (x % 8)" + r,
                  tabulate<f16>(
                      n, [&](size_t i) { return ref::mul(flag ? h : ref::neg(h), ref::cast<f16>(ref::rem(x[i], 8))); }),
                  client.read<f16>(oh), tol_arith<f16>());
      expect_equal("i8(x) + s8" + r, tabulate<int8_t>(n, [&](size_t i) { return ref::add(int8_t(x[i]), s8); }),
                   client.read<int8_t>(o8));
      // A new scalar value is not a new kernel.
      uint64_t now = client.stats().compilations;
      if (round == 1) {
        EXPECT_EQ(now, compiled) << "changing Scalar<T> arguments recompiled the kernel";
        note_check();
      }
      compiled = now;
    }
  });

  add_case(case_name({"aliased_add", "f32", nn(n)}), kernels<AliasedAdd<float>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<float>(rng, n, -10, 10), y = random_values<float>(rng, n, -10, 10);
             Handle hx = client.upload(x), hy = client.upload(y);
             launch<AliasedAdd<float>>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hx, hy, hx);
             expect_near("x += y through an aliased output", tabulate<float>(n, [&](size_t i) { return x[i] + y[i]; }),
                         client.read<float>(hx), tol_arith<float>());
           });
}

}  // namespace
}  // namespace kiln::suite
