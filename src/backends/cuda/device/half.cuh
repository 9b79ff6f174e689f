// ---- f16 / bf16 / fp8 <-> f32 (round to nearest even; to fp8 saturating) ----
#pragma once
#include "fp8.cuh"
KILN_DEV f32 kiln_f32(f16 h) {
  f32 f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
  return f;
}
KILN_DEV f32 kiln_f32(bf16 h) { return __uint_as_float((u32)h.bits << 16); }
KILN_DEV f16 kiln_f16(f32 f) {
  f16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
  return h;
}
KILN_DEV bf16 kiln_bf16(f32 f) {
#if __CUDA_ARCH__ >= 800
  bf16 h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
  return h;
#else
  u32 x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return bf16{(u16)((x >> 16) | 0x40u)};
  return bf16{(u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16)};
#endif
}
// fp8 -> f32 is exact; e5m2 is the top byte of an f16.
KILN_DEV f32 kiln_f32(f8e5m2 h) { return kiln_f32(f16{(u16)((u16)h.bits << 8)}); }
// f32 -> fp8: cvt.rn.satfinite (sm_89 and later) rounds to nearest even, sends a finite value past
// the largest and an infinity to the largest of its sign, and NaN to 0x7f; earlier targets compute
// the same from the bits (fp8.cuh).
KILN_DEV f8e4m3 kiln_f8e4m3(f32 f) {
#if __CUDA_ARCH__ >= 890
  u16 pair;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(f));
  return f8e4m3{(u8)pair};
#else
  return f8e4m3{kiln_fp8_bits(f, 3u, 7u, 0x7eu)};
#endif
}
KILN_DEV f8e5m2 kiln_f8e5m2(f32 f) {
#if __CUDA_ARCH__ >= 890
  u16 pair;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(f));
  return f8e5m2{(u8)pair};
#else
  return f8e5m2{kiln_fp8_bits(f, 2u, 15u, 0x7bu)};
#endif
}
// To f32 rounding to odd (truncate, then set the last bit when inexact): rounding that to f16 or
// bf16 (or fp8) gives the single correctly rounded result from f64 or a 64-bit integer (f32
// carries more than 2 bits beyond any of them). Used for f64 and wide integers -> the short floats.
KILN_DEV f32 kiln_odd(f32 t, bool inexact) { return inexact ? __uint_as_float(__float_as_uint(t) | 1u) : t; }
KILN_DEV f32 kiln_f32_odd(f64 d) {
  f32 t = __double2float_rz(d);
  return kiln_odd(t, t == t && (f64)t != d);
}
KILN_DEV f32 kiln_f32_odd(i64 x) {
  f32 t = __ll2float_rz(x);
  return kiln_odd(t, __float2ll_rz(t) != x);
}
KILN_DEV f32 kiln_f32_odd(u64 x) {
  f32 t = __ull2float_rz(x);
  return kiln_odd(t, __float2ull_rz(t) != x);
}
