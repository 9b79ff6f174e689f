// Atomics: a histogram (atomic_add on u32 bins), every read-modify-write op on u32/i32/u64/i64
// cells shared by several units, tickets (the old values atomic_add returns), exchange and
// compare-and-swap (also in a retry loop), float adds compared with tolerance, and atomics on
// shared memory. Cells start from random values, never from zero.
#include <algorithm>
#include <map>

#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

struct Histogram {
  static constexpr std::string_view name = "histogram";
  void operator()(Slice<const uint32_t> x, Slice<uint32_t> bins) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] { atomic_add(bins[x[i] % bins.len()], 1u); });
  }
};

// Each unit applies its value to cell i % cells of every array, one array per op.
template <class T>
struct AtomicRmw {
  static constexpr std::string_view name = "atomic_rmw";
  void operator()(Slice<const T> v, Slice<T> add, Slice<T> sub, Slice<T> hi, Slice<T> lo, Slice<T> both,
                  Slice<T> either, Slice<T> differ) const {
    auto i = absolute_pos();
    If(i < v.len(), [&] {
      auto c = i % add.len();
      Expr<T> x = v[i];
      atomic_add(add[c], x);
      atomic_sub(sub[c], x);
      atomic_max(hi[c], x);
      atomic_min(lo[c], x);
      atomic_and(both[c], x);
      atomic_or(either[c], x);
      atomic_xor(differ[c], x);
    });
  }
};

template <class T>
struct AtomicTicket {
  static constexpr std::string_view name = "atomic_ticket";
  void operator()(Slice<T> counter, Slice<T> tickets) const {
    auto i = absolute_pos();
    If(i < tickets.len(), [&] { tickets[i] = atomic_add(counter[0u], T(1)); });
  }
};

template <class T>
struct AtomicExchange {
  static constexpr std::string_view name = "atomic_exchange";
  void operator()(Slice<const T> v, Slice<T> cells, Slice<T> olds) const {
    auto i = absolute_pos();
    If(i < v.len(), [&] { olds[i] = atomic_exchange(cells[i % cells.len()], v[i]); });
  }
};

// One cell per unit: swaps in desired[i] where cell[i] equals expected[i].
template <class T>
struct AtomicCas {
  static constexpr std::string_view name = "atomic_cas";
  void operator()(Slice<const T> expected, Slice<const T> desired, Slice<T> cells, Slice<T> olds) const {
    auto i = absolute_pos();
    If(i < expected.len(), [&] { olds[i] = atomic_cas(cells[i], expected[i], desired[i]); });
  }
};

// Increments cell i % cells by a compare-and-swap retry loop; tickets[i] is the value it replaced.
template <class T>
struct AtomicCasCounter {
  static constexpr std::string_view name = "atomic_cas_counter";
  void operator()(Slice<T> cells, Slice<T> tickets) const {
    auto i = absolute_pos();
    If(i < tickets.len(), [&] {
      auto c = i % cells.len();
      Var<bool> done = false;
      Var<T> got = T(0);
      While([&] { return !done.get(); },
            [&] {
              Expr<T> seen = atomic_or(cells[c], T(0));  // an atomic read
              Expr<T> prev = atomic_cas(cells[c], seen, seen + T(1));
              If(prev == seen, [&] {
                got = seen;
                done = true;
              });
            });
      tickets[i] = got;
    });
  }
};

template <class F>
struct AtomicAddFloat {
  static constexpr std::string_view name = "atomic_add_float";
  void operator()(Slice<const F> x, Slice<F> cells) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] { atomic_add(cells[i % cells.len()], x[i]); });
  }
};

constexpr uint32_t kBins = 37;

// A per-cube histogram and max in shared memory (atomic_add, atomic_max, atomic_min), then copied out.
struct SharedHistogram {
  static constexpr std::string_view name = "shared_histogram";
  void operator()(Slice<const uint32_t> x, Slice<uint32_t> hist, Slice<int32_t> cube_max,
                  Slice<uint64_t> cube_min) const {
    SharedArray<uint32_t> h(kBins);
    SharedArray<int32_t> m(1);
    SharedArray<uint64_t> lo(1);
    auto u = unit_pos();
    auto i = absolute_pos();
    For(range(u, kBins, cube_dim()), [&](Expr<uint32_t> b) { h[b] = 0u; });
    If(u == 0u, [&] {
      m[0u] = std::numeric_limits<int32_t>::min();
      lo[0u] = std::numeric_limits<uint64_t>::max();
    });
    sync_cube();
    If(i < x.len(), [&] {
      Expr<uint32_t> v = x[i];
      atomic_add(h[v % kBins], 1u);
      atomic_max(m[0u], cast<int32_t>(v) - 1000000);
      atomic_min(lo[0u], cast<uint64_t>(v) * 3u);
    });
    sync_cube();
    For(range(u, kBins, cube_dim()), [&](Expr<uint32_t> b) { hist[cube_pos() * kBins + b] = h[b]; });
    If(u == 0u, [&] {
      cube_max[cube_pos()] = m[0u];
      cube_min[cube_pos()] = lo[0u];
    });
  }
};

