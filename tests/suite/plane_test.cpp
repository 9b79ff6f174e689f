// Plane (warp) ops: sum/prod/max/min, all/any/ballot/elect (also inside a divergent If), the
// shuffles, and inclusive/exclusive sums, on cube sizes with a partial last plane (40, 48, 100
// units) and with the last cube only partly active; and a 2D cube where a plane spans two rows.
#include "arith_ref.h"
#include "suite_run.h"

namespace kiln::suite {
namespace {

template <class T>
struct PlaneReduce {
  static constexpr std::string_view name = "plane_reduce";
  void operator()(Slice<const T> x, Slice<T> sum, Slice<T> prod, Slice<T> hi, Slice<T> lo) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Expr<T> v = x[i];
      sum[i] = plane_sum(v);
      prod[i] = plane_prod(v);
      hi[i] = plane_max(v);
      lo[i] = plane_min(v);
    });
  }
};

constexpr uint32_t kVotes = 6;

// out[i * 6 + k]: all, any, ballot, elect of (x > t); then, inside If(x > t), elect and the ballot
// of (x even) among the units that took the branch.
struct PlaneVote {
  static constexpr std::string_view name = "plane_vote";
  void operator()(Slice<const int32_t> x, Scalar<int32_t> t, Slice<uint32_t> out) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Expr<int32_t> v = x[i];
      Expr<bool> p = v > t;
      auto o = i * kVotes;
      out[o] = cast<uint32_t>(plane_all(p));
      out[o + 1u] = cast<uint32_t>(plane_any(p));
      out[o + 2u] = plane_ballot(p);
      out[o + 3u] = cast<uint32_t>(plane_elect());
      Var<uint32_t> elect = 7u, even = 0xdeadu;
      If(p, [&] {
        elect = cast<uint32_t>(plane_elect());
        even = plane_ballot(v % 2 == 0);
      });
      out[o + 4u] = elect;
      out[o + 5u] = even;
    });
  }
};

constexpr uint32_t kShuffles = 6;

// out[i * 6 + k]: broadcast of lane 5, shuffle from (7 * lane + 3) % 32, shuffle_xor 5,
// shuffle_up 3, shuffle_down 3, shuffle from lane + 37 (read modulo 32). Every unit is active.
template <class T>
struct PlaneShuffle {
  static constexpr std::string_view name = "plane_shuffle";
  void operator()(Slice<const T> x, Slice<T> out) const {
    auto i = absolute_pos();
    auto lane = unit_pos_plane();
    Expr<T> v = x[i];
    auto o = i * kShuffles;
    out[o] = plane_broadcast(v, 5u);
    out[o + 1u] = plane_shuffle(v, (lane * 7u + 3u) % 32u);
    out[o + 2u] = plane_shuffle_xor(v, 5u);
    out[o + 3u] = plane_shuffle_up(v, 3u);
    out[o + 4u] = plane_shuffle_down(v, 3u);
    out[o + 5u] = plane_shuffle(v, lane + 37u);
  }
};

// Shuffle operands at the edges: deltas of 0, 32 and more, and lane numbers past 31.
struct PlaneShuffleEdges {
  static constexpr std::string_view name = "plane_shuffle_edges";
  void operator()(Slice<const int32_t> x, Slice<int32_t> out) const {
    auto i = absolute_pos();
    Expr<int32_t> v = x[i];
    auto o = i * 6u;
    out[o] = plane_shuffle_up(v, 40u);
    out[o + 1u] = plane_shuffle_down(v, 0u);
    out[o + 2u] = plane_shuffle_xor(v, 32u);
    out[o + 3u] = plane_shuffle_up(v, 0xffffffffu);
    out[o + 4u] = plane_shuffle(v, 0xffffffffu);  // lane 31
    out[o + 5u] = plane_broadcast(v, 64u + 7u);   // lane 7
  }
};

template <class T>
struct PlaneScan {
  static constexpr std::string_view name = "plane_scan";
  void operator()(Slice<const T> x, Slice<T> inclusive, Slice<T> exclusive) const {
    auto i = absolute_pos();
    If(i < x.len(), [&] {
      Expr<T> v = x[i];
      inclusive[i] = plane_inclusive_sum(v);
      exclusive[i] = plane_exclusive_sum(v);
    });
  }
};

// A cube of 16 x 4 units: linear units 0..31 (rows 0 and 1) form plane 0, rows 2 and 3 plane 1.
struct PlaneRows {
  static constexpr std::string_view name = "plane_rows";
  void operator()(Slice<const int32_t> m, Slice<int32_t> out, Scalar<uint32_t> rows) const {
    auto r = cube_pos() * 4u + unit_pos_y();
    auto c = unit_pos_x();
    Var<int32_t> v = 0;
    If(r < rows, [&] { v = m[r * 16u + c]; });
    Expr<int32_t> s = plane_sum(v);  // every unit is active here
    If(r < rows, [&] { out[r * 16u + c] = s; });
  }
};

