// The C-like emitter's per-target differences, kept as data (as tinygrad's cstyle renderer does):
// the spelling of the entry, builtins, barriers, shared memory and math functions. The emitter
// (emit.cpp, emit_ops.cpp) reads only this table; a second C-like target (HIP, Metal, OpenCL)
// would be a second table and a second prelude, not a second emitter.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "kiln/ir/op_kinds.h"

namespace kiln::cuda {

// One float math op's function names: for f32, f32 where approximations are allowed (the op's
// {fast_math}, or the kernel's fast_math = [approx]), and f64. f16 and bf16 use the f32 names on
// values widened to f32 and round the result back.
struct MathName {
  ir::OpKind kind;
  std::string_view f32;
  std::string_view f32_fast;
  std::string_view f64;
};

struct ProcessorLimits {
  uint32_t shared_bytes;  // shared memory per processor
  uint32_t max_cubes;     // resident cubes per processor
};

struct CStyleTarget {
  std::string_view name;
  std::string_view prelude;
  // The prelude's part for the target architecture's own ops (on CUDA, Hopper's: mbarriers), added
  // only to a kernel that uses one, since it compiles for that architecture alone.
  std::string_view arch_library;
  std::string_view entry_prefix;               // before the return type of the entry
  std::string_view launch_bounds;              // "__launch_bounds__(" ... ")" around the units per cube
  std::string_view shared;                     // qualifier of a static shared array
  std::string_view dynamic_shared;             // declaration prefix of the one dynamic shared buffer
  std::string_view align;                      // alignment attribute for shared arrays, before "(bytes)"
  std::string_view restrict_ptr;               // pointer qualifier for non-aliasing read-only buffers
  std::string_view barrier;                    // sync.cube
  std::string_view plane_barrier;              // sync.plane
  std::array<std::string_view, 3> unit_pos;    // per axis
  std::array<std::string_view, 3> cube_pos;    // per axis
  std::array<std::string_view, 3> cube_count;  // per axis
  std::string_view print;                      // printf-like function of debug.print
  uint32_t plane_size;                         // units per plane
  uint32_t max_static_shared;                  // above this many bytes, shared arrays use the dynamic buffer
  // One processor (SM) of compute capability `sm`, and what the target reserves per cube: the
  // entry's occupancy hint (emit.cpp, min_cubes_hint) reads them.
  ProcessorLimits (*processor)(int sm);
  uint32_t registers_per_processor;
  uint32_t shared_reserved_per_cube;
  uint32_t registers_per_unit_granted;  // the most a unit can hold, as the hardware allocates them
  std::vector<MathName> math;           // one row per op of the math family
};

const CStyleTarget& cuda_target();
// The types and helpers every generated kernel starts with: the device library
// (src/backends/cuda/device/*.cuh), embedded at build time by cmake/embed_cuda_device.cmake.
std::string_view cuda_prelude();
// The prelude's Hopper part (device/hopper.cuh): appended for a kernel that uses a Hopper op
// (mbarriers), which the backend compiles for sm_90a alone.
std::string_view cuda_hopper_library();

}  // namespace kiln::cuda
