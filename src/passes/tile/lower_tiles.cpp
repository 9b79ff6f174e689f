// lower_tiles: the tile layer's ops become kiln's ordinary ops, so both backends run tile kernels
// and the CPU stays the oracle (docs/decisions/019-tile-layer.md).
//
// A register tile is spread over the cube's U units by a layout. Every tile dimension is a power
// of two, so a layout is a map of bits: each bit of a unit's position (lane bits 0-4, then plane
// bits) and each bit of a unit's slot number names one bit of one coordinate, or none (the units
// that differ only in that bit hold the same elements). A unit holds 2^(slot bits) elements, each
// an SSA value. Elementwise ops between tiles of one layout are one op per slot; a layout change
// goes through shared memory; a reduction combines a unit's own slots, then lanes by shuffles,
// then planes through shared memory; a transpose only renames dimensions.
//
// Loads and stores of cells are vector accesses of the parameter's width (chosen at record time so
// that a vector never straddles a row or the extent), masked where a cell can reach past the
// extent; a masked-off lane reads the padding value. Block ids are cube positions.
#include <algorithm>

#include "kiln/error.h"
#include "kiln/passes/passes.h"
#include "passes/tile/lower/lowerer.h"

namespace kiln::passes {

namespace {

using namespace ir;
using K = OpKind;

bool has_tile_ops(const Region& r) {
  for (const Op& op : r.ops) {
    if (op_family(op.kind) == OpFamily::Tile || op.type.is_tile()) return true;
    for (const Region& inner : op.regions) {
      if (has_tile_ops(inner)) return true;
    }
  }
  return false;
}

// The most elements of any tile, and of any product's result (0 without products).
void largest_tile(const Region& r, const Kernel& k, uint64_t& most, uint64_t& product) {
  for (const Op& op : r.ops) {
    if (op.kind == K::TileMma) product = std::max(product, op.type.tile_elements());
    for (Value v : op.results()) {
      const Type& t = k.type_of(v);
      if (t.is_tile()) most = std::max(most, t.tile_elements());
    }
    for (const Region& inner : op.regions) largest_tile(inner, k, most, product);
  }
}

}  // namespace

// Units from the largest tile (decision 019): about 8 elements per unit, between one plane (32)
// and 256 units. A kernel with products takes one plane per 64 x 64 of its largest product, from
// four planes to eight (decision 020): a plane's 64 x 64 accumulators read each factor fragment
// four times from registers, where 32 x 64 read half of them twice as often from shared memory.
uint32_t tile_units(const Kernel& k, const ir::Target&) {
  constexpr uint64_t plane = ir::Target::kPlaneWidth;
  uint64_t most = 1, product = 0;
  largest_tile(k.body, k, most, product);
  if (product > 0) return uint32_t(std::clamp<uint64_t>(plane * (product / 4096), 4 * plane, 8 * plane));
  uint64_t u = plane;
  while (u < 256 && u * 8 < most) u *= 2;
  return uint32_t(u);
}

namespace {

// The cube a tile kernel runs on: [U, 1, 1], U a power of two the lowering can spread tiles over.
uint32_t tile_cube(const Kernel& k) {
  uint32_t units = k.facts.cube_dim.x;
  if (units < ir::Target::kPlaneWidth || (units & (units - 1)) != 0 || units > ir::Target::kMaxCubeUnits ||
      k.facts.cube_dim.y != 1 || k.facts.cube_dim.z != 1) {
    throw Error("passes.lower_tiles",
                "kernel '" + k.name + "': a tile kernel runs on cubes of [U, 1, 1] units, U a power of two from " +
                    std::to_string(ir::Target::kPlaneWidth) + " to " + std::to_string(ir::Target::kMaxCubeUnits) +
                    " (tile_units gives " + std::to_string(tile_units(k, k.facts.target)) + "), not [" +
                    std::to_string(k.facts.cube_dim.x) + ", " + std::to_string(k.facts.cube_dim.y) + ", " +
                    std::to_string(k.facts.cube_dim.z) + "]");
  }
  return units;
}

}  // namespace

namespace tile_lowering {

std::unordered_map<Value, Layout> lowered_layouts(Kernel k) {
  Lowerer lower(k, tile_cube(k));
  lower.run();
  return lower.placed_layouts();
}

}  // namespace tile_lowering

bool lower_tiles(Kernel& k) {
  if (!has_tile_ops(k.body)) return false;
  tile_lowering::Lowerer(k, tile_cube(k)).run();
  return true;
}

}  // namespace kiln::passes
