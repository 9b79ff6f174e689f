// ---- atomics: the IR's types on CUDA's overloads (64-bit signed and float ops by cast) ----
#pragma once
#include "types.cuh"
KILN_DEV i32 kiln_atomic_add(i32* p, i32 v) { return atomicAdd(p, v); }
KILN_DEV u32 kiln_atomic_add(u32* p, u32 v) { return atomicAdd(p, v); }
KILN_DEV i64 kiln_atomic_add(i64* p, i64 v) { return (i64)atomicAdd((u64*)p, (u64)v); }
KILN_DEV u64 kiln_atomic_add(u64* p, u64 v) { return atomicAdd(p, v); }
KILN_DEV f32 kiln_atomic_add(f32* p, f32 v) { return atomicAdd(p, v); }
KILN_DEV f64 kiln_atomic_add(f64* p, f64 v) { return atomicAdd(p, v); }
KILN_DEV i32 kiln_atomic_sub(i32* p, i32 v) { return atomicSub(p, v); }
KILN_DEV u32 kiln_atomic_sub(u32* p, u32 v) { return atomicSub(p, v); }
KILN_DEV i64 kiln_atomic_sub(i64* p, i64 v) { return (i64)atomicAdd((u64*)p, 0ull - (u64)v); }
KILN_DEV u64 kiln_atomic_sub(u64* p, u64 v) { return atomicAdd(p, 0ull - v); }
KILN_DEV f32 kiln_atomic_sub(f32* p, f32 v) { return atomicAdd(p, -v); }
KILN_DEV f64 kiln_atomic_sub(f64* p, f64 v) { return atomicAdd(p, -v); }
#define KILN_ATOMIC_INT(NAME, FN)                                     \
  KILN_DEV i32 kiln_atomic_##NAME(i32* p, i32 v) { return FN(p, v); } \
  KILN_DEV u32 kiln_atomic_##NAME(u32* p, u32 v) { return FN(p, v); } \
  KILN_DEV u64 kiln_atomic_##NAME(u64* p, u64 v) { return FN(p, v); }
KILN_ATOMIC_INT(min, atomicMin)
KILN_ATOMIC_INT(max, atomicMax)
KILN_ATOMIC_INT(and, atomicAnd)
KILN_ATOMIC_INT(or, atomicOr)
KILN_ATOMIC_INT(xor, atomicXor)
KILN_ATOMIC_INT(exchange, atomicExch)
KILN_DEV i64 kiln_atomic_min(i64* p, i64 v) { return atomicMin(p, v); }
KILN_DEV i64 kiln_atomic_max(i64* p, i64 v) { return atomicMax(p, v); }
KILN_DEV i64 kiln_atomic_and(i64* p, i64 v) { return (i64)atomicAnd((u64*)p, (u64)v); }
KILN_DEV i64 kiln_atomic_or(i64* p, i64 v) { return (i64)atomicOr((u64*)p, (u64)v); }
KILN_DEV i64 kiln_atomic_xor(i64* p, i64 v) { return (i64)atomicXor((u64*)p, (u64)v); }
KILN_DEV i64 kiln_atomic_exchange(i64* p, i64 v) { return (i64)atomicExch((u64*)p, (u64)v); }
KILN_DEV f32 kiln_atomic_exchange(f32* p, f32 v) { return atomicExch(p, v); }
KILN_DEV f64 kiln_atomic_exchange(f64* p, f64 v) {
  return __longlong_as_double((i64)atomicExch((u64*)p, (u64)__double_as_longlong(v)));
}
KILN_DEV i32 kiln_atomic_cas(i32* p, i32 e, i32 d) { return atomicCAS(p, e, d); }
KILN_DEV u32 kiln_atomic_cas(u32* p, u32 e, u32 d) { return atomicCAS(p, e, d); }
KILN_DEV u64 kiln_atomic_cas(u64* p, u64 e, u64 d) { return atomicCAS(p, e, d); }
KILN_DEV i64 kiln_atomic_cas(i64* p, i64 e, i64 d) { return (i64)atomicCAS((u64*)p, (u64)e, (u64)d); }
