// ---- tile products on tensor cores (mma.sync m16n8k16 over shared-memory factors) ----
#pragma once
#include "types.cuh"
// kiln_mma_sync<M, N, K, WM, WN, LDA, LDB, BCOLS>(a, b, acc): acc += A x B for an M x K tile A
// and a K x N tile B, both row-major in shared memory (row pitches LDA and LDB elements; with
// BCOLS, B is stored as its N x K transpose), split over the cube's WM x WN warps. lower_tiles emits
// the call (docs/decisions/019-tile-layer.md). The accumulator layout is defined once, by
// mma_sync_element in include/kiln/ir/mma.h, from which lower_tiles builds its layout; this file
// implements it, and tests/backends/cuda/gpu_run_test.cpp (MmaLayoutIsWhatTheHardwareReturns)
// checks what the hardware hands back against that definition.
//
// Who calls: all U = 32 * WM * WN units of the cube together, in uniform control flow (mma.sync and
// ldmatrix are warp-wide). There is no barrier inside: the caller syncs the cube before (the
// factors are staged) and after (the factors' memory may be reused).
//
// Accumulators: each unit holds S = MT * NT * 4 of them, MT = M / WM / 16, NT = N / WN / 8: warp
// w = (w / WN, w % WN) of the grid of warps, slot j = c + 4 * (nt + NT * mt) register c of the
// warp's block (mt, nt), mma.sync's C fragment in it (mma.h says which element each lane holds).
//
// The instructions, for one k-step of 16 (g = lane / 4, t = lane % 4):
// - ldmatrix.sync.aligned.m8n8.x4.shared.b16 (A): four 8 x 8 matrices of 16-bit elements, whose
//   rows' addresses lanes 0-7, 8-15, 16-23, 24-31 give; each lane receives row g, elements 2t and
//   2t+1 of each matrix, in one register per matrix. Lane l points at row l % 16, column
//   (l / 16) * 8 of the warp's 16 x 16 A block, so the matrices are rows 0-7 / 8-15 at columns
//   0-7, then at columns 8-15: registers a0..a3, exactly mma's A operand
//   (a0: row g, k 2t..2t+1; a1: row g+8; a2: k 8+2t; a3: row g+8, k 8+2t).
// - ldmatrix ... .x4.trans (B): B is row-major K x N, while mma wants each lane to hold two k
//   values of one column n (b0: k 2t..2t+1, column g; b1: k 8+2t..). .trans hands out each 8 x 8
//   matrix transposed, which is that. Lane l points at k row l % 16, column (l / 16) * 8: matrices
//   0 and 1 are b0, b1 of one n-tile, matrices 2 and 3 of the next. An odd last n-tile takes .x2
//   (lanes 0-15's addresses).
// - ldmatrix ... .x4 (B stored as columns, BCOLS: an N x K tile, row pitch LDB, the transposed view
//   of a factor read as it is stored): each 8 x 8 matrix is 8 columns n by 8 k, so plain ldmatrix
//   hands each lane column g, k 2t..2t+1: mma's b0 (and b1 for k 8..15). Lane l points at column
//   (l % 8) + (l / 16) * 8, k ((l / 8) % 2) * 8: matrices 0 and 1 are b0, b1 of one n-tile, 2 and 3
//   of the next.
// - mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32: d = a x b + c on one 16 x 8
//   tile, products exact and sums in f32; c0..c3 are the unit's four slots of that tile.
// The fragments of step k+1 are loaded before the products of step k issue (two register sets),
// so that the shared-memory latency hides behind the tensor cores.
//
// Before sm_80 (no bf16 mma, no m16n8k16) an instantiation is a compile error rather than a slow
// fallback: lower_tiles only emits the call for sm_80 and later, and runs exact loops elsewhere, so
// an instantiation on an older target is a bug in the caller, which should be loud.

