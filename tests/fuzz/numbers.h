// The fuzzer's own arithmetic on the bits of kiln's element types (docs/ir.md): a float's exact
// value, rounding to nearest even into any float format, an integer's value by its signedness.
// Written from ir.md alone, without src/backends or src/passes, so the evaluators that use it
// compute in another way than the CPU backend does.
#pragma once

#include <cstdint>

#include "kiln/ir/scalars.h"

namespace kiln::fuzz {

int bits_of(ir::Scalar s);       // 1 for bool
uint64_t mask_of(ir::Scalar s);  // the low bits_of(s) bits
// An integer's value: sign-extended where its type is signed.
int64_t signed_value(ir::Scalar s, uint64_t v);
// A float's value, exactly (f16 and bf16 by their bits).
long double float_value(ir::Scalar s, uint64_t v);
// x rounded to nearest even in `s`'s format, encoded (a NaN becomes the quiet NaN).
uint64_t round_to(ir::Scalar s, long double x);
// The spacing of `s`'s values at x (its ulp; the subnormal quantum near 0).
long double ulp_of(ir::Scalar s, long double x);
// Significand bits with the hidden one: 11 (f16), 8 (bf16), 24 (f32), 53 (f64).
int precision_of(ir::Scalar s);
// The unit roundoff (the relative error of one rounding to nearest), the largest finite value and
// the smallest normal one of a float type.
long double roundoff(ir::Scalar s);
long double largest_finite(ir::Scalar s);
long double smallest_normal(ir::Scalar s);
// The tolerance table's relative bound for a value a transcendental op fed (docs/fuzz.md): 1e-12
// (f64), 1e-5 (f32), 4e-3 (f16), 3e-2 (bf16), of max(|x|, 1). Every family's bounds start from it.
long double approximate_tolerance(ir::Scalar s);

}  // namespace kiln::fuzz
