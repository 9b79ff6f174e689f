// Converting a number whose type is known at run time (a ScalarValue) to a parameter's element
// type: convert_scalar is public (kiln/runtime/extension.h); the launch's comptime bits of a
// converted value are the runtime's own.
#pragma once

#include "kiln/kernel_id.h"
#include "kiln/runtime/extension.h"
#include "kiln/runtime/launch.h"

namespace kiln::runtime {

// A converted value as the id's comptime bits (as comptime_bits of the C++ value would make them).
ComptimeBits comptime_bits_of(const ScalarValue& v);

}  // namespace kiln::runtime
