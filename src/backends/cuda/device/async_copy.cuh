// ---- asynchronous copies global -> shared (cp.async, sm_80 and later) ----
#pragma once
#include "types.cuh"
// The tile layer's software pipeline (prefetch_stages) copies the next iterations' factors while
// tensor cores multiply the current ones. Before sm_80 the copy is an ordinary one and the group
// operations do nothing: the same program, without the overlap.
KILN_DEV void kiln_cp_async16(void* dst, const void* src, bool pred) {
#if __CUDA_ARCH__ >= 800
  unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  int bytes = pred ? 16 : 0;  // src-size 0: nothing is read, the 16 bytes are zero-filled
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(bytes) : "memory");
#else
  const unsigned char* s = (const unsigned char*)src;
  unsigned char* d = (unsigned char*)dst;
  for (int i = 0; i < 16; ++i) d[i] = pred ? s[i] : (unsigned char)0;
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
