// A probe, not part of kiln: how fast the H200 reads x (32768 x 4096 f32, contiguous) in the held
// kernel's pattern (a cube reads `rows` consecutive rows of x over `cols` columns, 128 KiB a cube,
// cubes in group-major order) for several shapes of a cube's block, against a contiguous read of
// the same bytes. Built and run by hand: nvcc -O3 -arch=sm_90a strided_read.cu && ./a.out
#include <cuda_runtime.h>

#include <cstdio>

constexpr int R = 32768, C = 4096;

// Cube b reads a block of `rows` x `cols` (cols a multiple of 32): block (g, c), g the column
// block (C / cols of them), c the row block, in group-major order: b = g * (R / rows) + c.
template <int COLS>
__global__ void __launch_bounds__(256, 2) block_read(const float* __restrict__ x, float* out) {
  constexpr int ROWS = 32768 / COLS;  // 128 KiB a cube: 32768 elements
  constexpr int PER = COLS / 32;      // 32-column strips a row
  const int b = blockIdx.x, lane = threadIdx.x % 32, plane = threadIdx.x / 32;
  const int row_blocks = R / ROWS;
  const int g = b / row_blocks, c = b % row_blocks;
  const float* base = x + size_t(c) * ROWS * C + size_t(g) * COLS + lane;
  float acc = 0;
  constexpr int N = ROWS * PER / 8;  // loads a unit: 128
#pragma unroll 64
  for (int i = 0; i < N; ++i) {
    const int r = (i / PER) * 8 + plane, s = i % PER;
    acc += base[size_t(r) * C + s * 32];
  }
  out[size_t(b) * 256 + threadIdx.x] = acc;
}

// The same blocks read and written out transposed (out: 4096 x 32768, row j of out is column j of
// x), through a shared tile a span of 8 values a unit, as the held kernel writes; no waiting.
template <int COLS>
__global__ void __launch_bounds__(256, 2) block_copy(const float* __restrict__ x, float* __restrict__ out) {
  constexpr int ROWS = 32768 / COLS, PER = COLS / 32, N = ROWS * PER / 8;
  __shared__ float tile[2][COLS][65];
  const int b = blockIdx.x, lane = threadIdx.x % 32, plane = threadIdx.x / 32;
  const int row_blocks = R / ROWS;
  const int g = b / row_blocks, c = b % row_blocks;
  const float* base = x + size_t(c) * ROWS * C + size_t(g) * COLS + lane;
  float v[N];
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int r = (i / PER) * 8 + plane, s = i % PER;
    v[i] = base[size_t(r) * C + s * 32];
  }
  // Span k: x rows k * 64 .. k * 64 + 63 of the block (values i with i / PER in [8k, 8k + 8)).
#pragma unroll
  for (int k = 0; k < N / (8 * PER); ++k) {
    float(*t)[65] = tile[k % 2];
#pragma unroll
    for (int q = 0; q < 8 * PER; ++q) {
      const int i = k * 8 * PER + q, r = (i / PER) * 8 + plane - k * 64, s = i % PER;
      t[s * 32 + lane][r] = v[i];
    }
    __syncthreads();
    // 64 columns of out a span: unit u writes out row (g * COLS + u / 64 + 4 p), column c * ROWS + k * 64 + u % 64.
#pragma unroll
    for (int p = 0; p < COLS / 4; ++p) {
      const int orow = threadIdx.x / 64 + 4 * p, ocol = threadIdx.x % 64;
      out[size_t(g * COLS + orow) * R + c * ROWS + k * 64 + ocol] = t[orow][ocol];
    }
  }
}

__global__ void __launch_bounds__(256, 2) contiguous_copy(const float* __restrict__ x, float* __restrict__ out) {
  const float* base = x + size_t(blockIdx.x) * 32768;
  float v[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) v[i] = base[i * 256 + threadIdx.x];
#pragma unroll
  for (int i = 0; i < 128; ++i) out[size_t(blockIdx.x) * 32768 + i * 256 + threadIdx.x] = v[i];
}

__global__ void __launch_bounds__(256, 2) contiguous_read(const float* __restrict__ x, float* out) {
  const float* base = x + size_t(blockIdx.x) * 32768;
  float acc = 0;
#pragma unroll 64
  for (int i = 0; i < 128; ++i) acc += base[i * 256 + threadIdx.x];
  out[size_t(blockIdx.x) * 256 + threadIdx.x] = acc;
}

template <class F>
float time_it(F f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  f();
  cudaEventRecord(a);
  for (int i = 0; i < 20; ++i) f();
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  return ms * 1000 / 20;
}

int main() {
  float *x, *out;
  cudaMalloc(&x, size_t(R) * C * 4);
  cudaMalloc(&out, size_t(4096) * 256 * 4);
  float* y;
  cudaMalloc(&y, size_t(R) * C * 4);
  cudaMemset(x, 0x3c, size_t(R) * C * 4);
  const double bytes = double(R) * C * 4;
  auto report = [&](const char* what, float us) {
    std::printf("%-40s %8.1f us  %7.0f GB/s\n", what, us, bytes / us / 1e3);
  };
  report("contiguous 128 KiB a cube", time_it([&] { contiguous_read<<<4096, 256>>>(x, out); }));
  report("block 1024 rows x 32 cols (held 1024)", time_it([&] { block_read<32><<<4096, 256>>>(x, out); }));
  report("block 512 rows x 64 cols", time_it([&] { block_read<64><<<4096, 256>>>(x, out); }));
  report("block 256 rows x 128 cols", time_it([&] { block_read<128><<<4096, 256>>>(x, out); }));
  report("block 128 rows x 256 cols", time_it([&] { block_read<256><<<4096, 256>>>(x, out); }));
  report("block 32 rows x 1024 cols", time_it([&] { block_read<1024><<<4096, 256>>>(x, out); }));
  report("copy contiguous (read + write)", time_it([&] { contiguous_copy<<<4096, 256>>>(x, y); }) / 2);
  report("copy 1024 x 32, transposed (read + write)", time_it([&] { block_copy<32><<<4096, 256>>>(x, y); }) / 2);
  report("copy 512 x 64, transposed (read + write)", time_it([&] { block_copy<64><<<4096, 256>>>(x, y); }) / 2);
  std::printf("error: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
