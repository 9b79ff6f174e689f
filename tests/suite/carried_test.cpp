// Values carried by control flow (docs/ir.md, "Loops and ifs that carry values"): the pass
// pipeline turns each Var below into a loop argument and result or an if result, and each backend
// keeps them its own way (C variables on CUDA, one slot per value on the CPU). The cases aim at
// what can go wrong there: a loop that yields its arguments in another order (a rotation), break
// and continue carrying values from the middle of an iteration, a while whose condition region
// assigns a Var first, vector and bool values carried, a plane op in a loop whose units leave by
// break, and a loop nested in a loop that carries another value. Each is compared with a host
// reference written from the kernel's source.
#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

// (a, b, c) rotate each iteration, so the loop yields its arguments in another order; a continue
// in the middle carries a half-rotated triple, a break the whole one.
struct RotateCarried {
  static constexpr std::string_view name = "rotate_carried";
  void operator()(Slice<const uint32_t> x, Slice<uint32_t> out) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Var<uint32_t> a = x[i], b = i, c = 7u;
      For(range(0u, x[i] % 23u), [&](Expr<uint32_t> k) {
        Expr<uint32_t> t = a;
        a = b;
        If(k % 5u == 2u, [&] { Continue(); });
        b = c;
        c = t * 3u + k;
        If(c % 97u == 0u, [&] { Break(); });
      });
      out[i * 3u] = a;
      out[i * 3u + 1u] = b;
      out[i * 3u + 2u] = c;
    });
  }
};

// Vectors carried through a loop (acc, and prev: the previous iteration's vector), with a bool
// that an if inside the loop toggles and a count that reads it.
template <class F>
struct VectorCarried {
  static constexpr std::string_view name = "vector_carried";
  void operator()(Slice<const Vector<F>> x, Slice<Vector<F>> y, Slice<uint32_t> count, Scalar<uint32_t> m) const {
    auto i = absolute_pos();
    auto units = y.len();
    If(i < units, [&] {
      Var<Vector<F>> acc = F(0);
      Var<Vector<F>> prev = x[i];
      Var<bool> odd = false;
      Var<uint32_t> n = 0u;
      For(range(0u, m), [&](Expr<uint32_t> k) {
        Vector<F> v = x[k * units + i];
        acc = acc + v * prev;
        prev = v;
        If((k + i) % 3u == 0u, [&] { odd = !odd; });
        n = n + cast<uint32_t>(odd);
      });
      y[i] = acc;
      count[i] = n;
    });
  }
};

// The condition region assigns `seen` before anything reads it: `condition` passes it on to the
// body and out of the loop, but nothing carries it back into the next test.
struct WhileConditionAssigns {
  static constexpr std::string_view name = "while_condition_assigns";
  void operator()(Slice<const uint32_t> x, Slice<uint32_t> out) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Var<uint32_t> j = i;
      Var<uint32_t> steps = 0u;
      Var<uint32_t> seen;
      While(
          [&] {
            seen = x[j % x.len()];
            return seen != 0u && steps < 40u;
          },
          [&] {
            j = j * 5u + seen;
            steps = steps + 1u;
            If(j % 11u == 3u, [&] { Break(); });
          });
      out[i * 2u] = seen;
      out[i * 2u + 1u] = steps * 1000u + j % 1000u;
    });
  }
};

// A plane sum in a loop whose units leave at different iterations (their own bound, or a break
// once the sum they carry passes 60): each iteration sums over the units still in the loop.
struct PlaneCarried {
  static constexpr std::string_view name = "plane_carried";
  void operator()(Slice<const uint32_t> x, Slice<uint32_t> out) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Var<uint32_t> acc = 0u;
      Var<uint32_t> last = 0u;
      For(range(0u, x[i] % 9u), [&](Expr<uint32_t> k) {
        last = plane_sum(k + 1u);
        acc = acc + last;
        If(acc > 60u, [&] { Break(); });
      });
      out[i * 2u] = acc;
      out[i * 2u + 1u] = last;
    });
  }
};

