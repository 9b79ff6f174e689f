// The CUDA prelude: the types and helpers every generated kernel starts with. kiln declares them
// itself (no cuda_fp16.h or other toolkit header), so a kernel compiles wherever NVRTC loads. Each
// helper gives docs/ir.md's exact semantics where plain CUDA C++ differs from it (shifts past the
// width, integer overflow, saturating float->int casts, f16/bf16 rounding, plane ops over the
// IR's active units only).
#include "backends/cuda/target.h"

namespace kiln::cuda {

namespace {

constexpr std::string_view kPrelude = R"KILN(// ---- kiln prelude (declared by kiln; no toolkit header) ----
typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef float f32;
typedef double f64;
// IEEE binary16 and bfloat16 as their bits; arithmetic runs in f32 and rounds back after each op.
// No member initialisers: the types must stay trivial to live in __shared__ arrays.
struct f16 { u16 bits; };
struct bf16 { u16 bits; };
// A vector of N lanes, aligned to its size so that a 16-byte vector moves with one ld/st.v4.
template <class T, int N> struct alignas(sizeof(T) * N) kiln_vec { T v[N]; };

// Not static: an unused static function draws a warning in every kernel's log.
#define KILN_DEV __device__ __forceinline__

template <class T> struct kiln_uint {};
template <> struct kiln_uint<i8> { typedef u8 type; };
template <> struct kiln_uint<u8> { typedef u8 type; };
template <> struct kiln_uint<i16> { typedef u16 type; };
template <> struct kiln_uint<u16> { typedef u16 type; };
template <> struct kiln_uint<i32> { typedef u32 type; };
template <> struct kiln_uint<u32> { typedef u32 type; };
template <> struct kiln_uint<i64> { typedef u64 type; };
template <> struct kiln_uint<u64> { typedef u64 type; };

template <class To, class From> KILN_DEV To kiln_bitcast(From f) {
  static_assert(sizeof(To) == sizeof(From), "bitcast between types of one size");
  To t;
  memcpy(&t, &f, sizeof(To));
  return t;
}

// ---- f16 / bf16 <-> f32 (round to nearest even) ----
KILN_DEV f32 kiln_f32(f16 h) { f32 f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits)); return f; }
KILN_DEV f32 kiln_f32(bf16 h) { return __uint_as_float((u32)h.bits << 16); }
KILN_DEV f16 kiln_f16(f32 f) { f16 h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f)); return h; }
KILN_DEV bf16 kiln_bf16(f32 f) {
#if __CUDA_ARCH__ >= 800
  bf16 h; asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h.bits) : "f"(f)); return h;
#else
  u32 x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return bf16{(u16)((x >> 16) | 0x40u)};
  return bf16{(u16)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16)};
#endif
}
// To f32 rounding to odd (truncate, then set the last bit when inexact): rounding that to f16 or
// bf16 gives the single correctly rounded result from f64 or a 64-bit integer (f32 carries more
// than 2 bits beyond either). Used for f64 and wide integers -> f16/bf16.
KILN_DEV f32 kiln_odd(f32 t, bool inexact) { return inexact ? __uint_as_float(__float_as_uint(t) | 1u) : t; }
KILN_DEV f32 kiln_f32_odd(f64 d) { f32 t = __double2float_rz(d); return kiln_odd(t, t == t && (f64)t != d); }
KILN_DEV f32 kiln_f32_odd(i64 x) { f32 t = __ll2float_rz(x); return kiln_odd(t, __float2ll_rz(t) != x); }
KILN_DEV f32 kiln_f32_odd(u64 x) { f32 t = __ull2float_rz(x); return kiln_odd(t, __float2ull_rz(t) != x); }

// ---- float -> int: truncate toward zero, saturate, NaN gives 0 ----
KILN_DEV i32 kiln_ftoi_i32(f32 x) { return x != x ? 0 : __float2int_rz(x); }
KILN_DEV u32 kiln_ftoi_u32(f32 x) { return x != x ? 0u : __float2uint_rz(x); }
KILN_DEV i64 kiln_ftoi_i64(f32 x) { return x != x ? 0ll : __float2ll_rz(x); }
KILN_DEV u64 kiln_ftoi_u64(f32 x) { return x != x ? 0ull : __float2ull_rz(x); }
KILN_DEV i32 kiln_ftoi_i32(f64 x) { return x != x ? 0 : __double2int_rz(x); }
KILN_DEV u32 kiln_ftoi_u32(f64 x) { return x != x ? 0u : __double2uint_rz(x); }
KILN_DEV i64 kiln_ftoi_i64(f64 x) { return x != x ? 0ll : __double2ll_rz(x); }
KILN_DEV u64 kiln_ftoi_u64(f64 x) { return x != x ? 0ull : __double2ull_rz(x); }
// Narrow targets clamp the 32-bit result (which already saturated, with NaN at 0).
#define KILN_FTOI_NARROW(T, WIDE, CLAMP)                                                  \
  KILN_DEV T kiln_ftoi_##T(f32 x) { WIDE w = kiln_ftoi_##WIDE(x); return (T)(CLAMP); }  \
  KILN_DEV T kiln_ftoi_##T(f64 x) { WIDE w = kiln_ftoi_##WIDE(x); return (T)(CLAMP); }