// Calls f(first, count) for each plane's units, as absolute indices, limited to the first n.
template <class F>
void for_each_plane(size_t n, uint32_t dim, F&& f) {
  for (size_t c0 = 0; c0 < n; c0 += dim) {
    for (size_t p0 = c0; p0 < c0 + dim && p0 < n; p0 += 32) {
      size_t end = std::min({p0 + 32, c0 + dim, n});
      f(p0, end - p0);
    }
  }
}

template <class T>
void register_plane_reduce(uint32_t dim, size_t n) {
  add_case(case_name({"plane_reduce", dtype_name<T>(), "dim" + std::to_string(dim), nn(n)}), kernels<PlaneReduce<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             std::vector<T> x = is_float_v<T> ? random_values<T>(rng, n, 0.8, 1.25) : random_any<T>(rng, n);
             if constexpr (is_float_v<T>) {
               for (size_t i = 0; i < n; i += 3) x[i] = narrow<T>(-wide(x[i]));
             }
             auto out = run_map<PlaneReduce<T>, T, 4>(client, 1, dim, n, x);
             std::vector<T> es(n), ep(n), eh(n), el(n);
             long double worst = 0;
             for_each_plane(n, dim, [&](size_t p0, size_t count) {
               long double s = 0, p = 1;
               T si = T(0), pi = T(1), h = x[p0], l = x[p0];
               for (size_t k = p0; k < p0 + count; ++k) {
                 s += wide(x[k]);
                 p *= wide(x[k]);
                 if constexpr (!is_float_v<T>) si = ref::add(si, x[k]), pi = ref::mul(pi, x[k]);
                 h = ref::max(h, x[k]);
                 l = ref::min(l, x[k]);
               }
               worst = std::max(worst, std::fabs(p));
               for (size_t k = p0; k < p0 + count; ++k) {
                 es[k] = is_float_v<T> ? make<T>(s) : si;
                 ep[k] = is_float_v<T> ? make<T>(p) : pi;
                 eh[k] = h;
                 el[k] = l;
               }
             });
             expect_near("plane_sum", es, out[0], tol_reduce<T>(32 * 1.25));
             expect_near("plane_prod", ep, out[1], tol_reduce<T>(1));  // relative: 32 roundings at most
             expect_equal("plane_max", eh, out[2]);
             expect_equal("plane_min", el, out[3]);
           });
}

void register_plane_vote(uint32_t dim, size_t n) {
  add_case(case_name({"plane_vote", "dim" + std::to_string(dim), nn(n)}), kernels<PlaneVote>(),
           [=](Client& client, std::mt19937_64& rng) {
             const int32_t t = 1000;
             std::vector<int32_t> x(n);
             // Per plane: all above t, all at or below, or mixed.
             for_each_plane(n, dim, [&](size_t p0, size_t count) {
               int mode = int(rng() % 3);
               for (size_t k = p0; k < p0 + count; ++k) {
                 bool above = mode == 0 || (mode == 2 && (rng() & 1));
                 x[k] = above ? t + 1 + int32_t(rng() % 100) : t - int32_t(rng() % 100);
               }
             });
             Handle hx = client.upload(x), ho = poisoned_elems<uint32_t>(client, n * kVotes);
             launch<PlaneVote>(client, CubeCount{cubes_for(n, dim)}, CubeDim{dim}, 1, hx, t, ho);
             std::vector<uint32_t> e(n * kVotes);
             for_each_plane(n, dim, [&](size_t p0, size_t count) {
               uint32_t ballot = 0, even = 0;
               int first_p = -1;
               for (size_t k = 0; k < count; ++k) {
                 if (x[p0 + k] > t) {
                   ballot |= 1u << k;
                   if (first_p < 0) first_p = int(k);
                   if (x[p0 + k] % 2 == 0) even |= 1u << k;
                 }
               }
               uint32_t all = ballot == (count == 32 ? 0xffffffffu : (1u << count) - 1) ? 1 : 0;
               for (size_t k = 0; k < count; ++k) {
                 uint32_t* o = &e[(p0 + k) * kVotes];
                 bool p = x[p0 + k] > t;
                 o[0] = all;
                 o[1] = ballot != 0;
                 o[2] = ballot;
                 o[3] = k == 0;
                 o[4] = p ? uint32_t(int(k) == first_p) : 7u;
                 o[5] = p ? even : 0xdeadu;
               }
             });
             expect_equal("all, any, ballot, elect; elect and ballot(even) under If(x > t)", e,
                          client.read<uint32_t>(ho));
           });
}

