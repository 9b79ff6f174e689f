// Where the warp-group product's accumulators and register factors sit (ir/mma.h), checked
// against what kiln already knows of the hardware: each warp holds mma.sync m16n8's accumulator
// layout (kMmaSyncM16N8K16, whose layout a GPU test compares with what the tensor cores return)
// over its 16 rows, repeated every 8 columns; every element of the 64 x n block is held exactly
// once; the register factor of a is the n = 16 layout, repeated every 16 of k.
#include <gtest/gtest.h>

#include <set>

#include "kiln/ir/mma.h"

namespace kiln::ir {
namespace {

TEST(WgmmaLayout, EachWarpHoldsMmaSyncsAccumulatorsOverItsRows) {
  for (uint32_t t = 0; t < kWgmmaUnits; ++t) {
    for (uint32_t i = 0; i < 128; ++i) {
      const MmaElement got = wgmma_accumulator_element(t, i);
      // Warp t / 32 as plane t / 32 of a 64 x 8 product over 4 x 1 planes; block i / 4 along n.
      const MmaElement sync = mma_sync_element(kMmaSyncM16N8K16, 64, 8, 4, 1, t, i % 4);
      EXPECT_EQ(got.row, sync.row) << t << " " << i;
      EXPECT_EQ(got.col, sync.col + 8 * (i / 4)) << t << " " << i;
    }
  }
}

TEST(WgmmaLayout, AccumulatorsAndRegisterFactorsCoverTheirBlockOnce) {
  for (uint32_t n : {8u, 64u, 256u}) {
    std::set<std::pair<uint32_t, uint32_t>> seen;
    for (uint32_t t = 0; t < kWgmmaUnits; ++t) {
      for (uint32_t i = 0; i < n / 2; ++i) {
        const MmaElement e = wgmma_accumulator_element(t, i);
        EXPECT_LT(e.row, 64u);
        EXPECT_LT(e.col, n);
        EXPECT_TRUE(seen.insert({e.row, e.col}).second) << "n " << n << ": unit " << t << " slot " << i;
      }
    }
    EXPECT_EQ(seen.size(), 64u * n);
  }
  std::set<std::pair<uint32_t, uint32_t>> a;
  for (uint32_t t = 0; t < kWgmmaUnits; ++t) {
    for (uint32_t j = 0; j < 32; ++j) {  // k = 64
      const MmaElement e = wgmma_a_fragment_element(t, j);
      EXPECT_EQ(e.col / 16, j / 8);
      const MmaElement acc = wgmma_accumulator_element(t, j % 8);
      EXPECT_EQ(e.row, acc.row);
      EXPECT_EQ(e.col % 16, acc.col);
      a.insert({e.row, e.col});
    }
  }
  EXPECT_EQ(a.size(), 64u * 64u);
}

}  // namespace
}  // namespace kiln::ir