KILN_FTOI_NARROW(i8, i32, w < -128 ? -128 : w > 127 ? 127 : w)
KILN_FTOI_NARROW(i16, i32, w < -32768 ? -32768 : w > 32767 ? 32767 : w)
KILN_FTOI_NARROW(u8, u32, w > 255u ? 255u : w)
KILN_FTOI_NARROW(u16, u32, w > 65535u ? 65535u : w)

KILN_DEV bool kiln_isnan(f32 x) { return x != x; }
KILN_DEV bool kiln_isnan(f64 x) { return x != x; }
KILN_DEV bool kiln_isinf(f32 x) { return fabsf(x) == __int_as_float(0x7f800000); }
KILN_DEV bool kiln_isinf(f64 x) { return fabs(x) == __longlong_as_double(0x7ff0000000000000ll); }
KILN_DEV f32 kiln_tanh_approx(f32 x) {
#if __CUDA_ARCH__ >= 750
  f32 y; asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x)); return y;
#else
  return tanhf(x);
#endif
}

// ---- arithmetic with the IR's semantics on every scalar type ----
// Integers wrap (computed in the unsigned type of at least 32 bits: no signed overflow, no
// promotion of u16 * u16 to a signed int that overflows).
#define KILN_INT_ARITH(T, W)                                                        \
  KILN_DEV T kiln_add(T a, T b) { return (T)((W)a + (W)b); }                        \
  KILN_DEV T kiln_sub(T a, T b) { return (T)((W)a - (W)b); }                        \
  KILN_DEV T kiln_mul(T a, T b) { return (T)((W)a * (W)b); }                        \
  KILN_DEV T kiln_neg(T a) { return (T)((W)0 - (W)a); }                             \
  KILN_DEV T kiln_min(T a, T b) { return b < a ? b : a; }                           \
  KILN_DEV T kiln_max(T a, T b) { return a < b ? b : a; }
KILN_INT_ARITH(i8, u32)
KILN_INT_ARITH(i16, u32)
KILN_INT_ARITH(i32, u32)
KILN_INT_ARITH(i64, u64)
KILN_INT_ARITH(u8, u32)
KILN_INT_ARITH(u16, u32)
KILN_INT_ARITH(u32, u32)
KILN_INT_ARITH(u64, u64)
// abs of the most negative value wraps to itself; abs of an unsigned value is the value.
#define KILN_INT_ABS(T, W) KILN_DEV T kiln_abs(T a) { return a < (T)0 ? (T)((W)0 - (W)a) : a; }
KILN_INT_ABS(i8, u32)
KILN_INT_ABS(i16, u32)
KILN_INT_ABS(i32, u32)
KILN_INT_ABS(i64, u64)
KILN_DEV u8 kiln_abs(u8 a) { return a; }
KILN_DEV u16 kiln_abs(u16 a) { return a; }
KILN_DEV u32 kiln_abs(u32 a) { return a; }
KILN_DEV u64 kiln_abs(u64 a) { return a; }
// Division truncates; MIN / -1 wraps to MIN and its remainder is 0 (a plain C++ division would be
// undefined there). Division by zero is unspecified on GPUs and does not trap.
template <class T> KILN_DEV T kiln_div(T a, T b) {
  if ((T)-1 < (T)0 && b == (T)-1) return kiln_neg(a);
  return (T)(a / b);
}
template <class T> KILN_DEV T kiln_rem(T a, T b) {
  if ((T)-1 < (T)0 && b == (T)-1) return (T)0;
  return (T)(a % b);
}
// Shifts: an amount at or past the width (read as unsigned) gives 0, or the sign fill for an
// arithmetic right shift.
template <class T> KILN_DEV T kiln_shl(T a, T b) {
  typedef typename kiln_uint<T>::type U;
  return (U)b >= sizeof(T) * 8 ? (T)0 : (T)((U)a << (U)b);
}
template <class T> KILN_DEV T kiln_shr(T a, T b) {
  typedef typename kiln_uint<T>::type U;
  if ((U)b >= sizeof(T) * 8) return (T)-1 < (T)0 && a < (T)0 ? (T)-1 : (T)0;
  return (T)(a >> (U)b);
}
template <class T> KILN_DEV u32 kiln_popcount(T a) {
  typedef typename kiln_uint<T>::type U;
  return sizeof(T) == 8 ? (u32)__popcll((u64)(U)a) : (u32)__popc((u32)(U)a);
}
template <class T> KILN_DEV u32 kiln_leading_zeros(T a) {
  typedef typename kiln_uint<T>::type U;
  return sizeof(T) == 8 ? (u32)__clzll((i64)(U)a) : (u32)__clz((i32)(u32)(U)a) - (u32)(32 - 8 * sizeof(T));
}

