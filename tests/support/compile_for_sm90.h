// compile_for_sm90a(k, cube_dim, mode): runs the pass pipeline on `k` for an sm_90a GPU (verifying
// after each pass), emits its CUDA C++ and compiles it with NVRTC; a kiln::Error on any failure.
// For the tests that check code generation without a GPU (they skip where NVRTC is missing).
#pragma once

#include "backends/cuda/emit.h"
#include "backends/cuda/nvrtc.h"
#include "kiln/passes/passes.h"

namespace kiln::test {

inline void compile_for_sm90a(ir::Kernel k, ir::Dim3 cube_dim, ir::ExecMode mode) {
  static const auto options = cuda::default_compile_options("sm_90a");
  k.facts.cube_dim = cube_dim;
  k.facts.mode = mode;
  passes::PipelineOptions pipeline;
  pipeline.target = ir::Target::cuda(90, true);
  pipeline.verify_each = true;
  passes::run_pipeline(k, pipeline);
  cuda::EmitResult e = cuda::emit_cuda(k);
  (void)cuda::compile(e.source, e.entry, options);
}

}  // namespace kiln::test
