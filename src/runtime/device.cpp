// Devices: the CPU device, CUDA devices, parsing and the default device.
#include <cstdlib>
#include <mutex>

#include "backends/cpu/cpu_backend.h"
#include "kiln/error.h"
#include "kiln/runtime/client.h"
#include "runtime/client_state.h"
#include "runtime/cuda_devices.h"
#include "runtime/device_state.h"

namespace kiln {

Device Device::cpu() {
  static const std::shared_ptr<runtime::DeviceState> state =
      std::make_shared<runtime::DeviceState>(DeviceKind::Cpu, 0, cpu::make_cpu_backend());
  return Device(state);
}

Device Device::cuda(int index) { return Device(runtime::cuda_device(index)); }

Device Device::parse(std::string_view text) {
  if (text == "cpu") return cpu();
  if (text.rfind("cuda", 0) == 0) {
    std::string_view rest = text.substr(4);
    if (rest.empty()) return cuda(0);
    if (rest[0] == ':' && rest.size() > 1) {
      int index = 0;
      for (char c : rest.substr(1)) {
        if (c < '0' || c > '9') {
          index = -1;
          break;
        }
        index = index * 10 + (c - '0');
      }
      if (index >= 0) return cuda(index);
    }
  }
  throw Error("device.unknown", "no device is named '" + std::string(text) + "'; devices are 'cpu' and 'cuda:N'");
}

Device Device::default_device() {
  if (const char* v = std::getenv("KILN_DEVICE"); v && *v) return parse(v);
  if (runtime::cuda_device_count() > 0) return cuda(0);
  return cpu();
}

std::vector<Device> Device::all() {
  std::vector<Device> out{cpu()};
  int n = runtime::cuda_device_count();
  for (int i = 0; i < n; ++i) out.push_back(cuda(i));
  return out;
}

DeviceKind Device::kind() const { return state_->kind; }
int Device::index() const { return state_->index; }
std::string Device::name() const { return state_->name; }
const DeviceInfo& Device::info() const { return state_->backend->info(); }

Client Device::client() const { return Client(std::make_shared<runtime::ClientState>(state_)); }

}  // namespace kiln
