// CUDA devices as the runtime sees them: how many there are and each one's state. Loading the
// driver happens here, at run time, on the first question.
#pragma once

#include <memory>
#include <string>

#include "runtime/device_state.h"

namespace kiln::runtime {

// 0 when no driver or no GPU is found (never throws).
int cuda_device_count();
// Why there is no CUDA device ("no CUDA driver: looked for libcuda.so.1 ..."); empty when there is one.
std::string cuda_unavailable_reason();
// Error{device.unavailable} saying what was looked for when the driver or the GPU is missing.
std::shared_ptr<DeviceState> cuda_device(int index);

}  // namespace kiln::runtime
