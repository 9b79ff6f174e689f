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
