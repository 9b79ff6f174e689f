// Run-time control flow: For with Break and Continue, While with Break, nested loops whose trip
// counts differ between units, an If/ElseIf/Else chain assigning a Var on every path, Terminate
// before a barrier, a grid-stride loop with an unroll hint, a LocalArray insertion sort, comptime
// specialisation (Comptime<int>, Comptime<bool>), and debug_print.
#include <algorithm>
#include <sstream>

#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

// acc sums x[(i + j) % len] over j < count[i], skipping j % 3 == 1 (Continue) and stopping once
// acc > limit (Break, recording j).
template <class T>
struct LoopBreakContinue {
  static constexpr std::string_view name = "loop_break_continue";
  void operator()(Slice<const T> x, Slice<const uint32_t> count, Scalar<T> limit, Slice<T> acc_out,
                  Slice<uint32_t> stop_out) const {
    auto i = absolute_pos();
    If(i < count.len(), [&] {
      Var<T> acc = T(0);
      Var<uint32_t> stop = 0xffffffffu;
      For(range(0u, count[i]), [&](Expr<uint32_t> j) {
        If(j % 3u == 1u, [&] { Continue(); });
        acc = acc + x[(i + j) % x.len()];
        If(acc > limit, [&] {
          stop = j;
          Break();
        });
      });
      acc_out[i] = acc;
      stop_out[i] = stop;
    });
  }
};

// Collatz steps from x[i] to 1, at most cap (x = 0 never gets there).
struct WhileCollatz {
  static constexpr std::string_view name = "while_collatz";
  void operator()(Slice<const uint32_t> x, Scalar<uint32_t> cap, Slice<uint32_t> steps) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Var<uint64_t> v = cast<uint64_t>(x[i]);
      Var<uint32_t> s = 0u;
      While([&] { return v != uint64_t(1); },
            [&] {
              If(s >= cap, [&] { Break(); });
              If(v % uint64_t(2) == uint64_t(0), [&] { v = v / uint64_t(2); }).Else([&] {
                v = v * uint64_t(3) + uint64_t(1);
              });
              s = s + 1u;
            });
      steps[i] = s;
    });
  }
};

// Triangular nested loops: inner trip counts depend on the outer index and on the unit.
struct NestedLoops {
  static constexpr std::string_view name = "nested_loops";
  void operator()(Slice<const int32_t> x, Slice<int32_t> out) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Var<int32_t> acc = x[i];
      For(range(0u, i % 17u), [&](Expr<uint32_t> a) {
        For(range(0u, a + 1u).unroll(4),
            [&](Expr<uint32_t> b) { acc = acc * 3 + cast<int32_t>(a * b) - x[(i + b) % x.len()]; });
      });
      out[i] = acc;
    });
  }
};

template <class T>
struct IfElseChain {
  static constexpr std::string_view name = "if_else_chain";
  void operator()(Slice<const T> x, Slice<uint32_t> cls) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Expr<T> v = x[i];
      Var<uint32_t> c;  // assigned on every path below
      If(v < make<T>(-10), [&] { c = 0u; })
          .ElseIf(v < make<T>(0), [&] { c = 1u; })
          .ElseIf(v == make<T>(0), [&] { c = 2u; })
          .Else([&] { c = 3u; });
      cls[i] = c;
    });
  }
};

// Units with x < 0 (and past the end) terminate after the first barrier; the rest meet at a
// second one and read their neighbour's slot, which a terminated unit left at -1.
template <class F>
struct TerminateEarly {
  static constexpr std::string_view name = "terminate_early";
  void operator()(Slice<const F> x, Slice<F> out, Comptime<int> block) const {
    SharedArray<F> s(block);
    auto u = unit_pos();
    auto i = absolute_pos();
    s[u] = -1.0f;
    sync_cube();
    If(i >= x.len(), [&] { Terminate(); });
    If(x[i] < 0.0f, [&] { Terminate(); });
    s[u] = x[i];
    sync_cube();
    out[i] = s[u] + s[(u + 1u) % uint32_t(block)];
  }
};

template <class F>
struct GridStride {
  static constexpr std::string_view name = "grid_stride";
  void operator()(Slice<const F> x, Slice<F> y) const {
    For(range(absolute_pos(), x.len(), cube_count() * cube_dim()).unroll(2),
        [&](Expr<uint32_t> j) { y[j] = x[j] * x[j] - 1.0f; });
  }
};

