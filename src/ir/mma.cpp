// Tile products' formats and tensor-core layouts (mma.h).
#include "kiln/ir/mma.h"

namespace kiln::ir {

bool mma_format(Scalar ab, Scalar c) {
  for (const MmaFormat& f : kMmaFormats) {
    if (f.ab == ab && f.c == c) return true;
  }
  return false;
}

std::string mma_formats_text() {
  // One clause per factor format, its accumulators joined by "or", in the table's order.
  std::string s;
  const size_t n = std::size(kMmaFormats);
  for (size_t i = 0; i < n; ++i) {
    const MmaFormat& f = kMmaFormats[i];
    if (i > 0 && kMmaFormats[i - 1].ab == f.ab) {
      s += " or " + std::string(scalar_name(f.c));
      continue;
    }
    bool last = true;
    for (size_t j = i + 1; j < n; ++j) last = last && kMmaFormats[j].ab == f.ab;
    if (i > 0) s += last ? " and " : ", ";
    std::string ab(scalar_name(f.ab));
    s += ab + " x " + ab + " into " + std::string(scalar_name(f.c));
  }
  return s;
}

const MmaInstruction* mma_instruction(Scalar ab, Scalar c) {
  const MmaInstruction& in = kMmaSyncM16N8K16;
  if (c != in.c) return nullptr;
  for (Scalar f : in.factors) {
    if (f == ab) return &in;
  }
  return nullptr;
}

const MmaInstruction* tensor_core_instruction(Scalar ab, Scalar c, const Target& target) {
  const MmaInstruction* in = mma_instruction(ab, c);
  return in && target.cuda_at_least(in->min_sm) ? in : nullptr;
}

uint32_t mma_sync_slots(const MmaInstruction& in, uint32_t m, uint32_t n, uint32_t wm, uint32_t wn) {
  return (m / wm / in.m) * (n / wn / in.n) * in.fragment_slots();
}

MmaElement mma_sync_element(const MmaInstruction& in, uint32_t m, uint32_t n, uint32_t wm, uint32_t wn, uint32_t unit,
                            uint32_t slot) {
  const uint32_t lane = unit % Target::kPlaneWidth, plane = unit / Target::kPlaneWidth;
  const uint32_t pm = plane / wn, pn = plane % wn;
  const uint32_t nt_count = n / wn / in.n;
  const uint32_t c = slot % in.fragment_slots(), block = slot / in.fragment_slots();
  const uint32_t nt = block % nt_count, mt = block / nt_count;
  uint32_t coord[2] = {pm * (m / wm) + mt * in.m, pn * (n / wn) + nt * in.n};
  for (size_t b = 0; b < in.lane.size(); ++b) {
    if ((lane >> b) & 1u) coord[in.lane[b].dim] |= 1u << in.lane[b].bit;
  }
  for (size_t b = 0; b < in.slot.size(); ++b) {
    if ((c >> b) & 1u) coord[in.slot[b].dim] |= 1u << in.slot[b].bit;
  }
  return {coord[0], coord[1]};
}

bool wgmma_factor(Scalar s) {
  return s == Scalar::BF16 || s == Scalar::F16 || s == Scalar::F32 || s == Scalar::F8E4M3 || s == Scalar::F8E5M2;
}

std::string wgmma_factors_text() { return "bf16, f16, f32 (as tf32), f8e4m3 or f8e5m2"; }

MmaElement wgmma_accumulator_element(uint32_t unit, uint32_t slot) {
  const uint32_t warp = unit / 32, lane = unit % 32;
  return {16 * warp + lane / 4 + 8 * ((slot >> 1) & 1), 8 * (slot >> 2) + 2 * (lane % 4) + (slot & 1)};
}

MmaElement wgmma_a_fragment_element(uint32_t unit, uint32_t slot) {
  const MmaElement e = wgmma_accumulator_element(unit, slot % 8);
  return {e.row, 16 * (slot / 8) + e.col};
}

}  // namespace kiln::ir