// Floats: multiplication through __fmul_rn/__dmul_rn so that no mul+add pair is contracted into an
// fma (the IR rounds each op; `fma` is the one fused op). min/max return the other operand for a
// NaN (fminf/fmaxf are IEEE minNum/maxNum).
KILN_DEV f32 kiln_add(f32 a, f32 b) { return a + b; }
KILN_DEV f32 kiln_mul(f32 a, f32 b) { return __fmul_rn(a, b); }
KILN_DEV f32 kiln_min(f32 a, f32 b) { return fminf(a, b); }
KILN_DEV f32 kiln_max(f32 a, f32 b) { return fmaxf(a, b); }
KILN_DEV f64 kiln_add(f64 a, f64 b) { return a + b; }
KILN_DEV f64 kiln_mul(f64 a, f64 b) { return __dmul_rn(a, b); }
KILN_DEV f64 kiln_min(f64 a, f64 b) { return fmin(a, b); }
KILN_DEV f64 kiln_max(f64 a, f64 b) { return fmax(a, b); }
#define KILN_HALF_ARITH(H)                                                                      \
  KILN_DEV H kiln_add(H a, H b) { return kiln_##H(kiln_f32(a) + kiln_f32(b)); }                 \
  KILN_DEV H kiln_sub(H a, H b) { return kiln_##H(kiln_f32(a) - kiln_f32(b)); }                 \
  KILN_DEV H kiln_mul(H a, H b) { return kiln_##H(kiln_f32(a) * kiln_f32(b)); }                 \
  KILN_DEV H kiln_div(H a, H b) { return kiln_##H(__fdiv_rn(kiln_f32(a), kiln_f32(b))); }       \
  KILN_DEV H kiln_rem(H a, H b) { return kiln_##H(fmodf(kiln_f32(a), kiln_f32(b))); }           \
  KILN_DEV H kiln_neg(H a) { return H{(u16)(a.bits ^ 0x8000u)}; }                               \
  KILN_DEV H kiln_abs(H a) { return H{(u16)(a.bits & 0x7fffu)}; }                               \
  KILN_DEV H kiln_min(H a, H b) { return kiln_##H(fminf(kiln_f32(a), kiln_f32(b))); }           \
  KILN_DEV H kiln_max(H a, H b) { return kiln_##H(fmaxf(kiln_f32(a), kiln_f32(b))); }           \
  KILN_DEV H kiln_fma(H a, H b, H c) { return kiln_##H(fmaf(kiln_f32(a), kiln_f32(b), kiln_f32(c))); }
KILN_HALF_ARITH(f16)
KILN_HALF_ARITH(bf16)

template <class T, int N> KILN_DEV kiln_vec<T, N> kiln_add(kiln_vec<T, N> a, kiln_vec<T, N> b) {
  kiln_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = kiln_add(a.v[i], b.v[i]);
  return r;
}
template <class T, int N> KILN_DEV kiln_vec<T, N> kiln_mul(kiln_vec<T, N> a, kiln_vec<T, N> b) {
  kiln_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = kiln_mul(a.v[i], b.v[i]);
  return r;
}
template <class T, int N> KILN_DEV kiln_vec<T, N> kiln_min(kiln_vec<T, N> a, kiln_vec<T, N> b) {
  kiln_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = kiln_min(a.v[i], b.v[i]);
  return r;
}
template <class T, int N> KILN_DEV kiln_vec<T, N> kiln_max(kiln_vec<T, N> a, kiln_vec<T, N> b) {
  kiln_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = kiln_max(a.v[i], b.v[i]);
  return r;
}

// ---- atomics: the IR's types on CUDA's overloads (64-bit signed and float ops by cast) ----
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
#define KILN_ATOMIC_INT(NAME, FN)                                                             \
  KILN_DEV i32 kiln_atomic_##NAME(i32* p, i32 v) { return FN(p, v); }                         \
  KILN_DEV u32 kiln_atomic_##NAME(u32* p, u32 v) { return FN(p, v); }                         \
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

// ---- plane (warp) ops over the active lanes ----
// Every helper takes the plane's active lanes as an explicit mask `m` that the emitter derives
// from the IR's regions (docs/decisions/013-plane-masks-on-cuda.md), not from the lanes the
// hardware happens to run together: m is exactly the set of units the CPU backend combines, and
// every lane named in m calls the helper.
KILN_DEV u32 kiln_lane() { u32 l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); return l; }
// The lanes of the calling thread's plane that exist: all 32, except in the last plane of a cube
// whose size is not a multiple of 32.
KILN_DEV u32 kiln_plane_lanes(u32 unit, u32 units) {
  u32 n = units - (unit & ~31u);
  return n >= 32u ? 0xffffffffu : (1u << n) - 1u;
}
// Narrows m to the lanes of m for which p holds and returns p. Every lane of m that has not
// terminated calls it (lanes that returned vote 0).
KILN_DEV bool kiln_narrow(u32& m, bool p) { m = __ballot_sync(m, p); return p; }
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
template <class T, int N> KILN_DEV kiln_vec<T, N> kiln_shfl(u32 m, kiln_vec<T, N> v, u32 src) {
  kiln_vec<T, N> r;
#pragma unroll
  for (int i = 0; i < N; ++i) r.v[i] = kiln_shfl(m, v.v[i], src);
  return r;
}

struct kiln_op_add { template <class T> static KILN_DEV T f(T a, T b) { return kiln_add(a, b); } };
struct kiln_op_mul { template <class T> static KILN_DEV T f(T a, T b) { return kiln_mul(a, b); } };
struct kiln_op_min { template <class T> static KILN_DEV T f(T a, T b) { return kiln_min(a, b); } };
struct kiln_op_max { template <class T> static KILN_DEV T f(T a, T b) { return kiln_max(a, b); } };

// A reduction: a butterfly when all 32 lanes are active, else the active lanes in lane order (the
// same sequence on every active lane, so each shuffle is called by exactly the lanes it names).
template <class Op, class T> KILN_DEV T kiln_plane_reduce(u32 m, T v) {
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
template <class T> KILN_DEV T kiln_plane_scan(u32 m, T v, bool inclusive) {
  u32 lane = kiln_lane();
  if (m == 0xffffffffu) {
#pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
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
template <class T> KILN_DEV T kiln_shfl_from(u32 m, T v, u32 src) {
  T r = kiln_shfl(m, v, src & 31u);
  return src < 32u && ((m >> src) & 1u) ? r : v;
}
template <class T> KILN_DEV T kiln_shfl_idx(u32 m, T v, u32 src) { return kiln_shfl_from(m, v, src & 31u); }
template <class T> KILN_DEV T kiln_shfl_xor(u32 m, T v, u32 x) { return kiln_shfl_from(m, v, kiln_lane() ^ x); }
template <class T> KILN_DEV T kiln_shfl_up(u32 m, T v, u32 d) {
  u32 lane = kiln_lane();
  return kiln_shfl_from(m, v, d <= lane ? lane - d : 32u);
}
template <class T> KILN_DEV T kiln_shfl_down(u32 m, T v, u32 d) {
  u32 lane = kiln_lane();
  return kiln_shfl_from(m, v, d < 32u - lane ? lane + d : 32u);
}
KILN_DEV bool kiln_plane_all(u32 m, bool p) { return __all_sync(m, p) != 0; }
KILN_DEV bool kiln_plane_any(u32 m, bool p) { return __any_sync(m, p) != 0; }
KILN_DEV u32 kiln_plane_ballot(u32 m, bool p) { return __ballot_sync(m, p); }
KILN_DEV bool kiln_plane_elect(u32 m) { return kiln_lane() == (u32)(__ffs(m) - 1); }
// ---- end of the kiln prelude ----
)KILN";

}  // namespace

std::string_view cuda_prelude() {
  return kPrelude;
}

}  // namespace kiln::cuda