constexpr int kSortLen = 8;

// Each unit sorts its 8 elements in a LocalArray (insertion sort: run-time For, While, Break).
template <class T>
struct LocalSort {
  static constexpr std::string_view name = "local_sort";
  void operator()(Slice<const T> x, Slice<T> y) const {
    auto i = absolute_pos();
    If(i * uint32_t(kSortLen) < x.len(), [&] {
      LocalArray<T> a(kSortLen);
      for (int k = 0; k < kSortLen; ++k) a[k] = x[i * uint32_t(kSortLen) + uint32_t(k)];
      For(range(1, kSortLen), [&](Expr<int32_t> k) {
        Expr<T> key = a[k];
        Var<int32_t> j = k - 1;
        While([&] { return j >= 0; },
              [&] {
                If(a[j] > key, [&] {
                  a[j + 1] = a[j];
                  j = j - 1;
                }).Else([&] { Break(); });
              });
        a[j + 1] = key;
      });
      for (int k = 0; k < kSortLen; ++k) y[i * uint32_t(kSortLen) + uint32_t(k)] = a[k];
    });
  }
};

// y = (negate ? -1 : 1) * sum_{k <= degree} (k + 1) x^k, by Horner; the C++ loop runs while
// tracing, so each (degree, negate) is its own straight-line kernel.
template <class T>
struct ComptimePoly {
  static constexpr std::string_view name = "comptime_poly";
  void operator()(Slice<const T> x, Slice<T> y, Comptime<int> degree, Comptime<bool> negate) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Expr<T> v = x[i];
      Expr<T> acc = T(degree + 1);
      for (int k = degree - 1; k >= 0; --k) acc = acc * v + T(k + 1);
      if (negate) acc = -acc;
      y[i] = acc;
    });
  }
};

struct DebugPrint {
  static constexpr std::string_view name = "debug_print";
  void operator()(Slice<const int32_t> x) const {
    auto i = absolute_pos();
    If(i < 5u, [&] { debug_print("unit %u x=%d\n", i, x[i]); });
  }
};

enum class Mode { Half, Double };
// A comptime enum picks the constant.
struct ComptimeEnum {
  static constexpr std::string_view name = "comptime_enum";
  void operator()(Slice<float> y, Comptime<Mode> m) const { y[absolute_pos()] = m.get() == Mode::Half ? 0.5f : 2.0f; }
};

template <class T>
T poly_ref(T x, int degree, bool negate) {
  T acc = make<T>(degree + 1);
  for (int k = degree - 1; k >= 0; --k) acc = ref::add(ref::mul(acc, x), make<T>(k + 1));
  return negate ? ref::neg(acc) : acc;
}

template <class T>
void register_break_continue(size_t n) {
  add_case(case_name({"loop_break_continue", dtype_name<T>(), nn(n)}), kernels<LoopBreakContinue<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<T>(rng, n, 0, 100);
             auto count = random_values<uint32_t>(rng, n, 0, 60);
             T limit = make<T>(1000 + rng() % 1000);
             Handle hx = client.upload(x), hc = client.upload(count), ha = poisoned_elems<T>(client, n),
                    hs = poisoned_elems<uint32_t>(client, n);
             launch<LoopBreakContinue<T>>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hx, hc, limit, ha, hs);
             std::vector<T> ea(n);
             std::vector<uint32_t> es(n, 0xffffffffu);
             for (size_t i = 0; i < n; ++i) {
               T acc = make<T>(0);
               for (uint32_t j = 0; j < count[i]; ++j) {
                 if (j % 3 == 1) continue;
                 acc = ref::add(acc, x[(i + j) % n]);
                 if (wide(acc) > wide(limit)) {
                   es[i] = j;
                   break;
                 }
               }
               ea[i] = acc;
             }
             expect_near("accumulated", ea, client.read<T>(ha), tol_arith<T>());
             expect_equal("break index", es, client.read<uint32_t>(hs));
           });
}

