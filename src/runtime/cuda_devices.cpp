// CUDA devices. The CUDA driver backend is not linked into this build yet; every CUDA device is
// reported unavailable with the reason.
#include "runtime/cuda_devices.h"

#include "kiln/error.h"

namespace kiln::runtime {

int cuda_device_count() { return 0; }

std::string cuda_unavailable_reason() { return "unavailable: this build of kiln has no CUDA driver backend yet"; }

std::shared_ptr<DeviceState> cuda_device(int index) {
  throw Error("device.unavailable", "cuda:" + std::to_string(index) +
                                        " is unavailable: this build of kiln has no CUDA driver backend yet");
}

}  // namespace kiln::runtime
