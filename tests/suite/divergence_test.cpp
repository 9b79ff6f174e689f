// Divergence and less common shapes: plane ops inside loops whose trip counts differ by unit,
// Break and Continue across a For and an inner While, Terminate inside a loop before a barrier,
// a While whose condition assigns Vars, ranges over signed bounds with a step, vector Vars,
// shared and local arrays of vectors, select with a vector condition and scalar values, plane
// ops on vectors, and float and small-integer comptime values.
#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

// Each unit runs count[i] iterations; every iteration takes a plane_sum and a ballot over the
// units still in the loop.
struct PlaneInLoop {
  static constexpr std::string_view name = "plane_in_loop";
  void operator()(Slice<const uint32_t> count, Slice<uint32_t> out) const {
    auto i = absolute_pos();
    Var<uint32_t> acc = 0u;
    For(range(0u, count[i]), [&](Expr<uint32_t> j) {
      Expr<uint32_t> still = plane_sum(Expr<uint32_t>(1u));
      Expr<uint32_t> who = plane_ballot(j < 1000u);
      acc = acc * 31u + still * (j + 1u) + who;
    });
    out[i] = acc;
  }
};

struct NestedBreak {
  static constexpr std::string_view name = "nested_break";
  void operator()(Slice<const uint32_t> skip, Slice<const uint32_t> lim, Slice<uint32_t> total_out,
                  Slice<uint32_t> last_out) const {
    auto i = absolute_pos();
    If(i < skip.len(), [&] {
      Var<uint32_t> total = 0u, last = 99u;
      Expr<uint32_t> limit = lim[i];
      For(range(0u, 12u), [&](Expr<uint32_t> a) {
        If(a == skip[i], [&] { Continue(); });
        Var<uint32_t> b = 0u;
        While([&] { return b < 50u; },
              [&] {
                If(b * a > limit, [&] { Break(); });
                total = total + b + a;
                b = b + 1u;
              });
        last = a;
        If(total > limit + 500u, [&] { Break(); });
      });
      total_out[i] = total;
      last_out[i] = last;
    });
  }
};

constexpr uint32_t kTermDim = 64;

// A unit terminates at iteration when[i] (if below 20); the others meet at a barrier and read
// their neighbour's slot (0 where the neighbour terminated).
struct TerminateInLoop {
  static constexpr std::string_view name = "terminate_in_loop";
  void operator()(Slice<const uint32_t> when, Slice<uint32_t> out) const {
    SharedArray<uint32_t> s(kTermDim);
    auto u = unit_pos();
    auto i = absolute_pos();
    s[u] = 0u;
    sync_cube();
    Var<uint32_t> acc = 0u;
    For(range(0u, 20u), [&](Expr<uint32_t> j) {
      If(j == when[i], [&] { Terminate(); });
      acc = acc + j * 2u + 1u;
    });
    s[u] = acc;
    sync_cube();
    out[i] = acc + s[(u + 1u) % kTermDim];
  }
};

// The condition region steps a generator and counts; the body sums what it produced.
struct WhileCondVars {
  static constexpr std::string_view name = "while_cond_vars";
  void operator()(Slice<const uint32_t> seed, Slice<uint32_t> sum_out, Slice<uint32_t> count_out) const {
    auto i = absolute_pos();
    If(i < seed.len(), [&] {
      Var<uint32_t> v = seed[i], c = 0u, acc = 0u;
      While(
          [&] {
            v = (v * 1103515245u + 12345u) % 1000u;
            c = c + 1u;
            return v > 100u && c < 60u;
          },
          [&] { acc = acc + v; });
      sum_out[i] = acc;
      count_out[i] = c;
    });
  }
};