template <class T>
void register_if_chain(size_t n) {
  add_case(case_name({"if_else_chain", dtype_name<T>(), nn(n)}), kernels<IfElseChain<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<T>(rng, n, -20, 20);
             for (size_t i = 0; i < n; i += 5) x[i] = make<T>(0);
             if constexpr (is_float_v<T>) sprinkle_specials(x, rng);
             auto out = run_map<IfElseChain<T>, uint32_t, 1>(client, 1, 64, n, x);
             expect_equal("class",
                          tabulate<uint32_t>(n,
                                             [&](size_t i) {
                                               long double v = wide(x[i]);
                                               return v < -10 ? 0u : v < 0 ? 1u : v == 0 ? 2u : 3u;
                                             }),
                          out[0]);
           });
}

template <class T>
void register_local_sort(size_t units) {
  add_case(case_name({"local_sort", dtype_name<T>(), nn(units * kSortLen)}), kernels<LocalSort<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<T>(rng, units * kSortLen, -1000, 1000);
             Handle hx = client.upload(x), hy = poisoned_elems<T>(client, x.size());
             launch<LocalSort<T>>(client, CubeCount{cubes_for(units, 32)}, CubeDim{32}, 1, hx, hy);
             std::vector<T> e = x;
             for (size_t u = 0; u < units; ++u) {
               std::sort(e.begin() + std::ptrdiff_t(u * kSortLen), e.begin() + std::ptrdiff_t((u + 1) * kSortLen),
                         [](T a, T b) { return wide(a) < wide(b); });
             }
             expect_equal("each unit's 8 elements sorted", e, client.read<T>(hy));
           });
}

template <class T>
void register_comptime(size_t n) {
  add_case(case_name({"comptime_poly", dtype_name<T>(), nn(n)}), kernels<ComptimePoly<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<T>(rng, n, -2, 2);
             Handle hx = client.upload(x);
             for (auto [degree_, negate_] : {std::pair{3, false}, std::pair{5, true}, std::pair{0, true}}) {
               const int degree = degree_;  // plain variables: clang 14 captures no structured binding
               const bool negate = negate_;
               Handle hy = poisoned_elems<T>(client, n);
               launch<ComptimePoly<T>>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hx, hy, comptime(degree),
                                       comptime(negate));
               uint64_t compiled = client.stats().compilations;
               Handle again = poisoned_elems<T>(client, n);
               launch<ComptimePoly<T>>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hx, again, comptime(degree),
                                       comptime(negate));
               EXPECT_EQ(client.stats().compilations, compiled) << "the same comptime values compiled again";
               note_check();
               std::string what = "degree " + std::to_string(degree) + (negate ? ", negated" : "");
               auto e = tabulate<T>(n, [&](size_t i) { return poly_ref(x[i], degree, negate); });
               expect_near(what, e, client.read<T>(hy), tol_fused<T>(64 * 6));
               expect_near(what + " (second launch)", e, client.read<T>(again), tol_fused<T>(64 * 6));
             }
           });
}

