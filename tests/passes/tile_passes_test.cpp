// The tile passes' refusals and checks on IR written by hand: a cube the tile layer cannot use is
// lower_tiles' to refuse (place_products leaves it alone), the verifier holds a ring's copies and
// staged rows to its array's pitch, and a swizzled shared tile, which lower_tiles cannot lay out
// yet, is refused rather than read as plain rows.
#include <gtest/gtest.h>

#include <string>

#include "kiln/error.h"
#include "kiln/ir/text.h"
#include "kiln/ir/verifier.h"
#include "kiln/passes/passes.h"

namespace kiln {
namespace {

std::string error_of(const std::string& text, bool run) {
  try {
    ir::Kernel k = ir::parse(text);
    ir::verify(k, "input");
    if (run) {
      passes::PipelineOptions options;
      options.verify_each = true;
      passes::run_pipeline(k, options);
    }
  } catch (const Error& e) {
    return e.kind() + ": " + e.message();
  }
  return "(none)";
}

// A product on a cube of 16 units: place_products writes nothing, and lower_tiles says what a tile
// kernel's cube must be (where place_products used to place it on [1, 1] planes and a second run
// blamed the placement).
TEST(TilePasses, ACubeTheTileLayerCannotUseIsLowerTilesToRefuse) {
  const std::string text =
      "kernel @k(%a: buffer<bf16, ro>, %c: buffer<f32, rw>) {cube_dim = [16, 1, 1], mode = unchecked, address = u32, "
      "vector = 1} {\n"
      "  %0 = tile.view %a {extent = [64, 64], tile = [64, 64], along = [0, 1], pad = zero} : tile<[64, 64] x bf16, "
      "global>\n"
      "  %1 = tile.view %c {extent = [64, 64], tile = [64, 64], along = [0, 1], pad = zero} : tile<[64, 64] x f32, "
      "global>\n"
      "  %2 = tile.load_cell %0 : tile<[64, 64] x bf16, registers>\n"
      "  %3 = tile.full {value = 0.0} : tile<[64, 64] x f32, registers>\n"
      "  %4 = tile.mma %2, %2, %3 : tile<[64, 64] x f32, registers>\n"
      "  tile.store_cell %1, %4\n"
      "}\n";
  ir::Kernel k = ir::parse(text);
  EXPECT_FALSE(passes::place_products(k));
  EXPECT_EQ(error_of(text, true),
            "passes.lower_tiles: kernel 'k': a tile kernel runs on cubes of [U, 1, 1] units, U a power of two from 32 "
            "to 1024 (tile_units gives 128), not [16, 1, 1]");
}

const char* kRing =
    "kernel @k(%x: buffer<vector<4 x f32>, ro>) {cube_dim = [32, 1, 1], mode = unchecked, address = u32, vector = 1} "
    "layouts {\n"
    "  #1 = shared<pitch = 32, swizzle = none, align = 16>,\n"
    "  #2 = shared<pitch = 64, swizzle = 128, align = 1024>\n"
    "} {\n"
    "  %0 = shared.alloc : shared<f32, 4096, #1>\n"
    "  %1 = shared.alloc : shared<f32, 4096, #2>\n"
    "  %2 = tile.view %x {extent = [64, 64], tile = [8, 64], along = [-1, -1], pad = zero} : tile<[8, 64] x f32, "
    "global>\n"
    "  %3 = const 0 : u32\n"
    "  %4 = const true : bool\n"
    "  %5 = const 0 : i32\n";

// Rows of 64 floats copied or staged into an array whose layout's rows are 32 apart would overlap.
TEST(TilePasses, CopiesAndStagesFitTheirArraysPitch) {
  EXPECT_EQ(error_of(std::string(kRing) + "  tile.copy_cell %0, %3, %2, %4, %5, %5\n}\n", false),
            "ir.verify: kernel 'k' (input): op #7 'tile.copy_cell': writes rows of 64 elements into an array whose "
            "layout's pitch is 32");
  EXPECT_EQ(error_of(std::string(kRing) + "  tile.copy_cell %1, %3, %2, %4, %5, %5\n}\n", false), "(none)");
  EXPECT_EQ(error_of(std::string(kRing) + "  %6 = tile.full {value = 1.0} : tile<[8, 64] x f32, registers>\n"
                                          "  tile.stage %0, %3, %6\n}\n",
                     false),
            "ir.verify: kernel 'k' (input): op #8 'tile.stage': writes rows of 64 elements into an array whose "
            "layout's pitch is 32");
}

// A 128-byte swizzle verifies (Hopper's products read it), but lower_tiles lays shared tiles out as
// plain rows: it refuses the copy instead of writing rows the layout says are elsewhere.
TEST(TilePasses, ASwizzledSharedTileIsRefusedByTheLowering) {
  EXPECT_EQ(error_of(std::string(kRing) + "  tile.copy_cell %1, %3, %2, %4, %5, %5\n}\n", true),
            "compile.unsupported: kernel 'k': tile.copy_cell in shared<pitch = 64, swizzle = 128, align = 1024>: "
            "lower_tiles lays shared tiles out as plain rows and has no swizzle yet");
}

}  // namespace
}  // namespace kiln
