// ---- float -> int: truncate toward zero, saturate, NaN gives 0 ----
#pragma once
#include "types.cuh"
KILN_DEV i32 kiln_ftoi_i32(f32 x) { return x != x ? 0 : __float2int_rz(x); }
KILN_DEV u32 kiln_ftoi_u32(f32 x) { return x != x ? 0u : __float2uint_rz(x); }
KILN_DEV i64 kiln_ftoi_i64(f32 x) { return x != x ? 0ll : __float2ll_rz(x); }
KILN_DEV u64 kiln_ftoi_u64(f32 x) { return x != x ? 0ull : __float2ull_rz(x); }
KILN_DEV i32 kiln_ftoi_i32(f64 x) { return x != x ? 0 : __double2int_rz(x); }
KILN_DEV u32 kiln_ftoi_u32(f64 x) { return x != x ? 0u : __double2uint_rz(x); }
KILN_DEV i64 kiln_ftoi_i64(f64 x) { return x != x ? 0ll : __double2ll_rz(x); }
KILN_DEV u64 kiln_ftoi_u64(f64 x) { return x != x ? 0ull : __double2ull_rz(x); }
// Narrow targets clamp the 32-bit result (which already saturated, with NaN at 0).
#define KILN_FTOI_NARROW(T, WIDE, CLAMP) \
  KILN_DEV T kiln_ftoi_##T(f32 x) {      \
    WIDE w = kiln_ftoi_##WIDE(x);        \
    return (T)(CLAMP);                   \
  }                                      \
  KILN_DEV T kiln_ftoi_##T(f64 x) {      \
    WIDE w = kiln_ftoi_##WIDE(x);        \
    return (T)(CLAMP);                   \
  }
KILN_FTOI_NARROW(i8, i32, w<-128 ? -128 : w> 127 ? 127 : w)
KILN_FTOI_NARROW(i16, i32, w<-32768 ? -32768 : w> 32767 ? 32767 : w)
KILN_FTOI_NARROW(u8, u32, w > 255u ? 255u : w)
KILN_FTOI_NARROW(u16, u32, w > 65535u ? 65535u : w)

KILN_DEV bool kiln_isnan(f32 x) { return x != x; }
KILN_DEV bool kiln_isnan(f64 x) { return x != x; }
KILN_DEV bool kiln_isinf(f32 x) { return fabsf(x) == __int_as_float(0x7f800000); }
KILN_DEV bool kiln_isinf(f64 x) { return fabs(x) == __longlong_as_double(0x7ff0000000000000ll); }
// The hardware's approximations, for kernels that allow them (fast_math = [approx]); CUDA C++ has
// no intrinsic for these four. None is correctly rounded, and tanh.approx is the coarsest (about
// 11 bits); subnormals are kept (no .ftz), as everywhere else in kiln.
KILN_DEV f32 kiln_tanh_approx(f32 x) {
#if __CUDA_ARCH__ >= 750
  f32 y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return tanhf(x);
#endif
}
KILN_DEV f32 kiln_exp2_approx(f32 x) {
  f32 y;
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
KILN_DEV f32 kiln_sqrt_approx(f32 x) {
  f32 y;
  asm("sqrt.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
KILN_DEV f32 kiln_rcp_approx(f32 x) {
  f32 y;
  asm("rcp.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
