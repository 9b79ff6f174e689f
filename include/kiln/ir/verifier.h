// The verifier: checks a kernel's structure and types. Messages name the kernel, the op's
// pre-order number and name, and the rule broken.
#pragma once

#include <string>

#include "kiln/ir/kernel.h"

namespace kiln::ir {

// Throws Error{"ir.verify"} at the first broken rule. `stage` names who produced the kernel
// ("traced", "after fold", ...) and is put in the message.
void verify(const Kernel& k, std::string_view stage = "");

}  // namespace kiln::ir
