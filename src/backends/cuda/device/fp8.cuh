// ---- fp8 from and to f32 by their bits (no PTX: also compiled by the host, which checks it) ----
#pragma once
#include "types.cuh"
// e4m3 -> f32, exactly: sign, exponent (bias 7), 3 fraction bits; S.1111.111 is its only NaN.
KILN_DEV f32 kiln_f32(f8e4m3 h) {
  const u32 sign = (u32)(h.bits & 0x80u) << 24, field = (h.bits >> 3) & 0xfu, frac = h.bits & 0x7u;
  if (field == 0xfu && frac == 0x7u) return __uint_as_float(sign | 0x7fc00000u);
  if (field == 0) {
    const f32 v = (f32)frac * 0.001953125f;  // frac units of 2^-9
    return sign ? -v : v;
  }
  return __uint_as_float(sign | ((field + 120u) << 23) | (frac << 20));
}
// f32 -> fp8 with mant fraction bits and exponent bias `bias`, as cvt.rn.satfinite: nearest even,
// a finite value past the largest and an infinity to the largest (max_bits), NaN to 0x7f. The
// targets before sm_89, which have no fp8 conversion, use it.
KILN_DEV u8 kiln_fp8_bits(f32 f, u32 mant, u32 bias, u32 max_bits) {
  const u32 x = __float_as_uint(f), sign = (x >> 24) & 0x80u, mag = x & 0x7fffffffu;
  if (mag > 0x7f800000u) return 0x7fu;
  const u32 emin = 1u + 127u - bias;  // the format's smallest normal exponent, biased as f32's
  const u32 field = mag >> 23;
  // The last kept bit's position within f32's 24-bit significand.
  const u32 shift = field >= emin ? 23u - mant : 23u - mant + (emin - field);
  if (shift > 25u) return (u8)sign;  // below half the smallest subnormal
  u32 sig = field ? ((mag & 0x7fffffu) | 0x800000u) : (mag & 0x7fffffu);
  u32 kept = sig >> shift, rem = sig & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  kept += (rem > half || (rem == half && (kept & 1u))) ? 1u : 0u;
  // kept counts units of the last place: rebuild the value's bits from it.
  u32 bits;
  if (field >= emin) {
    u32 e = field - emin + 1u;  // the format's exponent field
    if (kept >= (2u << mant)) kept >>= 1, ++e;
    bits = (e << mant) | (kept & ((1u << mant) - 1u));
  } else {
    bits = kept;  // a subnormal, or the smallest normal when rounding carried into it
  }
  return (u8)(sign | (bits > max_bits ? max_bits : bits));
}
