// Work that a layer above the runtime holds back to launch later (the tensor library's pending
// elementwise chains, kiln/tensor/fusion.h). Client::sync runs it first, so that after sync every
// op issued on the client has run. The runtime knows nothing of what the work is.
#pragma once

#include <cstdint>

namespace kiln::runtime {

// Runs the work held back for the client with this id.
using DeferredRunner = void (*)(uint64_t client_id);

// Installs the runner (one: the tensor library's); set once, before any work is held back.
void set_deferred_runner(DeferredRunner runner);
// Runs the held-back work of a client (nothing when no runner is installed).
void run_deferred(uint64_t client_id);

}  // namespace kiln::runtime
