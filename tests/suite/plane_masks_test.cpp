// Plane ops where units diverge, each compared with a host reference that follows the IR's active
// units plane by plane: inside a data-dependent If and its Else, in a For whose bound differs by
// unit, in a While (also in its condition region), after Continue, Break and Terminate (the units
// that left take no part; after the loop every remaining unit does again), and on cubes of 40
// units, whose second plane has 8. Every place probes four plane ops: a sum, a ballot, a broadcast
// (from the highest active lane, named by a ballot) and elect. A unit that does not reach a probe
// leaves its outputs poisoned. (On CUDA the masks come from docs/decisions/013-plane-masks-on-cuda.md.)
#include <bit>

#include "suite_run.h"

namespace kiln::suite {
namespace {

constexpr uint32_t kProbe = 4;
constexpr uint32_t kPoison = 0xffffffffu;

// The four plane ops over the units active here, into out[o .. o + 3]: the sum of v, the ballot
// of (v odd), v of the highest active unit and elect.
void probe(const Slice<uint32_t>& out, const Expr<uint32_t>& o, const Expr<uint32_t>& v) {
  out[o] = plane_sum(v);
  out[o + 1u] = plane_ballot(v % 2u == 1u);
  Expr<uint32_t> active = plane_ballot(Expr<bool>(true));
  out[o + 2u] = plane_broadcast(v, 31u - leading_zeros(active));
  out[o + 3u] = cast<uint32_t>(plane_elect());
}

// The probe's results for the units of one plane whose active lanes are `mask`: unit l's value is
// val(l), its four outputs start at e[at(l)].
template <class Val, class At>
void expect_probe(std::vector<uint32_t>& e, uint32_t mask, Val&& val, At&& at) {
  if (mask == 0) return;
  uint32_t sum = 0, odd = 0;
  for (uint32_t l = 0; l < 32; ++l) {
    if (!(mask >> l & 1u)) continue;
    sum += val(l);
    if (val(l) % 2 == 1) odd |= 1u << l;
  }
  uint32_t top = 31 - uint32_t(std::countl_zero(mask)), lowest = uint32_t(std::countr_zero(mask));
  for (uint32_t l = 0; l < 32; ++l) {
    if (!(mask >> l & 1u)) continue;
    uint32_t* o = &e[at(l)];
    o[0] = sum;
    o[1] = odd;
    o[2] = val(top);
    o[3] = l == lowest;
  }
}

// Calls f(first unit, units) for each plane of each cube of `dim` units, over n units.
template <class F>
void each_plane(size_t n, uint32_t dim, F&& f) {
  for (size_t c0 = 0; c0 < n; c0 += dim)
    for (size_t p0 = c0; p0 < c0 + dim && p0 < n; p0 += 32) f(p0, uint32_t(std::min({p0 + 32, c0 + dim, n}) - p0));
}

// The lanes l < count of a plane for which f(l) holds.
template <class F>
uint32_t lanes(uint32_t count, F&& f) {
  uint32_t m = 0;
  for (uint32_t l = 0; l < count; ++l) {
    if (f(l)) m |= 1u << l;
  }
  return m;
}

// Per-unit inputs that diverge within a plane, or not: per plane, every unit draws from [lo, hi]
// (mode 2), or all units share one draw (mode 0), or all share lo (mode 1).
std::vector<uint32_t> plane_values(std::mt19937_64& rng, size_t n, uint32_t dim, uint32_t lo, uint32_t hi) {
  std::vector<uint32_t> v(n);
  each_plane(n, dim, [&](size_t p0, uint32_t count) {
    int mode = int(rng() % 3);
    uint32_t shared = lo + uint32_t(rng() % (hi - lo + 1));
    for (uint32_t l = 0; l < count; ++l) {
      v[p0 + l] = mode == 0 ? shared : mode == 1 ? lo : lo + uint32_t(rng() % (hi - lo + 1));
    }
  });
  return v;
}

// ---- (a) inside an If, a nested If and an Else -------------------------------------------------

struct PlaneMasksIf {
  static constexpr std::string_view name = "plane_masks_if";
  void operator()(Slice<const uint32_t> x, Slice<uint32_t> out, Slice<uint32_t> edge) const {
    auto i = absolute_pos();
    Expr<uint32_t> v = x[i];
    auto o = i * (3 * kProbe);
    If(v % 3u == 0u, [&] {
      probe(out, o, v);
      If(v % 5u < 2u, [&] { probe(out, o + kProbe, v * 7u); });
    }).Else([&] { probe(out, o + 2 * kProbe, v + 1u); });
    // Every unit is active: a partial plane has no lane 31, and a unit keeps its own value.
    edge[i] = plane_broadcast(v, 31u);
  }
};

void register_if(uint32_t dim, uint32_t cubes) {
  const size_t n = size_t(dim) * cubes;
  add_case(case_name({"plane_masks_if", "dim" + std::to_string(dim), nn(n)}), kernels<PlaneMasksIf>(),
           [=](Client& client, std::mt19937_64& rng) {
             // Multiples of 3 in a third of the planes, none in another, mixed in the rest.
             std::vector<uint32_t> x = plane_values(rng, n, dim, 0, 999);
             each_plane(n, dim, [&](size_t p0, uint32_t count) {
               int mode = int(rng() % 3);
               for (uint32_t l = 0; l < count; ++l) {
                 uint32_t& v = x[p0 + l];
                 if (mode == 0 || (mode == 2 && rng() % 2)) v -= v % 3;
                 else if (v % 3 == 0) v += 1;
               }
             });
             Handle hx = client.upload(x), ho = poisoned_elems<uint32_t>(client, n * 3 * kProbe),
                    he = poisoned_elems<uint32_t>(client, n);
             launch<PlaneMasksIf>(client, CubeCount{cubes}, CubeDim{dim}, 1, hx, ho, he);
             std::vector<uint32_t> e(n * 3 * kProbe, kPoison), ee(n);
             each_plane(n, dim, [&](size_t p0, uint32_t count) {
               auto xv = [&](uint32_t l) { return x[p0 + l]; };
               uint32_t then_m = lanes(count, [&](uint32_t l) { return xv(l) % 3 == 0; });
               uint32_t inner = lanes(count, [&](uint32_t l) { return xv(l) % 3 == 0 && xv(l) % 5 < 2; });
               uint32_t else_m = lanes(count, [&](uint32_t l) { return xv(l) % 3 != 0; });
               auto at = [&](uint32_t slot) { return [=](uint32_t l) { return ((p0 + l) * 3 + slot) * kProbe; }; };
               expect_probe(e, then_m, xv, at(0));
               expect_probe(
                   e, inner, [&](uint32_t l) { return xv(l) * 7u; }, at(1));
               expect_probe(
                   e, else_m, [&](uint32_t l) { return xv(l) + 1u; }, at(2));
               for (uint32_t l = 0; l < count; ++l) ee[p0 + l] = count == 32 ? xv(31) : xv(l);
             });
             expect_equal("sum, ballot, broadcast, elect in If(x % 3 == 0), If(x % 5 < 2) inside it, and the Else", e,
                          client.read<uint32_t>(ho));
             expect_equal("broadcast of lane 31 (a partial plane's units keep their own value)", ee,
                          client.read<uint32_t>(he));
           });
}

// ---- (b) in loops whose trip counts differ by unit ---------------------------------------------

constexpr uint32_t kMaxTrips = 10;

// A For of count[i] iterations; a While that halves w until it is 0 (as many iterations as w has
// bits), with a ballot in its condition region over every unit still looping.
struct PlaneMasksLoops {
  static constexpr std::string_view name = "plane_masks_loops";
  void operator()(Slice<const uint32_t> count, Slice<const uint32_t> w0, Slice<uint32_t> fout, Slice<uint32_t> wout,
                  Slice<uint32_t> cond) const {
    auto i = absolute_pos();
    Expr<uint32_t> v = count[i] * 13u + w0[i];
    For(range(0u, count[i]), [&](Expr<uint32_t> j) { probe(fout, (i * kMaxTrips + j) * kProbe, v + j); });
    Var<uint32_t> w = w0[i], k = 0u;
    While(
        [&] {
          cond[i * (kMaxTrips + 1) + k] = plane_ballot(w % 2u == 1u);
          return w > 0u;
        },
        [&] {
          probe(wout, (i * kMaxTrips + k) * kProbe, v ^ w);
          w = w / 2u;
          k = k + 1u;
        });
  }
};

void register_loops(uint32_t dim, uint32_t cubes) {
  const size_t n = size_t(dim) * cubes;
  add_case(case_name({"plane_masks_loops", "dim" + std::to_string(dim), nn(n)}), kernels<PlaneMasksLoops>(),
           [=](Client& client, std::mt19937_64& rng) {
             std::vector<uint32_t> count = plane_values(rng, n, dim, 0, kMaxTrips);
             std::vector<uint32_t> w0 = plane_values(rng, n, dim, 0, (1u << kMaxTrips) - 1);
             Handle hc = client.upload(count), hw = client.upload(w0),
                    hf = poisoned_elems<uint32_t>(client, n * kMaxTrips * kProbe),
                    hwo = poisoned_elems<uint32_t>(client, n * kMaxTrips * kProbe),
                    hcond = poisoned_elems<uint32_t>(client, n * (kMaxTrips + 1));
             launch<PlaneMasksLoops>(client, CubeCount{cubes}, CubeDim{dim}, 1, hc, hw, hf, hwo, hcond);
             std::vector<uint32_t> ef(n * kMaxTrips * kProbe, kPoison), ew(ef), ec(n * (kMaxTrips + 1), kPoison);
             each_plane(n, dim, [&](size_t p0, uint32_t size) {
               auto v = [&](uint32_t l) { return count[p0 + l] * 13u + w0[p0 + l]; };
               for (uint32_t j = 0; j < kMaxTrips; ++j) {
                 uint32_t m = lanes(size, [&](uint32_t l) { return count[p0 + l] > j; });
                 expect_probe(
                     ef, m, [&](uint32_t l) { return v(l) + j; },
                     [&](uint32_t l) { return ((p0 + l) * kMaxTrips + j) * kProbe; });
               }
               for (uint32_t k = 0; k <= kMaxTrips; ++k) {
                 auto w = [&](uint32_t l) { return w0[p0 + l] >> k; };
                 // The condition runs for the units whose w was not yet 0 before this evaluation.
                 uint32_t live = lanes(size, [&](uint32_t l) { return k == 0 || w0[p0 + l] >> (k - 1) != 0; });
                 uint32_t odd = lanes(size, [&](uint32_t l) { return (live >> l & 1u) && w(l) % 2 == 1; });
                 for (uint32_t l = 0; l < size; ++l) {
                   if (live >> l & 1u) ec[(p0 + l) * (kMaxTrips + 1) + k] = odd;
                 }
                 uint32_t body = lanes(size, [&](uint32_t l) { return w(l) != 0; });
                 if (k < kMaxTrips) {
                   expect_probe(
                       ew, body, [&](uint32_t l) { return v(l) ^ w(l); },
                       [&](uint32_t l) { return ((p0 + l) * kMaxTrips + k) * kProbe; });
                 }
               }
             });
             expect_equal("For over count[i]: the units still looping", ef, client.read<uint32_t>(hf));
             expect_equal("While w > 0 (w halves): the units still looping", ew, client.read<uint32_t>(hwo));
             expect_equal("ballot(w odd) in the While's condition region", ec, client.read<uint32_t>(hcond));
           });
}

// ---- (c) after Continue and Break ---------------------------------------------------------------

constexpr uint32_t kIters = 8;

// A For that continues at iteration skip[i] and breaks at stop[i], probing between the two and
// after the break; then a While that breaks at iteration skip[i], counting the units in its
// condition region; after each loop a probe over every unit.
struct PlaneMasksBreak {
  static constexpr std::string_view name = "plane_masks_break";
  void operator()(Slice<const uint32_t> skip, Slice<const uint32_t> stop, Slice<uint32_t> fout, Slice<uint32_t> wout,
                  Slice<uint32_t> cond, Slice<uint32_t> after) const {
    auto i = absolute_pos();
    Expr<uint32_t> v = skip[i] * 16u + stop[i];
    Var<uint32_t> last = 99u;
    For(range(0u, kIters), [&](Expr<uint32_t> j) {
      If(j == skip[i], [&] { Continue(); });
      probe(fout, (i * kIters + j) * (2 * kProbe), v + j);
      If(j == stop[i], [&] { Break(); });
      probe(fout, (i * kIters + j) * (2 * kProbe) + kProbe, v * j);
      last = j;
    });
    probe(after, i * (2 * kProbe), v + last);
    Var<uint32_t> k = 0u;
    While(
        [&] {
          cond[i * (kIters + 1) + k] = plane_sum(Expr<uint32_t>(1u));
          return k < kIters;
        },
        [&] {
          If(k == skip[i], [&] { Break(); });
          probe(wout, (i * kIters + k) * kProbe, v + k * 3u);
          k = k + 1u;
        });
    probe(after, i * (2 * kProbe) + kProbe, v ^ k);
  }
};

void register_break(uint32_t dim, uint32_t cubes) {
  const size_t n = size_t(dim) * cubes;
  add_case(case_name({"plane_masks_break", "dim" + std::to_string(dim), nn(n)}), kernels<PlaneMasksBreak>(),
           [=](Client& client, std::mt19937_64& rng) {
             // Past kIters - 1: the unit never continues (breaks) there.
             std::vector<uint32_t> skip = plane_values(rng, n, dim, 0, kIters + 2);
             std::vector<uint32_t> stop = plane_values(rng, n, dim, 0, kIters + 2);
             Handle hs = client.upload(skip), hp = client.upload(stop),
                    hf = poisoned_elems<uint32_t>(client, n * kIters * 2 * kProbe),
                    hw = poisoned_elems<uint32_t>(client, n * kIters * kProbe),
                    hc = poisoned_elems<uint32_t>(client, n * (kIters + 1)),
                    ha = poisoned_elems<uint32_t>(client, n * 2 * kProbe);
             launch<PlaneMasksBreak>(client, CubeCount{cubes}, CubeDim{dim}, 1, hs, hp, hf, hw, hc, ha);
             std::vector<uint32_t> ef(n * kIters * 2 * kProbe, kPoison), ew(n * kIters * kProbe, kPoison),
                 ec(n * (kIters + 1), kPoison), ea(n * 2 * kProbe, kPoison);
             each_plane(n, dim, [&](size_t p0, uint32_t size) {
               auto v = [&](uint32_t l) { return skip[p0 + l] * 16u + stop[p0 + l]; };
               std::vector<uint32_t> last(size, 99u);
               uint32_t looping = lanes(size, [](uint32_t) { return true; });
               for (uint32_t j = 0; j < kIters; ++j) {
                 uint32_t here = looping & ~lanes(size, [&](uint32_t l) { return skip[p0 + l] == j; });
                 auto at = [&](uint32_t slot) {
                   return [=](uint32_t l) { return ((p0 + l) * kIters + j) * (2 * kProbe) + slot * kProbe; };
                 };
                 expect_probe(
                     ef, here, [&](uint32_t l) { return v(l) + j; }, at(0));
                 looping &= ~(here & lanes(size, [&](uint32_t l) { return stop[p0 + l] == j; }));
                 here &= looping;
                 expect_probe(
                     ef, here, [&](uint32_t l) { return v(l) * j; }, at(1));
                 for (uint32_t l = 0; l < size; ++l) {
                   if (here >> l & 1u) last[l] = j;
                 }
               }
               uint32_t all = lanes(size, [](uint32_t) { return true; });
               expect_probe(
                   ea, all, [&](uint32_t l) { return v(l) + last[l]; },
                   [&](uint32_t l) { return (p0 + l) * (2 * kProbe); });
               uint32_t live = all;
               for (uint32_t k = 0; k <= kIters; ++k) {
                 for (uint32_t l = 0; l < size; ++l) {
                   if (live >> l & 1u) ec[(p0 + l) * (kIters + 1) + k] = uint32_t(std::popcount(live));
                 }
                 if (k == kIters) break;
                 live &= ~lanes(size, [&](uint32_t l) { return skip[p0 + l] == k; });
                 expect_probe(
                     ew, live, [&](uint32_t l) { return v(l) + k * 3u; },
                     [&](uint32_t l) { return ((p0 + l) * kIters + k) * kProbe; });
               }
               expect_probe(
                   ea, all, [&](uint32_t l) { return v(l) ^ std::min(skip[p0 + l], kIters); },
                   [&](uint32_t l) { return (p0 + l) * (2 * kProbe) + kProbe; });
             });
             expect_equal("For: after Continue at skip[i], after Break at stop[i]", ef, client.read<uint32_t>(hf));
             expect_equal("While: after Break at skip[i]", ew, client.read<uint32_t>(hw));
             expect_equal("plane_sum(1) in the While's condition region: the units still looping", ec,
                          client.read<uint32_t>(hc));
             expect_equal("after each loop: every unit again", ea, client.read<uint32_t>(ha));
           });
}

// ---- (d) after Terminate -----------------------------------------------------------------------

// Units with x % 7 == 0 terminate first; the others probe, then terminate at iteration when[i] of
// a loop that probes each iteration; the survivors meet at a barrier and probe again.
struct PlaneMasksTerminate {
  static constexpr std::string_view name = "plane_masks_terminate";
  void operator()(Slice<const uint32_t> x, Slice<const uint32_t> when, Slice<uint32_t> top, Slice<uint32_t> loop,
                  Slice<uint32_t> after) const {
    auto i = absolute_pos();
    Expr<uint32_t> v = x[i];
    If(v % 7u == 0u, [&] { Terminate(); });
    probe(top, i * kProbe, v);
    For(range(0u, kIters), [&](Expr<uint32_t> j) {
      If(j == when[i], [&] { Terminate(); });
      probe(loop, (i * kIters + j) * kProbe, v + j);
    });
    sync_cube();
    probe(after, i * kProbe, v * 3u);
  }
};

void register_terminate(uint32_t dim, uint32_t cubes) {
  const size_t n = size_t(dim) * cubes;
  add_case(case_name({"plane_masks_terminate", "dim" + std::to_string(dim), nn(n)}), kernels<PlaneMasksTerminate>(),
           [=](Client& client, std::mt19937_64& rng) {
             std::vector<uint32_t> x = plane_values(rng, n, dim, 1, 999);
             std::vector<uint32_t> when = plane_values(rng, n, dim, 0, kIters + 4);
             Handle hx = client.upload(x), hw = client.upload(when), ht = poisoned_elems<uint32_t>(client, n * kProbe),
                    hl = poisoned_elems<uint32_t>(client, n * kIters * kProbe),
                    ha = poisoned_elems<uint32_t>(client, n * kProbe);
             launch<PlaneMasksTerminate>(client, CubeCount{cubes}, CubeDim{dim}, 1, hx, hw, ht, hl, ha);
             std::vector<uint32_t> et(n * kProbe, kPoison), el(n * kIters * kProbe, kPoison), ea(n * kProbe, kPoison);
             each_plane(n, dim, [&](size_t p0, uint32_t size) {
               auto xv = [&](uint32_t l) { return x[p0 + l]; };
               uint32_t live = lanes(size, [&](uint32_t l) { return xv(l) % 7 != 0; });
               expect_probe(et, live, xv, [&](uint32_t l) { return (p0 + l) * kProbe; });
               for (uint32_t j = 0; j < kIters; ++j) {
                 live &= ~lanes(size, [&](uint32_t l) { return when[p0 + l] == j; });
                 expect_probe(
                     el, live, [&](uint32_t l) { return xv(l) + j; },
                     [&](uint32_t l) { return ((p0 + l) * kIters + j) * kProbe; });
               }
               expect_probe(
                   ea, live, [&](uint32_t l) { return xv(l) * 3u; }, [&](uint32_t l) { return (p0 + l) * kProbe; });
             });
             expect_equal("after Terminate (x % 7 == 0)", et, client.read<uint32_t>(ht));
             expect_equal("in a For after Terminate at when[i]", el, client.read<uint32_t>(hl));
             expect_equal("after the loop and a barrier: the units that did not terminate", ea,
                          client.read<uint32_t>(ha));
           });
}

// ---- (e) every case on a cube of 40 units (a partial plane of 8) as well as 64 -----------------

KILN_SUITE_CASES(plane_masks) {
  for (uint32_t dim : {64u, 40u}) {
    register_if(dim, 6);
    register_loops(dim, 5);
    register_break(dim, 5);
    register_terminate(dim, 5);
  }
  register_loops(100, 3);  // planes of 32, 32, 32 and 4 units
}

}  // namespace
}  // namespace kiln::suite
