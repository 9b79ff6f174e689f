// A host model of a GPU under independent thread scheduling, for its_emulation_test.cpp: included
// before an emitted kernel (prelude and entry), compiled by the host C++ compiler, one host thread
// per unit. The warp intrinsics follow their documented rules: a *_sync call waits until every
// lane of its mask that has not exited calls an intrinsic of the same kind with the same mask; the
// caller must be in the mask; a lane that exited votes nothing. A call that breaks the rules, or a
// warp that cannot go on (a deadlock), stops the program with a report (exit status 3). Only what
// u32 kernels run is modelled faithfully; the other builtins are here so that the prelude compiles.
#pragma once

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

struct EmuDim {
  unsigned x = 1, y = 1, z = 1;
};
inline thread_local EmuDim threadIdx, blockIdx;
inline EmuDim blockDim, gridDim;
inline thread_local unsigned emu_lane_id = 0, emu_warp_id = 0;
inline unsigned emu_lane() { return emu_lane_id; }

[[noreturn]] inline void emu_fail(const std::string& what) {
  std::fprintf(stderr, "ITS model: %s\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(3);
}
inline std::string emu_hex(unsigned v) {
  char b[16];
  std::snprintf(b, sizeof b, "%08x", v);
  return b;
}

enum EmuKind { kEmuBallot = 1, kEmuShfl, kEmuAll, kEmuAny, kEmuSyncwarp };

struct EmuWarp {
  std::mutex m;
  std::condition_variable cv;
  unsigned exited = 0;  // lanes that returned, and lanes a partial warp does not have
  struct Lane {
    bool waiting = false, done = false;
    int kind = 0;
    unsigned mask = 0;
    uint64_t value = 0, result = 0;
    int src = 0;
  } lane[32];
};
inline std::vector<EmuWarp>* emu_warps = nullptr;

// One *_sync call by the current lane.
inline uint64_t emu_sync(int kind, unsigned mask, uint64_t value, int src) {
  unsigned me = emu_lane_id;
  EmuWarp& w = (*emu_warps)[emu_warp_id];
  if (!(mask >> me & 1u)) {
    emu_fail("lane " + std::to_string(me) + " calls with mask " + emu_hex(mask) + ", which leaves it out");
  }
  std::unique_lock lock(w.m);
  EmuWarp::Lane& self = w.lane[me];
  self = EmuWarp::Lane{true, false, kind, mask, value, 0, src};
  // Completes the call when every lane of the mask that has not exited waits in it.
  auto complete = [&] {
    unsigned part = 0;
    for (unsigned l = 0; l < 32; ++l) {
      if (!(mask >> l & 1u) || (w.exited >> l & 1u)) continue;
      const EmuWarp::Lane& o = w.lane[l];
      if (!o.waiting || o.done || o.mask != mask) return;
      if (o.kind != kind) emu_fail("the lanes of mask " + emu_hex(mask) + " wait in different intrinsics");
      part |= 1u << l;
    }
    unsigned ballot = 0;
    for (unsigned l = 0; l < 32; ++l) {
      if ((part >> l & 1u) && w.lane[l].value) ballot |= 1u << l;
    }
    for (unsigned l = 0; l < 32; ++l) {
      if (!(part >> l & 1u)) continue;
      EmuWarp::Lane& o = w.lane[l];
      unsigned s = unsigned(o.src) & 31u;
      switch (kind) {
        case kEmuBallot: o.result = ballot; break;
        case kEmuAll: o.result = ballot == part; break;
        case kEmuAny: o.result = ballot != 0; break;
        // A source lane that is not in the call gives an unspecified value: garbage here.
        case kEmuShfl: o.result = (part >> s & 1u) ? w.lane[s].value : 0xdeadbeefdeadbeefull; break;
        default: o.result = 0;
      }
      o.done = true;
    }
    w.cv.notify_all();
  };
  complete();
  while (!self.done) {
    bool timed_out = w.cv.wait_for(lock, std::chrono::seconds(10)) == std::cv_status::timeout;
    if (!self.done) complete();  // a lane of the mask may have arrived or exited
    if (timed_out && !self.done) {
      std::string s = "deadlock: lane " + std::to_string(me) + " of warp " + std::to_string(emu_warp_id) +
                      " waits with mask " + emu_hex(mask) + "; exited " + emu_hex(w.exited) + "; waiting:";
      for (unsigned l = 0; l < 32; ++l) {
        if (w.lane[l].waiting && !w.lane[l].done) s += " " + std::to_string(l) + "/" + emu_hex(w.lane[l].mask);
      }
      emu_fail(s);
    }
  }
  self.waiting = self.done = false;
  w.cv.notify_all();
  return self.result;
}

inline void emu_lane_exits() {
  EmuWarp& w = (*emu_warps)[emu_warp_id];
  std::lock_guard lock(w.m);
  w.exited |= 1u << emu_lane_id;
  w.cv.notify_all();
}

template <class T>
T __shfl_sync(unsigned mask, T v, int src, int = 32) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  uint64_t r = emu_sync(kEmuShfl, mask, bits, src);
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
}
inline unsigned __ballot_sync(unsigned mask, int p) { return unsigned(emu_sync(kEmuBallot, mask, p != 0, 0)); }
inline int __all_sync(unsigned mask, int p) { return int(emu_sync(kEmuAll, mask, p != 0, 0)); }
inline int __any_sync(unsigned mask, int p) { return int(emu_sync(kEmuAny, mask, p != 0, 0)); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { emu_sync(kEmuSyncwarp, mask, 0, 0); }

// The cube's barrier: every thread of the block that has not exited.
struct EmuBlock {
  std::mutex m;
  std::condition_variable cv;
  unsigned arrived = 0, live = 0;
  uint64_t generation = 0;
};
inline EmuBlock* emu_block = nullptr;
inline void emu_release_barrier() {
  emu_block->arrived = 0;
  ++emu_block->generation;
  emu_block->cv.notify_all();
}
inline void __syncthreads() {
  std::unique_lock lock(emu_block->m);
  uint64_t g = emu_block->generation;
  if (++emu_block->arrived == emu_block->live) return emu_release_barrier();
  while (emu_block->generation == g) {
    bool timed_out = emu_block->cv.wait_for(lock, std::chrono::seconds(10)) == std::cv_status::timeout;
    if (timed_out && emu_block->generation == g) emu_fail("deadlock at __syncthreads");
  }
}
inline void emu_thread_exits() {
  std::lock_guard lock(emu_block->m);
  --emu_block->live;
  if (emu_block->arrived > 0 && emu_block->arrived == emu_block->live) emu_release_barrier();
}

// The other builtins the prelude names.
inline int __ffs(int x) { return x == 0 ? 0 : __builtin_ctz(unsigned(x)) + 1; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(unsigned(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
template <class To, class From>
To emu_bits(From f) {
  To t;
  std::memcpy(&t, &f, sizeof(To));
  return t;
}
inline float __uint_as_float(unsigned x) { return emu_bits<float>(x); }
inline unsigned __float_as_uint(float f) { return emu_bits<unsigned>(f); }
inline float __int_as_float(int x) { return emu_bits<float>(x); }
inline double __longlong_as_double(long long x) { return emu_bits<double>(x); }
inline long long __double_as_longlong(double f) { return emu_bits<long long>(f); }
#define KILN_EMU_CVT(name, from, to) \
  inline to name(from x) { return (to)x; }
KILN_EMU_CVT(__double2float_rz, double, float)
KILN_EMU_CVT(__ll2float_rz, long long, float)
KILN_EMU_CVT(__ull2float_rz, unsigned long long, float)
KILN_EMU_CVT(__float2ll_rz, float, long long)
KILN_EMU_CVT(__float2ull_rz, float, unsigned long long)
KILN_EMU_CVT(__float2int_rz, float, int)
KILN_EMU_CVT(__float2uint_rz, float, unsigned)
KILN_EMU_CVT(__double2int_rz, double, int)
KILN_EMU_CVT(__double2uint_rz, double, unsigned)
KILN_EMU_CVT(__double2ll_rz, double, long long)
KILN_EMU_CVT(__double2ull_rz, double, unsigned long long)
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline double __dsqrt_rn(double a) { return std::sqrt(a); }
inline float __frcp_rn(float a) { return 1 / a; }
inline double __drcp_rn(double a) { return 1 / a; }
inline float __expf(float a) { return std::exp(a); }
inline float __logf(float a) { return std::log(a); }
inline float __log2f(float a) { return std::log2(a); }
inline float __sinf(float a) { return std::sin(a); }
inline float __cosf(float a) { return std::cos(a); }
inline float __tanf(float a) { return std::tan(a); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float rsqrtf(float a) { return 1 / std::sqrt(a); }
inline double rsqrt(double a) { return 1 / std::sqrt(a); }
using std::fabs, std::fmin, std::fmax, std::fma, std::fmod;
// Atomics: the model runs one cube at a time, but its threads concurrently.
inline std::mutex emu_atomic_mutex;
#define KILN_EMU_ATOMIC(name, update)       \
  template <class T, class U>               \
  T name(T* p, U v) {                       \
    std::lock_guard lock(emu_atomic_mutex); \
    T o = *p;                               \
    *p = update;                            \
    return o;                               \
  }
KILN_EMU_ATOMIC(atomicAdd, T(o + v))
KILN_EMU_ATOMIC(atomicSub, T(o - v))
KILN_EMU_ATOMIC(atomicMin, T(v) < o ? T(v) : o)
KILN_EMU_ATOMIC(atomicMax, o < T(v) ? T(v) : o)
KILN_EMU_ATOMIC(atomicAnd, T(o& v))
KILN_EMU_ATOMIC(atomicOr, T(o | v))
KILN_EMU_ATOMIC(atomicXor, T(o ^ v))
KILN_EMU_ATOMIC(atomicExch, T(v))
template <class T, class U, class V>
T atomicCAS(T* p, U e, V d) {
  std::lock_guard lock(emu_atomic_mutex);
  T o = *p;
  if (o == T(e)) *p = T(d);
  return o;
}

#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(n)
#define __restrict__ __restrict
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
// The prelude's inline PTX: the lane id is replaced by the test before compiling (emu_lane());
// the rest (f16/bf16 conversions, tanh.approx) is not modelled.
#define asm(...)
// The device library's tensor-core helpers take shared addresses; the model has one address space.
inline unsigned long long __cvta_generic_to_shared(const void* p) { return (unsigned long long)p; }
