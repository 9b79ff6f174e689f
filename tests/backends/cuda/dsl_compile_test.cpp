// Kernels traced from the C++ front end, run through the pass pipeline, emitted and compiled with
// NVRTC for sm_90a: the path a launch takes, up to the driver.
#include <gtest/gtest.h>

#include "backends/cuda/target.h"
#include "cuda_test_util.h"
#include "kiln/dsl.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"

namespace kiln::cuda::testing {
namespace {

// out = exp(x) * 2, one float per unit.
struct ExpScale {
  static constexpr std::string_view name = "exp_scale";
  static constexpr std::array<std::string_view, 2> param_names{"x", "out"};
  void operator()(Slice<const float> x, Slice<float> out) const {
    auto i = absolute_pos();
    out[i] = exp(x[i]) * 2.0f;
  }
};

// y = a * x + y, one vector of F per unit (README's example).
template <class F>
struct Saxpy {
  static constexpr std::string_view name = "saxpy";
  static constexpr std::array<std::string_view, 3> param_names{"a", "x", "y"};
  void operator()(Scalar<float> a, Slice<const Vector<F>> x, Slice<Vector<F>> y) const {
    If(absolute_pos() < x.len(),
       [&] { y[absolute_pos()] = Vector<F>(cast<F>(a)) * x[absolute_pos()] + y[absolute_pos()]; });
  }
};

// A grid-stride sum: a loop with an unroll hint, a plane reduction, shared memory, a barrier and
// one atomic per cube.
struct BlockSum {
  static constexpr std::string_view name = "block_sum";
  void operator()(Slice<const float> x, Slice<float> out) const {
    SharedArray<float> partial(8);
    Var<float> acc = 0.0f;
    For(range(absolute_pos(), x.len(), 256u * 64u).unroll(2), [&](Expr<uint32_t> i) { acc += x[i]; });
    Expr<float> s = plane_sum(acc);
    If(unit_pos_plane() == 0u, [&] { partial[unit_pos() / 32u] = s; });
    sync_cube();
    If(unit_pos() == 0u, [&] {
      Var<float> total = 0.0f;
      For(range(0u, 8u).unroll_full(), [&](Expr<uint32_t> j) { total += partial[j]; });
      atomic_add(out[0u], total);
    });
  }
};

// While with Break and Continue, a run-time scalar, and a debug print.
struct Collatz {
  static constexpr std::string_view name = "collatz";
  void operator()(Slice<const uint32_t> x, Slice<uint32_t> steps, Scalar<uint32_t> limit) const {
    auto i = absolute_pos();
    Var<uint32_t> v = x[i];
    Var<uint32_t> n = 0u;
    While([&] { return v != 1u; },
          [&] {
            If(n >= limit, [&] { Break(); });
            n += 1u;
            If((v & 1u) == 0u, [&] {
              v = v / 2u;
              Continue();
            });
            v = v * 3u + 1u;
          });
    steps[i] = n;
    If(n == 0u, [&] { debug_print("unit %u was already 1\n", i); });
  }
};

// Rank-2 tensors: shape and strides from the launch.
struct Transpose {
  static constexpr std::string_view name = "transpose";
  void operator()(TensorArg<const float> in, TensorArg<float> out) const {
    auto r = absolute_pos_y();
    auto c = absolute_pos_x();
    If(r < in.shape(0) && c < in.shape(1),
       [&] { out[c * out.stride(0) + r * out.stride(1)] = in[r * in.stride(0) + c * in.stride(1)]; });
  }
};

// f16 vectors through math (computed in f32, rounded back), with a comptime branch.
struct Softplus {
  static constexpr std::string_view name = "softplus";
  void operator()(Slice<const Vector<f16>> x, Slice<Vector<f16>> y, Comptime<bool> relu) const {
    auto i = absolute_pos();
    Vector<f16> v = x[i];
    if (relu) y[i] = max(v, f16(0.0f));
    else y[i] = log(exp(v) + f16(1.0f));
  }
};

// Integers: shifts, select, casts, 64-bit atomics, a terminate.
struct Bits {
  static constexpr std::string_view name = "bits";
  void operator()(Slice<const Vector<int32_t>> x, Slice<Vector<int32_t>> y, Slice<int64_t> total) const {
    auto i = absolute_pos();
    If(i >= x.len(), [&] { Terminate(); });
    Vector<int32_t> v = x[i];
    Vector<int32_t> s = (v << 3) ^ (v >> 31);
    y[i] = select(v < 0, -s, s);
    atomic_add(total[0u], cast<int64_t>(v[0]));
  }
};

// Hopper's mbarriers: set up by one unit, an arrival per unit, a wait on the phase's parity (as
// tests/runtime/mbarrier_test.cpp runs it on the CPU).
struct Arrivals {
  static constexpr std::string_view name = "arrivals";
  void operator()(Slice<uint32_t> out) const {
    SharedArray<Mbarrier> bars(2);
    SharedArray<uint32_t> numbers(256);
    If(unit_pos() == 0u, [&] {
      mbarrier_init(bars, 0u, 256u);
      mbarrier_init(bars, 1u, 1u);
    });
    sync_cube();
    numbers[unit_pos()] = unit_pos();
    fence_proxy_async();
    mbarrier_arrive(bars, 0u);
    mbarrier_wait(bars, 0u, 0u);
    If(unit_pos() == 0u, [&] {
      mbarrier_expect_tx(bars, 1u, 16u);
      mbarrier_arrive_expect_tx(bars, 1u, 16u);
      mbarrier_complete_tx(bars, 1u, 32u);
    });
    mbarrier_wait(bars, 1u, 0u);
    out[absolute_pos()] = numbers[(unit_pos() + 1u) % 256u];
  }
};

// Hopper's warp-group product: two warp groups, each 64 x N of a 64-wide k block (bf16, 128-byte
// swizzle), four products of 16 along k in flight as one group (tests/runtime/wgmma_test.cpp runs
// the same on the CPU and on an sm_90a GPU against the host).
template <uint32_t N>
struct WarpGroupProduct {
  static constexpr std::string_view name = "warp_group_product";
  void operator()(Slice<const bf16> a, Slice<const bf16> b, Slice<float> out) const {
    SharedArray<bf16> as(128 * 64, Swizzle::Span128), bs(N * 64, Swizzle::Span128);
    For(range(unit_pos(), 128u * 64u, 256u),
        [&](Expr<uint32_t> i) { as[swizzled_index(as, i / 64u, i % 64u)] = a[i]; });
    For(range(unit_pos(), N * 64u, 256u), [&](Expr<uint32_t> i) { bs[swizzled_index(bs, i / 64u, i % 64u)] = b[i]; });
    fence_proxy_async();
    sync_cube();
    LocalArray<float> acc(N / 2);
    for (uint32_t i = 0; i < N / 2; ++i) acc[i] = 0.0f;
    wgmma_fence(acc);
    wgmma_mma_async(acc, as, unit_pos() / 128u * 64u * 64u, bs, 0u, 64);
    wgmma_commit_group();
    wgmma_wait_group(0, acc);
    for (uint32_t i = 0; i < N / 2; ++i) out[absolute_pos() * (N / 2) + i] = acc[i];
  }
};

// The register-A form: each unit's 32 elements of a 64 x 64 a, then the same product.
struct RegisterProduct {
  static constexpr std::string_view name = "register_product";
  void operator()(Slice<const bf16> a, Slice<const bf16> b, Slice<float> out) const {
    SharedArray<bf16> bs(64 * 64, Swizzle::Span128);
    For(range(unit_pos(), 64u * 64u, 256u), [&](Expr<uint32_t> i) { bs[swizzled_index(bs, i / 64u, i % 64u)] = b[i]; });
    fence_proxy_async();
    sync_cube();
    LocalArray<bf16> af(32);
    for (uint32_t j = 0; j < 32; ++j) af[j] = a[absolute_pos() * 32u + j];
    LocalArray<float> acc(32);
    for (uint32_t i = 0; i < 32; ++i) acc[i] = 0.0f;
    wgmma_fence(acc, af);
    wgmma_mma_async(acc, af, bs, 0u, 64);
    wgmma_commit_group();
    wgmma_wait_group(0, acc);
    for (uint32_t i = 0; i < 32; ++i) out[absolute_pos() * 32u + i] = acc[i];
  }
};

template <class K>
ir::Kernel trace(int vector_width, ir::Dim3 cube = {256, 1, 1}, void (*adjust)(std::vector<ParamDesc>&) = nullptr) {
  std::vector<ParamDesc> d = param_descs<K>(vector_width);
  if (adjust) adjust(d);
  LaunchFacts facts{cube, ir::ExecMode::Checked, ir::AddressType::U32, static_cast<uint8_t>(vector_width)};
  ir::Kernel k = define<K>(kernel_id<K>(facts, d));
  passes::PipelineOptions options;
  options.verify_each = true;
  passes::run_pipeline(k, options);
  return k;
}

// Every access left after the pipeline in checked mode carries a mask: the kernel is in the form
// the emitter takes.
void expect_no_checked_flags(const ir::Kernel& k) {
  ir::walk(k.body, [&](const ir::Op& op) { EXPECT_FALSE(op.flag(ir::AttrKey::Checked)) << ir::print(k); });
}

// Every kernel here writes memory: a pipeline that dropped all its writes would leave nothing for
// the emitter to get wrong, and this test would pass for the wrong reason.
void expect_writes(const ir::Kernel& k) {
  int writes = 0;
  ir::walk(k.body, [&](const ir::Op& op) { writes += op.has(ir::kWritesMemory) && op.kind != ir::OpKind::VarStore; });
  EXPECT_GT(writes, 0) << "the pass pipeline left no store or atomic:\n" << ir::print(k);
}

void emit_and_compile(const ir::Kernel& k) {
  expect_no_checked_flags(k);
  expect_writes(k);
  EmitResult r = emit_cuda(k);
  EXPECT_NE(r.source.find(r.entry), std::string::npos);
  if (!nvrtc_available()) return;
  expect_compiles(r);
}

TEST(DslKernels, ExpScale) {
  ir::Kernel k = trace<ExpScale>(1);
  emit_and_compile(k);
  KILN_REQUIRE_NVRTC();
}

// A kernel with mbarrier ops takes hopper.cuh after the prelude and compiles for sm_90a; one
// without takes the prelude alone.
TEST(DslKernels, MbarriersTakeTheHopperLibrary) {
  ir::Kernel k = trace<Arrivals>(1);
  EmitResult r = emit_cuda(k);
  EXPECT_TRUE(r.hopper);
  EXPECT_NE(r.source.find(cuda_hopper_library()), std::string::npos);
  for (const char* call :
       {"kiln_mbarrier_init(&", "kiln_mbarrier_arrive(&", "kiln_mbarrier_try_wait(&", "kiln_mbarrier_expect_tx(&",
        "kiln_mbarrier_arrive_expect_tx(&", "kiln_mbarrier_complete_tx(&", "kiln_fence_proxy_async();",
        "__shared__ __align__(16) barrier "}) {
    EXPECT_NE(r.source.find(call), std::string::npos) << call << " is not in\n" << r.source;
  }
  emit_and_compile(k);
  EmitResult plain = emit_cuda(trace<ExpScale>(1));
  EXPECT_FALSE(plain.hopper);
  EXPECT_EQ(plain.source.find("Hopper"), std::string::npos);
}

// ptxas' report for sm_90a (where NVRTC is found): no spills, no stack, no warning, and none of its
// notes that a wgmma was serialised or a fence or wait inserted (C75xx: lost performance).
void expect_clean_ptxas_report(const EmitResult& r) {
  if (!nvrtc_available()) return;
  std::vector<std::string> options = default_compile_options(kArch);
  options.push_back("--ptxas-options=-v");
  CompileResult c = compile(r.source, r.entry, options);
  EXPECT_NE(c.log.find("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << c.log;
  EXPECT_EQ(c.log.find("C75"), std::string::npos) << c.log;
  EXPECT_EQ(c.log.find("ptxas warning"), std::string::npos) << c.log;
}

// The warp-group product: hopper.cuh, one instruction function for its shape, one wgmma per 16 of k
// (4) with descriptors, the fence, commit and wait, the accumulators held on both sides; and a
// clean ptxas report.
TEST(DslKernels, WarpGroupProductsCompileToWgmmaWithoutSerialisation) {
  for (const bool wide : {false, true}) {
    ir::Kernel k = wide ? trace<WarpGroupProduct<256>>(1) : trace<WarpGroupProduct<64>>(1);
    const std::string shape = wide ? "m64n256k16" : "m64n64k16";
    EmitResult r = emit_cuda(k);
    EXPECT_TRUE(r.hopper);
    auto count = [&](const std::string& s) {
      size_t n = 0;
      for (size_t at = r.source.find(s); at != std::string::npos; at = r.source.find(s, at + 1)) ++n;
      return n;
    };
    EXPECT_EQ(count("KILN_DEV void kiln_wgmma_" + shape + "_bf16("), 1u) << r.source;
    EXPECT_EQ(count("wgmma.mma_async.sync.aligned." + shape + ".f32.bf16.bf16"), 1u);
    EXPECT_EQ(count("  kiln_wgmma_" + shape + "_bf16(v"), 4u) << r.source;
    EXPECT_EQ(count(", 128), kiln_wgmma_descriptor(&"), 4u) << r.source;
    for (const char* call : {"kiln_wgmma_fence();", "kiln_wgmma_commit_group();", "kiln_wgmma_wait_group<0>();"}) {
      EXPECT_EQ(count(call), 1u) << call;
    }
    EXPECT_EQ(count("kiln_wgmma_hold(v"), 2u) << "before the fence, after the wait";
    emit_and_compile(k);
    expect_clean_ptxas_report(r);
  }
  KILN_REQUIRE_NVRTC();
}

// The register-A form: a's elements packed two to a register at the fence (ptxas injects a fence
// before each product whose registers are computed after the last one: C7519), four registers a
// product; no spills and no ptxas notes.
TEST(DslKernels, RegisterFactorProductsCompileToWgmma) {
  ir::Kernel k = trace<RegisterProduct>(1);
  EmitResult r = emit_cuda(k);
  EXPECT_NE(r.source.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"), std::string::npos);
  EXPECT_NE(r.source.find("}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;"), std::string::npos) << r.source;
  EXPECT_NE(r.source.find("kiln_wgmma_m64n64k16_bf16_rs(v"), std::string::npos);
  EXPECT_NE(r.source.find("_a[15], kiln_wgmma_descriptor(&"), std::string::npos)
      << "the last step takes packed registers 12 to 15:\n"
      << r.source;
  EXPECT_NE(r.source.find("[j] = kiln_wgmma_pack("), std::string::npos) << "packed at the fence";
  emit_and_compile(k);
  expect_clean_ptxas_report(r);
}

template <class F>
void saxpy_all_widths() {
  for (int w : {1, 2, 4, 8}) {
    SCOPED_TRACE("vector width " + std::to_string(w));
    ir::Kernel k = trace<Saxpy<F>>(w);
    EmitResult r = emit_cuda(k);
    // The entry reads like saxpy_f32_v4_<16 hex digits>: the first parameter is the f32 scalar a.
    EXPECT_EQ(r.entry.rfind("saxpy_f32_v" + std::to_string(w) + "_", 0), 0u) << r.entry;
    emit_and_compile(k);
  }
}

TEST(DslKernels, SaxpyF32) { saxpy_all_widths<float>(); }
TEST(DslKernels, SaxpyF16) { saxpy_all_widths<f16>(); }
TEST(DslKernels, SaxpyBF16) { saxpy_all_widths<bf16>(); }
TEST(DslKernels, SaxpyF64) { saxpy_all_widths<double>(); }

TEST(DslKernels, BlockSum) {
  ir::Kernel k = trace<BlockSum>(1);
  EmitResult r = emit_cuda(k);
  EXPECT_NE(r.source.find("#pragma unroll 2"), std::string::npos);
  EXPECT_NE(r.source.find("__syncthreads();"), std::string::npos);
  EXPECT_NE(r.source.find("kiln_plane_reduce<kiln_op_add>"), std::string::npos);
  EXPECT_EQ(r.static_shared_bytes, 32u);
  emit_and_compile(k);
}

TEST(DslKernels, Collatz) {
  ir::Kernel k = trace<Collatz>(1, {128, 1, 1});
  EmitResult r = emit_cuda(k);
  EXPECT_NE(r.source.find("while (true) {"), std::string::npos);
  EXPECT_NE(r.source.find("printf(\"unit %u was already 1\\n\""), std::string::npos) << r.source;
  emit_and_compile(k);
}

TEST(DslKernels, Transpose) {
  ir::Kernel k = trace<Transpose>(1, {16, 16, 1}, [](std::vector<ParamDesc>& d) { d[0].rank = d[1].rank = 2; });
  EmitResult r = emit_cuda(k);
  EXPECT_NE(r.source.find("u32 arg1_stride_1"), std::string::npos) << r.source;
  emit_and_compile(k);
}

TEST(DslKernels, SoftplusBothComptimeBranches) {
  for (bool relu : {false, true}) {
    ir::Kernel k = trace<Softplus>(
        8, {128, 1, 1},
        relu ? [](std::vector<ParamDesc>& d) { d[2].comptime = comptime_bits(true); }
             : [](std::vector<ParamDesc>& d) { d[2].comptime = comptime_bits(false); });
    EmitResult r = emit_cuda(k);
    EXPECT_EQ(r.source.find("logf(") != std::string::npos, !relu);
    emit_and_compile(k);
  }
}

TEST(DslKernels, Bits) {
  ir::Kernel k = trace<Bits>(4);
  EmitResult r = emit_cuda(k);
  EXPECT_NE(r.source.find("return;"), std::string::npos);
  EXPECT_NE(r.source.find("kiln_atomic_add(&"), std::string::npos);
  emit_and_compile(k);
}

}  // namespace
}  // namespace kiln::cuda::testing
