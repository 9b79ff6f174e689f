// The runtime's side of held-back work (kiln/runtime/extension.h): Client::sync runs every
// registered runner for its client first. The runtime knows nothing of what the work is.
#pragma once

#include <cstdint>

#include "kiln/runtime/extension.h"

namespace kiln::runtime {

// Runs the held-back work of a client: every registered runner, newest first. The first error is
// rethrown once all have run.
void run_deferred(uint64_t client_id);

}  // namespace kiln::runtime
