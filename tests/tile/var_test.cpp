// tile::Var: a tile a run-time loop carries, as seed 04's matmul accumulator is.
#include <gtest/gtest.h>

#include "kiln/ir/text.h"
#include "kiln/tile.h"

namespace kiln::tile {
namespace {

// The var holds a register tile: var.store takes one (it was refused as "not a value").
TEST(TileVar, SeedMatmulCarriesItsAccumulator) {
  auto a = In<double>(cells({256, 256}, {64, 32}).along({0, free_axis}));
  auto b = In<double>(cells({256, 256}, {32, 64}).along({free_axis, 1}));
  auto c = Out<double>(cells({256, 256}, {64, 64}));
  Traced t = trace("matmul", a, b, c, [](Param<double> a, Param<double> b, Param<double> c) {
    Var<double> acc = zeros(c);
    For(d_range(0, 256 / 32), [&](Index k) { acc = mma(load_at(a, {k}), load_at(b, {k}), acc); });
    store_cell(c, acc.get());
  });
  std::string text = ir::print(t.program->kernel());
  EXPECT_NE(text.find("var.decl : var<tile<[64, 64] x f64, registers>>"), std::string::npos) << text;
  EXPECT_NE(text.find("tile.mma"), std::string::npos) << text;
  ASSERT_TRUE(t.program->grid().has_value());
  EXPECT_EQ(*t.program->grid(), (Grid{4, 4, 1}));
}

}  // namespace
}  // namespace kiln::tile
