// CUDA devices: counted through the driver loaded at run time; one DeviceState per GPU, made on
// first use and kept for the process.
#include "runtime/cuda_devices.h"

#include <map>
#include <mutex>

#include "backends/cuda/cuda_backend.h"
#include "kiln/error.h"

namespace kiln::runtime {

int cuda_device_count() { return cuda::device_count(); }

std::string cuda_unavailable_reason() {
  std::string why;
  return cuda::device_count(&why) > 0 ? std::string() : why;
}

std::shared_ptr<DeviceState> cuda_device(int index) {
  // The driver is initialised before the registry is made, so that the registry, made later, is
  // destroyed earlier at exit: each GPU's backend is torn down (modules, pinned buffers, the
  // KILN_PROFILE report) while the driver still works, whichever exit handler the driver
  // registers in cuInit. The registry holds one owner of each device state; clients hold the
  // others, so a client a program keeps in a static outlives this map safely (decision 010).
  (void)cuda::device_count();
  static std::mutex m;
  static std::map<int, std::shared_ptr<DeviceState>> devices;
  std::lock_guard lock(m);
  auto it = devices.find(index);
  if (it != devices.end()) return it->second;
  auto state = std::make_shared<DeviceState>(DeviceKind::Cuda, index, cuda::make_cuda_backend(index));
  devices.emplace(index, state);
  return state;
}

}  // namespace kiln::runtime
