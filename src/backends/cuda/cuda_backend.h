// The CUDA backend: NVRTC-compiled cubins (through the on-disk cache), loaded and launched with the
// driver API on the client's stream. Launches are asynchronous; reads wait for the stream.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"

namespace kiln::cuda {

// Usable GPUs; 0 when there is no driver (then `why` says what was looked for).
int device_count(std::string* why = nullptr);
// The backend of GPU `index`; Error{device.unavailable} when it cannot be opened.
std::unique_ptr<backend::Backend> make_cuda_backend(int index);

}  // namespace kiln::cuda
