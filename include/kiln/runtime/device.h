// Devices: the CPU (always there) and CUDA GPUs (when a driver is found at run time).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/backend/device_info.h"

namespace kiln {

class Client;

namespace runtime {
class DeviceState;
}

enum class DeviceKind : uint8_t { Cpu, Cuda };

class Device {
 public:
  // The CPU backend's device.
  static Device cpu();
  // CUDA device `index`; Error{device.unavailable} when there is no driver or no such GPU.
  static Device cuda(int index = 0);
  // "cpu" or "cuda:N".
  static Device parse(std::string_view text);
  // KILN_DEVICE when set, else cuda:0 when a GPU is usable, else the CPU.
  static Device default_device();
  // Every usable device: the CPU first, then each GPU.
  static std::vector<Device> all();

  DeviceKind kind() const;
  int index() const;
  std::string name() const;  // "cpu", "cuda:0"
  const DeviceInfo& info() const;

  // A new client on this device: its own stream and memory pool, sharing the device's kernel cache.
  Client client() const;

  friend bool operator==(const Device& a, const Device& b) { return a.state_ == b.state_; }

  const std::shared_ptr<runtime::DeviceState>& state() const { return state_; }
  explicit Device(std::shared_ptr<runtime::DeviceState> s) : state_(std::move(s)) {}

 private:
  std::shared_ptr<runtime::DeviceState> state_;
};

}  // namespace kiln