KILN_SUITE_CASES(control) {
  register_break_continue<int32_t>(1000);
  register_break_continue<float>(777);
  register_break_continue<uint64_t>(500);

  const size_t n = 1003;
  add_case(case_name({"while_collatz", nn(n)}), kernels<WhileCollatz>(), [=](Client& client, std::mt19937_64& rng) {
    auto x = random_values<uint32_t>(rng, n, 0, 100000);
    x[0] = 0;
    x[1] = 1;
    x[2] = 27;  // 111 steps
    const uint32_t cap = 200;
    Handle hx = client.upload(x), hs = poisoned_elems<uint32_t>(client, n);
    launch<WhileCollatz>(client, CubeCount{cubes_for(n, 128)}, CubeDim{128}, 1, hx, cap, hs);
    expect_equal("steps to 1 (at most 200)",
                 tabulate<uint32_t>(n,
                                    [&](size_t i) {
                                      uint64_t v = x[i];
                                      uint32_t s = 0;
                                      while (v != 1) {
                                        if (s >= cap) break;
                                        v = v % 2 == 0 ? v / 2 : 3 * v + 1;
                                        ++s;
                                      }
                                      return s;
                                    }),
                 client.read<uint32_t>(hs));
  });

  add_case(
      case_name({"nested_loops", "i32", nn(n)}), kernels<NestedLoops>(), [=](Client& client, std::mt19937_64& rng) {
        auto x = random_any<int32_t>(rng, n);
        auto out = run_map<NestedLoops, int32_t, 1>(client, 1, 64, n, x);
        expect_equal("triangular loops",
                     tabulate<int32_t>(n,
                                       [&](size_t i) {
                                         int32_t acc = x[i];
                                         for (uint32_t a = 0; a < i % 17; ++a)
                                           for (uint32_t b = 0; b < a + 1; ++b)
                                             acc = ref::sub(ref::add(ref::mul(acc, 3), int32_t(a * b)), x[(i + b) % n]);
                                         return acc;
                                       }),
                     out[0]);
      });

  register_if_chain<float>(1000);
  register_if_chain<int32_t>(999);
  register_if_chain<f16>(500);

  for (int block : {64, 96}) {
    add_case(case_name({"terminate_early", "f32", "b" + std::to_string(block), nn(n)}),
             kernels<TerminateEarly<float>>(), [=](Client& client, std::mt19937_64& rng) {
               auto x = random_values<float>(rng, n, -1, 3);
               uint32_t cubes = cubes_for(n, uint32_t(block));
               Handle hx = client.upload(x), ho = poisoned_elems<float>(client, n);
               launch<TerminateEarly<float>>(client, CubeCount{cubes}, CubeDim{uint32_t(block)}, 1, hx, ho,
                                             comptime(block));
               std::vector<float> e = poison_vector<float>(n);
               for (size_t i = 0; i < n; ++i) {
                 if (x[i] < 0) continue;  // terminated: out keeps its poison
                 size_t u = i % size_t(block), nb = i - u + (u + 1) % size_t(block);
                 float right = nb < n && x[nb] >= 0 ? x[nb] : -1.0f;
                 e[i] = x[i] + right;
               }
               expect_near("x + right neighbour (or -1)", e, client.read<float>(ho), tol_arith<float>());
             });
  }

  const size_t big = 5003;
  add_case(case_name({"grid_stride", "f32", nn(big), "cubes3"}), kernels<GridStride<float>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<float>(rng, big, -10, 10);
             Handle hx = client.upload(x), hy = poisoned_elems<float>(client, big);
             launch<GridStride<float>>(client, CubeCount{3}, CubeDim{32}, 1, hx, hy);
             expect_near("x * x - 1", tabulate<float>(big, [&](size_t i) { return x[i] * x[i] - 1.0f; }),
                         client.read<float>(hy), tol_fused<float>(100));
           });

  register_local_sort<int32_t>(301);
  register_local_sort<float>(77);
  register_local_sort<uint8_t>(64);
  register_comptime<float>(1000);
  register_comptime<int32_t>(999);

  add_case("debug_print_i32", kernels<DebugPrint>(), [](Client& client, std::mt19937_64& rng) {
    auto x = random_values<int32_t>(rng, 40, -99, 99);
    Handle hx = client.upload(x);
    ::testing::internal::CaptureStdout();
    launch<DebugPrint>(client, CubeCount{2}, CubeDim{20}, 1, hx);
    client.sync();
    std::fflush(stdout);
    std::string got = ::testing::internal::GetCapturedStdout();
    std::string want;
    for (uint32_t i = 0; i < 5; ++i) want += "unit " + std::to_string(i) + " x=" + std::to_string(x[i]) + "\n";
    if (client.runtime_name() != "cpu") {  // other devices need not print in unit order
      auto sorted_lines = [](const std::string& s) {
        std::vector<std::string> v;
        std::istringstream in(s);
        for (std::string l; std::getline(in, l);) v.push_back(l);
        std::sort(v.begin(), v.end());
        return v;
      };
      EXPECT_EQ(sorted_lines(want), sorted_lines(got));
    } else {
      EXPECT_EQ(want, got) << "the CPU prints in unit order";
    }
    note_check();
  });

  // A Comptime<enum> parameter (it did not compile: describe<P> instantiated scalar_of<Enum>()).
  add_case("comptime_enum", kernels<ComptimeEnum>(), [](Client& client, std::mt19937_64&) {
    for (Mode m : {Mode::Half, Mode::Double}) {
      Handle y = poisoned_elems<float>(client, 2);
      launch<ComptimeEnum>(client, CubeCount{1}, CubeDim{2}, 1, y, comptime(m));
      float want = m == Mode::Half ? 0.5f : 2.0f;
      expect_equal("a Comptime<Mode> kernel", std::vector<float>{want, want}, client.read<float>(y));
    }
  });
}

}  // namespace
}  // namespace kiln::suite