template <class T>
void register_rmw(size_t n, size_t cells) {
  add_case(case_name({"atomic_rmw", dtype_name<T>(), nn(n), "cells" + std::to_string(cells)}), kernels<AtomicRmw<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto v = random_any<T>(rng, n);
             for (size_t i = 0; i < n; i += 2) v[i] = T(v[i] | v[(i + 1) % n]);  // denser bits for and
             std::array<std::vector<T>, 7> init;
             std::array<Handle, 7> h;
             for (size_t k = 0; k < 7; ++k) {
               init[k] = random_any<T>(rng, cells);
               h[k] = client.upload(init[k]);
             }
             Handle hv = client.upload(v);
             launch<AtomicRmw<T>>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hv, h[0], h[1], h[2], h[3], h[4],
                                  h[5], h[6]);
             std::array<std::vector<T>, 7> e = init;
             for (size_t i = 0; i < n; ++i) {
               size_t c = i % cells;
               e[0][c] = ref::add(e[0][c], v[i]);
               e[1][c] = ref::sub(e[1][c], v[i]);
               e[2][c] = std::max(e[2][c], v[i]);
               e[3][c] = std::min(e[3][c], v[i]);
               e[4][c] = T(e[4][c] & v[i]);
               e[5][c] = T(e[5][c] | v[i]);
               e[6][c] = T(e[6][c] ^ v[i]);
             }
             const char* names[] = {"atomic_add", "atomic_sub", "atomic_max", "atomic_min",
                                    "atomic_and", "atomic_or",  "atomic_xor"};
             for (size_t k = 0; k < 7; ++k) expect_equal(names[k], e[k], client.read<T>(h[k]));
           });
}

template <class T>
void register_ticket(size_t n) {
  add_case(case_name({"atomic_ticket", dtype_name<T>(), nn(n)}), kernels<AtomicTicket<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             T base = T(rng() % 100000);
             Handle counter = client.upload(std::vector<T>{base}), tickets = poisoned_elems<T>(client, n);
             launch<AtomicTicket<T>>(client, CubeCount{cubes_for(n, 128)}, CubeDim{128}, 1, counter, tickets);
             std::vector<T> got = client.read<T>(tickets);
             std::sort(got.begin(), got.end());
             expect_equal("sorted tickets", tabulate<T>(n, [&](size_t i) { return T(base + T(i)); }), got);
             expect_equal("counter", std::vector<T>{T(base + T(n))}, client.read<T>(counter));
           });
}

template <class T>
void register_exchange(size_t n, size_t cells) {
  add_case(
      case_name({"atomic_exchange", dtype_name<T>(), nn(n), "cells" + std::to_string(cells)}),
      kernels<AtomicExchange<T>>(), [=](Client& client, std::mt19937_64& rng) {
        auto v = random_any<T>(rng, n), init = random_any<T>(rng, cells);
        Handle hv = client.upload(v), hc = client.upload(init), ho = poisoned_elems<T>(client, n);
        launch<AtomicExchange<T>>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hv, hc, ho);
        std::vector<T> olds = client.read<T>(ho), final_cells = client.read<T>(hc);
        // Per cell, what went in (the start value and every unit's value) is what came out
        // (every old value and the final value).
        for (size_t c = 0; c < cells; ++c) {
          std::vector<T> in{init[c]}, out{final_cells[c]};
          for (size_t i = c; i < n; i += cells) {
            in.push_back(v[i]);
            out.push_back(olds[i]);
          }
          std::sort(in.begin(), in.end());
          std::sort(out.begin(), out.end());
          if (!expect_equal("cell " + std::to_string(c) + ": values in == old values and final value out", in, out))
            break;
        }
      });
}

template <class T>
void register_cas(size_t n) {
  add_case(case_name({"atomic_cas", dtype_name<T>(), nn(n)}), kernels<AtomicCas<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto init = random_any<T>(rng, n), desired = random_any<T>(rng, n), expected = init;
             for (size_t i = 0; i < n; ++i) {
               if (rng() % 3 == 0) expected[i] = T(expected[i] + T(1));  // a mismatch: no swap
             }
             Handle he = client.upload(expected), hd = client.upload(desired), hc = client.upload(init),
                    ho = poisoned_elems<T>(client, n);
             launch<AtomicCas<T>>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, he, hd, hc, ho);
             expect_equal("old values", init, client.read<T>(ho));
             expect_equal("cells",
                          tabulate<T>(n, [&](size_t i) { return expected[i] == init[i] ? desired[i] : init[i]; }),
                          client.read<T>(hc));
           });
}

