// Fast math on CUDA (docs/decisions/015-fast-math.md). An exact kernel keeps the intrinsics that
// round each op; a kernel with fast_math = [contract] writes its float multiplies as a plain `*`
// and asks NVRTC for --fmad=true; one with [approx] calls the hardware's approximations for f32
// (and f16/bf16 math, through f32), never for f64. NVRTC compiles every variant, and the PTX shows
// fused multiply-adds and approximate instructions exactly where they were allowed. The CPU
// backend runs every variant exactly: their outputs are the same bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "backend/backend.h"
#include "backends/cpu/cpu_backend.h"
#include "cuda_test_util.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"
#include "support/run_ir_on_cpu.h"

namespace kiln::cuda::testing {
namespace {

// One op of each kind fast math changes, on f32, f64 and f16.
std::string mixed_kernel(const std::string& fast) {
  return "kernel @fm(%x: buffer<f32, rw>, %d: buffer<f64, rw>, %h: buffer<f16, rw>) {cube_dim = [128, 1, 1], "
         "mode = unchecked, address = u32, vector = 1" +
         (fast.empty() ? std::string() : ", fast_math = [" + fast + "]") + R"(} {
  %0 = builtin.absolute_pos : u32
  %1 = load %x, %0 : f32
  %2 = load %d, %0 : f64
  %3 = load %h, %0 : f16
  %4 = mul %1, %1 : f32
  %5 = add %4, %1 : f32
  %6 = div %5, %1 : f32
  %7 = sqrt %6 : f32
  %8 = recip %7 : f32
  %9 = exp %8 : f32
  %10 = exp2 %9 : f32
  %11 = tanh %10 : f32
  store %x, %0, %11
  %12 = mul %2, %2 : f64
  %13 = add %12, %2 : f64
  %14 = div %13, %2 : f64
  %15 = exp %14 : f64
  store %d, %0, %15
  %16 = mul %3, %3 : f16
  %17 = exp %16 : f16
  store %h, %0, %17
}
)";
}

// a * b + c on f32 and f64 and nothing else: an fma in its PTX can only be a contraction.
std::string mul_add_kernel(const std::string& fast) {
  return "kernel @mul_add(%x: buffer<f32, rw>, %d: buffer<f64, rw>, %a: f32, %b: f64) {cube_dim = [128, 1, 1], "
         "mode = unchecked, address = u32, vector = 1" +
         (fast.empty() ? std::string() : ", fast_math = [" + fast + "]") + R"(} {
  %0 = builtin.absolute_pos : u32
  %1 = load %x, %0 : f32
  %2 = mul %1, %a : f32
  %3 = add %2, %1 : f32
  store %x, %0, %3
  %4 = load %d, %0 : f64
  %5 = mul %4, %b : f64
  %6 = add %5, %4 : f64
  store %d, %0, %6
}
)";
}

ir::Kernel parsed(const std::string& text) {
  ir::Kernel k = ir::parse(text);
  ir::verify(k, "test");
  return k;
}

EmitResult emit(const std::string& text) { return emit_cuda(parsed(text)); }

std::string entry_text(const EmitResult& r) { return r.source.substr(r.source.find("extern \"C\" __global__")); }

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

TEST(FastMath, AnExactKernelKeepsTheIntrinsicsThatRoundEachOp) {
  EmitResult r = emit(mixed_kernel(""));
  std::string s = entry_text(r);
  for (const char* want : {"f32 v4 = __fmul_rn(v1, v1);", "f32 v6 = __fdiv_rn(v5, v1);", "f32 v7 = __fsqrt_rn(v6);",
                           "f32 v8 = __frcp_rn(v7);", "f32 v9 = expf(v8);", "f32 v10 = exp2f(v9);",
                           "f32 v11 = tanhf(v10);", "f64 v12 = __dmul_rn(v2, v2);", "f64 v14 = __ddiv_rn(v13, v2);",
                           "f16 v16 = kiln_mul(v3, v3);", "f16 v17 = kiln_f16(expf(kiln_f32(v16)));"}) {
    EXPECT_TRUE(has(s, want)) << want << " in\n" << s;
  }
  EXPECT_TRUE(r.options.empty());
  EXPECT_FALSE(has(r.source.substr(0, r.source.find('\n')), "fast_math")) << "the first line names the facts";
}

TEST(FastMath, ContractionWritesPlainMultipliesAndAsksForFmad) {
  EmitResult r = emit(mixed_kernel("contract"));
  std::string s = entry_text(r);
  EXPECT_TRUE(has(s, "f32 v4 = (v1 * v1);")) << s;
  EXPECT_TRUE(has(s, "f64 v12 = (v2 * v2);")) << s;
  // should leave every other op as the exact kernel has it: f16 rounds after each op, and the
  // functions are the accurate ones
  EXPECT_TRUE(has(s, "f16 v16 = kiln_mul(v3, v3);")) << s;
  EXPECT_TRUE(has(s, "f32 v6 = __fdiv_rn(v5, v1);")) << s;
  EXPECT_TRUE(has(s, "f32 v9 = expf(v8);")) << s;
  EXPECT_FALSE(has(s, "__fmul_rn") || has(s, "__dmul_rn")) << s;
  EXPECT_EQ(r.options, std::vector<std::string>{"--fmad=true"});
  EXPECT_TRUE(has(r.source.substr(0, r.source.find('\n')), ", fast_math = [contract])")) << r.source.substr(0, 200);
}

