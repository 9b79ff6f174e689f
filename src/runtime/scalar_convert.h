// Converting a number whose type is known at run time (a ScalarValue) to a parameter's element
// type, refusing any conversion that changes the value: the rule launch<K> has always applied to
// C++ numbers, now in one place for every launch.
#pragma once

#include "kiln/kernel_id.h"
#include "kiln/runtime/launch.h"

namespace kiln::runtime {

// `v` as a `to`; false when the value does not survive (300 into u8, 2.5 or a bool into an integer,
// a float into bool). Floats narrow with rounding; f16 and bf16 round once from the value given.
bool convert_scalar(const ScalarValue& v, ir::Scalar to, ScalarValue& out);

// A converted value as the id's comptime bits (as comptime_bits of the C++ value would make them).
ComptimeBits comptime_bits_of(const ScalarValue& v);

}  // namespace kiln::runtime
