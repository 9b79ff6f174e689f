// Element reads are values, as in CUDA C++: `auto old = y[i]; y[i] = 5; out[i] = old;` writes the
// old y[i] into out; a swap through a temporary (global buffers of scalars and vectors, a shared
// array across units, a local array); read-modify-writes in a run-time loop, through a copy
// (`auto v = acc[i]; acc[i] = v + x`) and through `+=`, on global and shared elements; and a copy
// nobody reads, whose load must not run (an unchecked launch with more units than elements).
#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

// The snippet: `old` keeps y[i] as it was before the store.
template <class E>
struct CopyThenStore {
  static constexpr std::string_view name = "element_copy_then_store";
  void operator()(Slice<E> y, Slice<E> out) const {
    using S = typename ElementRef<E>::scalar;
    auto i = absolute_pos();
    If(i < y.len(), [&] {
      auto old = y[i];
      y[i] = make<S>(5);
      out[i] = old;
    });
  }
};

template <class E>
struct SwapGlobal {
  static constexpr std::string_view name = "element_swap_global";
  void operator()(Slice<E> a, Slice<E> b) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] {
      auto t = a[i];
      a[i] = b[i];
      b[i] = t;
    });
  }
};

// Each cube reverses its block in a shared array: unit u < half swaps s[u] and s[last - u].
template <class T>
struct SwapShared {
  static constexpr std::string_view name = "element_swap_shared";
  void operator()(Slice<const T> x, Slice<T> out) const {
    uint32_t units = uint32_t(static_cube_dim().total());
    SharedArray<T> s(units);
    auto u = unit_pos();
    auto i = absolute_pos();
    s[u] = x[i];
    sync_cube();
    If(u < units / 2, [&] {
      Expr<uint32_t> m = (units - 1) - u;
      auto t = s[u];
      s[u] = s[m];
      s[m] = t;
    });
    sync_cube();
    out[i] = s[u];
  }
};

// a[i] and b[i] swap through a unit's local array, itself swapped through a temporary.
template <class T>
struct SwapLocal {
  static constexpr std::string_view name = "element_swap_local";
  void operator()(Slice<T> a, Slice<T> b) const {
    auto i = absolute_pos();
    If(i < a.len(), [&] {
      LocalArray<T> l(2);
      l[0u] = a[i];
      l[1u] = b[i];
      auto t = l[0u];
      l[0u] = l[1u];
      l[1u] = t;
      a[i] = l[0u];
      b[i] = l[1u];
    });
  }
};

// Each of `rows` rows of x (n elements each) is added into three accumulators of n elements:
// `copy` through a named read (`auto v = copy[i]; copy[i] = v + ...`), `compound` through `+=`,
// and a shared-array element through a named read, written to `shared_out` after the loop.
template <class E>
struct AccumulateRows {
  static constexpr std::string_view name = "element_accumulate_rows";
  void operator()(Slice<const E> x, Scalar<uint32_t> rows, Slice<E> copy, Slice<E> compound,
                  Slice<E> shared_out) const {
    using S = typename ElementRef<E>::scalar;
    SharedArray<E> s(uint32_t(static_cube_dim().total()));
    auto i = absolute_pos();
    auto u = unit_pos();
    auto n = copy.len();
    If(i < n, [&] {
      s[u] = make<S>(0);
      For(range(0u, rows), [&](Expr<uint32_t> r) {
        auto v = copy[i];
        copy[i] = v + x[r * n + i];
        compound[i] += x[r * n + i];
        auto w = s[u];
        s[u] = w + x[r * n + i];
      });
      shared_out[i] = s[u];
    });
  }
};

// A copy nobody reads: its load is dead code, so an unchecked launch with more units than y has
// elements reads nothing past the end (the CPU would stop with bounds.out_of_range).
template <class T>
struct UnusedCopy {
  static constexpr std::string_view name = "element_unused_copy";
  void operator()(Slice<T> y) const {
    auto i = absolute_pos();
    auto old = y[i];
    If(i < y.len(), [&] { y[i] = make<T>(7); });
    old = make<T>(1);  // rebinding the copy touches no memory either
  }
};

// The sizes below are scalars; a case with vectors of `width` launches one unit per vector.
template <class T, class E>
void register_copy_then_store(int width, size_t n) {
  add_case(case_name({"element_copy_then_store", dtype_name<T>(), vw(width), nn(n)}), kernels<CopyThenStore<E>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto y = random_any<T>(rng, n);
             Handle hy = client.upload(y), ho = poisoned_elems<T>(client, n);
             launch<CopyThenStore<E>>(client, CubeCount{cubes_for(n / size_t(width), 64)}, CubeDim{64}, width, hy, ho);
             expect_equal("out = y as it was before the store", y, client.read<T>(ho));
             expect_equal("y = 5", std::vector<T>(n, make<T>(5)), client.read<T>(hy));
           });
}