// for (k = lo; k < hi; k += 3) over signed bounds read from buffers.
struct SignedRange {
  static constexpr std::string_view name = "signed_range";
  void operator()(Slice<const int32_t> lo, Slice<const int32_t> hi, Slice<int32_t> out) const {
    auto i = absolute_pos();
    If(i < lo.len(), [&] {
      Var<int32_t> acc = 1;
      For(range(lo[i], hi[i], 3), [&](Expr<int32_t> k) { acc = acc * 7 + k; });
      out[i] = acc;
    });
  }
};

// y[i] = sum over k < m of x[k * units + i]^2, accumulated in a vector Var.
template <class T>
struct VectorVarLoop {
  static constexpr std::string_view name = "vector_var_loop";
  void operator()(Slice<const Vector<T>> x, Slice<Vector<T>> y, Scalar<uint32_t> m) const {
    auto i = absolute_pos();
    auto units = y.len();
    If(i < units, [&] {
      Var<Vector<T>> acc = T(1);  // a scalar broadcast into the vector Var
      For(range(0u, m), [&](Expr<uint32_t> k) {
        Vector<T> v = x[k * units + i];
        acc = acc + v * v;
      });
      y[i] = acc;
    });
  }
};

// Reverses the vectors of each cube through a shared array of vectors; also doubles each vector
// through a local array of vectors.
template <class T>
struct VectorArrays {
  static constexpr std::string_view name = "vector_arrays";
  void operator()(Slice<const Vector<T>> x, Slice<Vector<T>> reversed, Slice<Vector<T>> tripled,
                  Comptime<int> block) const {
    SharedArray<Vector<T>> s(block);
    LocalArray<Vector<T>> loc(3);
    auto u = unit_pos();
    auto i = absolute_pos();
    Var<Vector<T>> v = make<T>(0);
    If(i < x.len(), [&] { v = x[i]; });
    s[u] = v;
    loc[0u] = v;
    loc[1u] = v + v;
    loc[2u] = loc[0u] + loc[1u];
    sync_cube();
    If(i < x.len(), [&] {
      reversed[i] = s[uint32_t(block - 1) - u];
      tripled[i] = loc[2u];
    });
  }
};

// sign(x) by select with a per-lane condition and scalar values.
template <class F>
struct SignVec {
  static constexpr std::string_view name = "sign_vec";
  void operator()(Slice<const Vector<F>> x, Slice<Vector<F>> y) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Vector<F> v = x[i];
      y[i] = select(v > 0.0f, Expr<F>(1.0f), select(v < 0.0f, Expr<F>(-1.0f), Expr<F>(0.0f)));
    });
  }
};

// Plane ops lane by lane on vectors; every unit is active.
template <class T>
struct PlaneVector {
  static constexpr std::string_view name = "plane_vector";
  void operator()(Slice<const Vector<T>> x, Slice<Vector<T>> sum, Slice<Vector<T>> hi, Slice<Vector<T>> swapped) const {
    auto i = absolute_pos();
    Vector<T> v = x[i];
    sum[i] = plane_sum(v);
    hi[i] = plane_max(v);
    swapped[i] = plane_shuffle_xor(v, 1u);
  }
};

// y = (x << shift) * scale + offset with comptime values of three types.
struct ComptimeKinds {
  static constexpr std::string_view name = "comptime_kinds";
  void operator()(Slice<const int32_t> x, Slice<double> y, Comptime<double> scale, Comptime<uint8_t> shift,
                  Comptime<int64_t> offset) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] { y[i] = cast<double>(x[i] << int32_t(shift)) * double(scale) + double(offset); });
  }
};

// Calls f(first, count) for each plane of each cube of `dim` units, over exactly n units.
template <class F>
void planes_of(size_t n, uint32_t dim, F&& f) {
  for (size_t c0 = 0; c0 < n; c0 += dim)
    for (size_t p0 = c0; p0 < c0 + dim && p0 < n; p0 += 32) f(p0, std::min({p0 + 32, c0 + dim, n}) - p0);
}