// The best row sum over 6 rows of 6 values, a row ending at its first negative value: the inner
// loop carries the row (a Var of the outer body), the outer one the best so far and where.
struct BestRow {
  static constexpr std::string_view name = "best_row";
  void operator()(Slice<const int32_t> x, Slice<int32_t> out) const {
    auto i = absolute_pos();
    auto n = x.len();
    If(i < n, [&] {
      Var<int32_t> best = -1;
      Var<uint32_t> where = 99u;
      For(range(0u, 6u), [&](Expr<uint32_t> a) {
        Var<int32_t> row = 0;
        For(range(0u, 6u), [&](Expr<uint32_t> b) {
          Expr<int32_t> v = x[(i * 7u + a * 6u + b) % n];
          If(v < 0, [&] { Break(); });
          row = row + v;
        });
        If(row > best, [&] {
          best = row;
          where = a;
        });
      });
      out[i * 2u] = best;
      out[i * 2u + 1u] = cast<int32_t>(where);
    });
  }
};

// Small integers, so that every sum and product below is exact in every float type.
template <class F>
std::vector<F> small_ints(std::mt19937_64& rng, size_t n) {
  std::vector<F> v(n);
  for (F& e : v) e = make<F>(int(rng() % 7) - 3);
  return v;
}

template <class F>
void register_vector_carried(int width, uint32_t units) {
  add_case(case_name({"vector_carried", dtype_name<F>(), "v" + std::to_string(width), "u" + std::to_string(units)}),
           kernels<VectorCarried<F>>(), [=](Client& client, std::mt19937_64& rng) {
             const uint32_t m = 11;
             const size_t w = size_t(width), elems = size_t(units) * w;
             auto x = small_ints<F>(rng, elems * m);
             Handle hx = client.upload(x), hy = poisoned_elems<F>(client, elems),
                    hc = poisoned_elems<uint32_t>(client, units);
             launch<VectorCarried<F>>(client, CubeCount{cubes_for(units, 64)}, CubeDim{64}, width, hx, hy, hc, m);
             std::vector<F> ey(elems);
             std::vector<uint32_t> ec(units);
             for (uint32_t i = 0; i < units; ++i) {
               for (size_t l = 0; l < w; ++l) {
                 F acc = make<F>(0), prev = x[i * w + l];
                 for (uint32_t k = 0; k < m; ++k) {
                   F v = x[(size_t(k) * units + i) * w + l];
                   acc = ref::add(acc, ref::mul(v, prev));
                   prev = v;
                 }
                 ey[i * w + l] = acc;
               }
               bool odd = false;
               uint32_t n = 0;
               for (uint32_t k = 0; k < m; ++k) {
                 if ((k + i) % 3 == 0) odd = !odd;
                 n += odd;
               }
               ec[i] = n;
             }
             expect_near("sum of v * previous v", ey, client.read<F>(hy), exact());
             expect_equal("iterations with the toggled bool set", ec, client.read<uint32_t>(hc));
           });
}

// The reference of PlaneCarried: plane by plane, each iteration's sum is over the units still in
// the loop.
std::vector<uint32_t> plane_carried_ref(const std::vector<uint32_t>& x, uint32_t cube) {
  size_t n = x.size();
  std::vector<uint32_t> out(2 * n);
  for (size_t c0 = 0; c0 < n; c0 += cube) {
    for (size_t p0 = c0; p0 < c0 + cube && p0 < n; p0 += 32) {
      size_t end = std::min({p0 + 32, c0 + cube, n});
      std::vector<uint32_t> acc(end - p0, 0), last(end - p0, 0);
      std::vector<bool> broke(end - p0, false);
      for (uint32_t k = 0;; ++k) {
        std::vector<size_t> live;
        for (size_t u = p0; u < end; ++u) {
          if (!broke[u - p0] && k < x[u] % 9) live.push_back(u);
        }
        if (live.empty()) break;
        uint32_t sum = uint32_t(live.size()) * (k + 1);
        for (size_t u : live) {
          last[u - p0] = sum;
          acc[u - p0] += sum;
          if (acc[u - p0] > 60) broke[u - p0] = true;
        }
      }
      for (size_t u = p0; u < end; ++u) {
        out[2 * u] = acc[u - p0];
        out[2 * u + 1] = last[u - p0];
      }
    }
  }
  return out;
}