TEST(FastMath, ApproximationsCallTheHardwaresForF32AndNotForF64) {
  EmitResult r = emit(mixed_kernel("approx"));
  std::string s = entry_text(r);
  for (const char* want :
       {"f32 v4 = __fmul_rn(v1, v1);", "f32 v6 = __fdividef(v5, v1);", "f32 v7 = kiln_sqrt_approx(v6);",
        "f32 v8 = kiln_rcp_approx(v7);", "f32 v9 = __expf(v8);", "f32 v10 = kiln_exp2_approx(v9);",
        "f32 v11 = kiln_tanh_approx(v10);", "f64 v14 = __ddiv_rn(v13, v2);", "f64 v15 = exp(v14);",
        "f16 v17 = kiln_f16(__expf(kiln_f32(v16)));"}) {
    EXPECT_TRUE(has(s, want)) << want << " in\n" << s;
  }
  EXPECT_TRUE(r.options.empty()) << "approximations are spelled in the source; no flag is needed";
}

TEST(FastMath, EachChoiceIsAnotherEntryAndAnotherSource) {
  std::set<std::string> entries, sources;
  for (const char* fast : {"", "contract", "approx", "contract, approx"}) {
    EmitResult r = emit(mixed_kernel(fast));
    entries.insert(r.entry);
    sources.insert(r.source);
  }
  EXPECT_EQ(entries.size(), 4u);
  EXPECT_EQ(sources.size(), 4u);
}

std::vector<std::string> options_for(const EmitResult& r, const std::string& arch) {
  std::vector<std::string> o = default_compile_options(arch);
  o.insert(o.end(), r.options.begin(), r.options.end());
  return o;
}

TEST(FastMath, NvrtcCompilesEveryChoice) {
  KILN_REQUIRE_NVRTC();
  for (const char* fast : {"", "contract", "approx", "contract, approx"}) {
    SCOPED_TRACE(fast);
    for (const std::string& text : {mixed_kernel(fast), mul_add_kernel(fast)}) {
      EmitResult r = emit(text);
      CompileResult c = compile(r.source, r.entry, options_for(r, kArch));
      EXPECT_FALSE(c.cubin.empty());
    }
  }
}

TEST(FastMath, PtxFusesMultiplyAddsOnlyWhereContractionIsAllowed) {
  KILN_REQUIRE_NVRTC();
  EmitResult exact = emit(mul_add_kernel("")), contract = emit(mul_add_kernel("contract"));
  std::string e = compile_ptx(exact.source, exact.entry, options_for(exact, "compute_90"));
  std::string c = compile_ptx(contract.source, contract.entry, options_for(contract, "compute_90"));
  EXPECT_FALSE(has(e, "fma.")) << e;
  EXPECT_TRUE(has(e, "mul.rn.f32") && has(e, "mul.rn.f64")) << e;
  EXPECT_TRUE(has(c, "fma.rn.f32") && has(c, "fma.rn.f64")) << c;
  // should leave no multiply that ptxas may not fuse (a .rn multiply is never contracted)
  EXPECT_FALSE(has(c, "mul.rn.f")) << c;
}

TEST(FastMath, PtxHasApproximateInstructionsOnlyWhereAllowed) {
  KILN_REQUIRE_NVRTC();
  EmitResult exact = emit(mixed_kernel("")), approx = emit(mixed_kernel("approx"));
  std::string e = compile_ptx(exact.source, exact.entry, options_for(exact, "compute_90"));
  std::string a = compile_ptx(approx.source, approx.entry, options_for(approx, "compute_90"));
  for (const char* rounded : {"div.rn.f32", "sqrt.rn.f32", "rcp.rn.f32"}) {
    EXPECT_TRUE(has(e, rounded)) << rounded;
    EXPECT_FALSE(has(a, rounded)) << rounded;
  }
  for (const char* approximate : {"div.approx.f32", "sqrt.approx.f32", "rcp.approx.f32", "tanh.approx.f32"}) {
    EXPECT_FALSE(has(e, approximate)) << approximate;
    EXPECT_TRUE(has(a, approximate)) << approximate;
  }
  EXPECT_TRUE(has(a, "div.rn.f64")) << "f64 division stays exact";
}

// The CPU backend is exact whatever the kernel allows: the same inputs give the same bytes.
std::vector<std::vector<unsigned char>> run_on_cpu(const std::string& text,
                                                   std::vector<std::vector<unsigned char>> bufs,
                                                   const std::vector<uint32_t>& lens) {
  return test::run_ir_on_cpu(text, std::move(bufs), lens, 2);
}

TEST(FastMath, TheCpuRunsEveryChoiceExactly) {
  const uint32_t n = 256;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> dist(0.25, 3.0);
  std::vector<float> x(n);
  std::vector<double> d(n);
  std::vector<uint16_t> h(n);
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = float(dist(rng));
    d[i] = dist(rng);
    h[i] = uint16_t(0x3c00 + rng() % 0x400);  // f16 in [1, 2)
  }
  std::vector<std::vector<unsigned char>> in(3);
  in[0].resize(n * 4);
  in[1].resize(n * 8);
  in[2].resize(n * 2);
  std::memcpy(in[0].data(), x.data(), n * 4);
  std::memcpy(in[1].data(), d.data(), n * 8);
  std::memcpy(in[2].data(), h.data(), n * 2);
  auto exact = run_on_cpu(mixed_kernel(""), in, {n, n, n});
  EXPECT_NE(exact, in) << "the kernel wrote nothing";
  for (const char* fast : {"contract", "approx", "contract, approx"}) {
    EXPECT_EQ(run_on_cpu(mixed_kernel(fast), in, {n, n, n}), exact) << fast;
  }
}

}  // namespace
}  // namespace kiln::cuda::testing