template <class T, class E>
void register_swap_global(int width, size_t n) {
  add_case(case_name({"element_swap_global", dtype_name<T>(), vw(width), nn(n)}), kernels<SwapGlobal<E>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto a = random_any<T>(rng, n), b = random_any<T>(rng, n);
             Handle ha = client.upload(a), hb = client.upload(b);
             launch<SwapGlobal<E>>(client, CubeCount{cubes_for(n / size_t(width), 64)}, CubeDim{64}, width, ha, hb);
             expect_equal("a = b as it was", b, client.read<T>(ha));
             expect_equal("b = a as it was", a, client.read<T>(hb));
           });
}

template <class T>
void register_swap_shared(uint32_t cube, uint32_t cubes) {
  size_t n = size_t(cube) * cubes;
  add_case(case_name({"element_swap_shared", dtype_name<T>(), "cube" + std::to_string(cube), nn(n)}),
           kernels<SwapShared<T>>(), [=](Client& client, std::mt19937_64& rng) {
             auto x = random_any<T>(rng, n);
             auto out = run_map<SwapShared<T>, T, 1>(client, 1, cube, n, x);
             expect_equal("each cube's block reversed",
                          tabulate<T>(n, [&](size_t i) { return x[i / cube * cube + (cube - 1 - i % cube)]; }), out[0]);
           });
}

template <class T>
void register_swap_local(size_t n) {
  add_case(case_name({"element_swap_local", dtype_name<T>(), nn(n)}), kernels<SwapLocal<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto a = random_any<T>(rng, n), b = random_any<T>(rng, n);
             Handle ha = client.upload(a), hb = client.upload(b);
             launch<SwapLocal<T>>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, ha, hb);
             expect_equal("a = b as it was", b, client.read<T>(ha));
             expect_equal("b = a as it was", a, client.read<T>(hb));
           });
}

template <class T, class E>
void register_accumulate(int width, size_t n, uint32_t rows) {
  add_case(case_name({"element_accumulate_rows", dtype_name<T>(), vw(width), nn(n), "rows" + std::to_string(rows)}),
           kernels<AccumulateRows<E>>(), [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<T>(rng, n * rows, -100, 100), init = random_values<T>(rng, n, -100, 100);
             Handle hx = client.upload(x), hc = client.upload(init), hp = client.upload(init);
             Handle hs = poisoned_elems<T>(client, n);
             launch<AccumulateRows<E>>(client, CubeCount{cubes_for(n / size_t(width), 64)}, CubeDim{64}, width, hx,
                                       rows, hc, hp, hs);
             // One rounding per step, in row order, as the kernel adds.
             std::vector<T> sums(n), from_zero(n);
             for (size_t i = 0; i < n; ++i) {
               T acc = init[i], zero = make<T>(0);
               for (size_t r = 0; r < rows; ++r) {
                 acc = ref::add(acc, x[r * n + i]);
                 zero = ref::add(zero, x[r * n + i]);
               }
               sums[i] = acc;
               from_zero[i] = zero;
             }
             expect_equal("auto v = copy[i]; copy[i] = v + x", sums, client.read<T>(hc));
             expect_equal("compound[i] += x", sums, client.read<T>(hp));
             expect_equal("auto w = s[u]; s[u] = w + x, in shared memory", from_zero, client.read<T>(hs));
           });
}

template <class T>
void register_unused_copy(size_t n) {
  add_case(case_name({"element_unused_copy", dtype_name<T>(), "unchecked", nn(n)}), kernels<UnusedCopy<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             Handle hy = client.upload(random_any<T>(rng, n));
             launch_unchecked<UnusedCopy<T>>(client, CubeCount{cubes_for(n, 64) + 1}, CubeDim{64}, 1, hy);
             expect_equal("y = 7", std::vector<T>(n, make<T>(7)), client.read<T>(hy));
           });
}

KILN_SUITE_CASES(element) {
  register_copy_then_store<float, float>(1, 1000);
  register_copy_then_store<int32_t, int32_t>(1, 777);
  register_copy_then_store<uint8_t, uint8_t>(1, 1001);
  register_copy_then_store<f16, Vector<f16>>(2, 998);
  register_copy_then_store<float, Vector<float>>(4, 1012);
  register_copy_then_store<double, Vector<double>>(8, 1000);

  register_swap_global<float, float>(1, 1000);
  register_swap_global<int64_t, int64_t>(1, 999);
  register_swap_global<uint8_t, uint8_t>(1, 333);
  register_swap_global<bf16, Vector<bf16>>(2, 500);
  register_swap_global<float, Vector<float>>(4, 1012);
  register_swap_shared<float>(96, 5);
  register_swap_shared<int32_t>(33, 7);
  register_swap_local<double>(500);
  register_swap_local<int16_t>(777);

  register_accumulate<int32_t, int32_t>(1, 300, 7);
  register_accumulate<float, float>(1, 1000, 5);
  register_accumulate<float, Vector<float>>(4, 1000, 6);
  register_accumulate<double, Vector<double>>(2, 998, 3);

  register_unused_copy<float>(100);
  register_unused_copy<int32_t>(1000);
}

}  // namespace
}  // namespace kiln::suite