KILN_SUITE_CASES(carried) {
  const size_t n = 1000;
  add_case(case_name({"rotate_carried", nn(n)}), kernels<RotateCarried>(), [=](Client& client, std::mt19937_64& rng) {
    auto x = random_values<uint32_t>(rng, n, 0, 1000000);
    Handle hx = client.upload(x), ho = poisoned_elems<uint32_t>(client, 3 * n);
    launch<RotateCarried>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hx, ho);
    std::vector<uint32_t> e(3 * n);
    for (size_t i = 0; i < n; ++i) {
      uint32_t a = x[i], b = uint32_t(i), c = 7;
      for (uint32_t k = 0; k < x[i] % 23; ++k) {
        uint32_t t = a;
        a = b;
        if (k % 5 == 2) continue;
        b = c;
        c = t * 3 + k;
        if (c % 97 == 0) break;
      }
      e[3 * i] = a;
      e[3 * i + 1] = b;
      e[3 * i + 2] = c;
    }
    expect_equal("a, b, c after the rotations", e, client.read<uint32_t>(ho));
  });

  register_vector_carried<float>(4, 300);
  register_vector_carried<float>(1, 257);
  register_vector_carried<f16>(8, 100);
  register_vector_carried<double>(2, 129);

  add_case(case_name({"while_condition_assigns", nn(n)}), kernels<WhileConditionAssigns>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<uint32_t>(rng, n, 0, 20);
             for (size_t i = 0; i < n; i += 7) x[i] = 0;  // some loops end at once, others on a 0 later
             Handle hx = client.upload(x), ho = poisoned_elems<uint32_t>(client, 2 * n);
             launch<WhileConditionAssigns>(client, CubeCount{cubes_for(n, 128)}, CubeDim{128}, 1, hx, ho);
             std::vector<uint32_t> e(2 * n);
             for (size_t i = 0; i < n; ++i) {
               uint32_t j = uint32_t(i), steps = 0, seen = 0;
               while (true) {
                 seen = x[j % n];
                 if (!(seen != 0 && steps < 40)) break;
                 j = j * 5 + seen;
                 steps = steps + 1;
                 if (j % 11 == 3) break;
               }
               e[2 * i] = seen;
               e[2 * i + 1] = steps * 1000 + j % 1000;
             }
             expect_equal("the value seen last and the steps", e, client.read<uint32_t>(ho));
           });

  for (uint32_t cube : {64u, 40u}) {
    add_case(case_name({"plane_carried", "c" + std::to_string(cube), nn(n)}), kernels<PlaneCarried>(),
             [=](Client& client, std::mt19937_64& rng) {
               auto x = random_values<uint32_t>(rng, n, 0, 100);
               Handle hx = client.upload(x), ho = poisoned_elems<uint32_t>(client, 2 * n);
               launch<PlaneCarried>(client, CubeCount{cubes_for(n, cube)}, CubeDim{cube}, 1, hx, ho);
               expect_equal("the carried sum and the last plane sum", plane_carried_ref(x, cube),
                            client.read<uint32_t>(ho));
             });
  }

  add_case(case_name({"best_row", "i32", nn(n)}), kernels<BestRow>(), [=](Client& client, std::mt19937_64& rng) {
    auto x = random_values<int32_t>(rng, n, -3, 40);
    Handle hx = client.upload(x), ho = poisoned_elems<int32_t>(client, 2 * n);
    launch<BestRow>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hx, ho);
    std::vector<int32_t> e(2 * n);
    for (size_t i = 0; i < n; ++i) {
      int32_t best = -1;
      uint32_t where = 99;
      for (uint32_t a = 0; a < 6; ++a) {
        int32_t row = 0;
        for (uint32_t b = 0; b < 6; ++b) {
          int32_t v = x[(i * 7 + a * 6 + b) % n];
          if (v < 0) break;
          row += v;
        }
        if (row > best) {
          best = row;
          where = a;
        }
      }
      e[2 * i] = best;
      e[2 * i + 1] = int32_t(where);
    }
    expect_equal("best row and where", e, client.read<int32_t>(ho));
  });
}

}  // namespace
}  // namespace kiln::suite
