// The CPU backend: runs kernels with the lockstep interpreter, cubes in parallel on host threads.
// It is both the embedded default device and the oracle other backends are tested against.
#pragma once

#include <memory>

#include "backend/backend.h"

namespace kiln::cpu {

std::unique_ptr<backend::Backend> make_cpu_backend();

}  // namespace kiln::cpu
