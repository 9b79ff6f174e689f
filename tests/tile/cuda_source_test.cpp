// The tile programs of this folder, lowered and emitted as CUDA C++ and compiled with NVRTC for
// sm_90a: how CI checks the tile layer's CUDA code generation without a GPU. Skips, saying so,
// when NVRTC is missing.
#include <gtest/gtest.h>

#include "backends/cuda/emit.h"
#include "backends/cuda/nvrtc.h"
#include "kiln/error.h"
#include "kiln/passes/passes.h"
#include "programs.h"

namespace kiln::tile {
namespace {

TEST(TileCudaSource, EveryTileProgramCompilesWithNvrtc) {
  if (!cuda::nvrtc_available()) GTEST_SKIP() << "skipped: NVRTC was not found, so tile programs' CUDA sources were not compiled";
  auto options = cuda::default_compile_options("sm_90a");
  size_t compiled = 0;
  for (const auto& [name, make] : testing::programs()) {
    Traced t = make();
    ir::Kernel k = t.program->kernel();
    k.facts.cube_dim = ir::Dim3{t.program->units(), 1, 1};
    k.facts.mode = ir::ExecMode::Unchecked;
    passes::PipelineOptions pipeline;
    pipeline.target = ir::Target::cuda(90, true);
    pipeline.verify_each = true;
    try {
      passes::run_pipeline(k, pipeline);
      cuda::EmitResult e = cuda::emit_cuda(k);
      (void)cuda::compile(e.source, e.entry, options);
      ++compiled;
    } catch (const Error& err) {
      ADD_FAILURE() << name << ": " << err.what();
    }
  }
  std::printf("[ cuda     ] %zu tile programs compiled with NVRTC for sm_90a\n", compiled);
}

}  // namespace
}  // namespace kiln::tile