template <class A, class B>
struct kiln_same_type {
  static constexpr bool value = false;
};
template <class A>
struct kiln_same_type<A, A> {
  static constexpr bool value = true;
};
// False, but only known once instantiated: a static_assert on it fires where the template is used.
template <int M>
struct kiln_mma_before_sm80 {
  static constexpr bool value = false;
};

KILN_DEV u32 kiln_smem_addr(const void* p) { return (u32)__cvta_generic_to_shared(p); }

// ldmatrix reads shared memory that the caller rewrites between calls (behind barriers), so its asm
// is volatile: otherwise the compiler sees a pure function of the address and may reuse an earlier
// call's result. mma.sync reads registers only and stays free to schedule.
KILN_DEV void kiln_ldmatrix_x4(u32 (&r)[4], u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
KILN_DEV void kiln_ldmatrix_x4_trans(u32 (&r)[4], u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
KILN_DEV void kiln_ldmatrix_x2(u32 (&r)[2], u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}
KILN_DEV void kiln_ldmatrix_x2_trans(u32 (&r)[2], u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}

// One m16n8k16 product into f32 accumulators c[0..4).
template <class T>
KILN_DEV void kiln_mma_16816(f32* c, const u32 (&a)[4], const u32 (&b)[2]) {
  if constexpr (kiln_same_type<T, bf16>::value) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

// One m16n8k16 product into f16 accumulators c[0..4), packed two to a register as mma's f16 C
// fragment holds them (c0 in the low half of the first register, c1 in its high half, c2, c3 in
// the second).
template <class T>
KILN_DEV void kiln_mma_16816(f16* c, const u32 (&a)[4], const u32 (&b)[2]) {
  static_assert(kiln_same_type<T, f16>::value, "f16 accumulators take f16 factors");
  u32 c01 = (u32)c[0].bits | ((u32)c[1].bits << 16), c23 = (u32)c[2].bits | ((u32)c[3].bits << 16);
  asm("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};"
      : "+r"(c01), "+r"(c23)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  c[0].bits = (u16)c01;
  c[1].bits = (u16)(c01 >> 16);
  c[2].bits = (u16)c23;
  c[3].bits = (u16)(c23 >> 16);
}

// The warp's fragments for one k-step: MT A blocks of 16 x 16 and NT B blocks of 16 x 8.
template <int MT, int NT>
struct kiln_mma_frags {
  u32 a[MT][4];
  u32 b[NT][2];
};

// Loads step ks's B fragments (and, in kiln_mma_load, its A fragments). a_lane and b_lane are the
// shared addresses this lane points ldmatrix at for step 0 (its row and column within the warp's
// first block); steps and blocks move by constant byte offsets from there.
template <int MT, int NT, int LDB, bool BCOLS>
KILN_DEV void kiln_mma_load_b(kiln_mma_frags<MT, NT>& f, u32 b_lane, int ks) {
#pragma unroll
  for (int nt = 0; nt + 1 < NT; nt += 2) {
    u32 r[4];
    if constexpr (BCOLS) {
      kiln_ldmatrix_x4(r, b_lane + (u32)((nt * 8 * LDB + ks * 16) * 2));
    } else {
      kiln_ldmatrix_x4_trans(r, b_lane + (u32)((ks * 16 * LDB + nt * 8) * 2));
    }
    f.b[nt][0] = r[0];
    f.b[nt][1] = r[1];
    f.b[nt + 1][0] = r[2];
    f.b[nt + 1][1] = r[3];
  }
  if constexpr (NT % 2 == 1) {
    if constexpr (BCOLS) {
      kiln_ldmatrix_x2(f.b[NT - 1], b_lane + (u32)(((NT - 1) * 8 * LDB + ks * 16) * 2));
    } else {
      kiln_ldmatrix_x2_trans(f.b[NT - 1], b_lane + (u32)((ks * 16 * LDB + (NT - 1) * 8) * 2));
    }
  }
}
template <int MT, int NT, int LDA, int LDB, bool BCOLS>
KILN_DEV void kiln_mma_load(kiln_mma_frags<MT, NT>& f, u32 a_lane, u32 b_lane, int ks) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) kiln_ldmatrix_x4(f.a[mt], a_lane + (u32)((mt * 16 * LDA + ks * 16) * 2));
  kiln_mma_load_b<MT, NT, LDB, BCOLS>(f, b_lane, ks);
}

// This lane's ldmatrix address of B for step 0: its warp's columns of B.
template <int N, int WN, int LDB, bool BCOLS, class T>
KILN_DEV u32 kiln_mma_b_lane(const T* b) {
  const int lane = (int)(threadIdx.x % KILN_PLANE_WIDTH), wn = (int)(threadIdx.x / KILN_PLANE_WIDTH) % WN;
  if constexpr (BCOLS) {
    return kiln_smem_addr(b + (wn * (N / WN) + lane % 8 + (lane / 16) * 8) * LDB + ((lane / 8) % 2) * 8);
  } else {
    return kiln_smem_addr(b + (lane % 16) * LDB + wn * (N / WN) + (lane / 16) * 8);
  }
}

// The shape requirements, and this lane's ldmatrix addresses for step 0.
template <int M, int N, int K, int WM, int WN, int LDA, int LDB, bool BCOLS, class T>
KILN_DEV void kiln_mma_lane_addrs(const T* a, const T* b, u32& a_lane, u32& b_lane) {
  static_assert(kiln_same_type<T, bf16>::value || kiln_same_type<T, f16>::value,
                "kiln_mma_sync multiplies bf16 or f16");
  static_assert(WM > 0 && WN > 0 && M % (16 * WM) == 0, "each warp row takes a whole number of 16-row m-tiles");
  static_assert(N % (8 * WN) == 0, "each warp column takes a whole number of 8-column n-tiles");
  static_assert(K % 16 == 0, "k steps by 16");
  static_assert(LDA >= K && LDB >= (BCOLS ? K : N), "a row pitch is at least the row");
  // ldmatrix reads each 8-element row as one 16-byte access: every row must start 16-byte aligned
  // (the tiles' bases too, which the caller's shared layout provides).
  static_assert((LDA * 2) % 16 == 0 && (LDB * 2) % 16 == 0, "row pitches must be multiples of 16 bytes (8 elements)");
  const int lane = (int)(threadIdx.x % KILN_PLANE_WIDTH), warp = (int)(threadIdx.x / KILN_PLANE_WIDTH);
  const int wm = warp / WN;
  a_lane = kiln_smem_addr(a + (wm * (M / WM) + lane % 16) * LDA + (lane / 16) * 8);
  b_lane = kiln_mma_b_lane<N, WN, LDB, BCOLS>(b);
}

// Acc is f32 (bf16 or f16 factors) or f16 (f16 factors summed in f16), in the same slot layout.
// BCOLS: b is stored as its columns (an N x K tile, rows LDB apart), as a transposed view is.
template <int M, int N, int K, int WM, int WN, int LDA, int LDB, bool BCOLS = false, class T, class Acc>
KILN_DEV void kiln_mma_sync(const T* a, const T* b, Acc* acc) {
#if __CUDA_ARCH__ >= 800
  constexpr int MT = M / WM / 16, NT = N / WN / 8, KS = K / 16;
  u32 a_lane, b_lane;
  kiln_mma_lane_addrs<M, N, K, WM, WN, LDA, LDB, BCOLS>(a, b, a_lane, b_lane);
  kiln_mma_frags<MT, NT> f[2];
  kiln_mma_load<MT, NT, LDA, LDB, BCOLS>(f[0], a_lane, b_lane, 0);
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) {
    if (ks + 1 < KS) kiln_mma_load<MT, NT, LDA, LDB, BCOLS>(f[(ks + 1) % 2], a_lane, b_lane, ks + 1);
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) kiln_mma_16816<T>(acc + 4 * (nt + NT * mt), f[ks % 2].a[mt], f[ks % 2].b[nt]);
    }
  }
