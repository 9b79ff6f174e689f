// ---- asynchronous copies global -> shared (cp.async, sm_80 and later) ----
#pragma once
#include "types.cuh"
// The tile layer's software pipeline (prefetch_stages) copies the next iterations' factors while
// tensor cores multiply the current ones. Before sm_80 the copy is an ordinary one and the group
// operations do nothing: the same program, without the overlap.
// One element of Bytes (4, 8 or 16) from global memory into shared memory; pred false reads nothing
// and zero-fills. 16 bytes bypass L1 (.cg), the line being the unit of a staged tile's reuse; 4 and
// 8 may only go through it (.ca), which is the one form PTX gives those sizes.
template <int Bytes>
KILN_DEV void kiln_cp_async(void* dst, const void* src, bool pred) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "cp.async copies 4, 8 or 16 bytes");
#if __CUDA_ARCH__ >= 800
  unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  int bytes = pred ? Bytes : 0;  // src-size 0: nothing is read, the element is zero-filled
  if (Bytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(bytes) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d), "l"(src), "n"(Bytes), "r"(bytes)
                 : "memory");
  }
#else
  const unsigned char* s = (const unsigned char*)src;
  unsigned char* d = (unsigned char*)dst;
  for (int i = 0; i < Bytes; ++i) d[i] = pred ? s[i] : (unsigned char)0;
#endif
}
KILN_DEV void kiln_cp_async_commit() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int Pending>
KILN_DEV void kiln_cp_async_wait() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
#endif
}
