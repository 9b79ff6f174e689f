// ---- kiln prelude (declared by kiln; no toolkit header) ----
#pragma once
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
struct f16 {
  u16 bits;
};
struct bf16 {
  u16 bits;
};
// The OCP fp8 formats (kiln/float8.h) as their bits, computed like f16.
struct f8e4m3 {
  u8 bits;
};
struct f8e5m2 {
  u8 bits;
};
// An mbarrier's eight bytes in shared memory (ir `barrier`): only hopper.cuh's functions touch one.
struct alignas(8) barrier {
  u64 word;
};
// A vector of N lanes, aligned to its size so that a 16-byte vector moves with one ld/st.v4.
template <class T, int N>
struct alignas(sizeof(T) * N) kiln_vec {
  T v[N];
};

// A plane's width (ir::Target::kPlaneWidth), given by kiln's compile options (-DKILN_PLANE_WIDTH):
// the plane helpers' masks hold one bit a lane of a u32.
#ifndef KILN_PLANE_WIDTH
#error "KILN_PLANE_WIDTH is given by kiln's compile options (cuda::default_compile_options)"
#endif
static_assert(KILN_PLANE_WIDTH == sizeof(u32) * 8, "a plane's lanes are the bits of a u32 mask");

// Not static: an unused static function draws a warning in every kernel's log.
#define KILN_DEV __device__ __forceinline__

template <class T>
struct kiln_uint {};
template <>
struct kiln_uint<i8> {
  typedef u8 type;
};
template <>
struct kiln_uint<u8> {
  typedef u8 type;
};
template <>
struct kiln_uint<i16> {
  typedef u16 type;
};
template <>
struct kiln_uint<u16> {
  typedef u16 type;
};
template <>
struct kiln_uint<i32> {
  typedef u32 type;
};
template <>
struct kiln_uint<u32> {
  typedef u32 type;
};
template <>
struct kiln_uint<i64> {
  typedef u64 type;
};
template <>
struct kiln_uint<u64> {
  typedef u64 type;
};

template <class To, class From>
KILN_DEV To kiln_bitcast(From f) {
  static_assert(sizeof(To) == sizeof(From), "bitcast between types of one size");
  To t;
  memcpy(&t, &f, sizeof(To));
  return t;
}
