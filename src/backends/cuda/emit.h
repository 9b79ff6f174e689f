// The CUDA C++ emitter: turns a kernel that has been through the pass pipeline (no `checked`
// flags; guarded accesses carry a mask operand) into one self-contained CUDA C++ source for NVRTC.
//
// Kernel argument ABI (docs/decisions/002-cuda-kernel-abi.md); the launcher packs one entry of
// `args` per C parameter, in this order. For each IR parameter, in order:
//   buffer<T, ro|rw>     T* name               (`const T* __restrict__` for ro), then
//                        unsigned int name_len (elements; vectors for a vector buffer)
//   tensor<T, R, ro|rw>  T* name (as a buffer), unsigned int name_len,
//                        unsigned int name_shape_0 .. name_shape_{R-1},
//                        unsigned int name_stride_0 .. name_stride_{R-1}   (in elements)
//   scalar or vector     its value: integers and floats by their width, f16/bf16 as a 16-bit struct
//                        (the IEEE bits), bool as unsigned char (0 or 1), a vector of N lanes as
//                        an N-lane struct aligned to its size
// Then, for a kernel that reports errors on the device (a checked kernel with check.trips, an
// at_least_once loop's check), two hidden C parameters bound from args[params.size()] (the
// runtime binds the client's device error word there only for such kernels):
//                        u32* kiln_error_word (its address), u32 kiln_error_site (the registered
//                        site's code, in the binding's scalar)
// Element types in memory: T is the scalar of the element (bool is one byte holding 0 or 1,
// f16/bf16 two bytes of IEEE bits), and a vector element of N lanes is N packed scalars aligned
// to N * sizeof(scalar). Names in the source may carry a '_' suffix to avoid clashes; only the
// order and types are the ABI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/kernel.h"

namespace kiln::cuda {

// One C parameter of the entry.
struct AbiArg {
  enum class Role : uint8_t { Pointer, Len, Shape, Stride, Value };
  Role role;
  uint32_t param;  // index of the IR parameter it belongs to
  uint32_t dim;    // for Shape and Stride
  uint32_t bytes;  // size of the C argument (8 for pointers, 4 for lengths)
  uint32_t align;  // its alignment in the parameter buffer
};

struct EmitResult {
  std::string source;                 // the whole CUDA C++ translation unit
  std::string entry;                  // the extern "C" entry, e.g. saxpy_f32_v4_0123456789abcdef
  uint32_t static_shared_bytes = 0;   // __shared__ arrays declared statically
  uint32_t dynamic_shared_bytes = 0;  // the extern __shared__ buffer's size: pass it at launch
                                      // (and raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
                                      // to it when it passes 48 KiB)
  uint32_t units_per_cube = 1;        // cube_dim total, the entry's __launch_bounds__
  std::vector<AbiArg> args;           // the C parameters, in order
  // NVRTC options the source relies on, after the architecture's (default_compile_options):
  // --fmad=true for a kernel that allows contraction (its float mul is a plain `*`), else none.
  std::vector<std::string> options;
  // The entry takes the device error word and its site's code (the ABI above): the kernel has a
  // check.trips.
  bool error_word = false;
  // The kernel uses a Hopper op (an mbarrier op, fence.proxy.async): the source holds hopper.cuh,
  // which compiles for sm_90a only, and the backend refuses the kernel on any other target.
  bool hopper = false;
};

// Emits CUDA C++ for `k`. Throws Error{emit.unsupported} for IR the CUDA backend cannot express
// (a tile value, a `checked` access left by a kernel that skipped checked_io).
EmitResult emit_cuda(const ir::Kernel& k);

// The entry name of a kernel: name, the first parameter's element scalar, v + vector width and a
// 64-bit hash of ir::print(k).
std::string entry_name(const ir::Kernel& k);

}  // namespace kiln::cuda
