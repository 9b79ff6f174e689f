// Floats: multiplication through __fmul_rn/__dmul_rn so that no mul+add pair is contracted into an
// fma (the IR rounds each op; `fma` is the one fused op). min/max return the other operand for a
// NaN (fminf/fmaxf are IEEE minNum/maxNum).
#pragma once
#include "half.cuh"
#include "int_arith.cuh"
KILN_DEV f32 kiln_add(f32 a, f32 b) { return a + b; }
KILN_DEV f32 kiln_mul(f32 a, f32 b) { return __fmul_rn(a, b); }
KILN_DEV f32 kiln_min(f32 a, f32 b) { return fminf(a, b); }
KILN_DEV f32 kiln_max(f32 a, f32 b) { return fmaxf(a, b); }
KILN_DEV f64 kiln_add(f64 a, f64 b) { return a + b; }
KILN_DEV f64 kiln_mul(f64 a, f64 b) { return __dmul_rn(a, b); }
KILN_DEV f64 kiln_min(f64 a, f64 b) { return fmin(a, b); }
KILN_DEV f64 kiln_max(f64 a, f64 b) { return fmax(a, b); }
#define KILN_HALF_ARITH(H, B, SIGN)                                                       \
  KILN_DEV H kiln_add(H a, H b) { return kiln_##H(kiln_f32(a) + kiln_f32(b)); }           \
  KILN_DEV H kiln_sub(H a, H b) { return kiln_##H(kiln_f32(a) - kiln_f32(b)); }           \
  KILN_DEV H kiln_mul(H a, H b) { return kiln_##H(kiln_f32(a) * kiln_f32(b)); }           \
  KILN_DEV H kiln_div(H a, H b) { return kiln_##H(__fdiv_rn(kiln_f32(a), kiln_f32(b))); } \
  KILN_DEV H kiln_rem(H a, H b) { return kiln_##H(fmodf(kiln_f32(a), kiln_f32(b))); }     \
  KILN_DEV H kiln_neg(H a) { return H{(B)(a.bits ^ SIGN)}; }                              \
  KILN_DEV H kiln_abs(H a) { return H{(B)(a.bits & ~SIGN)}; }                             \
  KILN_DEV H kiln_min(H a, H b) { return kiln_##H(fminf(kiln_f32(a), kiln_f32(b))); }     \
  KILN_DEV H kiln_max(H a, H b) { return kiln_##H(fmaxf(kiln_f32(a), kiln_f32(b))); }     \
  KILN_DEV H kiln_fma(H a, H b, H c) { return kiln_##H(fmaf(kiln_f32(a), kiln_f32(b), kiln_f32(c))); }
KILN_HALF_ARITH(f16, u16, 0x8000u)
KILN_HALF_ARITH(bf16, u16, 0x8000u)
KILN_HALF_ARITH(f8e4m3, u8, 0x80u)
KILN_HALF_ARITH(f8e5m2, u8, 0x80u)

template <class T, int N>
KILN_DEV kiln_vec<T, N> kiln_add(kiln_vec<T, N> a, kiln_vec<T, N> b) {
  kiln_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = kiln_add(a.v[i], b.v[i]);
  return r;
}
template <class T, int N>
KILN_DEV kiln_vec<T, N> kiln_mul(kiln_vec<T, N> a, kiln_vec<T, N> b) {
  kiln_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = kiln_mul(a.v[i], b.v[i]);
  return r;
}
template <class T, int N>
KILN_DEV kiln_vec<T, N> kiln_min(kiln_vec<T, N> a, kiln_vec<T, N> b) {
  kiln_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = kiln_min(a.v[i], b.v[i]);
  return r;
}
template <class T, int N>
KILN_DEV kiln_vec<T, N> kiln_max(kiln_vec<T, N> a, kiln_vec<T, N> b) {
  kiln_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = kiln_max(a.v[i], b.v[i]);
  return r;
}
