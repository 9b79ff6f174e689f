// What a layer built over the runtime may use beyond a program's API (the tensor library is one):
// work it holds back, which Client::sync runs first, and the conversion of a run-time number to
// an element type by the rule every launch applies. The runtime's own machinery stays private.
#pragma once

#include <cstdint>

#include "kiln/runtime/launch.h"

namespace kiln::runtime {

// Runs the work a layer holds back for the client with this id (the tensor library's pending
// elementwise chains). It may launch on that client, and may throw: sync still waits for the
// stream, then rethrows the first error.
using DeferredRunner = void (*)(uint64_t client_id);

// Adds `runner` to those Client::sync runs before it waits, so that after sync every op a layer
// has issued has run. Registering a runner again does nothing; runners are never removed (a
// layer registers one for the process's life). Safe from any thread.
void register_deferred_runner(DeferredRunner runner);

// `v` as a `to`, by the rule launch<K> applies to numbers: false when the value does not survive
// (300 into u8, 2.5 or a bool into an integer, a float into bool). Floats narrow with rounding;
// f16 and bf16 round once from the value given.
bool convert_scalar(const ScalarValue& v, ir::Scalar to, ScalarValue& out);

}  // namespace kiln::runtime
