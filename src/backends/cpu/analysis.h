// Facts about a kernel the CPU plan is built from: which values are uniform (uniform.cpp) and
// which ops can stop a launch midway (failures.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/ir/kernel.h"

namespace kiln::cpu {

// By ir::Value: 1 when the value is uniform, the same for every unit of a cube that uses it.
// The rules, and why they are sound, are in uniform.cpp.
std::vector<uint8_t> uniform_values(const ir::Kernel& k);

// By parameter index: 1 when some op of the kernel writes the parameter (a store or an atomic).
std::vector<uint8_t> written_params(const ir::Kernel& k);

// Decision 005: the ops that can stop a launch with an error after it may have written, and the
// parameters a launch must copy first so that it can put them back.
struct FailureFacts {
  std::vector<uint32_t> failing_ops;     // op numbers (pre-order, from 1), in order
  std::vector<uint32_t> restore_params;  // empty when failing_ops is
};
FailureFacts failure_facts(const ir::Kernel& k, const std::vector<uint8_t>& uniform);

}  // namespace kiln::cpu