template <class T>
void register_cas_counter(size_t n, size_t cells) {
  add_case(case_name({"atomic_cas_counter", dtype_name<T>(), nn(n), "cells" + std::to_string(cells)}),
           kernels<AtomicCasCounter<T>>(), [=](Client& client, std::mt19937_64& rng) {
             auto init = random_values<T>(rng, cells, 0, 1e6);
             Handle hc = client.upload(init), ht = poisoned_elems<T>(client, n);
             launch<AtomicCasCounter<T>>(client, CubeCount{cubes_for(n, 96)}, CubeDim{96}, 1, hc, ht);
             std::vector<T> tickets = client.read<T>(ht), final_cells = client.read<T>(hc);
             std::vector<T> ef(cells);
             for (size_t c = 0; c < cells; ++c) {
               std::vector<T> got, want;
               for (size_t i = c; i < n; i += cells) {
                 got.push_back(tickets[i]);
                 want.push_back(T(init[c] + T(want.size())));
               }
               std::sort(got.begin(), got.end());
               ef[c] = T(init[c] + T(want.size()));
               if (!expect_equal("cell " + std::to_string(c) + ": sorted tickets", want, got)) break;
             }
             expect_equal("final counters", ef, final_cells);
           });
}

template <class F>
void register_float_add(size_t n, size_t cells) {
  add_case(case_name({"atomic_add_float", dtype_name<F>(), nn(n), "cells" + std::to_string(cells)}),
           kernels<AtomicAddFloat<F>>(), [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<F>(rng, n, -1, 1), init = random_values<F>(rng, cells, -10, 10);
             Handle hx = client.upload(x), hc = client.upload(init);
             launch<AtomicAddFloat<F>>(client, CubeCount{cubes_for(n, 64)}, CubeDim{64}, 1, hx, hc);
             std::vector<F> e(cells);
             long double magnitude = 0;
             for (size_t c = 0; c < cells; ++c) {
               long double s = wide(init[c]), m = std::fabs(s);
               for (size_t i = c; i < n; i += cells) s += wide(x[i]), m += std::fabs(wide(x[i]));
               e[c] = narrow<F>(s);
               magnitude = std::max(magnitude, m);
             }
             expect_near("sums by atomic_add (any order)", e, client.read<F>(hc), tol_reduce<F>(magnitude));
           });
}

KILN_SUITE_CASES(atomic) {
  const size_t n = 3001;
  add_case(case_name({"histogram", "u32", nn(n), "bins37"}), kernels<Histogram>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_any<uint32_t>(rng, n);
             for (size_t i = 0; i < n; i += 4) x[i] = 5;  // one crowded bin
             auto bins = random_values<uint32_t>(rng, 37, 1, 1000);
             Handle hx = client.upload(x), hb = client.upload(bins);
             launch<Histogram>(client, CubeCount{cubes_for(n, 128)}, CubeDim{128}, 1, hx, hb);
             std::vector<uint32_t> e = bins;
             for (uint32_t v : x) ++e[v % 37];
             expect_equal("bins", e, client.read<uint32_t>(hb));
           });
  for_types<uint32_t, int32_t, uint64_t, int64_t>([]<class T>() {
    register_rmw<T>(2000, 501);
    register_exchange<T>(1000, 7);
    register_cas<T>(1500);
  });
  register_rmw<uint32_t>(999, 1);
  register_ticket<uint32_t>(2500);
  register_ticket<uint64_t>(1000);
  register_ticket<int32_t>(777);
  register_cas_counter<uint32_t>(1000, 7);
  register_cas_counter<uint64_t>(500, 3);
  register_float_add<float>(3000, 1);
  register_float_add<float>(2000, 5);
  register_float_add<double>(1000, 3);

  add_case(case_name({"shared_histogram", "u32", nn(n), "bins37"}), kernels<SharedHistogram>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<uint32_t>(rng, n, 0, 3000000);
             const uint32_t dim = 100, cubes = cubes_for(n, dim);
             Handle hx = client.upload(x), hh = poisoned_elems<uint32_t>(client, size_t(cubes) * kBins),
                    hm = poisoned_elems<int32_t>(client, cubes), hl = poisoned_elems<uint64_t>(client, cubes);
             launch<SharedHistogram>(client, CubeCount{cubes}, CubeDim{dim}, 1, hx, hh, hm, hl);
             std::vector<uint32_t> eh(size_t(cubes) * kBins, 0);
             std::vector<int32_t> em(cubes, std::numeric_limits<int32_t>::min());
             std::vector<uint64_t> el(cubes, std::numeric_limits<uint64_t>::max());
             for (size_t i = 0; i < n; ++i) {
               size_t c = i / dim;
               ++eh[c * kBins + x[i] % kBins];
               em[c] = std::max(em[c], int32_t(x[i]) - 1000000);
               el[c] = std::min(el[c], uint64_t(x[i]) * 3);
             }
             expect_equal("per-cube histograms", eh, client.read<uint32_t>(hh));
             expect_equal("per-cube atomic_max", em, client.read<int32_t>(hm));
             expect_equal("per-cube atomic_min (u64)", el, client.read<uint64_t>(hl));
           });
}

}  // namespace
}  // namespace kiln::suite
