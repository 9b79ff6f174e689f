// The CUDA target's data: the spellings the C-like emitter uses for CUDA C++ under NVRTC.
#include "backends/cuda/target.h"

namespace kiln::cuda {

const CStyleTarget& cuda_target() {
  using K = ir::OpKind;
  static const CStyleTarget t{
      .name = "cuda",
      .prelude = cuda_prelude(),
      .entry_prefix = "extern \"C\" __global__ void",
      .launch_bounds = "__launch_bounds__",
      .shared = "__shared__",
      .dynamic_shared = "extern __shared__",
      .align16 = "__align__(16)",
      .restrict_ptr = "__restrict__",
      .barrier = "__syncthreads();",
      .plane_barrier = "__syncwarp();",
      .unit_pos = {"threadIdx.x", "threadIdx.y", "threadIdx.z"},
      .cube_pos = {"blockIdx.x", "blockIdx.y", "blockIdx.z"},
      .cube_count = {"gridDim.x", "gridDim.y", "gridDim.z"},
      .print = "printf",
      .plane_size = 32,
      .max_static_shared = 48 * 1024,
      .math = {
          {K::Exp, "expf", "__expf", "exp"},
          {K::Exp2, "exp2f", "exp2f", "exp2"},
          {K::Log, "logf", "__logf", "log"},
          {K::Log2, "log2f", "__log2f", "log2"},
          {K::Sqrt, "__fsqrt_rn", "sqrtf", "__dsqrt_rn"},
          {K::Rsqrt, "rsqrtf", "rsqrtf", "rsqrt"},
          {K::Recip, "__frcp_rn", "__frcp_rn", "__drcp_rn"},
          {K::Sin, "sinf", "__sinf", "sin"},
          {K::Cos, "cosf", "__cosf", "cos"},
          {K::Tan, "tanf", "__tanf", "tan"},
          {K::Tanh, "tanhf", "kiln_tanh_approx", "tanh"},
          {K::Erf, "erff", "erff", "erf"},
          {K::Pow, "powf", "__powf", "pow"},
          {K::CopySign, "copysignf", "copysignf", "copysign"},
          {K::Floor, "floorf", "floorf", "floor"},
          {K::Ceil, "ceilf", "ceilf", "ceil"},
          {K::Round, "roundf", "roundf", "round"},  // ties away from zero, as the IR's round
          {K::Trunc, "truncf", "truncf", "trunc"},
          {K::IsNan, "kiln_isnan", "kiln_isnan", "kiln_isnan"},
          {K::IsInf, "kiln_isinf", "kiln_isinf", "kiln_isinf"},
      },
  };
  return t;
}

}  // namespace kiln::cuda
