// ---- Hopper (sm_90a): mbarriers as inline PTX ----
#pragma once
#include "types.cuh"
// Appended to the prelude only for a kernel that uses a Hopper op (emit.cpp), and only for sm_90a:
// the CUDA backend refuses such a kernel on any other target (compile.unsupported) before NVRTC
// sees it, and this guard stops anything that slips past. sm_100a has no wgmma, so the guard
// names the one architecture, not "sm_90 and later".
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ != 900 || !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "kiln's Hopper library (hopper.cuh) compiles for sm_90a only"
#endif

// A barrier's shared-memory address, as the mbarrier instructions take it.
KILN_DEV u32 kiln_shared_address(const void* p) { return (u32)__cvta_generic_to_shared(p); }

KILN_DEV void kiln_mbarrier_init(barrier* b, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(kiln_shared_address(b)), "r"(count) : "memory");
}
KILN_DEV void kiln_mbarrier_arrive(barrier* b) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(kiln_shared_address(b)) : "memory");
}
// The bytes first, then the arrival: one instruction does both in that order.
KILN_DEV void kiln_mbarrier_arrive_expect_tx(barrier* b, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(kiln_shared_address(b)), "r"(bytes)
               : "memory");
}
KILN_DEV void kiln_mbarrier_expect_tx(barrier* b, u32 bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(kiln_shared_address(b)), "r"(bytes)
               : "memory");
}
KILN_DEV void kiln_mbarrier_complete_tx(barrier* b, u32 bytes) {
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(kiln_shared_address(b)), "r"(bytes)
               : "memory");
}
// Whether the phase of the given parity (bit 0) has completed. The hardware may wait a while
// before it says no (try_wait, not test_wait): a loop on it spins less.
KILN_DEV bool kiln_mbarrier_try_wait(barrier* b, u32 parity) {
  u32 done;
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "  selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(kiln_shared_address(b)), "r"(parity & 1u)
      : "memory");
  return done != 0;
}
KILN_DEV void kiln_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// ---- warp-group products (wgmma) ----
// A factor's shared-memory descriptor: rows of one swizzle span (32, 64 or 128 bytes), 8 of them
// a group, so groups are 8 spans apart (the stride field); the leading-dimension field is unused
// for swizzled rows along k (1, as the PTX ISA says it is taken to be). The start is the factor's
// own address: a step along k moves it 32 bytes within the row, and the hardware applies the
// swizzle to the address bits, as the layout's byte_offset does.
KILN_DEV u64 kiln_wgmma_descriptor(const void* p, u32 span) {
  const u64 start = kiln_shared_address(p);
  const u64 mode = span == 128 ? 1 : span == 64 ? 2 : 3;
  return ((start & 0x3FFFF) >> 4) | (u64(1) << 16) | (u64((8 * span) >> 4) << 32) | (mode << 62);
}
// Two 16-bit factors in one register of the register-A form, the first in the low half.
template <class T>
KILN_DEV u32 kiln_wgmma_pack(T lo, T hi) {
  return u32(lo.bits) | (u32(hi.bits) << 16);
}
KILN_DEV void kiln_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
KILN_DEV void kiln_wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int Pending>
KILN_DEV void kiln_wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}
// After a wait, each accumulator the wait makes readable passes through an empty asm that may
// change it: the compiler cannot move a read of it above the wait (the product's own asm is the
// accumulators' last writer it sees otherwise); before a fence, each array it names, so that
// writes to them cannot sink below it.
template <int N>
KILN_DEV void kiln_wgmma_hold(f32 (&acc)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}
// The register-A form's factors, packed two to a register at the fence, held there likewise.
template <int N>
KILN_DEV void kiln_wgmma_hold(u32 (&a)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(a[i])::"memory");
}
