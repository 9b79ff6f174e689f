// What a device can do, as its backend reports it: the runtime checks launches against it and
// programs read it through Device::info(). It lives with the backend interface because backends
// fill it, and in namespace kiln because it is a program's type (kiln::DeviceInfo).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace kiln {

struct DeviceInfo {
  std::string name;          // "AMD EPYC ...", "NVIDIA H200"
  std::string architecture;  // "x86_64", "sm_90a"
  uint64_t memory_bytes = 0;
  int multiprocessors = 0;   // SMs, or host threads for the CPU
  uint32_t max_cube_units = 1024;
  std::array<uint32_t, 3> max_cube_dim{1024, 1024, 64};
  std::array<uint32_t, 3> max_cube_count{0x7fffffffu, 65535, 65535};
  uint32_t max_shared_bytes = 48 * 1024;  // per cube, as a kernel may use it
  uint32_t plane_dim = 32;
};

}  // namespace kiln
