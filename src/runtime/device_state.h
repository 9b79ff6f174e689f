// What a Device is behind its handle: the backend and the device's kernel cache.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"
#include "kiln/runtime/device.h"
#include "runtime/kernel_cache.h"

namespace kiln::runtime {

class DeviceState {
 public:
  DeviceState(DeviceKind kind, int index, std::unique_ptr<backend::Backend> backend)
      : kind(kind), index(index), backend(std::move(backend)) {
    name = kind == DeviceKind::Cpu ? "cpu" : "cuda:" + std::to_string(index);
  }

  DeviceKind kind;
  int index;
  std::string name;
  std::unique_ptr<backend::Backend> backend;
  KernelCache cache;
};

}  // namespace kiln::runtime
