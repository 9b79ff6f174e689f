// The tensor library's kernels emitted as CUDA C++ and compiled with NVRTC for sm_90a, in checked
// mode as the ops launch them: how CI checks their CUDA code generation without a GPU (skips,
// saying so, when NVRTC is missing).
#include <gtest/gtest.h>

#include "kiln/autotune.h"
#include "kiln/tensor/fusion.h"
#include "support.h"
#include "support/compile_for_sm90.h"
#include "tensor/kernels.h"
#include "tensor/matmul_plan.h"

namespace kiln::test {
namespace {

// Records a kernel of every op for every element type it takes (on the CPU, which needs no
// compiler), at ranks 1 to 3.
void record_every_op() {
  Client c = Device::cpu().client();
  // Autotuned ops record a kernel when it runs: forced tuning runs every candidate of each key,
  // whatever an earlier run stored.
  autotune::set_mode(autotune::Mode::force);
  // Each op's own kernel: with fusion on, an op whose result is dropped would record nothing.
  fusion::set_enabled(false);
  struct Unforce {
    ~Unforce() {
      autotune::set_mode(std::nullopt);
      fusion::set_enabled(std::nullopt);
    }
  } unforce;
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8, DType::Bool}) {
    HostTensor h = random_host(t, {3, 4, 5}, 1, 0, 3);
    Tensor x = upload(c, t, h);
    Tensor views[] = {x.reshape({60}), x.slice(2, 0, 4).reshape({12, 4}), x.permute({2, 0, 1})};
    for (const Tensor& v : views) {
      (void)into_contiguous(v);
      (void)eq(v, v);
      (void)where(eq(v, v), v, v);
      if (t != DType::Bool) (void)where(eq(v, v), v, 1);
      for (DType to : {DType::F32, DType::BF16, DType::I64, DType::Bool}) (void)cast(v, to);
      if (t == DType::Bool) continue;
      (void)(v + v), (void)(v - v), (void)(v * v), (void)(v / 2), (void)(v % 2), (void)max(v, v), (void)min(v, 1);
      (void)lt(v, v), (void)le(v, 1), (void)gt(v, v), (void)ge(v, v), (void)ne(v, 1);
      (void)abs(v), (void)relu(v);
      if (t != DType::U8) (void)neg(v);
      if (ir::is_float(t))
        (void)exp(v), (void)log(v), (void)sqrt(v), (void)tanh(v), (void)erf(v), (void)sigmoid(v), (void)gelu(v),
            (void)pow(v, v);
    }
    if (t != DType::Bool) {
      for (const Tensor& v : views) {
        (void)sum(v, {0}), (void)prod(v, {}, true), (void)amax(v, {-1}),
            (void)amin(v, v.rank() > 1 ? std::vector<int64_t>{0, v.rank() - 1} : std::vector<int64_t>{0}),
            (void)argmax(v, 0), (void)argmin(v, -1);
        if (ir::is_float(t)) (void)mean(v, {-1}), (void)softmax(v, -1), (void)log_softmax(v, 0), (void)layer_norm(v);
      }
      // Long reductions split over cubes: parts, then their combination.
      Tensor big = upload(c, t, random_host(t, {2, 20000}, 4));
      (void)sum(big, {1}), (void)prod(big, {}), (void)amax(big, {1}), (void)amin(big, {});
      Tensor tall = upload(c, t, random_host(t, {20000, 2}, 5));
      (void)sum(tall, {0}), (void)amax(tall, {0});  // strided elements
      (void)argmax(big, 1), (void)argmin(tall, 0),
          (void)argmax(big.narrow(1, 0, 5000), 1);  // parts, and one cube a row
      if (ir::is_float(t)) (void)mean(big, {1}), (void)mean(big.slice(1, 0, 3000), {1});
      if (ir::is_float(t)) {
        Tensor w = upload(c, t, random_host(t, {4}, 3));
        (void)layer_norm(views[1], w, w);
        (void)layer_norm(views[2], w, w);  // strided rows, read by tiles
      }
    }
    if (ir::is_float(t)) (void)uniform(c, {5}, t, 0, 1, 1), (void)normal(c, {5}, t, 0, 1, 1);
    for (DType it : {DType::I32, DType::I64}) {
      Tensor idx = upload(c, it, HostTensor{{2}, {1, 0}});
      (void)select(x, 1, idx), (void)gather(x, 0, upload(c, it, HostTensor{{1, 1, 1}, {2}}));
      if (t != DType::Bool)
        (void)select_assign(x, 2, idx, x.narrow(2, 0, 2)),
            (void)scatter(x, 0, upload(c, it, HostTensor{{1, 1, 1}, {2}}),
                          x.narrow(0, 0, 1).narrow(1, 0, 1).narrow(2, 0, 1));
    }
    Tensor m = upload(c, t == DType::Bool ? DType::F32 : t, random_host(DType::F32, {2, 3, 4}, 2));
    (void)matmul(m, m.transpose());
    (void)matmul(m.slice(0, 0, 1).reshape({3, 4}), m.transpose());
  }
  // Fused chains: contiguous (vectors) and strided walks, a kept intermediate stored as a second
  // output, a bool step, numbers, an integer chain.
  fusion::set_enabled(true);
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    Tensor a = upload(c, t, random_host(t, {8, 6}, 11)), w = upload(c, t, random_host(t, {8}, 12));
    for (const Tensor& v : {a, a.transpose(), a.slice(1, 1, 5)}) {
      gelu(v * w.narrow(0, 0, v.shape()[1]) + 1.5).eval();
      Tensor kept = exp(v) - 1;
      where(gt(v, 0), kept, kept * 0.5).eval();
      kept.eval();
    }
  }
  for (DType t : {DType::I32, DType::I64, DType::U8}) {
    Tensor a = upload(c, t, random_host(t, {8, 6}, 13, 0, 9));
    max(a * 3 + a, 4).eval();
  }
  fusion::set_enabled(false);
  // matmul's tile products: each float type, factors stored as rows and as columns.
  for (DType t : {DType::BF16, DType::F16, DType::F32, DType::F64}) {
    Tensor a = upload(c, t, random_host(t, {256, 32}, 8)), b = upload(c, t, random_host(t, {32, 256}, 9));
    for (const auto& [x, y] : {std::pair{a, b}, std::pair{b.transpose(), a.transpose()}}) {
      for (const std::string& v : matmul_variants(x, y)) (void)matmul(x, y, v);
    }
    // A stacked batch in one launch, factors as rows and as columns.
    Tensor s = upload(c, t, random_host(t, {2, 64, 64}, 10));
    for (const auto& [x, y] : {std::pair{s, s}, std::pair{s.transpose(), s.transpose()}}) {
      for (const std::string& v : matmul_variants(x, y)) (void)matmul(x, y, v);
    }
  }
}

