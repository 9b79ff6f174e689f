// Fusion of elementwise chains (decision 023). With fusion on, an elementwise op (arithmetic,
// comparisons, where, the unary math ops, cast) does not launch: it checks its operands at once
// (every error it can raise, it raises at the call) and returns a pending tensor, whose shape and
// element type are known. Ops on pending tensors extend the chain. The chain runs as one kernel,
// its intermediate values in registers, at the first use that needs its value: a read (to_data,
// printing), a view, any other op (a reduction, matmul, a row op), eval(), or the client's sync().
// So `gelu(a * w + b)` launches one kernel, named after its steps
// (tensor_fused_mul_add_gelu), which the client's statistics count as one launch.
//
// What runs is what the eager ops would compute, bit for bit: each step rounds to the element type
// its own kernel would store. A step that is also held elsewhere (a variable the program keeps) is
// stored by the same kernel as a second output. A chain's result takes the memory of a tensor given
// by std::move when the eager op would have. A chain that nobody uses never runs.
//
// KILN_FUSION=off (or set_enabled(false)) launches every op at its call, as before; `on` is the
// default.
#pragma once

#include <optional>

namespace kiln::fusion {

// KILN_FUSION (on when unset; a word other than on or off is an Error{fusion.bad_mode}), unless
// set_enabled() has chosen. The variable is read at the first op, and again after
// set_enabled(std::nullopt).
bool enabled();
// Overrides KILN_FUSION in this process; nullopt goes back to it, reading it anew.
void set_enabled(std::optional<bool> on);

// Runs every pending chain of every client now (Client::sync runs its own client's).
void flush();

}  // namespace kiln::fusion
