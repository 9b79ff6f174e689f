// Where a tile product runs on a cube's planes: shared by place_products, which chooses and writes
// it on each tile.mma (planes = [pm, pn]), and lower_tiles, which lowers what was chosen.
#pragma once

#include <cstdint>

#include "kiln/ir/kernel.h"
#include "kiln/ir/mma.h"

namespace kiln::passes::tile {

// A product on tensor cores' layout: pm x pn planes of the cube, plane (i, j) owning rows
// [i m / pm, (i + 1) m / pm) and columns [j n / pn, (j + 1) n / pn) of the result, in the fragments
// of `instruction`. Without an instruction the product runs in the blocked layout.
struct ProductPlan {
  const ir::MmaInstruction* instruction = nullptr;
  int wm = 1, wn = 1;
  bool fragments() const { return instruction != nullptr; }
};

// The square split (decision 020): planes doubled along m while each plane's part is at least as
// tall as it is wide, else along n; no plan where the formats have no instruction, the shape does
// not divide into its blocks, or some plane would be idle.
ProductPlan square_plan(ir::Scalar ab, ir::Scalar c, uint32_t m, uint32_t n, uint32_t k, uint32_t units);
// Every plane owning whole rows (pn = 1), so that a reduction along rows stays in registers (lane
// shuffles, no shared memory) and the result can be another product's a in registers; no plan
// where m does not split into a 16-row block a plane.
ProductPlan rows_plan(ir::Scalar ab, ir::Scalar c, uint32_t m, uint32_t n, uint32_t k, uint32_t units);
// What a tile.mma was placed on: its planes attribute when place_products wrote one, else the square
// split (a kernel lowered without the pass). Throws passes.lower_tiles where the attribute does
// not fit the product and the cube.
ProductPlan plan_of(const ir::Kernel& k, const ir::Op& product, uint32_t units);

}  // namespace kiln::passes::tile