TEST(TensorCudaSource, EveryKernelCompilesWithNvrtc) {
  if (!cuda::nvrtc_available())
    GTEST_SKIP() << "skipped: NVRTC was not found, so the tensor kernels' CUDA sources were not compiled";
  record_every_op();
  size_t compiled = 0;
  for (const KernelRef& ref : tensor::recorded_kernels()) {
    try {
      compile_for_sm90a(ref.program()->kernel(), ir::Dim3{256, 1, 1}, ir::ExecMode::Checked);
      ++compiled;
    } catch (const Error& err) {
      ADD_FAILURE() << ref.program()->kernel().name << ": " << err.what();
    }
  }
  EXPECT_GT(compiled, 450u);
  size_t tiles = 0;
  for (const auto& t : tensor::recorded_tile_matmuls()) {
    try {
      compile_for_sm90a(t->program->kernel(), ir::Dim3{t->program->units_for(ir::Target::cuda(90, true)), 1, 1},
                        ir::ExecMode::Unchecked);
      ++tiles;
    } catch (const Error& err) {
      ADD_FAILURE() << t->program->name() << ": " << err.what();
    }
  }
  // 2 layouts x (4 block shapes of f16 and bf16, 3 of f32 and f64), and batched: 2 layouts x (1
  // block shape of f16 and bf16 at 64 rows, 2 of f32 and f64).
  EXPECT_EQ(tiles, 28u + 12u);
  std::printf("[ cuda     ] %zu tensor kernels and %zu tile products compiled with NVRTC for sm_90a\n", compiled,
              tiles);
}

}  // namespace
}  // namespace kiln::test
