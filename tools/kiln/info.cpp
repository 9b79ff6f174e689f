// kiln info: the devices kiln can use, with their facts.
#include <cstdio>

#include "commands.h"
#include "kiln/runtime.h"
#include "kiln/runtime/cuda.h"

namespace kiln::tool {

int info(const Args& args) {
  if (!args.empty()) usage_error("info takes no arguments", "kiln info");
  std::printf("%-8s %-40s %-8s %10s %6s  %s\n", "device", "name", "arch", "memory", "units", "limits");
  for (const Device& d : Device::all()) {
    const DeviceInfo& i = d.info();
    std::printf("%-8s %-40s %-8s %7.1f GiB %6d  cube <= %u units (%u, %u, %u), shared <= %u KiB, plane %u\n",
                d.name().c_str(), i.name.substr(0, 40).c_str(), i.architecture.c_str(),
                double(i.memory_bytes) / (1024.0 * 1024 * 1024), i.multiprocessors, i.max_cube_units, i.max_cube_dim[0],
                i.max_cube_dim[1], i.max_cube_dim[2], i.max_shared_bytes / 1024, i.plane_dim);
  }
  if (std::string why = cuda_unavailable_reason(); !why.empty()) std::printf("cuda: %s\n", why.c_str());
  std::printf("default device: %s\n", Device::default_device().name().c_str());
  return 0;
}

}  // namespace kiln::tool
