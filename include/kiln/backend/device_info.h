// What a device can do, as its backend reports it: the runtime checks launches against it and
// programs read it through Device::info(). It lives with the backend interface because backends
// fill it, and in namespace kiln because it is a program's type (kiln::DeviceInfo).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "kiln/ir/target.h"

namespace kiln {

struct DeviceInfo {
  std::string name;          // "AMD EPYC ...", "NVIDIA H200"
  std::string architecture;  // "x86_64", "sm_90a"
  uint64_t memory_bytes = 0;
  int multiprocessors = 0;  // SMs, or host threads for the CPU
  // The defaults are kiln's own limits (ir::Target); a backend reports its device's where they differ.
  uint32_t max_cube_units = ir::Target::kMaxCubeUnits;
  std::array<uint32_t, 3> max_cube_dim = ir::Target::kMaxCubeDim;
  std::array<uint32_t, 3> max_cube_count{0x7fffffffu, 65535, 65535};  // CUDA's grid limits
  uint32_t max_shared_bytes = ir::Target::kCudaStaticShared;          // per cube, as a kernel may use it
  uint32_t plane_dim = ir::Target::kPlaneWidth;
  // What its kernels are compiled for (the pass pipeline's target): the tile layer chooses a
  // kernel's units for it.
  ir::Target target;
};

}  // namespace kiln