KILN_SUITE_CASES(divergence) {
  for (uint32_t dim : {64u, 48u}) {
    const uint32_t cubes = 7;
    const size_t n = size_t(dim) * cubes;
    add_case(case_name({"plane_in_loop", "dim" + std::to_string(dim), nn(n)}), kernels<PlaneInLoop>(),
             [=](Client& client, std::mt19937_64& rng) {
               auto count = random_values<uint32_t>(rng, n, 0, 12);
               Handle hc = client.upload(count), ho = poisoned_elems<uint32_t>(client, n);
               launch<PlaneInLoop>(client, CubeCount{cubes}, CubeDim{dim}, 1, hc, ho);
               std::vector<uint32_t> e(n);
               planes_of(n, dim, [&](size_t p0, size_t size) {
                 for (size_t l = 0; l < size; ++l) {
                   uint32_t acc = 0;
                   for (uint32_t j = 0; j < count[p0 + l]; ++j) {
                     uint32_t still = 0, who = 0;
                     for (size_t m = 0; m < size; ++m) {
                       if (count[p0 + m] > j) ++still, who |= 1u << m;
                     }
                     acc = acc * 31u + still * (j + 1u) + who;
                   }
                   e[p0 + l] = acc;
                 }
               });
               expect_equal("plane_sum and ballot over the units still looping", e, client.read<uint32_t>(ho));
             });
  }

  const size_t n = 1001;
  add_case(case_name({"nested_break", nn(n)}), kernels<NestedBreak>(), [=](Client& client, std::mt19937_64& rng) {
    auto skip = random_values<uint32_t>(rng, n, 0, 15), lim = random_values<uint32_t>(rng, n, 0, 300);
    auto out = run_map<NestedBreak, uint32_t, 2>(client, 1, 64, n, skip, lim);
    std::vector<uint32_t> et(n), el(n);
    for (size_t i = 0; i < n; ++i) {
      uint32_t total = 0, last = 99;
      for (uint32_t a = 0; a < 12; ++a) {
        if (a == skip[i]) continue;
        for (uint32_t b = 0; b < 50; ++b) {
          if (b * a > lim[i]) break;
          total += b + a;
        }
        last = a;
        if (total > lim[i] + 500) break;
      }
      et[i] = total;
      el[i] = last;
    }
    expect_equal("total", et, out[0]);
    expect_equal("last outer index", el, out[1]);
  });

  add_case(case_name({"terminate_in_loop", "dim64", nn(kTermDim * 9)}), kernels<TerminateInLoop>(),
           [](Client& client, std::mt19937_64& rng) {
             const size_t n = kTermDim * 9;
             auto when = random_values<uint32_t>(rng, n, 0, 40);
             Handle hw = client.upload(when), ho = poisoned_elems<uint32_t>(client, n);
             launch<TerminateInLoop>(client, CubeCount{9}, CubeDim{kTermDim}, 1, hw, ho);
             auto acc_of = [](uint32_t) {
               uint32_t a = 0;
               for (uint32_t j = 0; j < 20; ++j) a += j * 2 + 1;
               return a;
             };
             std::vector<uint32_t> e = poison_vector<uint32_t>(n);
             for (size_t i = 0; i < n; ++i) {
               if (when[i] < 20) continue;  // terminated: out keeps its poison
               size_t u = i % kTermDim, nb = i - u + (u + 1) % kTermDim;
               e[i] = acc_of(0) + (when[nb] < 20 ? 0 : acc_of(0));
             }
             expect_equal("survivors: acc + neighbour's slot", e, client.read<uint32_t>(ho));
           });

  add_case(case_name({"while_cond_vars", nn(n)}), kernels<WhileCondVars>(), [=](Client& client, std::mt19937_64& rng) {
    auto seed = random_any<uint32_t>(rng, n);
    auto out = run_map<WhileCondVars, uint32_t, 2>(client, 1, 64, n, seed);
    std::vector<uint32_t> es(n), ec(n);
    for (size_t i = 0; i < n; ++i) {
      uint32_t v = seed[i], c = 0, acc = 0;
      while (true) {
        v = (v * 1103515245u + 12345u) % 1000u;
        c = c + 1;
        if (!(v > 100 && c < 60)) break;
        acc += v;
      }
      es[i] = acc;
      ec[i] = c;
    }
    expect_equal("sum of the generated values", es, out[0]);
    expect_equal("condition evaluations", ec, out[1]);
  });

  add_case(case_name({"signed_range", "i32", nn(n)}), kernels<SignedRange>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto lo = random_values<int32_t>(rng, n, -30, 30), hi = random_values<int32_t>(rng, n, -30, 30);
             auto out = run_map<SignedRange, int32_t, 1>(client, 1, 64, n, lo, hi);
             expect_equal("acc over k = lo, lo + 3, ... < hi",
                          tabulate<int32_t>(n,
                                            [&](size_t i) {
                                              int32_t acc = 1;
                                              // Wrapping arithmetic, as the kernel's (the IR's integers wrap; C++'s
                                              // signed ones may not).
                                              for (int32_t k = lo[i]; k < hi[i]; k += 3)
                                                acc = int32_t(uint32_t(acc) * 7u + uint32_t(k));
                                              return acc;
                                            }),
                          out[0]);
           });

  for_types<int32_t, float>([]<class T>() {
    for (int w : {1, 4, 8}) {
      const size_t units = 301;
      const uint32_t m = 9;
      add_case(case_name({"vector_var_loop", dtype_name<T>(), vw(w), nn(units * size_t(w))}),
               kernels<VectorVarLoop<T>>(), [=](Client& client, std::mt19937_64& rng) {
                 auto x = random_values<T>(rng, units * size_t(w) * m, -100, 100);
                 Handle hx = client.upload(x), hy = poisoned_elems<T>(client, units * size_t(w));
                 launch<VectorVarLoop<T>>(client, CubeCount{cubes_for(units, 64)}, CubeDim{64}, w, hx, hy, m);
                 auto e = tabulate<T>(units * size_t(w), [&](size_t e_) {
                   size_t i = e_ / size_t(w), l = e_ % size_t(w);
                   T acc = make<T>(1);
                   for (size_t k = 0; k < m; ++k) {
                     T v = x[(k * units + i) * size_t(w) + l];
                     acc = ref::add(acc, ref::mul(v, v));
                   }
                   return acc;
                 });
                 expect_near("1 + sum of squares in a vector Var", e, client.read<T>(hy), tol_fused<T>(1e5));
               });
    }
  });

  for_types<float, int64_t, f16>([]<class T>() {
    for (int w : {1, 4}) {
      const int block = 64;
      const size_t units = 1000, len = units * size_t(w);
      add_case(case_name({"vector_arrays", dtype_name<T>(), vw(w), nn(len)}), kernels<VectorArrays<T>>(),
               [=](Client& client, std::mt19937_64& rng) {
                 auto x = random_values<T>(rng, len, -100, 100);
                 Handle hx = client.upload(x), hr = poisoned_elems<T>(client, len), ht = poisoned_elems<T>(client, len);
                 launch<VectorArrays<T>>(client, CubeCount{cubes_for(units, block)}, CubeDim{uint32_t(block)}, w, hx,
                                         hr, ht, comptime(block));
                 std::vector<T> er(len), et(len);
                 for (size_t i = 0; i < units; ++i) {
                   size_t c = i / size_t(block), u = i % size_t(block), src = c * size_t(block) + size_t(block) - 1 - u;
                   for (size_t l = 0; l < size_t(w); ++l) {
                     er[i * size_t(w) + l] = src < units ? x[src * size_t(w) + l] : make<T>(0);
                     T v = x[i * size_t(w) + l];
                     et[i * size_t(w) + l] = ref::add(v, ref::add(v, v));
                   }
                 }
                 expect_equal("reversed within each cube through shared vectors", er, client.read<T>(hr));
                 expect_near("v + (v + v) through local vectors", et, client.read<T>(ht), tol_arith<T>());
               });
    }
  });

  for (int w : {1, 4, 8}) {
    const size_t len = 1003 * size_t(w);
    add_case(case_name({"sign_vec", "f32", vw(w), nn(len)}), kernels<SignVec<float>>(),
             [=](Client& client, std::mt19937_64& rng) {
               auto x = random_values<float>(rng, len, -3, 3);
               sprinkle_specials(x, rng);
               auto out = run_map<SignVec<float>, float, 1>(client, w, 64, len, x);
               expect_equal("sign(x) (NaN gives 0)",
                            tabulate<float>(len, [&](size_t i) { return x[i] > 0   ? 1.0f
                                                                        : x[i] < 0 ? -1.0f
                                                                                   : 0.0f; }),
                            out[0]);
             });
  }

  for (uint32_t dim : {64u, 40u}) {
    const int w = 4;
    const uint32_t cubes = 5;
    const size_t units = size_t(dim) * cubes, len = units * w;
    add_case(case_name({"plane_vector", "i32", vw(w), "dim" + std::to_string(dim), nn(len)}),
             kernels<PlaneVector<int32_t>>(), [=](Client& client, std::mt19937_64& rng) {
               auto x = random_any<int32_t>(rng, len);
               Handle hx = client.upload(x), hs = poisoned_elems<int32_t>(client, len),
                      hh = poisoned_elems<int32_t>(client, len), hw = poisoned_elems<int32_t>(client, len);
               launch<PlaneVector<int32_t>>(client, CubeCount{cubes}, CubeDim{dim}, w, hx, hs, hh, hw);
               std::vector<int32_t> es(len), eh(len), ew(len);
               planes_of(units, dim, [&](size_t p0, size_t size) {
                 for (size_t l = 0; l < size_t(w); ++l) {
                   int32_t s = 0, h = std::numeric_limits<int32_t>::min();
                   for (size_t k = p0; k < p0 + size; ++k) {
                     s = ref::add(s, x[k * w + l]);
                     h = std::max(h, x[k * w + l]);
                   }
                   for (size_t k = p0; k < p0 + size; ++k) {
                     es[k * w + l] = s;
                     eh[k * w + l] = h;
                     ew[k * w + l] = x[(p0 + ((k - p0) ^ 1)) * w + l];
                   }
                 }
               });
               expect_equal("plane_sum lane by lane", es, client.read<int32_t>(hs));
               expect_equal("plane_max lane by lane", eh, client.read<int32_t>(hh));
               expect_equal("plane_shuffle_xor 1 of vectors", ew, client.read<int32_t>(hw));
             });
  }

  add_case(case_name({"comptime_kinds", nn(n)}), kernels<ComptimeKinds>(), [=](Client& client, std::mt19937_64& rng) {
    auto x = random_values<int32_t>(rng, n, -1000, 1000);
    Handle hx = client.upload(x);
    for (auto [scale_, shift_, offset_] :
         {std::tuple{0.375, uint8_t(3), int64_t(-7)}, std::tuple{-1.5, uint8_t(0), int64_t(1) << 40}}) {
      const double scale = scale_;  // plain variables: clang 14 captures no structured binding
      const uint8_t shift = shift_;
      const int64_t offset = offset_;
      Handle hy = poisoned_elems<double>(client, n);
      launch<ComptimeKinds>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hx, hy, comptime(scale),
                            comptime(shift), comptime(offset));
      expect_near("(x << shift) * scale + offset",
                  tabulate<double>(
                      n, [&](size_t i) { return double(ref::shl(x[i], int32_t(shift))) * scale + double(offset); }),
                  client.read<double>(hy), tol_fused<double>(1e13));
    }
  });
}

}  // namespace
}  // namespace kiln::suite
