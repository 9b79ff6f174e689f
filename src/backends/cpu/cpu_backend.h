// The CPU backend: runs kernels with the lockstep interpreter, cubes in parallel on host threads.
// It is both the embedded default device and the oracle other backends are tested against.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "backends/cpu/plan.h"

namespace kiln::cpu {

// `options` are for tests (plans with and without uniform values); the runtime takes the defaults.
std::unique_ptr<backend::Backend> make_cpu_backend(const PlanOptions& options = {});

}  // namespace kiln::cpu
