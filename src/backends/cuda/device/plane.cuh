// ---- plane (warp) ops over the active lanes ----
#pragma once
#include "float_arith.cuh"
// Every helper takes the plane's active lanes as an explicit mask `m` that the emitter derives
// from the IR's regions (docs/decisions/013-plane-masks-on-cuda.md), not from the lanes the
// hardware happens to run together: m is exactly the set of units the CPU backend combines, and
// every lane named in m calls the helper.
KILN_DEV u32 kiln_lane() {
  u32 l;
  asm("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
}
// The lanes of the calling thread's plane that exist: all 32, except in the last plane of a cube
// whose size is not a multiple of 32.
KILN_DEV u32 kiln_plane_lanes(u32 unit, u32 units) {
  u32 n = units - (unit & ~(KILN_PLANE_WIDTH - 1u));
  return n >= KILN_PLANE_WIDTH ? 0xffffffffu : (1u << n) - 1u;
}
// Narrows m to the lanes of m for which p holds and returns p. Every lane of m that has not
// terminated calls it (lanes that returned vote 0).
KILN_DEV bool kiln_narrow(u32& m, bool p) {
  m = __ballot_sync(m, p);
  return p;
}
KILN_DEV i32 kiln_shfl(u32 m, i32 v, u32 src) { return __shfl_sync(m, v, (int)src); }
KILN_DEV u32 kiln_shfl(u32 m, u32 v, u32 src) { return __shfl_sync(m, v, (int)src); }
KILN_DEV i64 kiln_shfl(u32 m, i64 v, u32 src) { return __shfl_sync(m, v, (int)src); }
KILN_DEV u64 kiln_shfl(u32 m, u64 v, u32 src) { return __shfl_sync(m, v, (int)src); }
KILN_DEV f32 kiln_shfl(u32 m, f32 v, u32 src) { return __shfl_sync(m, v, (int)src); }
KILN_DEV f64 kiln_shfl(u32 m, f64 v, u32 src) { return __shfl_sync(m, v, (int)src); }
KILN_DEV i8 kiln_shfl(u32 m, i8 v, u32 src) { return (i8)__shfl_sync(m, (i32)v, (int)src); }
KILN_DEV i16 kiln_shfl(u32 m, i16 v, u32 src) { return (i16)__shfl_sync(m, (i32)v, (int)src); }
KILN_DEV u8 kiln_shfl(u32 m, u8 v, u32 src) { return (u8)__shfl_sync(m, (u32)v, (int)src); }
KILN_DEV u16 kiln_shfl(u32 m, u16 v, u32 src) { return (u16)__shfl_sync(m, (u32)v, (int)src); }
KILN_DEV bool kiln_shfl(u32 m, bool v, u32 src) { return __shfl_sync(m, (u32)v, (int)src) != 0u; }
KILN_DEV f16 kiln_shfl(u32 m, f16 v, u32 src) { return f16{(u16)__shfl_sync(m, (u32)v.bits, (int)src)}; }
KILN_DEV bf16 kiln_shfl(u32 m, bf16 v, u32 src) { return bf16{(u16)__shfl_sync(m, (u32)v.bits, (int)src)}; }
KILN_DEV f8e4m3 kiln_shfl(u32 m, f8e4m3 v, u32 src) { return f8e4m3{(u8)__shfl_sync(m, (u32)v.bits, (int)src)}; }
KILN_DEV f8e5m2 kiln_shfl(u32 m, f8e5m2 v, u32 src) { return f8e5m2{(u8)__shfl_sync(m, (u32)v.bits, (int)src)}; }
template <class T, int N>
KILN_DEV kiln_vec<T, N> kiln_shfl(u32 m, kiln_vec<T, N> v, u32 src) {
  kiln_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = kiln_shfl(m, v.v[i], src);
  return r;
}

struct kiln_op_add {
  template <class T>
  static KILN_DEV T f(T a, T b) {
    return kiln_add(a, b);
  }
};
struct kiln_op_mul {
  template <class T>
  static KILN_DEV T f(T a, T b) {
    return kiln_mul(a, b);
  }
};
struct kiln_op_min {
  template <class T>
  static KILN_DEV T f(T a, T b) {
    return kiln_min(a, b);
  }
};
struct kiln_op_max {
  template <class T>
  static KILN_DEV T f(T a, T b) {
    return kiln_max(a, b);
  }
};

// A reduction: a butterfly when all 32 lanes are active, else the active lanes in lane order (the
// same sequence on every active lane, so each shuffle is called by exactly the lanes it names).
template <class Op, class T>
KILN_DEV T kiln_plane_reduce(u32 m, T v) {
  if (m == 0xffffffffu) {
    u32 lane = kiln_lane();
#pragma unroll
    for (u32 o = 16; o > 0; o >>= 1) v = Op::f(v, kiln_shfl(m, v, lane ^ o));
    return v;
  }
  u32 rest = m & (m - 1);
  T acc = kiln_shfl(m, v, (u32)(__ffs(m) - 1));
  while (rest) {
    u32 l = (u32)(__ffs(rest) - 1);
    rest &= rest - 1;
    acc = Op::f(acc, kiln_shfl(m, v, l));
  }
  return acc;
}
// Prefix sums in lane order over the active lanes.
template <class T>
KILN_DEV T kiln_plane_scan(u32 m, T v, bool inclusive) {
  u32 lane = kiln_lane();
  if (m == 0xffffffffu) {
#pragma unroll
    for (u32 d = 1; d < KILN_PLANE_WIDTH; d <<= 1) {
      T y = kiln_shfl(m, v, lane >= d ? lane - d : lane);
      if (lane >= d) v = kiln_add(y, v);
    }
    if (inclusive) return v;
    T prev = kiln_shfl(m, v, lane == 0 ? 0u : lane - 1);
    return lane == 0 ? T{} : prev;
  }
  T acc = T{};
  bool first = true;
  for (u32 rest = m; rest; rest &= rest - 1) {
    u32 l = (u32)(__ffs(rest) - 1);
    T x = kiln_shfl(m, v, l);
    if (l < lane || (inclusive && l == lane)) {
      acc = first ? x : kiln_add(acc, x);
      first = false;
    }
  }
  return acc;
}
// Shuffles: every lane of m takes part in the shuffle itself (so none is left out of the mask it
// names); a lane keeps its own value where the source lane is outside 0..31 or not in m (a lane
// past the end of a partial plane, as on the CPU; reading an inactive lane is unspecified).
template <class T>
KILN_DEV T kiln_shfl_from(u32 m, T v, u32 src) {
  T r = kiln_shfl(m, v, src % KILN_PLANE_WIDTH);
  return src < KILN_PLANE_WIDTH && ((m >> src) & 1u) ? r : v;
}
template <class T>
KILN_DEV T kiln_shfl_idx(u32 m, T v, u32 src) {
  return kiln_shfl_from(m, v, src % KILN_PLANE_WIDTH);
}
template <class T>
KILN_DEV T kiln_shfl_xor(u32 m, T v, u32 x) {
  return kiln_shfl_from(m, v, kiln_lane() ^ x);
}
template <class T>
KILN_DEV T kiln_shfl_up(u32 m, T v, u32 d) {
  u32 lane = kiln_lane();
  return kiln_shfl_from(m, v, d <= lane ? lane - d : KILN_PLANE_WIDTH);
}
template <class T>
KILN_DEV T kiln_shfl_down(u32 m, T v, u32 d) {
  u32 lane = kiln_lane();
  return kiln_shfl_from(m, v, d < KILN_PLANE_WIDTH - lane ? lane + d : KILN_PLANE_WIDTH);
}
KILN_DEV bool kiln_plane_all(u32 m, bool p) { return __all_sync(m, p) != 0; }
KILN_DEV bool kiln_plane_any(u32 m, bool p) { return __any_sync(m, p) != 0; }
KILN_DEV u32 kiln_plane_ballot(u32 m, bool p) { return __ballot_sync(m, p); }
KILN_DEV bool kiln_plane_elect(u32 m) { return kiln_lane() == (u32)(__ffs(m) - 1); }
