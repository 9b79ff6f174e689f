// What a launch hands the cache and the backend: its KernelId and its arguments bound by kernel
// parameter. bind_launch checks every argument against the kernel's signature and is the only
// way the runtime makes either (the id itself through assemble_kernel_id).
#pragma once

#include <array>
#include <new>
#include <span>

#include "kiln/backend/binding.h"
#include "kiln/kernel_id.h"
#include "kiln/runtime/launch.h"

namespace kiln::runtime {

class ClientState;

// Room for a launch's bindings, by kernel parameter, made one by one as bind_launch binds them. Not
// an array of ArgBinding, whose default member initialisers would clear all sixteen on every
// launch: the cached launch is a benchmark figure, and GCC clears anything over 32 bytes with a
// `rep stos` whose start-up alone costs as much as binding an argument. An ArgBinding is an
// implicit-lifetime aggregate, so the byte storage holds it once bind_launch writes its fields.
class Bindings {
 public:
  // Binding p with every field set to its default, written field by field.
  backend::ArgBinding& make(size_t p) {
    backend::ArgBinding& b = data()[p];
    b.kind = backend::ArgBinding::Kind::Scalar;
    b.address = 0;
    b.bytes = 0;
    b.len = 0;
    b.rank = 0;
    b.shape = {};
    b.stride = {};
    b.scalar = {};
    return b;
  }
  backend::ArgBinding* data() { return std::launder(reinterpret_cast<backend::ArgBinding*>(storage_)); }

 private:
  // One more than the parameters: the client's device error word, for the kernels that take it
  // (backend::Executable::takes_error_word).
  alignas(backend::ArgBinding) unsigned char storage_[sizeof(backend::ArgBinding) * (kMaxParams + 1)];
};

// Checks `args` against `kernel`'s parameters and `config` against the device, in the order a
// person reads them: the vector size, the count, each argument (kind, handle, element type, size,
// value), the handles' owner, the cube sizes; throws the first problem as a kiln::Error. Binds
// each argument into `bound` at its kernel parameter's index (the first signature().ir_count
// slots) and returns the launch's id.
KernelId bind_launch(const ClientState& st, const KernelRef& kernel, const LaunchConfig& config,
                     std::span<const Arg> args, Bindings& bound);

}  // namespace kiln::runtime
