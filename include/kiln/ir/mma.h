// Tile products, stated once: the formats a product takes (seed 04's table), the tensor-core
// instructions that run some of them, and where mma.sync leaves each unit's accumulators. The type
// rules, the tile recorder, lower_tiles and the tests read these; the device library's
// kiln_mma_sync (src/backends/cuda/device/mma.cuh) implements the same layout, and a test on a GPU
// compares what the hardware returns with mma_sync_element.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "kiln/ir/scalars.h"
#include "kiln/ir/target.h"

namespace kiln::ir {

// A product's format: factors of `ab`, accumulator (and result) of `c`.
struct MmaFormat {
  Scalar ab;
  Scalar c;
};
// f16 x f16 into f16 or f32; bf16 x bf16 and f32 x f32 into f32; f64 x f64 into f64.
inline constexpr MmaFormat kMmaFormats[] = {
    {Scalar::F16, Scalar::F16}, {Scalar::F16, Scalar::F32}, {Scalar::BF16, Scalar::F32},
    {Scalar::F32, Scalar::F32}, {Scalar::F64, Scalar::F64},
};
bool mma_format(Scalar ab, Scalar c);
// "f16 x f16 into f16 or f32, bf16 x bf16 into f32, f32 x f32 into f32 and f64 x f64 into f64",
// for messages and docs.
std::string mma_formats_text();

// Where one bit of a unit's lane, or of its slot number, puts an accumulator: bit `bit` of its row
// (dim 0) or column (dim 1).
struct FragmentBit {
  int dim;
  int bit;
};

// One tensor-core instruction: d = a x b + c on an m x n x k block, every unit of a plane
// together. `lane` and `slot` say where the C fragment's values sit: the unit whose lane has bit i
// set holds elements whose coordinates have `lane[i]` set, and its register c_j those with
// `slot[b]` set for each bit b of j.
struct MmaInstruction {
  std::string_view name;
  uint32_t m, n, k;
  std::array<Scalar, 2> factors;  // the factor formats it takes
  Scalar c;                       // its accumulators'
  int min_sm;                     // the first CUDA architecture that has it
  std::array<FragmentBit, Target::kPlaneLaneBits> lane;
  std::array<FragmentBit, 2> slot;
  uint32_t fragment_slots() const { return 1u << slot.size(); }
};

// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}: lane l holds rows l / 4 and l / 4 + 8, columns
// 2 (l % 4) and 2 (l % 4) + 1, in c0 (row, col), c1 (row, col + 1), c2 (row + 8, col),
// c3 (row + 8, col + 1).
inline constexpr MmaInstruction kMmaSyncM16N8K16 = {
    "mma.sync.m16n8k16",         16,          8,  16,
    {Scalar::BF16, Scalar::F16}, Scalar::F32, 80, {{{1, 1}, {1, 2}, {0, 0}, {0, 1}, {0, 2}}},
    {{{1, 0}, {0, 3}}}};

// The tensor-core instruction that multiplies `ab` into `c` on `target`, or null (products of
// other formats, and every product off CUDA sm_80+, run as exact loops in lower_tiles).
const MmaInstruction* tensor_core_instruction(Scalar ab, Scalar c, const Target& target);
// The instruction of `ab` into `c` whatever the target (for the IR's rules and tests), or null.
const MmaInstruction* mma_instruction(Scalar ab, Scalar c);

// How mma.sync (and kiln_mma_sync) tiles an m x n accumulator over wm x wn planes of a cube:
// plane w is plane (w / wn, w % wn) of the grid of planes, which owns an (m / wm) x (n / wn) part,
// cut into MT = m / wm / 16 by NT = n / wn / 8 blocks of the instruction; slot s of a unit is
// register s % 4 of block (mt, nt) with s / 4 = nt + NT * mt. Answers the element that slot `slot`
// of unit `unit` holds.
struct MmaElement {
  uint32_t row;
  uint32_t col;
};
MmaElement mma_sync_element(const MmaInstruction& in, uint32_t m, uint32_t n, uint32_t wm, uint32_t wn, uint32_t unit,
                            uint32_t slot);
// Slots each unit holds: MT x NT blocks of the fragment's.
uint32_t mma_sync_slots(const MmaInstruction& in, uint32_t m, uint32_t n, uint32_t wm, uint32_t wn);

// ---- Hopper's warp-group product (wgmma.mma_async, sm_90a) ----
//
// A warp group is 128 units from a multiple of 128; its product is 64 rows by n columns (8 to 256,
// a multiple of 8), f32 accumulators. Each instruction takes 32 bytes of k from each factor's rows:
// k 16 of bf16 and f16, k 8 of f32 (read as tf32: the low 13 bits of each factor's mantissa are
// dropped), k 32 of f8e4m3 and f8e5m2.
inline constexpr uint32_t kWgmmaUnits = 128;
inline constexpr uint32_t kWgmmaRows = 64;
inline constexpr uint32_t kWgmmaStepBytes = 32;
// Whether the warp-group product takes factors of `s`.
bool wgmma_factor(Scalar s);
// "bf16, f16, f32 (as tf32), f8e4m3 or f8e5m2", for messages.
std::string wgmma_factors_text();
// The accumulator `slot` (0 to n / 2 - 1) of unit `unit` (0 to 127) of a warp group holds: per warp
// (32 units), mma.sync m16n8's layout over rows 16 w to 16 w + 15, repeated along n every 8
// columns (slot / 4 is the block of columns).
MmaElement wgmma_accumulator_element(uint32_t unit, uint32_t slot);
// The element of a (row, k) that slot `slot` of unit `unit` of a warp group holds in the register-A
// form (16-bit factors): 8 slots per 16 of k, laid out as an n = 16 product's accumulators.
MmaElement wgmma_a_fragment_element(uint32_t unit, uint32_t slot);

}  // namespace kiln::ir
