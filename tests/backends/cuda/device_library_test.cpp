// The CUDA device library (src/backends/cuda/device/*.cuh) on its own: each file compiles with
// NVRTC from the folder by itself, and inside the embedded prelude, with a small kernel that
// calls every helper it defines (templates are only checked where they are instantiated); the
// integer helpers, compiled here by the host compiler, agree with the CPU backend lane for lane.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <type_traits>

#include "backend/backend.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/target.h"
#include "cuda_test_util.h"
#include "kiln/float8.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"
#include "support/run_ir_on_cpu.h"

// The integer helpers for the host: CUDA's qualifiers mean nothing here, and the four bit-counting
// intrinsics they call are given their documented results (__clz(0) is 32, __clzll(0) is 64).
// Inside a namespace, so that the device typedefs (i8, u32, ...) stay out of the global one.
namespace device {
#define KILN_PLANE_WIDTH ::kiln::ir::Target::kPlaneWidth  // as NVRTC's options give it
#define __device__
#define __forceinline__ inline
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(unsigned(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
#include "backends/cuda/device/int_arith.cuh"
inline float __uint_as_float(unsigned x) { return std::bit_cast<float>(x); }
inline unsigned __float_as_uint(float x) { return std::bit_cast<unsigned>(x); }
#include "backends/cuda/device/fp8.cuh"
#undef __device__
#undef __forceinline__
}  // namespace device

namespace kiln::cuda::testing {
namespace {

// The tensor-core products: every form on both factor formats, the lowering's 128 x 128 x 32 over 2 x 4
// warps (rows padded by 16 bytes, as lower_tiles stages them), and a warp tile of three n-tiles (an
// odd count takes ldmatrix .x2 for the last). Needs sm_80 or later.
constexpr const char* kMmaKernel = R"(
template <int M, int N, int K, int WM, int WN, int LDA, int LDB, class T>
__device__ void mma_f32(T* s, const T* in, f32* out) {
  constexpr int S = (M / WM / 16) * (N / WN / 8) * 4;
  __syncthreads();
  for (u32 i = threadIdx.x; i < M * LDA + K * LDB; i += blockDim.x) s[i] = in[i];
  __syncthreads();
  f32 acc[S];
  for (int j = 0; j < S; ++j) acc[j] = 0.0f;
  kiln_mma_sync<M, N, K, WM, WN, LDA, LDB>(s, s + M * LDA, acc);
  for (int j = 0; j < S; ++j) out[threadIdx.x * S + j] = acc[j];
}
template <int M, int N, int K, int WM, int WN, int LDA, int LDB>
__device__ void mma_f16acc(f16* s, const f16* in, f16* out) {
  constexpr int S = (M / WM / 16) * (N / WN / 8) * 4;
  __syncthreads();
  for (u32 i = threadIdx.x; i < M * LDA + K * LDB; i += blockDim.x) s[i] = in[i];
  __syncthreads();
  f16 acc[S];
  for (int j = 0; j < S; ++j) acc[j] = out[threadIdx.x * S + j];
  kiln_mma_sync<M, N, K, WM, WN, LDA, LDB>(s, s + M * LDA, acc);
  for (int j = 0; j < S; ++j) out[threadIdx.x * S + j] = acc[j];
}
extern "C" __global__ void mma_test(const bf16* b, const f16* h, f32* out, f16* hout) {
  // One buffer for every call: the factors of the largest product, 16-byte aligned for ldmatrix.
  __shared__ kiln_vec<u16, 8> buf[(128 * 40 + 32 * 136) / 8];
  bf16* sb = reinterpret_cast<bf16*>(buf);
  f16* sh = reinterpret_cast<f16*>(buf);
  mma_f32<128, 128, 32, 2, 4, 40, 136>(sb, b, out);
  mma_f32<128, 128, 32, 2, 4, 40, 136>(sh, h, out);
  mma_f32<32, 24, 16, 2, 1, 24, 32>(sb, b, out);
  mma_f16acc<128, 128, 32, 2, 4, 40, 136>(sh, h, hout);
  mma_f16acc<32, 24, 16, 2, 1, 24, 32>(sh, h, hout);
}
)";

// A kernel per device file that calls each of its helpers on every type it is defined for.
const std::map<std::string, std::string>& kernels() {
  static const std::map<std::string, std::string> k = {
      {"types", R"(
extern "C" __global__ void types_test(u32* out, f32 x) {
  // Trivial types: they live in shared arrays.
  __shared__ f16 h[4];
  __shared__ kiln_vec<bf16, 8> hv[2];
  kiln_vec<f32, 4> v = {{x, x, x, x}};
  kiln_uint<i16>::type u = (kiln_uint<i16>::type)65535u;
  h[threadIdx.x & 3u] = f16{u};
  hv[0].v[threadIdx.x & 7u] = bf16{(u16)(u >> 1)};
  i8 a = -1; i32 b = -2; i64 c = -3; u8 d = 1; u64 e = 2;
  static_assert(sizeof(kiln_vec<f64, 2>) == 16 && alignof(kiln_vec<f64, 2>) == 16, "vector alignment");
  static_assert(sizeof(kiln_uint<i64>::type) == 8 && (kiln_uint<i8>::type)-1 > 0, "unsigned twin");
  out[0] = kiln_bitcast<u32>(v.v[3]) + h[0].bits + hv[0].v[1].bits + (u32)(a + b + c + d + e);
}
)"},
      {"fp8", R"(
extern "C" __global__ void fp8_test(f32* out, f32 x) {
  out[0] = kiln_f32(f8e4m3{kiln_fp8_bits(x, 3u, 7u, 0x7eu)}) + (f32)kiln_fp8_bits(x, 2u, 15u, 0x7bu);
}
)"},
      {"half", R"(
extern "C" __global__ void half_test(f32* out, f32 x, f64 d, i64 i, u64 u) {
  out[0] = kiln_f32(kiln_f16(x)) + kiln_f32(kiln_bf16(x)) + kiln_f32(kiln_f8e4m3(x)) + kiln_f32(kiln_f8e5m2(x));
  out[1] = kiln_f32_odd(d) + kiln_f32_odd(i) + kiln_f32_odd(u) + kiln_odd(x, x > 0.0f);
}
)"},
      {"float", R"(
template <class F> __device__ i64 ftoi_all(F x) {
  return (i64)kiln_ftoi_i8(x) + kiln_ftoi_i16(x) + kiln_ftoi_i32(x) + kiln_ftoi_i64(x) +
         (i64)kiln_ftoi_u8(x) + kiln_ftoi_u16(x) + kiln_ftoi_u32(x) + (i64)kiln_ftoi_u64(x);
}
extern "C" __global__ void float_test(i64* out, f32 x, f64 d) {
  out[0] = ftoi_all(x) + ftoi_all(d);
  out[1] = kiln_isnan(x) + kiln_isnan(d) + kiln_isinf(x) + kiln_isinf(d);
  out[2] = (i64)(kiln_tanh_approx(x) + kiln_exp2_approx(x) + kiln_sqrt_approx(x) + kiln_rcp_approx(x));
}
)"},
      {"int_arith", R"(
template <class T> __device__ u64 int_ops(T a, T b) {
  return (u64)kiln_add(a, b) + (u64)kiln_sub(a, b) + (u64)kiln_mul(a, b) + (u64)kiln_neg(a) +
         (u64)kiln_min(a, b) + (u64)kiln_max(a, b) + (u64)kiln_abs(a) + (u64)kiln_div(a, b) +
         (u64)kiln_rem(a, b) + (u64)kiln_shl(a, b) + (u64)kiln_shr(a, b) + kiln_popcount(a) +
         kiln_leading_zeros(a);
}
extern "C" __global__ void int_arith_test(u64* out, const i64* in) {
  i64 a = in[0], b = in[1];
  out[0] = int_ops((i8)a, (i8)b) + int_ops((i16)a, (i16)b) + int_ops((i32)a, (i32)b) + int_ops(a, b) +
           int_ops((u8)a, (u8)b) + int_ops((u16)a, (u16)b) + int_ops((u32)a, (u32)b) + int_ops((u64)a, (u64)b);
}
)"},
      {"float_arith", R"(
template <class T> __device__ T ops(T a, T b) { return kiln_max(kiln_min(kiln_mul(kiln_add(a, b), b), a), b); }
template <class H> __device__ H half_ops(H a, H b) {
  H r = ops(a, b);
  r = kiln_abs(kiln_neg(kiln_rem(kiln_div(kiln_sub(r, a), b), a)));
  return kiln_fma(r, a, b);
}
extern "C" __global__ void float_arith_test(f32* out, f32 x, f64 d) {
  kiln_vec<f32, 4> v = {{x, x, x, x}};
  kiln_vec<f64, 2> dv = {{d, d}};
  kiln_vec<i32, 2> iv = {{1, 2}};
  kiln_vec<f16, 8> hv;
  for (int i = 0; i < 8; ++i) hv.v[i] = kiln_f16(x);
  v = ops(v, v); dv = ops(dv, dv); iv = ops(iv, iv); hv = ops(hv, hv);
  out[0] = ops(x, x) + (f32)ops(d, d) + v.v[1] + (f32)dv.v[1] + (f32)iv.v[1] + kiln_f32(hv.v[2]);
  out[1] = kiln_f32(half_ops(kiln_f16(x), kiln_f16(x))) + kiln_f32(half_ops(kiln_bf16(x), kiln_bf16(x))) +
           kiln_f32(half_ops(kiln_f8e4m3(x), kiln_f8e4m3(x))) + kiln_f32(half_ops(kiln_f8e5m2(x), kiln_f8e5m2(x)));
}
)"},
      {"atomics", R"(
template <class T> __device__ T int_atomics(T* p, T v) {
  return kiln_atomic_add(p, v) + kiln_atomic_sub(p, v) + kiln_atomic_min(p, v) + kiln_atomic_max(p, v) +
         kiln_atomic_and(p, v) + kiln_atomic_or(p, v) + kiln_atomic_xor(p, v) + kiln_atomic_exchange(p, v) +
         kiln_atomic_cas(p, v, v);
}
template <class T> __device__ T float_atomics(T* p, T v) {
  return kiln_atomic_add(p, v) + kiln_atomic_sub(p, v) + kiln_atomic_exchange(p, v);
}
extern "C" __global__ void atomics_test(i32* a, u32* b, i64* c, u64* d, f32* e, f64* f) {
  a[1] = int_atomics(a, 1); b[1] = int_atomics(b, 1u); c[1] = int_atomics(c, 1ll); d[1] = int_atomics(d, 1ull);
  e[1] = float_atomics(e, 1.0f); f[1] = float_atomics(f, 1.0);
}
)"},
      {"plane", R"(
template <class T> __device__ T plane_ops(u32 m, T v) {
  T r = kiln_plane_reduce<kiln_op_add>(m, v);
  r = kiln_plane_reduce<kiln_op_mul>(m, r);
  r = kiln_plane_reduce<kiln_op_min>(m, r);
  r = kiln_plane_reduce<kiln_op_max>(m, r);
  r = kiln_plane_scan(m, r, true);
  r = kiln_plane_scan(m, r, false);
  r = kiln_shfl_idx(m, r, 3u);
  r = kiln_shfl_xor(m, r, 1u);
  r = kiln_shfl_up(m, r, 2u);
  return kiln_shfl_down(m, r, 2u);
}
template <class T> __device__ T shuffled(u32 m, T v) { return kiln_shfl_idx(m, v, 0u); }
extern "C" __global__ void plane_test(i64* out, f32 x) {
  u32 m = kiln_plane_lanes(threadIdx.x, blockDim.x);
  kiln_narrow(m, threadIdx.x % 3u != 0u);
  kiln_vec<f32, 4> v = {{x, x, x, x}};
  out[threadIdx.x] = plane_ops(m, (i32)x) + plane_ops(m, (u32)x) + plane_ops(m, (i64)x) + plane_ops(m, (u64)x) +
                     (i64)plane_ops(m, x) + (i64)plane_ops(m, (f64)x) + (i64)kiln_f32(plane_ops(m, kiln_f16(x))) +
                     shuffled(m, (i8)x) + shuffled(m, (i16)x) + shuffled(m, (u8)x) + shuffled(m, (u16)x) +
                     shuffled(m, x > 0.0f) + shuffled(m, kiln_bf16(x)).bits + (i64)shuffled(m, v).v[2] +
                     shuffled(m, kiln_f8e4m3(x)).bits + shuffled(m, kiln_f8e5m2(x)).bits +
                     kiln_plane_all(m, x > 0.0f) + kiln_plane_any(m, x > 0.0f) + kiln_plane_ballot(m, x > 0.0f) +
                     kiln_plane_elect(m) + kiln_lane();
}
)"},
      {"mma", kMmaKernel},
      {"hopper", R"(
extern "C" __global__ void hopper_test(const f32* in, f32* out) {
  __shared__ barrier bars[2];
  __shared__ f32 s[128];
  if (threadIdx.x == 0u) {
    kiln_mbarrier_init(&bars[0], 128u);
    kiln_mbarrier_init(&bars[1], 1u);
  }
  __syncthreads();
  s[threadIdx.x] = in[threadIdx.x];
  kiln_fence_proxy_async();
  kiln_mbarrier_arrive(&bars[0]);
  while (!kiln_mbarrier_try_wait(&bars[0], 0u)) {
  }
  if (threadIdx.x == 0u) {
    kiln_mbarrier_expect_tx(&bars[1], 64u);
    kiln_mbarrier_arrive_expect_tx(&bars[1], 64u);
    kiln_mbarrier_complete_tx(&bars[1], 128u);
  }
  while (!kiln_mbarrier_try_wait(&bars[1], 0u)) {
  }
  out[threadIdx.x] = s[(threadIdx.x + 1u) % 128u];
}
)"},
      {"async_copy", R"(
extern "C" __global__ void async_copy_test(const kiln_vec<f32, 4>* in, f32* out) {
  __shared__ __align__(16) f32 s[256];
  __shared__ __align__(16) f32 t[192];
  kiln_cp_async<16>(&s[threadIdx.x * 4u], in + threadIdx.x, threadIdx.x % 2u == 0u);  // odd units zero-fill
  kiln_cp_async<8>(&t[threadIdx.x * 2u], (const f32*)in + threadIdx.x * 2u, true);
  kiln_cp_async_commit();
  kiln_cp_async<4>(&t[128u + threadIdx.x], (const f32*)in + threadIdx.x, threadIdx.x < 32u);
  kiln_cp_async_commit();
  kiln_cp_async_wait<0>();
  __syncthreads();
  out[threadIdx.x] = s[threadIdx.x] + t[threadIdx.x % 192u];
}
)"},
      {"wide", R"(
// Every width kiln has on scalars of 1, 2, 4 and 8 bytes (pieces of 2 to 16 bytes, one to four
// of them), and an address one element off (the element path).
template <class T, int W> __device__ void wide_copy(const T* in, T* out) {
  kiln_store_wide<T, W>(out + threadIdx.x * W, kiln_load_wide<T, W>(in + threadIdx.x * W));
  kiln_store_wide<T, W>(out + 1, kiln_load_wide<T, W>(in + 1));
}
template <class T> __device__ void wide_all(const T* in, T* out) {
  wide_copy<T, 2>(in, out);
  wide_copy<T, 4>(in, out);
  wide_copy<T, 8>(in, out);
  wide_copy<T, 16>(in, out);
}
extern "C" __global__ void wide_test(const u8* a, u8* b, const f16* c, f16* d, const f32* e, f32* f, const f64* g, f64* h,
                                     const bool* i, bool* j) {
  wide_all(a, b);
  wide_all(c, d);
  wide_all(e, f);
  wide_all(g, h);
  wide_copy<bool, 4>(i, j);
}
)"},
      {"errors", R"(
extern "C" __global__ void errors_test(u32* word, u32 site, i32 lo, i32 hi) {
  if (!(lo < hi)) kiln_report_error(word, site, 1u, (u64)(i64)lo, (u64)(i64)hi, blockIdx.x, threadIdx.x);
}
)"},
  };
  return k;
}

std::filesystem::path device_dir() { return KILN_CUDA_DEVICE_DIR; }

std::vector<std::string> device_files() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(device_dir())) {
    if (e.path().extension() == ".cuh") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(DeviceLibrary, EveryFileHasATestKernel) {
  std::vector<std::string> names = device_files();
  ASSERT_FALSE(names.empty()) << device_dir();
  for (const std::string& n : names) {
    EXPECT_TRUE(kernels().count(n)) << n << ".cuh has no kernel in this test that calls its helpers";
  }
  for (const auto& [n, source] : kernels()) {
    EXPECT_TRUE(std::filesystem::exists(device_dir() / (n + ".cuh"))) << "a test kernel for a missing " << n << ".cuh";
  }
}

// The prelude is the files in their CMake order with the lines for a file on its own left out: the
// text kernels see holds every file, no #include and no #pragma once.
TEST(DeviceLibrary, ThePreludeHoldsEveryFileAndNoInclude) {
  std::string_view prelude = cuda_prelude();
  EXPECT_EQ(prelude.find("#include"), std::string_view::npos);
  EXPECT_EQ(prelude.find("#pragma once"), std::string_view::npos);
  EXPECT_TRUE(prelude.starts_with("// ---- kiln prelude (declared by kiln; no toolkit header) ----\n"));
  EXPECT_TRUE(prelude.ends_with("\n// ---- end of the kiln prelude ----\n"));
  for (const std::string& n : device_files()) {
    std::string text = read_text((device_dir() / (n + ".cuh")).string());
    std::string first_line = text.substr(0, text.find('\n') + 1);
    // hopper.cuh is the part only kernels with Hopper ops take (cuda_hopper_library).
    std::string_view holder = n == "hopper" ? cuda_hopper_library() : prelude;
    EXPECT_NE(holder.find(first_line), std::string_view::npos) << n << ".cuh is not where it belongs";
    if (n == "hopper") {
      EXPECT_EQ(prelude.find(first_line), std::string_view::npos) << "hopper.cuh in every kernel's prelude";
    }
  }
  EXPECT_EQ(cuda_hopper_library().find("#include"), std::string_view::npos);
  EXPECT_TRUE(cuda_hopper_library().ends_with("\n// ---- end of kiln's Hopper library ----\n"));
}

// hopper.cuh compiles for sm_90a alone: sm_90 (no arch-specific features), sm_100a (no wgmma) and
// sm_80 are refused with a message that names the one it takes.
TEST(DeviceLibrary, HopperCompilesForSm90aAlone) {
  KILN_REQUIRE_NVRTC();
  std::string source = std::string(cuda_prelude()) + std::string(cuda_hopper_library()) + kernels().at("hopper");
  for (const char* arch : {"sm_80", "sm_90", "sm_100a"}) {
    try {
      compile(source, "hopper_test", default_compile_options(arch));
      ADD_FAILURE() << "hopper.cuh compiled for " << arch;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), "compile.nvrtc") << arch;
      EXPECT_NE(std::string(e.what()).find("compiles for sm_90a only"), std::string::npos) << arch << ": " << e.what();
    }
  }
}

class DeviceFile : public ::testing::TestWithParam<std::string> {};

TEST_P(DeviceFile, CompilesOnItsOwn) {
  KILN_REQUIRE_NVRTC();
  const std::string& name = GetParam();
  std::vector<std::string> options = default_compile_options(kArch);
  options.push_back("--include-path=" + device_dir().string());
  std::string source = "#include \"" + name + ".cuh\"\n" + kernels().at(name);
  CompileResult r = compile(source, name + "_test", options);
  EXPECT_FALSE(r.cubin.empty());
  EXPECT_EQ(r.log.find("warning"), std::string::npos) << r.log;
}

TEST_P(DeviceFile, CompilesInThePrelude) {
  KILN_REQUIRE_NVRTC();
  const std::string& name = GetParam();
  std::string source =
      std::string(cuda_prelude()) + (name == "hopper" ? std::string(cuda_hopper_library()) : "") + kernels().at(name);
  CompileResult r = compile(source, name + "_test", default_compile_options(kArch));
  EXPECT_FALSE(r.cubin.empty());
  EXPECT_EQ(r.log.find("warning"), std::string::npos) << r.log;
}

// Tensor cores' m16n8k16 came with sm_80: the products compile there as on sm_90a; before it, an
// instantiation is refused with a message naming the architecture it needs.
TEST(DeviceLibrary, MmaCompilesForSm80AndIsRefusedBefore) {
  KILN_REQUIRE_NVRTC();
  std::string source = std::string(cuda_prelude()) + kMmaKernel;
  CompileResult r = compile(source, "mma_test", default_compile_options("sm_80"));
  EXPECT_FALSE(r.cubin.empty());
  EXPECT_EQ(r.log.find("warning"), std::string::npos) << r.log;
  try {
    compile(source, "mma_test", default_compile_options("sm_75"));
    ADD_FAILURE() << "kiln_mma_sync compiled for sm_75";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "compile.nvrtc");
    EXPECT_NE(std::string(e.what()).find("needs sm_80 or later"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Files, DeviceFile, ::testing::ValuesIn(device_files()),
                         [](const auto& info) { return info.param; });

// ---- int_arith.cuh on the host against the CPU backend ----

template <class T>
constexpr std::string_view ir_name() {
  if constexpr (std::is_same_v<T, device::i8>) return "i8";
  else if constexpr (std::is_same_v<T, device::i16>) return "i16";
  else if constexpr (std::is_same_v<T, device::i32>) return "i32";
  else if constexpr (std::is_same_v<T, device::i64>) return "i64";
  else if constexpr (std::is_same_v<T, device::u8>) return "u8";
  else if constexpr (std::is_same_v<T, device::u16>) return "u16";
  else if constexpr (std::is_same_v<T, device::u32>) return "u32";
  else return "u64";
}

// The IR op, and the prelude helper the CUDA emitter writes for it.
struct IntOp {
  std::string_view name;
  int operands;
  bool counts;     // the result is u32 (popcount, leading_zeros)
  bool nonzero_b;  // b == 0 is left out: the CPU reports it as an error, a GPU leaves it unspecified
};
constexpr IntOp kIntOps[] = {
    {"add", 2, false, false},          {"sub", 2, false, false}, {"mul", 2, false, false}, {"min", 2, false, false},
    {"max", 2, false, false},          {"div", 2, false, true},  {"rem", 2, false, true},  {"shl", 2, false, false},
    {"shr", 2, false, false},          {"neg", 1, false, false}, {"abs", 1, false, false}, {"popcount", 1, true, false},
    {"leading_zeros", 1, true, false},
};

template <class T>
uint64_t on_host(std::string_view op, T a, T b) {
  using namespace device;
  auto bits = [](auto v) { return uint64_t(typename kiln_uint<decltype(v)>::type(v)); };
  if (op == "add") return bits(kiln_add(a, b));
  if (op == "sub") return bits(kiln_sub(a, b));
  if (op == "mul") return bits(kiln_mul(a, b));
  if (op == "min") return bits(kiln_min(a, b));
  if (op == "max") return bits(kiln_max(a, b));
  if (op == "div") return bits(kiln_div(a, b));
  if (op == "rem") return bits(kiln_rem(a, b));
  if (op == "shl") return bits(kiln_shl(a, b));
  if (op == "shr") return bits(kiln_shr(a, b));
  if (op == "neg") return bits(kiln_neg(a));
  if (op == "abs") return bits(kiln_abs(a));
  if (op == "popcount") return kiln_popcount(a);
  if (op == "leading_zeros") return kiln_leading_zeros(a);
  ADD_FAILURE() << "no host helper for " << op;
  return 0;
}

// Operand values: the edges of the type (0, +-1, MIN, MAX and their neighbours), shift amounts
// around the width, and random values; every pair of them.
template <class T>
std::vector<T> operand_values() {
  using L = std::numeric_limits<T>;
  std::set<T> v;
  for (T x : {T(0), T(1), T(2), T(3), T(-1), T(-2), L::min(), T(L::min() + 1), L::max(), T(L::max() - 1)}) v.insert(x);
  const int width = int(sizeof(T) * 8);
  for (int s : {width - 1, width, width + 1, 2 * width, 7, 8, 9}) v.insert(T(s));
  std::mt19937_64 rng(sizeof(T) * 131 + std::is_signed_v<T>);
  while (v.size() < 40) v.insert(T(rng()));
  return std::vector<T>(v.begin(), v.end());
}

template <class T>
void agree_with_the_cpu() {
  const std::string t(ir_name<T>());
  const std::vector<T> values = operand_values<T>();
  for (const IntOp& op : kIntOps) {
    if (op.name == "neg" && !std::is_signed_v<T>) continue;  // the IR has no neg of an unsigned type
    SCOPED_TRACE(std::string(op.name) + " on " + t);
    std::vector<T> as, bs;
    for (T a : values) {
      for (T b : values) {
        if (op.nonzero_b && b == T(0)) continue;
        as.push_back(a);
        bs.push_back(b);
      }
    }
    // Whole cubes: a unit past the end would divide by the zero that a checked load gives it.
    const uint32_t dim = 64;
    while (as.size() % dim) {
      as.push_back(T(1));
      bs.push_back(T(1));
    }
    const uint32_t n = uint32_t(as.size()), cubes = n / dim;
    const std::string rt = op.counts ? "u32" : t;
    const std::string apply = op.operands == 2 ? std::string(op.name) + " %1, %2" : std::string(op.name) + " %1";
    std::string text = "kernel @int_op(%a: buffer<" + t + ", ro>, %b: buffer<" + t + ", ro>, %out: buffer<" + rt +
                       ", rw>) {cube_dim = [" + std::to_string(dim) +
                       ", 1, 1], mode = checked, address = u32, vector = 1} {\n"
                       "  %0 = builtin.absolute_pos : u32\n"
                       "  %1 = load %a, %0 {checked} : " +
                       t +
                       "\n"
                       "  %2 = load %b, %0 {checked} : " +
                       t +
                       "\n"
                       "  %3 = " +
                       apply + " : " + rt +
                       "\n"
                       "  store %out, %0, %3 {checked}\n"
                       "}\n";
    const size_t out_size = op.counts ? 4 : sizeof(T);
    std::vector<std::vector<unsigned char>> bufs(3);
    bufs[0].resize(n * sizeof(T));
    bufs[1].resize(n * sizeof(T));
    bufs[2].resize(n * out_size);
    std::memcpy(bufs[0].data(), as.data(), bufs[0].size());
    std::memcpy(bufs[1].data(), bs.data(), bufs[1].size());
    std::vector<unsigned char> out = test::run_ir_on_cpu(text, bufs, {n, n, n}, cubes).back();
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t cpu = 0;
      std::memcpy(&cpu, out.data() + i * out_size, out_size);
      ASSERT_EQ(on_host<T>(op.name, as[i], bs[i]), cpu)
          << "a = " << int64_t(as[i]) << ", b = " << int64_t(bs[i]) << ": the prelude's helper, then the CPU";
    }
  }
}

TEST(DeviceLibraryOnHost, IntegerHelpersAgreeWithTheCpuBackend) {
  agree_with_the_cpu<device::i8>();
  agree_with_the_cpu<device::i16>();
  agree_with_the_cpu<device::i32>();
  agree_with_the_cpu<device::i64>();
  agree_with_the_cpu<device::u8>();
  agree_with_the_cpu<device::u16>();
  agree_with_the_cpu<device::u32>();
  agree_with_the_cpu<device::u64>();
}

// The fp8 conversion of the targets without cvt to fp8 (before sm_89), compiled here, against
// kiln/float8.h's (whose tests derive from the formats): f32 patterns across every exponent, and
// each fp8 neighbour pair's midpoint and the floats either side; and every e4m3 pattern's value.
TEST(DeviceLibraryOnHost, Fp8FromF32MatchesTheHostTypes) {
  auto agree = [](float f) {
    ASSERT_EQ(device::kiln_fp8_bits(f, 3u, 7u, 0x7eu), f8e4m3(f).bits) << "e4m3 of " << f;
    ASSERT_EQ(device::kiln_fp8_bits(f, 2u, 15u, 0x7bu), f8e5m2(f).bits) << "e5m2 of " << f;
  };
  for (uint32_t field = 0; field < 256; ++field) {
    for (uint32_t frac = 0; frac < (1u << 23); frac += 4099) {
      agree(std::bit_cast<float>((field << 23) | frac));
      agree(-std::bit_cast<float>((field << 23) | frac));
    }
  }
  auto ties = [&]<class F>(F, int last_finite) {
    for (int b = 0; b < last_finite; ++b) {
      const float lo = float(F::from_bits(uint8_t(b))), hi = float(F::from_bits(uint8_t(b + 1)));
      const float mid = lo + (hi - lo) / 2;
      agree(mid);
      agree(std::nextafter(mid, 0.0f));
      agree(std::nextafter(mid, INFINITY));
    }
  };
  ties(f8e4m3{}, 0x7e);
  ties(f8e5m2{}, 0x7b);
  for (int b = 0; b < 256; ++b) {
    const float got = device::kiln_f32(device::f8e4m3{uint8_t(b)}), want = float(f8e4m3::from_bits(uint8_t(b)));
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << b;
    else EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << b;
  }
}

}  // namespace
}  // namespace kiln::cuda::testing
