// The CUDA target's data: the spellings the C-like emitter uses for CUDA C++ under NVRTC.
#include "backends/cuda/target.h"

#include "kiln/ir/target.h"

namespace kiln::cuda {

namespace {

// The CUDA C++ Programming Guide's table of compute capabilities: shared memory per SM ("Maximum
// amount of shared memory per SM") and resident blocks per SM. A capability it does not list
// answers the least of them.
ProcessorLimits cuda_processor(int sm) {
  switch (sm) {
    case 70:
    case 72: return {96 * 1024, 32};
    case 75: return {64 * 1024, 16};
    case 80: return {164 * 1024, 32};
    case 87: return {164 * 1024, 16};
    case 86: return {100 * 1024, 16};
    case 89: return {100 * 1024, 24};
    case 120:
    case 121: return {100 * 1024, 32};
    case 90:
    case 100:
    case 103:
    case 110: return {228 * 1024, 32};
    default: return {64 * 1024, 16};
  }
}

}  // namespace

const CStyleTarget& cuda_target() {
  using K = ir::OpKind;
  static const CStyleTarget t{
      .name = "cuda",
      .prelude = cuda_prelude(),
      .arch_library = cuda_hopper_library(),
      .entry_prefix = "extern \"C\" __global__ void",
      .launch_bounds = "__launch_bounds__",
      .shared = "__shared__",
      .dynamic_shared = "extern __shared__",
      .align = "__align__",
      .restrict_ptr = "__restrict__",
      .barrier = "__syncthreads();",
      .plane_barrier = "__syncwarp();",
      .unit_pos = {"threadIdx.x", "threadIdx.y", "threadIdx.z"},
      .cube_pos = {"blockIdx.x", "blockIdx.y", "blockIdx.z"},
      .cube_count = {"gridDim.x", "gridDim.y", "gridDim.z"},
      .print = "printf",
      .plane_size = ir::Target::kPlaneWidth,
      .max_static_shared = ir::Target::kCudaStaticShared,
      .processor = cuda_processor,
      .registers_per_processor = 64 * 1024,
      .shared_reserved_per_cube = 1024,
      .registers_per_unit_granted = 256,  // 255 usable, allocated in eights
      .math =
          {
              {K::Exp, "expf", "__expf", "exp"},
              {K::Exp2, "exp2f", "kiln_exp2_approx", "exp2"},
              {K::Log, "logf", "__logf", "log"},
              {K::Log2, "log2f", "__log2f", "log2"},
              {K::Sqrt, "__fsqrt_rn", "kiln_sqrt_approx", "__dsqrt_rn"},
              {K::Rsqrt, "rsqrtf", "rsqrtf", "rsqrt"},
              {K::Recip, "__frcp_rn", "kiln_rcp_approx", "__drcp_rn"},
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