template <class T>
void register_plane_shuffle(uint32_t dim, uint32_t cubes) {
  size_t n = size_t(dim) * cubes;
  add_case(case_name({"plane_shuffle", dtype_name<T>(), "dim" + std::to_string(dim), nn(n)}),
           kernels<PlaneShuffle<T>>(), [=](Client& client, std::mt19937_64& rng) {
             auto x = random_values<T>(rng, n, -1000, 1000);
             Handle hx = client.upload(x), ho = poisoned_elems<T>(client, n * kShuffles);
             launch<PlaneShuffle<T>>(client, CubeCount{cubes}, CubeDim{dim}, 1, hx, ho);
             std::vector<T> e(n * kShuffles);
             for_each_plane(n, dim, [&](size_t p0, size_t count) {
               for (size_t l = 0; l < count; ++l) {
                 int64_t src[kShuffles] = {
                     5, int64_t(l * 7 + 3) % 32, int64_t(l ^ 5), int64_t(l) - 3, int64_t(l) + 3, int64_t(l + 37) % 32};
                 for (uint32_t k = 0; k < kShuffles; ++k) {
                   int64_t s = src[k];
                   // Outside the plane, or past the end of a partial plane: the unit keeps its value.
                   if (s < 0 || s >= int64_t(count)) s = int64_t(l);
                   e[(p0 + l) * kShuffles + k] = x[p0 + size_t(s)];
                 }
               }
             });
             expect_near("broadcast 5, shuffle (7l+3)%32, xor 5, up 3, down 3, shuffle l+37", e, client.read<T>(ho),
                         exact());
           });
}

template <class T>
void register_plane_scan(uint32_t dim, size_t n) {
  add_case(case_name({"plane_scan", dtype_name<T>(), "dim" + std::to_string(dim), nn(n)}), kernels<PlaneScan<T>>(),
           [=](Client& client, std::mt19937_64& rng) {
             std::vector<T> x = is_float_v<T> ? random_values<T>(rng, n, -1, 1) : random_any<T>(rng, n);
             auto out = run_map<PlaneScan<T>, T, 2>(client, 1, dim, n, x);
             std::vector<T> ei(n), ee(n);
             for_each_plane(n, dim, [&](size_t p0, size_t count) {
               long double run = 0;
               T runi = T(0);
               for (size_t k = p0; k < p0 + count; ++k) {
                 ee[k] = is_float_v<T> ? make<T>(run) : runi;
                 run += wide(x[k]);
                 runi = ref::add(runi, x[k]);
                 ei[k] = is_float_v<T> ? make<T>(run) : runi;
               }
             });
             expect_near("plane_inclusive_sum", ei, out[0], tol_reduce<T>(32));
             expect_near("plane_exclusive_sum", ee, out[1], tol_reduce<T>(32));
           });
}

KILN_SUITE_CASES(plane) {
  register_plane_reduce<float>(48, 1000);
  register_plane_reduce<float>(64, 640);
  register_plane_reduce<int32_t>(100, 1234);
  register_plane_reduce<uint32_t>(48, 777);
  register_plane_reduce<int64_t>(64, 999);
  register_plane_reduce<double>(40, 555);
  register_plane_vote(48, 1000);
  register_plane_vote(64, 901);
  register_plane_vote(100, 333);
  register_plane_shuffle<float>(64, 7);
  register_plane_shuffle<int64_t>(96, 3);
  register_plane_shuffle<f16>(40, 5);
  register_plane_shuffle<uint8_t>(32, 4);
  add_case("plane_shuffle_edges_i32_dim64", kernels<PlaneShuffleEdges>(), [](Client& client, std::mt19937_64& rng) {
    const size_t n = 64 * 3;
    auto x = random_any<int32_t>(rng, n);
    Handle hx = client.upload(x), ho = poisoned_elems<int32_t>(client, n * 6);
    launch<PlaneShuffleEdges>(client, CubeCount{3}, CubeDim{64}, 1, hx, ho);
    std::vector<int32_t> e(n * 6);
    for (size_t i = 0; i < n; ++i) {
      size_t p0 = i - i % 32;
      int32_t own = x[i];
      int32_t want[6] = {own, own, own, own, x[p0 + 31], x[p0 + 7]};
      std::copy(want, want + 6, e.begin() + std::ptrdiff_t(i * 6));
    }
    expect_equal("up 40, down 0, xor 32, up 2^32-1 (own value); shuffle 2^32-1 (lane 31); broadcast 71 (lane 7)", e,
                 client.read<int32_t>(ho));
  });
  register_plane_scan<int32_t>(40, 1001);
  register_plane_scan<uint32_t>(64, 700);
  register_plane_scan<float>(48, 999);

  const uint32_t rows = 37;
  add_case(case_name({"plane_rows", "i32", "dim16x4", "rows" + std::to_string(rows)}), kernels<PlaneRows>(),
           [=](Client& client, std::mt19937_64& rng) {
             auto m = random_values<int32_t>(rng, size_t(rows) * 16, -1000, 1000);
             Handle hm = client.upload(m), ho = poisoned_elems<int32_t>(client, m.size());
             launch<PlaneRows>(client, CubeCount{cubes_for(rows, 4)}, CubeDim{16, 4}, 1, hm, ho, rows);
             std::vector<int32_t> e(m.size());
             for (size_t r = 0; r < rows; ++r) {
               size_t r0 = r - r % 2;  // a plane is rows r0 and r0 + 1
               int32_t s = 0;
               for (size_t rr = r0; rr < r0 + 2 && rr < rows; ++rr)
                 for (size_t c = 0; c < 16; ++c) s += m[rr * 16 + c];
               for (size_t c = 0; c < 16; ++c) e[r * 16 + c] = s;
             }
             expect_equal("plane_sum over two rows of a 16x4 cube", e, client.read<int32_t>(ho));
           });
}

}  // namespace
}  // namespace kiln::suite