#else
  static_assert(kiln_mma_before_sm80<M>::value, "kiln_mma_sync needs sm_80 or later (mma.sync m16n8k16)");
#endif
}

// Two 16-bit factors in one register, the first in the low half (as mma's fragments hold them).
template <class T>
KILN_DEV u32 kiln_pack_pair(const T& lo, const T& hi) {
  return (u32)lo.bits | ((u32)hi.bits << 16);
}

// kiln_mma_sync_frag_a<M, N, K, WM, LDB[, BCOLS]>(a, b, acc): acc += A x B as kiln_mma_sync does,
// over WM x 1 warps, with A from registers instead of shared memory. a holds this unit's elements
// of the M x K tile A in the layout an M x K product over the same WM x 1 warps leaves its
// accumulators (mma_sync_element: slot c + 4 * (kt + KT * mt), KT = K / 8, of the 16 x 8 block
// (mt, kt)), as when A is another product's result turned into factors (FlashAttention-2's P).
// That is A's fragment already: mma's a0 (row g, k 2t, 2t+1) and a1 (row g + 8) of k-step s are
// c0, c1 and c2, c3 of block (mt, 2s), a2 and a3 the same of block (mt, 2s + 1); each pair is
// packed into one register. Each warp reads all of B (its N columns) from shared memory. lower_tiles
// emits the call (mma.sync.a_frag) where it placed A's product on the same warps.
template <int M, int N, int K, int WM, int LDB, bool BCOLS = false, class T, class Acc>
KILN_DEV void kiln_mma_sync_frag_a(const T* a, const T* b, Acc* acc) {
#if __CUDA_ARCH__ >= 800
  static_assert(kiln_same_type<T, bf16>::value || kiln_same_type<T, f16>::value,
                "kiln_mma_sync_frag_a multiplies bf16 or f16");
  static_assert(WM > 0 && M % (16 * WM) == 0, "each warp takes a whole number of 16-row m-tiles");
  static_assert(N % 8 == 0 && K % 16 == 0, "n steps by 8, k by 16");
  static_assert(LDB >= (BCOLS ? K : N) && (LDB * 2) % 16 == 0, "B's row pitch: at least its row, whole 16 bytes");
  constexpr int MT = M / WM / 16, NT = N / 8, KS = K / 16, KT = K / 8;
  const u32 b_lane = kiln_mma_b_lane<N, 1, LDB, BCOLS>(b);
  kiln_mma_frags<MT, NT> f[2];
  kiln_mma_load_b<MT, NT, LDB, BCOLS>(f[0], b_lane, 0);
#pragma unroll
  for (int ks = 0; ks < KS; ++ks) {
    if (ks + 1 < KS) kiln_mma_load_b<MT, NT, LDB, BCOLS>(f[(ks + 1) % 2], b_lane, ks + 1);
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const T* lo = a + 4 * (2 * ks + KT * mt);  // block (mt, 2 ks)
      const T* hi = lo + 4;                      // block (mt, 2 ks + 1)
      f[ks % 2].a[mt][0] = kiln_pack_pair(lo[0], lo[1]);
      f[ks % 2].a[mt][1] = kiln_pack_pair(lo[2], lo[3]);
      f[ks % 2].a[mt][2] = kiln_pack_pair(hi[0], hi[1]);
      f[ks % 2].a[mt][3] = kiln_pack_pair(hi[2], hi[3]);
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) kiln_mma_16816<T>(acc + 4 * (nt + NT * mt), f[ks % 2].a[mt], f[ks % 2].b[nt]);
    }
  }
#else
  static_assert(kiln_mma_before_sm80<M>::value, "kiln_mma_sync_frag_a needs sm_80 or later (mma.sync m16n8k16)");
#endif
}
