// Probe: abs and neg of the most negative i8/i16 (which wrap to themselves in kiln's IR), then
// widened to i64: as the CUDA backend once wrote them (NVVM makes abs.s16 and neg.s16 of them)
// and as it writes them now (abs.s32 and neg.s32 of the value widened to 32 bits, then narrowed).
// The fuzzer's tile seeds 346, 685, 1106, 1377 and simt seed 7212 stored 32768 for them. On the
// H200 (CUDA 13): "abs i16 by select 32768 WRONG", "neg i16 32768 WRONG", the rest right.
//   nvcc -arch=sm_90a -o narrow_abs narrow_abs.cu && ./narrow_abs
#include <cstdio>

typedef short i16;
typedef signed char i8;
typedef unsigned int u32;
typedef long long i64;

template <class T>
__device__ T abs_by_select(T a) {
  return a < (T)0 ? (T)((u32)0 - (u32)a) : a;
}
template <class T>
__device__ T abs_in_32_bits(T a) {
  int r;
  asm("abs.s32 %0, %1;" : "=r"(r) : "r"((int)a));
  return (T)r;
}
template <class T>
__device__ T neg_wrapping(T a) {
  return (T)((u32)0 - (u32)a);
}
template <class T>
__device__ T neg_in_32_bits(T a) {
  int r;
  asm("neg.s32 %0, %1;" : "=r"(r) : "r"((int)a));
  return (T)r;
}

__global__ void probe(const i16* x16, const i8* x8, i64* out) {
  const i16 a = x16[threadIdx.x];
  const i8 b = x8[threadIdx.x];
  out[0] = (i64)abs_by_select(a);
  out[1] = (i64)abs_in_32_bits(a);
  out[2] = (i64)neg_wrapping(a);
  out[3] = (i64)abs_by_select(b);
  out[4] = (i64)abs_in_32_bits(b);
  out[5] = (i64)neg_wrapping(b);
  out[6] = (i64)neg_in_32_bits(a);
  out[7] = (i64)neg_in_32_bits(b);
}

int main() {
  const i16 h16 = -32768;
  const i8 h8 = -128;
  i16* d16;
  i8* d8;
  i64* dout;
  cudaMalloc(&d16, sizeof h16);
  cudaMalloc(&d8, sizeof h8);
  cudaMalloc(&dout, 8 * sizeof(i64));
  cudaMemcpy(d16, &h16, sizeof h16, cudaMemcpyHostToDevice);
  cudaMemcpy(d8, &h8, sizeof h8, cudaMemcpyHostToDevice);
  probe<<<1, 1>>>(d16, d8, dout);
  i64 r[8];
  cudaMemcpy(r, dout, sizeof r, cudaMemcpyDeviceToHost);
  const char* names[] = {"abs i16 by select",  "abs i16 in 32 bits", "neg i16",
                         "abs i8 by select",   "abs i8 in 32 bits",  "neg i8",
                         "neg i16 in 32 bits", "neg i8 in 32 bits"};
  const i64 want[] = {-32768, -32768, -32768, -128, -128, -128, -32768, -128};
  for (int i = 0; i < 8; ++i)
    std::printf("%-20s %8lld (want %lld)%s\n", names[i], r[i], want[i], r[i] == want[i] ? "" : "  WRONG");
  return 0;
}
