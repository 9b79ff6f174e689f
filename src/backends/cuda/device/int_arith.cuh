// ---- arithmetic with the IR's semantics on every scalar type ----
#pragma once
#include "types.cuh"
// Integers wrap (computed in the unsigned type of at least 32 bits: no signed overflow, no
// promotion of u16 * u16 to a signed int that overflows).
#define KILN_INT_ARITH(T, W)                                 \
  KILN_DEV T kiln_add(T a, T b) { return (T)((W)a + (W)b); } \
  KILN_DEV T kiln_sub(T a, T b) { return (T)((W)a - (W)b); } \
  KILN_DEV T kiln_mul(T a, T b) { return (T)((W)a * (W)b); } \
  KILN_DEV T kiln_min(T a, T b) { return b < a ? b : a; }    \
  KILN_DEV T kiln_max(T a, T b) { return a < b ? b : a; }
KILN_INT_ARITH(i8, u32)
KILN_INT_ARITH(i16, u32)
KILN_INT_ARITH(i32, u32)
KILN_INT_ARITH(i64, u64)
KILN_INT_ARITH(u8, u32)
KILN_INT_ARITH(u16, u32)
KILN_INT_ARITH(u32, u32)
KILN_INT_ARITH(u64, u64)
// neg and abs of the most negative value wrap to itself; abs of an unsigned value is the value.
#define KILN_INT_NEG_ABS(T, W)                          \
  KILN_DEV T kiln_neg(T a) { return (T)((W)0 - (W)a); } \
  KILN_DEV T kiln_abs(T a) { return a < (T)0 ? (T)((W)0 - (W)a) : a; }
KILN_INT_NEG_ABS(i32, u32)
KILN_INT_NEG_ABS(i64, u64)
// i8 and i16 negate in 32 bits through PTX (neg.s32, abs.s32 of the value widened), then narrow.
// Written as above, NVVM makes neg.s16 and abs.s16 of them, whose results read back wrong on the
// H200 once compared or widened: min(64 - 22321, -22321) gave -22257 (the fuzzer's simt seed
// 7212), and -(-32768) and abs(-32768) widened to i64 or u32 gave 32768 (tile seeds 346, 685,
// 1106, 1377); tests/fuzz/regressions/narrow_neg_on_cuda.kir, bench/probes/narrow_abs.cu. The
// asm keeps NVVM from narrowing them back.
#ifdef __CUDA_ARCH__
#define KILN_NEG32(r, a) asm("neg.s32 %0, %1;" : "=r"(r) : "r"(a))
#define KILN_ABS32(r, a) asm("abs.s32 %0, %1;" : "=r"(r) : "r"(a))
#else  // the host compiler of tests/backends/cuda/device_library_test.cpp
#define KILN_NEG32(r, a) r = -(a)
#define KILN_ABS32(r, a) r = (a) < 0 ? -(a) : (a)
#endif
#define KILN_NARROW_NEG_ABS(T) \
  KILN_DEV T kiln_neg(T a) {   \
    int r;                     \
    KILN_NEG32(r, (int)a);     \
    return (T)r;               \
  }                            \
  KILN_DEV T kiln_abs(T a) {   \
    int r;                     \
    KILN_ABS32(r, (int)a);     \
    return (T)r;               \
  }
KILN_NARROW_NEG_ABS(i8)
KILN_NARROW_NEG_ABS(i16)
KILN_DEV u8 kiln_neg(u8 a) { return (u8)(0u - (u32)a); }
KILN_DEV u16 kiln_neg(u16 a) { return (u16)(0u - (u32)a); }
KILN_DEV u32 kiln_neg(u32 a) { return 0u - a; }
KILN_DEV u64 kiln_neg(u64 a) { return 0ull - a; }
KILN_DEV u8 kiln_abs(u8 a) { return a; }
KILN_DEV u16 kiln_abs(u16 a) { return a; }
KILN_DEV u32 kiln_abs(u32 a) { return a; }
KILN_DEV u64 kiln_abs(u64 a) { return a; }
// Division truncates; MIN / -1 wraps to MIN and its remainder is 0 (a plain C++ division would be
// undefined there). Division by zero is unspecified on GPUs and does not trap.
template <class T>
KILN_DEV T kiln_div(T a, T b) {
  if ((T)-1 < (T)0 && b == (T)-1) return kiln_neg(a);
  return (T)(a / b);
}
template <class T>
KILN_DEV T kiln_rem(T a, T b) {
  if ((T)-1 < (T)0 && b == (T)-1) return (T)0;
  return (T)(a % b);
}
// Shifts: an amount at or past the width (read as unsigned) gives 0, or the sign fill for an
// arithmetic right shift.
template <class T>
KILN_DEV T kiln_shl(T a, T b) {
  typedef typename kiln_uint<T>::type U;
  return (U)b >= sizeof(T) * 8 ? (T)0 : (T)((U)a << (U)b);
}
template <class T>
KILN_DEV T kiln_shr(T a, T b) {
  typedef typename kiln_uint<T>::type U;
  if ((U)b >= sizeof(T) * 8) return (T)-1 < (T)0 && a < (T)0 ? (T)-1 : (T)0;
  return (T)(a >> (U)b);
}
template <class T>
KILN_DEV u32 kiln_popcount(T a) {
  typedef typename kiln_uint<T>::type U;
  return sizeof(T) == 8 ? (u32)__popcll((u64)(U)a) : (u32)__popc((u32)(U)a);
}
template <class T>
KILN_DEV u32 kiln_leading_zeros(T a) {
  typedef typename kiln_uint<T>::type U;
  return sizeof(T) == 8 ? (u32)__clzll((i64)(U)a) : (u32)__clz((i32)(u32)(U)a) - (u32)(32 - 8 * sizeof(T));
}
